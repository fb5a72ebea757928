// The activation pool's plan: interval solver and stream sweep (see
// pool_planner.h).
#include "npuplan/memory/pool_planner.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "npuplan/memory/stream_sweep.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::memory {
namespace {

// The pool as an interval problem: the lifetimes to plan with and the
// cross-stream conflict pairs (`conflicts`, whose pairs move into it). Its
// ids view the buffers' names (`lt` outlives it).
// Also copies the buffers' true lifetimes into `lifetime` (by position in
// the pool), in the same pass over the buffers.
IntervalProblem PoolProblem(const TensorLifetimes& lt, const std::vector<int>& pool,
                            StreamAwareReuse::PlanningConflicts& conflicts, int64_t alignment,
                            BigVector<std::pair<int64_t, int64_t>>& lifetime) {
  IntervalProblem problem;
  problem.buffers.reserve(pool.size());
  lifetime.resize(pool.size());
  for (size_t i = 0; i < pool.size(); ++i) {
    const LogicalBuffer& buf = lt.buffers[pool[i]];
    problem.buffers.push_back(
        {BufferId::View(buf.name), conflicts.lower[i], conflicts.upper[i], buf.size, alignment});
    lifetime[i] = {buf.lower, buf.upper};
  }
  problem.extra_conflicts = std::move(conflicts.pairs);
  return problem;
}

// The solver's or the check's error, naming the pool.
absl::Status PoolError(size_t buffers, const absl::Status& status) {
  return absl::Status(status.code(), StrCat("memory-planning: activation pool of ", buffers,
                                            " buffers: ", std::string(status.message())));
}

// Runs the interval solver under the search budget of `options`.
absl::StatusOr<IntervalSolution> SolvePool(const IntervalProblem& problem,
                                           const PoolPlanOptions& options,
                                           std::optional<TimeProfile> profile) {
  IntervalSolverOptions solver_options;
  solver_options.time_profile = std::move(profile);
  solver_options.time_limit_seconds =
      options.time_limit_seconds > 0 ? options.time_limit_seconds : 1e9;
  solver_options.max_steps = options.search_steps;
  solver_options.search = options.search_steps > 0;
  solver_options.max_conflict_edges = options.max_conflict_edges;
  solver_options.validate = false;  // the final plan verification checks the placements
  absl::StatusOr<IntervalSolution> solved = SolveIntervals(problem, solver_options);
  if (!solved.ok()) return PoolError(problem.buffers.size(), solved.status());
  return std::move(solved).value();
}

// The sweep's plan, or nullopt when the solver may still win (run it): the
// solver's plan is valid for the planning lifetimes, so its peak is at least
// their max live bytes `widened`; when widened > the sweep's peak, the sweep
// wins (it replaces the solver's plan when strictly lower). Only when the
// solver would take its scalable path (too many conflict edges: one sweep
// with best fit, no search), whose statistics are known without running it.
// Runs only when some lifetime was widened: otherwise widened is the true
// bound, which no plan (the sweep's included) beats.
std::optional<PoolPlan> SweepIfSolverLoses(const IntervalProblem& problem,
                                           const TimeProfile& profile, int64_t widened,
                                           const SweepResult& swept,
                                           const PoolPlanOptions& options) {
  if (widened <= swept.peak) return std::nullopt;
  PoolPlan plan;
  IntervalSolverStats& stats = plan.solution.stats;
  stats.conflict_edges = profile.overlaps + static_cast<int64_t>(problem.extra_conflicts.size());
  stats.scalable = !problem.forbid_sharing && options.max_conflict_edges > 0 &&
                   stats.conflict_edges > options.max_conflict_edges;
  if (!stats.scalable) return std::nullopt;  // the search's counters would differ
  plan.solution.assignment.offsets = swept.offsets;
  plan.solution.peak = swept.peak;
  plan.method = "stream-sweep";
  plan.extra_conflicts = static_cast<int64_t>(problem.extra_conflicts.size());
  plan.solver_skipped = true;
  return plan;
}

// The solver's plan, replaced by the sweep's when that beats it (the solver
// keeps ties). The sweep is not run when the solver reaches `true_bound`, a
// bound on every plan (it could not beat it then); `swept` is its plan when
// it ran already.
std::string KeepBetterSweep(const StreamAwareReuse& reuse, const std::vector<int>& pool,
                            int64_t alignment, int64_t true_bound, std::optional<SweepResult> swept,
                            IntervalSolution& sol) {
  std::string method = sol.stats.scalable ? "sweep" : (sol.stats.nodes > 0 ? "search" : "greedy");
  if (sol.peak <= true_bound) return method;
  if (!swept) {
    swept = SweepStreamAware(reuse.SweepInputTable(pool, alignment));
  }
  if (swept->peak < sol.peak) {
    sol.assignment.offsets = std::move(swept->offsets);
    sol.peak = swept->peak;
    method = "stream-sweep";
  }
  return method;
}

}  // namespace

absl::StatusOr<PoolPlan> PlanPool(const TensorLifetimes& lt, const StreamAwareReuse& reuse,
                                  const std::vector<int>& pool,
                                  StreamAwareReuse::PlanningConflicts& conflicts,
                                  const PoolPlanOptions& options,
                                  const std::function<void(std::string_view)>& lap) {
  // The true lifetimes, copied out of the buffers (which the sweep's sorts
  // would visit at random; on reused pages: 16 bytes per buffer) while the
  // problem is made (one pass over the large buffer records, not two).
  BigVector<std::pair<int64_t, int64_t>> lifetime;
  const IntervalProblem problem = PoolProblem(lt, pool, conflicts, options.alignment, lifetime);
  lap("memory-planning: conflicts");
  // The bound of every plan: max live bytes over the true lifetimes.
  const std::optional<int64_t> true_bound = MaxLiveBytesOf(
      pool.size(), [&](int i) { return lifetime[i].first; },
      [&](int i) { return lifetime[i].second; }, [&](int i) { return problem.buffers[i].size; });
  FreeStorage(lifetime);
  std::optional<SweepResult> swept;
  std::optional<TimeProfile> time_profile;  // the solver's too, when computed here
  if (options.skip_losing_solver && conflicts.extended > 0 && true_bound) {
    const TimeProfile& profile = time_profile.emplace(ComputeTimeProfile(problem));
    const std::optional<int64_t> widened = profile.max_live;
    // The sweep can only lose to the solver's plan if widened <= its peak,
    // and its peak is >= true_bound: no early sweep when widened is not above.
    if (widened && *widened > *true_bound) {
      if (absl::Status s = CheckIntervalProblem(problem); !s.ok())
        return PoolError(problem.buffers.size(), s);  // as the solver would
      swept = SweepStreamAware(reuse.SweepInputTable(pool, options.alignment));
      lap("memory-planning: stream sweep");
      if (std::optional<PoolPlan> plan =
              SweepIfSolverLoses(problem, profile, *widened, *swept, options)) {
        plan->solution.lower_bound = *true_bound;  // some lifetime was widened
        plan->solution.optimal = plan->solution.peak == plan->solution.lower_bound;
        return std::move(plan).value();
      }
    }
  }
  const bool swept_early = swept.has_value();
  PoolPlan plan;
  NPUPLAN_ASSIGN_OR_RETURN(plan.solution, SolvePool(problem, options, std::move(time_profile)));
  lap("memory-planning: interval solver");
  // The solver checked the sizes: their sum fits in int64.
  NPUPLAN_RET_CHECK(true_bound.has_value());
  IntervalSolution& sol = plan.solution;
  plan.method = KeepBetterSweep(reuse, pool, options.alignment, *true_bound, std::move(swept), sol);
  if (!swept_early) lap("memory-planning: stream sweep");
  // The solver's bound holds for the widened lifetimes only.
  if (conflicts.extended > 0) sol.lower_bound = *true_bound;
  sol.lower_bound = std::min(sol.lower_bound, sol.peak);
  sol.optimal = sol.peak == sol.lower_bound;
  plan.extra_conflicts = static_cast<int64_t>(problem.extra_conflicts.size());
  return plan;
}

}  // namespace npuplan::memory
