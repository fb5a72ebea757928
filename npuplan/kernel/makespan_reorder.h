// Q3: makespan-driven reordering of a complete kernel solution (pass name
// `makespan-reorder`).
//
// What it does: keeps every memory decision of a valid solution (initial
// offsets, the spilled buffers and their reload offsets) and re-sequences the
// schedule with a pipe-aware list scheduler. The constraint graph G' is the
// one the evaluator times: original edges, the spill edges (ALLOC->SPILL_OUT->
// SPILL_IN->FREE, users before/after, previous SPILL_IN->next SPILL_OUT) and the
// address-reuse edges (the end of the previous occupant of any address ->
// the node that starts the next residency there). Any topological order of G'
// is again a valid solution with the same extra data movement: two residencies
// that share an address stay ordered by a reuse edge, and every user keeps its
// side of each SPILL. The scheduler simulates the six in-order pipes
// (MTE1/MTE2/MTE3/FIXP/CUBE/VECTOR): whenever the pipe that can start soonest
// is free, it runs the available node with the highest priority, so loads of
// the next tile and SPILL_INs are issued as soon as their addresses are free
// (spills leave the critical path) instead of where the allocator put them.
//
//   Priority::kCriticalPath  longest path to the end of G' (cycles), then the
//                            input position
//   Priority::kInputOrder    input position only (non-delay, FIFO-like)
//
// Ties break by input position (a topological index), never by pointer or
// hash order. Spill records are renumbered so that they stay in SPILL_OUT
// order. Complexity O((N + E' ) log N + sum of segment sizes), E' = edges of G'.
//
// Requires: a solution that EvaluateSolution accepts. Provides: a solution
// with the same offsets, spilled buffers and extra movement.
// Decision keywords (docs/kernel.md): ScheduleReordered (pass, priority,
// makespan_before, makespan_after).
#ifndef NPUPLAN_KERNEL_MAKESPAN_REORDER_H_
#define NPUPLAN_KERNEL_MAKESPAN_REORDER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/solution.h"

namespace npuplan::kernel {

struct ReorderOptions {
  enum class Priority { kCriticalPath, kInputOrder };
  Priority priority = Priority::kCriticalPath;
  // Improvement search (kCriticalPath only): each node's bottom level is
  // scaled by a factor in [1 - noise_permille/1000, 1] drawn from a generator
  // seeded with noise_seed (0 = no noise). Deterministic for a seed.
  uint32_t noise_seed = 0;
  int noise_permille = 0;
};

struct ReorderResult {
  KernelSolution solution;
  int64_t makespan_before = 0;  // evaluator's makespan of the input
  int64_t makespan_after = 0;   // list scheduler's makespan (the evaluator agrees)
};

// InvalidArgument when `solution` is not valid (the evaluator's message).
absl::StatusOr<ReorderResult> ReorderForMakespan(const KernelGraph& g, const KernelSolution& solution,
                                                 const CacheConfig& config,
                                                 const ReorderOptions& options = {});

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_MAKESPAN_REORDER_H_
