// Interval solver: places buffers with fixed lifetimes at offsets so that no
// two conflicting buffers overlap in memory, minimising the peak (max offset +
// size). Conflicts form a general graph: time overlap plus extra pairs (see
// interval_problem.h), so the graph-level planner can forbid reuse across
// streams that no event orders.
//
// Stages (SolveIntervals):
//   1. Check the problem, build the conflict graph, compute the lower bound
//      (max live bytes at an instant, grown into a clique with extra edges).
//   2. Greedy: first-fit with gap reuse over several buffer orders, and a
//      time sweep with best-fit free blocks; keep the best. Fast (timings:
//      docs/benchmarks.md). Problems with more conflict
//      edges than max_conflict_edges get only the sweep (no conflict graph,
//      no search): O(n log n) for millions of buffers.
//   3. Search (optional, under a time limit): a branch and bound over
//      *canonical* placements in the MiniMalloc style (ASPLOS 2023):
//        - buffers are placed in non-decreasing (offset, preorder rank) order,
//          each at the lowest offset its placed neighbours leave free;
//        - sweep-line sections: per section, floor + unplaced bytes must fit
//          under the probe capacity ("section inference");
//        - dominance: never place a buffer at or above the lowest top any
//          unplaced buffer could still reach (that would leave a useless gap);
//        - dynamic decomposition: when no unplaced buffer spans a section
//          boundary, the two sides are solved independently;
//        - restarts over several preorders with a doubling node limit.
//      Probes ask "is there a plan with peak <= cap?", in rounds of doubling
//      node budgets: the lower bound, caps bisected between it and the best
//      plan, and a ladder of caps just below the best plan (many small
//      probes: their cost is heavy-tailed and not monotone in the cap). An
//      exhausted probe raises the proven lower bound. Budgets are node
//      counts, so results are deterministic unless the time limit cuts in.
//
//   offset ^  canonical: each buffer sits on the highest conflicting
//          |  buffer placed before it (or 0); offsets never decrease
//          |  along the placement order.
//          |  +----+
//          |  | c  |---+
//          |  +----+ d |       order a, b, c, d
//          |  | a  +---+--+
//          |  |    |  b   |
//          +--+----+------+--> time
#ifndef NPUPLAN_MEMORY_INTERVAL_SOLVER_H_
#define NPUPLAN_MEMORY_INTERVAL_SOLVER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "npuplan/memory/interval_problem.h"

namespace npuplan::memory {

// Solver knobs; the defaults are what the CLI and the planner use.
struct IntervalSolverOptions {
  // Wall-clock budget in seconds for the search stage (greedy always runs).
  double time_limit_seconds = 10.0;
  // Run the branch-and-bound search after greedy (false = greedy only).
  bool search = true;
  // Only explore canonical placements (offsets non-decreasing in order).
  bool canonical_only = true;
  // Prune when a section's floor plus its unplaced bytes exceed the probe cap.
  bool section_inference = true;
  // Raise a section's floor to the lowest offset its unplaced buffers can take.
  bool unallocated_floor = true;
  // Skip placements at or above the lowest reachable top of an unplaced buffer.
  bool check_dominance = true;
  // Split the search where no unplaced buffer spans a section boundary.
  bool dynamic_decomposition = true;
  // Stop as soon as the peak reaches this value (0 = only at the lower bound).
  int64_t target_peak = 0;
  // With a capacity: stop at the first plan that fits in it (MiniMalloc's
  // question) instead of lowering the peak further.
  bool stop_at_capacity = false;
  // Stop the search after this many nodes (0 = no limit). Unlike the time
  // limit, a node limit gives the same result on any machine.
  int64_t max_nodes = 0;
  // Stop the search after this many steps (0 = no limit): a step is one
  // buffer or section a search node visits, so steps track CPU time on any
  // problem size while staying machine-independent (a node of a 6,000-buffer
  // problem costs thousands of steps, one of a 100-buffer problem ~100).
  int64_t max_steps = 0;
  // Problems whose conflict graph has more edges than this (time overlaps
  // plus extra pairs) skip the conflict graph, the first-fit orders and the
  // search: a time sweep with best-fit free blocks places them in
  // O(n log n + extra pairs), and the bound is the max live bytes
  // (`stats.scalable`). 0 = never. A count, so the choice is deterministic.
  int64_t max_conflict_edges = 1'000'000;
  // ComputeTimeProfile(problem) when the caller has it already (the pool
  // planner computes it to decide whether to run the solver at all): one
  // sweep over a million buffers instead of two. Must be that problem's.
  std::optional<TimeProfile> time_profile;
  // Check the result with ValidateIntervalAssignment (an internal error when
  // it fails). Callers that check what they use independently turn it off:
  // memplan validates the packing itself, and memory-planning's placements
  // are checked by the final plan verification (VerifyMemoryPlan), under the
  // real lifetimes and stream order rather than the planning ones.
  bool validate = true;
};

// Counters and timings of one solve, for benchmarks and the CLI.
struct IntervalSolverStats {
  int64_t greedy_peak = 0;      // best greedy peak
  std::string greedy_order;     // name of the order that produced it
  int64_t nodes = 0;            // search nodes over all probes
  int64_t backtracks = 0;       // search nodes whose every child failed
  int probes = 0;               // feasibility probes run
  double greedy_seconds = 0;    // wall time of stages 1-2
  double search_seconds = 0;    // wall time of stage 3
  bool timed_out = false;       // the search stopped at the time limit
  bool node_limit_hit = false;  // the search stopped at max_nodes
  bool steps_exhausted = false; // the search stopped at max_steps
  bool fits_capacity = false;   // stopped at the first plan within the capacity
  int64_t steps = 0;            // search steps (see max_steps)
  int64_t conflict_edges = 0;   // time overlaps + extra pairs
  bool scalable = false;        // solved by the sweep alone (max_conflict_edges)
};

// A valid plan with its quality measures.
struct IntervalSolution {
  IntervalAssignment assignment;
  int64_t peak = 0;         // max(offset + size)
  int64_t lower_bound = 0;  // proven: no plan has a smaller peak
  bool optimal = false;     // peak == lower_bound
  IntervalSolverStats stats;
  // (peak - lower_bound) / lower_bound, 0 when lower_bound is 0.
  double gap() const {
    return lower_bound > 0 ? static_cast<double>(peak - lower_bound) / lower_bound : 0.0;
  }
};

// Solves `problem`. Errors: InvalidArgument (bad problem, see
// CheckIntervalProblem; bad options), ResourceExhausted ("infeasible: needs at
// least N bytes" when a capacity is given and proven too small),
// DeadlineExceeded (capacity given, no plan under it found in time).
absl::StatusOr<IntervalSolution> SolveIntervals(const IntervalProblem& problem,
                                                const IntervalSolverOptions& options = {});

}  // namespace npuplan::memory

#endif  // NPUPLAN_MEMORY_INTERVAL_SOLVER_H_
