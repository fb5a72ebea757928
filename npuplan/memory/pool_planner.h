// The activation pool's plan (memory-planning stage 3, memory_planning.h):
// the interval solver packs the pool over the planning lifetimes (widened
// where StreamAwareReuse::Conflicts gave up on exact pairs), the stream sweep
// (stream_sweep.h) places it again with per-stream release times, and the
// lower peak wins (the solver keeps ties).
//
// The solver is not run when it cannot win: every plan it returns is valid
// for the widened lifetimes, so its peak is at least their max live bytes;
// when that exceeds the sweep's peak, the sweep's plan is kept anyway. This
// skips about a second on a 1M-node transformer, whose widened lifetimes
// double the live bytes; the plan and every reported number are the same
// (see PlanPool).
#ifndef NPUPLAN_MEMORY_POOL_PLANNER_H_
#define NPUPLAN_MEMORY_POOL_PLANNER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/memory/interval_solver.h"
#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/tensor_lifetimes.h"

namespace npuplan::memory {

struct PoolPlanOptions {
  int64_t alignment = 512;
  int64_t search_steps = 0;       // npuplan.memory.searchSteps (0: greedy only)
  double time_limit_seconds = 0;  // npuplan.memory.timeLimit (0: none)
  int64_t max_conflict_edges = IntervalSolverOptions().max_conflict_edges;
  // Skip the solver when it provably cannot beat the sweep (false: always
  // run it; for tests that check the skip changes nothing).
  bool skip_losing_solver = true;
};

struct PoolPlan {
  // Offsets by position in the pool; lower_bound / optimal as the pass
  // reports them (the max live bytes of the true lifetimes when some were
  // widened, as the solver's bound holds for the widened ones only).
  IntervalSolution solution;
  std::string method;           // greedy | search | sweep | stream-sweep
  int64_t extra_conflicts = 0;  // exact conflict pairs given to the solver
  bool solver_skipped = false;  // the sweep won without running the solver
};

// Plans the buffers `pool` (indices into lt.buffers) with the planning
// lifetimes and pairs of `conflicts` (its pairs move out). `lap` is called
// with a stage name after each stage (for --stats). Errors name the pool.
absl::StatusOr<PoolPlan> PlanPool(const TensorLifetimes& lt, const StreamAwareReuse& reuse,
                                  const std::vector<int>& pool,
                                  StreamAwareReuse::PlanningConflicts& conflicts,
                                  const PoolPlanOptions& options,
                                  const std::function<void(std::string_view)>& lap);

}  // namespace npuplan::memory

#endif  // NPUPLAN_MEMORY_POOL_PLANNER_H_
