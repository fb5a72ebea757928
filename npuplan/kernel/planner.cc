#include "npuplan/kernel/planner.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "npuplan/kernel/allocator.h"
#include "npuplan/kernel/makespan_reorder.h"
#include "npuplan/kernel/pipelined_schedule.h"
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

absl::StatusOr<PlanResult> PlanKernel(const KernelGraph& g, const CacheConfig& config,
                                      const PlanOptions& options) {
  PlanResult result;
  // 1. Q1 schedule.
  result.q1 = BestQ1Schedule(g, config, options.max_band_width);
  {
    KernelSolution q1sol;
    q1sol.schedule = result.q1.order;
    EvalOptions eo;
    eo.check_memory = false;
    NPUPLAN_ASSIGN_OR_RETURN(result.q1_metrics, EvaluateSolution(g, q1sol, config, eo));
  }
  // 2. Candidates.
  std::vector<Candidate> cands;
  absl::Status first_error = absl::OkStatus();
  // Each candidate logs into its own DecisionLog; the chosen one's remarks are
  // forwarded to options.log at the end.
  const bool want_log = options.log != nullptr && options.log->enabled();
  DecisionLog local(/*keep=*/want_log);
  DecisionLog* const local_log = want_log ? &local : nullptr;
  auto add = [&](std::string name, absl::StatusOr<KernelSolution> sol) -> absl::Status {
    std::vector<Remark> remarks = local.remarks();
    local = DecisionLog(/*keep=*/want_log);
    CandidateReport rep;
    rep.name = name;
    if (!sol.ok()) {
      rep.error = std::string(sol.status().message());
      if (first_error.ok()) first_error = sol.status();
      result.candidates.push_back(rep);
      return absl::OkStatus();
    }
    NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g, *sol, config, name));
    rep.extra_movement = m.extra_movement;
    rep.makespan = m.makespan;
    result.candidates.push_back(rep);
    cands.push_back({std::move(name), std::move(*sol), std::move(m), std::move(remarks)});
    return absl::OkStatus();
  };
  SeedOptions so;
  so.log = local_log;
  NPUPLAN_RETURN_IF_ERROR(add("seed/q1", AllocateSeed(g, result.q1.order, config, so)));
  if (options.strategy == Strategy::kBest) {
    std::vector<std::pair<std::string, std::vector<int>>> orders;
    orders.emplace_back("q1", result.q1.order);
    UnitPartition parts = PartitionUnits(g, config);
    for (const UnitOrder& uo : CandidateUnitOrders(g, parts, options.max_band_width)) {
      orders.emplace_back(uo.name, DemandDrivenOrder(g, TargetsFromUnits(parts, uo.units)));
    }
    // Best-fit on every order; oldest-free (for time) on the orders with the
    // least traffic, which bounds the work on large graphs.
    std::vector<std::pair<int64_t, size_t>> by_traffic;
    for (size_t i = 0; i < orders.size(); ++i) {
      const size_t before = cands.size();
      BestOptions bo;
      bo.log = local_log;
      NPUPLAN_RETURN_IF_ERROR(add(absl::StrCat("best/", orders[i].first, "/bestfit"),
                                  AllocateBest(g, orders[i].second, config, bo)));
      if (cands.size() > before) by_traffic.emplace_back(cands.back().metrics.extra_movement, i);
    }
    std::sort(by_traffic.begin(), by_traffic.end());
    const size_t keep = std::min<size_t>(by_traffic.size(), options.oldest_free_orders);
    for (size_t j = 0; j < keep; ++j) {
      BestOptions bo;
      bo.log = local_log;
      bo.placement = Placement::kOldestFree;
      const auto& [oname, order] = orders[by_traffic[j].second];
      NPUPLAN_RETURN_IF_ERROR(add(absl::StrCat("best/", oname, "/oldest"), AllocateBest(g, order, config, bo)));
    }
  }
  if (cands.empty()) return first_error;
  // 3. Q3: re-sequence the most promising candidates for makespan
  // (MakespanReorder keeps their memory decisions, hence their traffic).
  // The seed plan's movement caps `balanced`, so the default never moves more
  // data than the seed strategy.
  int64_t seed_extra = std::numeric_limits<int64_t>::max();
  for (const Candidate& c : cands) {
    if (c.name == "seed/q1") seed_extra = c.metrics.extra_movement;
  }
  auto choose = [&](const std::vector<Candidate>& cs) {
    int64_t min_extra = std::numeric_limits<int64_t>::max(), min_ms = min_extra;
    for (const Candidate& c : cs) {
      if (c.metrics.extra_movement > seed_extra) continue;
      min_extra = std::min(min_extra, c.metrics.extra_movement);
      min_ms = std::min(min_ms, c.metrics.makespan);
    }
    auto key = [&](const Candidate& c) {
      const KernelMetrics& m = c.metrics;
      switch (options.objective) {
        case Objective::kTraffic:
          return std::make_tuple(int64_t{0}, 0.0, m.extra_movement, m.makespan);
        case Objective::kTime:
          return std::make_tuple(int64_t{0}, 0.0, m.makespan, m.extra_movement);
        case Objective::kBalanced:
        default: {
          // Relative excess over the best movement and the best makespan.
          if (m.extra_movement > seed_extra) return std::make_tuple(int64_t{1}, 0.0, m.extra_movement, m.makespan);
          const double score =
              options.balanced_traffic_weight * static_cast<double>(m.extra_movement - min_extra) /
                  static_cast<double>(std::max<int64_t>(min_extra, 1)) +
              static_cast<double>(m.makespan - min_ms) / static_cast<double>(std::max<int64_t>(min_ms, 1));
          return std::make_tuple(int64_t{0}, score, m.makespan, m.extra_movement);
        }
      }
    };
    std::vector<size_t> idx(cs.size());
    for (size_t i = 0; i < cs.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return key(cs[a]) < key(cs[b]); });
    return idx;
  };
  if (options.strategy == Strategy::kBest && options.reorder_candidates > 0) {
    std::vector<size_t> ranked = choose(cands);
    // Rank by traffic too, so that `time` also re-sequences the least-traffic plans.
    std::vector<size_t> by_traffic = ranked;
    std::stable_sort(by_traffic.begin(), by_traffic.end(), [&](size_t a, size_t b) {
      return cands[a].metrics.extra_movement < cands[b].metrics.extra_movement;
    });
    std::vector<size_t> picked;
    for (const auto* list : {&ranked, &by_traffic}) {
      for (size_t j = 0; j < list->size() && j < static_cast<size_t>(options.reorder_candidates); ++j) {
        if (std::find(picked.begin(), picked.end(), (*list)[j]) == picked.end()) picked.push_back((*list)[j]);
      }
    }
    const size_t num_base = cands.size();
    for (size_t i : picked) {
      if (i >= num_base) continue;
      for (auto [prio, tag] : {std::make_pair(ReorderOptions::Priority::kCriticalPath, "cp"),
                               std::make_pair(ReorderOptions::Priority::kInputOrder, "fifo")}) {
        ReorderOptions ro;
        ro.priority = prio;
        NPUPLAN_ASSIGN_OR_RETURN(ReorderResult rr, ReorderForMakespan(g, cands[i].solution, config, ro));
        const std::string name = StrCat(cands[i].name, "+reorder-", tag);
        NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g, rr.solution, config, name));
        result.candidates.push_back({name, m.extra_movement, m.makespan, ""});
        Candidate c{name, std::move(rr.solution), std::move(m), cands[i].remarks};
        c.remarks.push_back(Remark{"makespan-reorder", "ScheduleReordered", "",
                                   {{"candidate", cands[i].name},
                                    {"priority", tag},
                                    {"makespan_before", StrCat(rr.makespan_before)},
                                    {"makespan_after", StrCat(c.metrics.makespan)}}});
        cands.push_back(std::move(c));
      }
    }
    // Re-allocation rounds: the operations in the order of the best plan not
    // yet used as a base (after reordering, loads sit next to the compute that
    // needs them), expanded demand-driven, allocated again with both
    // placements and re-sequenced.
    std::vector<char> used(cands.size(), 0);
    for (int round = 0; round < options.realloc_rounds; ++round) {
      const std::vector<size_t> ranked_now = choose(cands);
      size_t top = cands.size();
      for (size_t i : ranked_now) {
        if (i >= used.size() || !used[i]) {
          top = i;
          break;
        }
      }
      if (top == cands.size()) break;
      used.resize(cands.size(), 0);
      used[top] = 1;
      std::vector<int> targets;
      for (int v : cands[top].solution.schedule) {
        if (v < g.num_nodes() && g.nodes[v].kind == NodeKind::kOp) targets.push_back(v);
      }
      const std::vector<int> order = DemandDrivenOrder(g, targets);
      const std::string base = cands[top].name;
      for (auto [placement, tag] : {std::make_pair(Placement::kOldestFree, "oldest"),
                                    std::make_pair(Placement::kBestFit, "bestfit")}) {
        BestOptions bo;
        bo.log = local_log;
        bo.placement = placement;
        const size_t before = cands.size();
        NPUPLAN_RETURN_IF_ERROR(add(StrCat(base, "+realloc-", tag), AllocateBest(g, order, config, bo)));
        if (cands.size() == before) continue;
        NPUPLAN_ASSIGN_OR_RETURN(ReorderResult rr, ReorderForMakespan(g, cands.back().solution, config));
        const std::string name = StrCat(cands.back().name, "+reorder-cp");
        NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g, rr.solution, config, name));
        result.candidates.push_back({name, m.extra_movement, m.makespan, ""});
        Candidate c{name, std::move(rr.solution), std::move(m), cands.back().remarks};
        c.remarks.push_back(Remark{"makespan-reorder", "ScheduleReordered", "",
                                   {{"candidate", cands.back().name},
                                    {"priority", "cp"},
                                    {"makespan_before", StrCat(rr.makespan_before)},
                                    {"makespan_after", StrCat(c.metrics.makespan)}}});
        cands.push_back(std::move(c));
      }
    }
  }
  // 4. Software pipelining on the least-traffic plans.
  if (options.strategy == Strategy::kBest && !options.pipeline_lookaheads.empty()) {
    std::vector<size_t> by_traffic(cands.size());
    for (size_t i = 0; i < cands.size(); ++i) by_traffic[i] = i;
    std::stable_sort(by_traffic.begin(), by_traffic.end(), [&](size_t a, size_t b) {
      const KernelMetrics &x = cands[a].metrics, &y = cands[b].metrics;
      return x.extra_movement != y.extra_movement ? x.extra_movement < y.extra_movement : x.makespan < y.makespan;
    });
    // Bases: the least-traffic allocator orders (not re-sequenced: their
    // operations follow the tiles) and the least-traffic re-sequenced plan.
    std::vector<size_t> bases;
    bool took_reordered = false;
    for (size_t i : by_traffic) {
      const bool reordered = cands[i].name.find("+reorder") != std::string::npos;
      if (reordered ? took_reordered
                    : bases.size() - took_reordered >= static_cast<size_t>(std::max(0, options.pipeline_bases))) {
        continue;
      }
      took_reordered |= reordered;
      bases.push_back(i);
    }
    for (size_t bi : bases) {
      const std::vector<int> ops = OpsOf(g, cands[bi].solution);
      const int64_t cap = cands[bi].metrics.extra_movement;
      const std::string base = cands[bi].name;
      for (int la : options.pipeline_lookaheads) {
        if (static_cast<int64_t>(ops.size()) * (la + 1) > options.pipeline_budget) continue;
        PipelineOptions po;
        po.lookahead = la;
        const std::string name = StrCat(base, "+pipe", la);
        auto pr = PipelinedSchedule(g, config, ops, po);
        if (!pr.ok()) {
          result.candidates.push_back({name, -1, -1, std::string(pr.status().message())});
          continue;
        }
        NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g, pr->solution, config, name));
        result.candidates.push_back({name, m.extra_movement, m.makespan, ""});
        if (m.extra_movement > cap) continue;
        // The pipelined memory decisions, re-sequenced like the other plans.
        NPUPLAN_ASSIGN_OR_RETURN(ReorderResult rr, ReorderForMakespan(g, pr->solution, config));
        const std::string rname = StrCat(name, "+reorder-cp");
        NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics rm, Verify(g, rr.solution, config, rname));
        result.candidates.push_back({rname, rm.extra_movement, rm.makespan, ""});
        cands.push_back({name, std::move(pr->solution), std::move(m), {}});
        cands.push_back({rname, std::move(rr.solution), std::move(rm), {}});
      }
    }
  }
  // 5. Improvement search: list scheduling with perturbed priorities
  // (iterated, noise growing with the step) on the plans of least makespan
  // within each objective's traffic; memory decisions are kept, so is traffic.
  if (options.strategy == Strategy::kBest && options.improve_max_steps > 0) {
    const int64_t steps =
        std::min<int64_t>(options.improve_max_steps, options.improve_budget / std::max(1, g.num_nodes()));
    const std::vector<size_t> ranked = choose(cands);
    std::vector<size_t> starts = {ranked[0]};
    size_t least = ranked[0];
    for (size_t i = 0; i < cands.size(); ++i) {
      const KernelMetrics &x = cands[i].metrics, &y = cands[least].metrics;
      if (x.extra_movement < y.extra_movement || (x.extra_movement == y.extra_movement && x.makespan < y.makespan)) {
        least = i;
      }
    }
    if (least != starts[0]) starts.push_back(least);
    for (size_t si = 0; si < starts.size(); ++si) {
      const size_t start = starts[si];
      int64_t best_ms = cands[start].metrics.makespan;
      KernelSolution best_sol;
      uint32_t best_seed = 0;
      for (int64_t step = 0; step < steps / static_cast<int64_t>(starts.size()); ++step) {
        ReorderOptions ro;
        ro.noise_seed = static_cast<uint32_t>(1 + step + 100000 * si);
        ro.noise_permille = 20 + static_cast<int>(step % 10) * 30;
        NPUPLAN_ASSIGN_OR_RETURN(ReorderResult rr, ReorderForMakespan(g, cands[start].solution, config, ro));
        if (rr.makespan_after < best_ms) {
          best_ms = rr.makespan_after;
          best_sol = std::move(rr.solution);
          best_seed = ro.noise_seed;
        }
      }
      if (best_seed == 0) continue;
      const std::string name = StrCat(cands[start].name, "+improve", best_seed);
      NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics m, Verify(g, best_sol, config, name));
      result.candidates.push_back({name, m.extra_movement, m.makespan, ""});
      cands.push_back({name, std::move(best_sol), std::move(m), cands[start].remarks});
    }
  }
  result.pareto = ParetoFrontier(result.candidates);
  // 6. Choose.
  const size_t best = choose(cands)[0];
  result.chosen = cands[best].name;
  result.solution = std::move(cands[best].solution);
  result.metrics = std::move(cands[best].metrics);
  if (options.log != nullptr && options.log->enabled()) {
    for (Remark& r : cands[best].remarks) options.log->Add(std::move(r));
    options.log->Record("kernel-planner", "CandidateChosen", "", Field("case", g.name),
                        Field("candidate", result.chosen), Field("objective", ObjectiveName(options.objective)),
                        Field("extra_movement", result.metrics.extra_movement),
                        Field("makespan", result.metrics.makespan), Field("candidates", cands.size()));
  }
  return result;
}

}  // namespace npuplan::kernel
