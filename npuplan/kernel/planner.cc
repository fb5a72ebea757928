#include "npuplan/kernel/planner.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "npuplan/kernel/allocator.h"
#include "npuplan/kernel/makespan_reorder.h"
#include "npuplan/kernel/pipelined_schedule.h"
#include "npuplan/kernel/unit_order_search.h"
#include "npuplan/support/status_macros.h"

namespace npuplan::kernel {

absl::StatusOr<Strategy> ParseStrategy(std::string_view s) {
  if (s == "seed") return Strategy::kSeed;
  if (s == "best") return Strategy::kBest;
  return absl::InvalidArgumentError(absl::StrCat("--strategy: unknown value \"", std::string(s), "\" (seed|best)"));
}

absl::StatusOr<Objective> ParseObjective(std::string_view s) {
  if (s == "traffic") return Objective::kTraffic;
  if (s == "time") return Objective::kTime;
  if (s == "balanced") return Objective::kBalanced;
  return absl::InvalidArgumentError(
      absl::StrCat("--objective: unknown value \"", std::string(s), "\" (traffic|time|balanced)"));
}

std::string_view ObjectiveName(Objective o) {
  switch (o) {
    case Objective::kTraffic:
      return "traffic";
    case Objective::kTime:
      return "time";
    case Objective::kBalanced:
    default:
      return "balanced";
  }
}

namespace {

struct Candidate {
  std::string name;
  KernelSolution solution;
  KernelMetrics metrics;
  std::vector<Remark> remarks;  // the allocator's and reorder's decisions
};

// Verifies a planner output with the evaluator; a failure is our bug.
absl::StatusOr<KernelMetrics> Verify(const KernelGraph& g, const KernelSolution& s,
                                     const CacheConfig& config, std::string_view name) {
  auto m = EvaluateSolution(g, s, config);
  if (!m.ok()) {
    return absl::InternalError(absl::StrCat("planner candidate '", std::string(name),
                                            "' failed verification: ", m.status().message()));
  }
  return m;
}

std::vector<int> OpsOf(const KernelGraph& g, const KernelSolution& s) {
  std::vector<int> ops;
  for (int v : s.schedule) {
    if (v < g.num_nodes() && g.nodes[v].kind == NodeKind::kOp) ops.push_back(v);
  }
  return ops;
}

}  // namespace

std::vector<ParetoPoint> ParetoFrontier(const std::vector<CandidateReport>& candidates) {
  std::vector<ParetoPoint> pts;
  for (const CandidateReport& c : candidates) {
    if (c.extra_movement >= 0) pts.push_back({c.extra_movement, c.makespan, c.name});
  }
  std::stable_sort(pts.begin(), pts.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    return a.extra_movement != b.extra_movement ? a.extra_movement < b.extra_movement : a.makespan < b.makespan;
  });
  std::vector<ParetoPoint> front;
  for (const ParetoPoint& p : pts) {
    if (front.empty() || p.makespan < front.back().makespan) front.push_back(p);
  }
  return front;
}

namespace {

// The state PlanKernel's steps share; each step is one member function.
class KernelPlanner {
 public:
  KernelPlanner(const KernelGraph& g, const CacheConfig& config, const PlanOptions& options)
      : g_(g),
        config_(config),
        options_(options),
        want_log_(options.log != nullptr && options.log->enabled()),
        local_(/*keep=*/want_log_),
        local_log_(want_log_ ? &local_ : nullptr) {}

  absl::Status ScheduleQ1();
  absl::Status AddAllocatorCandidates();
  bool HasCandidates() const { return !cands_.empty(); }
  const absl::Status& first_error() const { return first_error_; }
  void NoteSeedMovement();
  absl::Status AddReorderedCandidates();
  absl::Status AddReallocatedCandidates();
  absl::Status AddPipelinedCandidates();
  absl::Status AddImprovedCandidates();
  absl::Status AddUnitSearchCandidates();
  absl::Status AddPairedCandidates();
  PlanResult Choose() &&;

 private:
  absl::Status Add(std::string name, absl::StatusOr<KernelSolution> sol);
  std::vector<size_t> Rank(const std::vector<Candidate>& cs) const;
  std::vector<size_t> SearchStarts() const;
  absl::Status AddAllocatedReordered(std::string name, const std::vector<int>& order,
                                     Placement placement);

  const KernelGraph& g_;
  const CacheConfig& config_;
  const PlanOptions& options_;
  PlanResult result_;
  std::vector<Candidate> cands_;
  absl::Status first_error_ = absl::OkStatus();
  // Each candidate logs into its own DecisionLog; the chosen one's remarks are
  // forwarded to options.log at the end.
  const bool want_log_;
  DecisionLog local_;
  DecisionLog* const local_log_;
  int64_t seed_extra_ = std::numeric_limits<int64_t>::max();
};

// 1. Q1 schedule.
absl::Status KernelPlanner::ScheduleQ1() {
  result_.q1 = BestQ1Schedule(g_, config_, options_.max_band_width);
  KernelSolution q1sol;
  q1sol.schedule = result_.q1.order;
  EvalOptions eo;
  eo.check_memory = false;
  NPUPLAN_ASSIGN_OR_RETURN(result_.q1_metrics, EvaluateSolution(g_, q1sol, config_, eo));
  return absl::OkStatus();
}

absl::Status KernelPlanner::Add(std::string name, absl::StatusOr<KernelSolution> sol) {
  std::vector<Remark> remarks = local_.remarks();
  local_ = DecisionLog(/*keep=*/want_log_);
  CandidateReport rep;
  rep.name = name;
  if (!sol.ok()) {
    rep.error = std::string(sol.status().message());
    if (first_error_.ok()) first_error_ = sol.status();
    result_.candidates.push_back(rep);
    return absl::OkStatus();
  }
  NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g_, *sol, config_, name));
  rep.extra_movement = m.extra_movement;
  rep.makespan = m.makespan;
  result_.candidates.push_back(rep);
  cands_.push_back({std::move(name), std::move(*sol), std::move(m), std::move(remarks)});
  return absl::OkStatus();
}

// 2. Candidates.
absl::Status KernelPlanner::AddAllocatorCandidates() {
  SeedOptions so;
  so.log = local_log_;
  NPUPLAN_RETURN_IF_ERROR(Add("seed/q1", AllocateSeed(g_, result_.q1.order, config_, so)));
  if (options_.strategy != Strategy::kBest) return absl::OkStatus();
  std::vector<std::pair<std::string, std::vector<int>>> orders;
  orders.emplace_back("q1", result_.q1.order);
  UnitPartition parts = PartitionUnits(g_, config_);
  for (const UnitOrder& uo : CandidateUnitOrders(g_, parts, options_.max_band_width)) {
    orders.emplace_back(uo.name, DemandDrivenOrder(g_, TargetsFromUnits(parts, uo.units)));
  }
  // Best-fit on every order; oldest-free (for time) on the orders with the
  // least traffic, which bounds the work on large graphs.
  std::vector<std::pair<int64_t, size_t>> by_traffic;
  for (size_t i = 0; i < orders.size(); ++i) {
    const size_t before = cands_.size();
    BestOptions bo;
    bo.log = local_log_;
    NPUPLAN_RETURN_IF_ERROR(Add(absl::StrCat("best/", orders[i].first, "/bestfit"),
                                AllocateBest(g_, orders[i].second, config_, bo)));
    if (cands_.size() > before) by_traffic.emplace_back(cands_.back().metrics.extra_movement, i);
  }
  std::sort(by_traffic.begin(), by_traffic.end());
  const size_t keep = std::min<size_t>(by_traffic.size(), options_.oldest_free_orders);
  for (size_t j = 0; j < keep; ++j) {
    BestOptions bo;
    bo.log = local_log_;
    bo.placement = Placement::kOldestFree;
    const auto& [oname, order] = orders[by_traffic[j].second];
    NPUPLAN_RETURN_IF_ERROR(
        Add(absl::StrCat("best/", oname, "/oldest"), AllocateBest(g_, order, config_, bo)));
  }
  return absl::OkStatus();
}

// The seed plan's movement caps `balanced`, so the default never moves more
// data than the seed strategy.
void KernelPlanner::NoteSeedMovement() {
  for (const Candidate& c : cands_) {
    if (c.name == "seed/q1") seed_extra_ = c.metrics.extra_movement;
  }
}

// Indices of cs, best first under the objective.
std::vector<size_t> KernelPlanner::Rank(const std::vector<Candidate>& cs) const {
  int64_t min_extra = std::numeric_limits<int64_t>::max(), min_ms = min_extra;
  for (const Candidate& c : cs) {
    if (c.metrics.extra_movement > seed_extra_) continue;
    min_extra = std::min(min_extra, c.metrics.extra_movement);
    min_ms = std::min(min_ms, c.metrics.makespan);
  }
  auto key = [&](const Candidate& c) {
    const KernelMetrics& m = c.metrics;
    switch (options_.objective) {
      case Objective::kTraffic:
        return std::make_tuple(int64_t{0}, 0.0, m.extra_movement, m.makespan);
      case Objective::kTime:
        return std::make_tuple(int64_t{0}, 0.0, m.makespan, m.extra_movement);
      case Objective::kBalanced:
      default: {
        // Relative excess over the best movement and the best makespan.
        if (m.extra_movement > seed_extra_)
          return std::make_tuple(int64_t{1}, 0.0, m.extra_movement, m.makespan);
        const double score = options_.balanced_traffic_weight *
                                 static_cast<double>(m.extra_movement - min_extra) /
                                 static_cast<double>(std::max<int64_t>(min_extra, 1)) +
                             static_cast<double>(m.makespan - min_ms) /
                                 static_cast<double>(std::max<int64_t>(min_ms, 1));
        return std::make_tuple(int64_t{0}, score, m.makespan, m.extra_movement);
      }
    }
  };
  std::vector<size_t> idx(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return key(cs[a]) < key(cs[b]); });
  return idx;
}

// 3. Q3: re-sequence the most promising candidates for makespan
// (MakespanReorder keeps their memory decisions, hence their traffic).
absl::Status KernelPlanner::AddReorderedCandidates() {
  std::vector<size_t> ranked = Rank(cands_);
  // Rank by traffic too, so that `time` also re-sequences the least-traffic plans.
  std::vector<size_t> by_traffic = ranked;
  std::stable_sort(by_traffic.begin(), by_traffic.end(), [&](size_t a, size_t b) {
    return cands_[a].metrics.extra_movement < cands_[b].metrics.extra_movement;
  });
  std::vector<size_t> picked;
  for (const auto* list : {&ranked, &by_traffic}) {
    for (size_t j = 0; j < list->size() && j < static_cast<size_t>(options_.reorder_candidates);
         ++j) {
      if (std::find(picked.begin(), picked.end(), (*list)[j]) == picked.end())
        picked.push_back((*list)[j]);
    }
  }
  const size_t num_base = cands_.size();
  for (size_t i : picked) {
    if (i >= num_base) continue;
    for (auto [prio, tag] : {std::make_pair(ReorderOptions::Priority::kCriticalPath, "cp"),
                             std::make_pair(ReorderOptions::Priority::kInputOrder, "fifo")}) {
      ReorderOptions ro;
      ro.priority = prio;
      NPUPLAN_ASSIGN_OR_RETURN(ReorderResult rr,
                               ReorderForMakespan(g_, cands_[i].solution, config_, ro));
      const std::string name = StrCat(cands_[i].name, "+reorder-", tag);
      NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g_, rr.solution, config_, name));
      result_.candidates.push_back({name, m.extra_movement, m.makespan, ""});
      Candidate c{name, std::move(rr.solution), std::move(m), cands_[i].remarks};
      c.remarks.push_back(Remark{"makespan-reorder",
                                 "ScheduleReordered",
                                 "",
                                 {{"candidate", cands_[i].name},
                                  {"priority", tag},
                                  {"makespan_before", StrCat(rr.makespan_before)},
                                  {"makespan_after", StrCat(c.metrics.makespan)}}});
      cands_.push_back(std::move(c));
    }
  }
  return absl::OkStatus();
}

// Re-allocation rounds: the operations in the order of the best plan not
// yet used as a base (after reordering, loads sit next to the compute that
// needs them), expanded demand-driven, allocated again with both
// placements and re-sequenced.
absl::Status KernelPlanner::AddReallocatedCandidates() {
  std::vector<char> used(cands_.size(), 0);
  for (int round = 0; round < options_.realloc_rounds; ++round) {
    const std::vector<size_t> ranked_now = Rank(cands_);
    size_t top = cands_.size();
    for (size_t i : ranked_now) {
      if (i >= used.size() || !used[i]) {
        top = i;
        break;
      }
    }
    if (top == cands_.size()) break;
    used.resize(cands_.size(), 0);
    used[top] = 1;
    std::vector<int> targets;
    for (int v : cands_[top].solution.schedule) {
      if (v < g_.num_nodes() && g_.nodes[v].kind == NodeKind::kOp) targets.push_back(v);
    }
    const std::vector<int> order = DemandDrivenOrder(g_, targets);
    const std::string base = cands_[top].name;
    for (auto [placement, tag] : {std::make_pair(Placement::kOldestFree, "oldest"),
                                  std::make_pair(Placement::kBestFit, "bestfit")}) {
      NPUPLAN_RETURN_IF_ERROR(
          AddAllocatedReordered(StrCat(base, "+realloc-", tag), order, placement));
    }
  }
  return absl::OkStatus();
}

// AllocateBest on `order` (candidate `name`), then that plan re-sequenced by
// ReorderForMakespan (candidate `name`+reorder-cp), both verified.
absl::Status KernelPlanner::AddAllocatedReordered(std::string name, const std::vector<int>& order,
                                                  Placement placement) {
  BestOptions bo;
  bo.log = local_log_;
  bo.placement = placement;
  const size_t before = cands_.size();
  NPUPLAN_RETURN_IF_ERROR(Add(std::move(name), AllocateBest(g_, order, config_, bo)));
  if (cands_.size() == before) return absl::OkStatus();
  NPUPLAN_ASSIGN_OR_RETURN(ReorderResult rr,
                           ReorderForMakespan(g_, cands_.back().solution, config_));
  const std::string rname = StrCat(cands_.back().name, "+reorder-cp");
  NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g_, rr.solution, config_, rname));
  result_.candidates.push_back({rname, m.extra_movement, m.makespan, ""});
  Candidate c{rname, std::move(rr.solution), std::move(m), cands_.back().remarks};
  c.remarks.push_back(Remark{"makespan-reorder",
                             "ScheduleReordered",
                             "",
                             {{"candidate", cands_.back().name},
                              {"priority", "cp"},
                              {"makespan_before", StrCat(rr.makespan_before)},
                              {"makespan_after", StrCat(c.metrics.makespan)}}});
  cands_.push_back(std::move(c));
  return absl::OkStatus();
}

// 4. Software pipelining on the least-traffic plans.
absl::Status KernelPlanner::AddPipelinedCandidates() {
  std::vector<size_t> by_traffic(cands_.size());
  for (size_t i = 0; i < cands_.size(); ++i) by_traffic[i] = i;
  std::stable_sort(by_traffic.begin(), by_traffic.end(), [&](size_t a, size_t b) {
    const KernelMetrics &x = cands_[a].metrics, &y = cands_[b].metrics;
    return x.extra_movement != y.extra_movement ? x.extra_movement < y.extra_movement
                                                : x.makespan < y.makespan;
  });
  // Bases: the least-traffic allocator orders (not re-sequenced: their
  // operations follow the tiles) and the least-traffic re-sequenced plan.
  std::vector<size_t> bases;
  bool took_reordered = false;
  for (size_t i : by_traffic) {
    const bool reordered = cands_[i].name.find("+reorder") != std::string::npos;
    if (reordered ? took_reordered
                  : bases.size() - took_reordered >=
                        static_cast<size_t>(std::max(0, options_.pipeline_bases))) {
      continue;
    }
    took_reordered |= reordered;
    bases.push_back(i);
  }
  for (size_t bi : bases) {
    const std::vector<int> ops = OpsOf(g_, cands_[bi].solution);
    const int64_t cap = cands_[bi].metrics.extra_movement;
    const std::string base = cands_[bi].name;
    for (int la : options_.pipeline_lookaheads) {
      if (static_cast<int64_t>(ops.size()) * (la + 1) > options_.pipeline_budget) continue;
      PipelineOptions po;
      po.lookahead = la;
      const std::string name = StrCat(base, "+pipe", la);
      auto pr = PipelinedSchedule(g_, config_, ops, po);
      if (!pr.ok()) {
        result_.candidates.push_back({name, -1, -1, std::string(pr.status().message())});
        continue;
      }
      NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g_, pr->solution, config_, name));
      result_.candidates.push_back({name, m.extra_movement, m.makespan, ""});
      if (m.extra_movement > cap) continue;
      // The pipelined memory decisions, re-sequenced like the other plans.
      NPUPLAN_ASSIGN_OR_RETURN(ReorderResult rr, ReorderForMakespan(g_, pr->solution, config_));
      const std::string rname = StrCat(name, "+reorder-cp");
      NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics rm, Verify(g_, rr.solution, config_, rname));
      result_.candidates.push_back({rname, rm.extra_movement, rm.makespan, ""});
      cands_.push_back({name, std::move(pr->solution), std::move(m), {}});
      cands_.push_back({rname, std::move(rr.solution), std::move(rm), {}});
    }
  }
  return absl::OkStatus();
}

// 5. Improvement search: list scheduling with perturbed priorities
// (iterated, noise growing with the step) on the plans of least makespan
// within each objective's traffic; memory decisions are kept, so is traffic.
absl::Status KernelPlanner::AddImprovedCandidates() {
  const int64_t steps = std::min<int64_t>(options_.improve_max_steps,
                                          options_.improve_budget / std::max(1, g_.num_nodes()));
  const std::vector<size_t> starts = SearchStarts();
  for (size_t si = 0; si < starts.size(); ++si) {
    const size_t start = starts[si];
    int64_t best_ms = cands_[start].metrics.makespan;
    KernelSolution best_sol;
    uint32_t best_seed = 0;
    for (int64_t step = 0; step < steps / static_cast<int64_t>(starts.size()); ++step) {
      ReorderOptions ro;
      ro.noise_seed = static_cast<uint32_t>(1 + step + 100000 * si);
      ro.noise_permille = 20 + static_cast<int>(step % 10) * 30;
      NPUPLAN_ASSIGN_OR_RETURN(ReorderResult rr,
                               ReorderForMakespan(g_, cands_[start].solution, config_, ro));
      if (rr.makespan_after < best_ms) {
        best_ms = rr.makespan_after;
        best_sol = std::move(rr.solution);
        best_seed = ro.noise_seed;
      }
    }
    if (best_seed == 0) continue;
    const std::string name = StrCat(cands_[start].name, "+improve", best_seed);
    NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g_, best_sol, config_, name));
    result_.candidates.push_back({name, m.extra_movement, m.makespan, ""});
    cands_.push_back({name, std::move(best_sol), std::move(m), cands_[start].remarks});
  }
  return absl::OkStatus();
}

// The plan the objective ranks first and the least-traffic plan (least
// makespan among equals).
std::vector<size_t> KernelPlanner::SearchStarts() const {
  const std::vector<size_t> ranked = Rank(cands_);
  std::vector<size_t> starts = {ranked[0]};
  size_t least = ranked[0];
  for (size_t i = 0; i < cands_.size(); ++i) {
    const KernelMetrics &x = cands_[i].metrics, &y = cands_[least].metrics;
    if (x.extra_movement < y.extra_movement ||
        (x.extra_movement == y.extra_movement && x.makespan < y.makespan)) {
      least = i;
    }
  }
  if (least != starts[0]) starts.push_back(least);
  return starts;
}

// 5b. Unit-order search from the search starts, each capped at its start's
// traffic (so no objective's traffic rises).
absl::Status KernelPlanner::AddUnitSearchCandidates() {
  if (g_.num_nodes() > options_.unit_search_max_nodes) return absl::OkStatus();
  const UnitPartition parts = PartitionUnits(g_, config_);
  if (parts.units.size() < 2) return absl::OkStatus();
  const int64_t steps = std::min<int64_t>(
      options_.unit_search_max_steps, options_.unit_search_budget / std::max(1, g_.num_nodes()));
  for (size_t start : SearchStarts()) {
    // Within 2 % of its busiest pipe's work a plan has no idle time to win
    // back at this traffic (the 16x16x16 matmul): skip the costly search.
    const KernelMetrics& sm = cands_[start].metrics;
    int64_t busiest = 0;
    for (const auto& [pipe, busy] : sm.pipe_busy) busiest = std::max(busiest, busy);
    if (sm.makespan * 50 <= busiest * 51) continue;
    UnitSearchOptions uo;
    uo.max_steps = steps;
    uo.patience =
        std::max<int64_t>(20, options_.unit_search_patience_budget / std::max(1, g_.num_nodes()));
    uo.seed = static_cast<uint32_t>(1 + start);
    uo.max_extra_movement = cands_[start].metrics.extra_movement;
    auto sr = SearchUnitOrder(g_, config_, parts,
                              UnitOrderOf(parts, OpsOf(g_, cands_[start].solution)), uo);
    if (absl::IsNotFound(sr.status())) continue;  // no order within the cap
    NPUPLAN_RETURN_IF_ERROR(sr.status());
    if (local_log_ != nullptr) {
      local_log_->Record(
          "unit-order-search", "UnitOrderSearched", "", Field("candidate", cands_[start].name),
          Field("start_makespan", sr->start_makespan), Field("makespan", sr->makespan),
          Field("steps", sr->steps), Field("accepted", sr->accepted));
    }
    // Rebuilt with the decision log on: the same inputs give the same plan.
    NPUPLAN_RETURN_IF_ERROR(AddAllocatedReordered(
        StrCat(cands_[start].name, "+unit-search"),
        DemandDrivenOrder(g_, TargetsFromUnits(parts, sr->unit_order)), Placement::kOldestFree));
  }
  return absl::OkStatus();
}

// 5b. Paired band orders: two accumulators live at once, so an input shared
// by both is used twice in a row (on a matmul, a B tile serves two rows of C
// per load while the A rows stay resident). Kept only when they win without
// raising traffic over the choice made without them.
absl::Status KernelPlanner::AddPairedCandidates() {
  const size_t num_old = cands_.size();
  const size_t prev_best = Rank(cands_)[0];
  const int64_t cap = cands_[prev_best].metrics.extra_movement;
  UnitPartition parts = PartitionUnits(g_, config_);
  for (const UnitOrder& uo : CandidateUnitOrders(g_, parts, options_.max_band_width)) {
    if (uo.name == "natural") continue;
    NPUPLAN_RETURN_IF_ERROR(AddAllocatedReordered(
        StrCat("best/", uo.name, "/pairs/oldest"),
        DemandDrivenOrder(g_, PairInterleavedTargets(g_, config_, parts, uo.units)),
        Placement::kOldestFree));
  }
  // One re-allocation round from the best of them (the order after re-sequencing).
  std::vector<Candidate> fresh(
      std::make_move_iterator(cands_.begin() + static_cast<std::ptrdiff_t>(num_old)),
      std::make_move_iterator(cands_.end()));
  cands_.resize(num_old);
  std::erase_if(fresh, [&](const Candidate& c) { return c.metrics.extra_movement > cap; });
  if (fresh.empty()) return absl::OkStatus();
  const size_t top = Rank(fresh)[0];
  std::vector<int> targets;
  for (int v : fresh[top].solution.schedule) {
    if (v < g_.num_nodes() && g_.nodes[v].kind == NodeKind::kOp) targets.push_back(v);
  }
  const std::string base = fresh[top].name;
  for (Candidate& c : fresh) cands_.push_back(std::move(c));
  const size_t before_round = cands_.size();
  NPUPLAN_RETURN_IF_ERROR(AddAllocatedReordered(
      StrCat(base, "+realloc-oldest"), DemandDrivenOrder(g_, targets), Placement::kOldestFree));
  for (size_t i = cands_.size(); i-- > before_round;) {
    if (cands_[i].metrics.extra_movement > cap)
      cands_.erase(cands_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  // Another old plan on top would mean the new ones only shifted the balanced
  // weights: keep the choice made without them.
  const size_t now = Rank(cands_)[0];
  if (now < num_old && now != prev_best) cands_.resize(num_old);
  return absl::OkStatus();
}

// 6. Choose.
PlanResult KernelPlanner::Choose() && {
  result_.pareto = ParetoFrontier(result_.candidates);
  const size_t best = Rank(cands_)[0];
  result_.chosen = cands_[best].name;
  result_.solution = std::move(cands_[best].solution);
  result_.metrics = std::move(cands_[best].metrics);
  if (options_.log != nullptr && options_.log->enabled()) {
    for (Remark& r : cands_[best].remarks) options_.log->Add(std::move(r));
    options_.log->Record(
        "kernel-planner", "CandidateChosen", "", Field("case", g_.name),
        Field("candidate", result_.chosen), Field("objective", ObjectiveName(options_.objective)),
        Field("extra_movement", result_.metrics.extra_movement),
        Field("makespan", result_.metrics.makespan), Field("candidates", cands_.size()));
  }
  return std::move(result_);
}

}  // namespace

absl::StatusOr<PlanResult> PlanKernel(const KernelGraph& g, const CacheConfig& config,
                                      const PlanOptions& options) {
  KernelPlanner planner(g, config, options);
  NPUPLAN_RETURN_IF_ERROR(planner.ScheduleQ1());
  NPUPLAN_RETURN_IF_ERROR(planner.AddAllocatorCandidates());
  if (!planner.HasCandidates()) return planner.first_error();
  planner.NoteSeedMovement();
  const bool best = options.strategy == Strategy::kBest;
  if (best && options.reorder_candidates > 0) {
    NPUPLAN_RETURN_IF_ERROR(planner.AddReorderedCandidates());
    NPUPLAN_RETURN_IF_ERROR(planner.AddReallocatedCandidates());
  }
  if (best && !options.pipeline_lookaheads.empty())
    NPUPLAN_RETURN_IF_ERROR(planner.AddPipelinedCandidates());
  if (best && options.unit_search_max_steps > 0)
    NPUPLAN_RETURN_IF_ERROR(planner.AddUnitSearchCandidates());
  if (best && options.improve_max_steps > 0)
    NPUPLAN_RETURN_IF_ERROR(planner.AddImprovedCandidates());
  if (best && options.paired_orders) NPUPLAN_RETURN_IF_ERROR(planner.AddPairedCandidates());
  return std::move(planner).Choose();
}

}  // namespace npuplan::kernel
