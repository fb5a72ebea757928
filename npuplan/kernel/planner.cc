#include "npuplan/kernel/planner.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "npuplan/kernel/allocator.h"
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

namespace {

struct Candidate {
  std::string name;
  KernelSolution solution;
  KernelMetrics metrics;
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

}  // namespace

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
  auto add = [&](std::string name, absl::StatusOr<KernelSolution> sol) -> absl::Status {
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
    cands.push_back({std::move(name), std::move(*sol), std::move(m)});
    return absl::OkStatus();
  };
  NPUPLAN_RETURN_IF_ERROR(add("seed/q1", AllocateSeed(g, result.q1.order, config)));
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
      NPUPLAN_RETURN_IF_ERROR(add(absl::StrCat("best/", orders[i].first, "/bestfit"),
                                  AllocateBest(g, orders[i].second, config, {})));
      if (cands.size() > before) by_traffic.emplace_back(cands.back().metrics.extra_movement, i);
    }
    std::sort(by_traffic.begin(), by_traffic.end());
    const size_t keep = std::min<size_t>(by_traffic.size(), options.oldest_free_orders);
    for (size_t j = 0; j < keep; ++j) {
      BestOptions bo;
      bo.placement = Placement::kOldestFree;
      const auto& [oname, order] = orders[by_traffic[j].second];
      NPUPLAN_RETURN_IF_ERROR(add(absl::StrCat("best/", oname, "/oldest"), AllocateBest(g, order, config, bo)));
    }
  }
  if (cands.empty()) return first_error;
  // 3. Choose.
  int64_t min_extra = cands[0].metrics.extra_movement;
  for (const Candidate& c : cands) min_extra = std::min(min_extra, c.metrics.extra_movement);
  auto key = [&](const Candidate& c) {
    const KernelMetrics& m = c.metrics;
    switch (options.objective) {
      case Objective::kTraffic:
        return std::make_tuple(m.extra_movement, m.makespan, 0);
      case Objective::kTime:
        return std::make_tuple(m.makespan, m.extra_movement, 0);
      case Objective::kBalanced:
      default: {
        const bool within = m.extra_movement <= min_extra + static_cast<int64_t>(options.balanced_slack * min_extra);
        return std::make_tuple(static_cast<int64_t>(within ? 0 : 1), within ? m.makespan : m.extra_movement,
                               0);
      }
    }
  };
  size_t best = 0;
  for (size_t i = 1; i < cands.size(); ++i) {
    if (key(cands[i]) < key(cands[best])) best = i;
  }
  result.chosen = cands[best].name;
  result.solution = std::move(cands[best].solution);
  result.metrics = std::move(cands[best].metrics);
  return result;
}

}  // namespace npuplan::kernel
