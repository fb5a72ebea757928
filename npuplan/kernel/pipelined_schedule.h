// Q3: software-pipelined scheduling with allocation in time order (pass name
// `pipelined-schedule`).
//
// What it does: walks a reference order of the operations (normally the
// operation order of the least-traffic plan) and simulates the in-order pipes
// as the evaluator times them, deciding memory as it goes. The head (the first
// operation of the reference order not yet issued) is handled like
// AllocateBest handles it: when its buffers do not fit, the window of least
// sum(traffic / distance to next use in the reference order) is spilled. The
// next `lookahead` operations may be issued ahead of the head when everything
// they need fits into free space (never by spilling) — loads of the next
// tiles and reloads of spilled buffers go into the second half of a double
// buffer while the current tile computes. Among the issuable operations the
// one that can start first runs (ties: earlier in the reference order). Free
// space is chosen by the time its addresses were released (oldest first), so
// a prefetch rarely waits on an address-reuse edge.
//
// With lookahead 0 the schedule is the reference order itself. Operations
// issued ahead may take space the head later needs, so the traffic can
// differ from the reference plan's: the planner keeps a pipelined plan only
// when its verified traffic is within its target.
//
// Requires: a valid graph and an order of all its operations that respects
// the edges. Provides: a complete solution (schedule with spill nodes,
// offsets, spills in SPILL_OUT order); the planner verifies it with the
// evaluator. ResourceExhausted when the head cannot be placed (an L0 cache
// held by operations issued ahead, or a buffer larger than its cache).
// Decision keywords: none of its own (the planner logs the chosen candidate).
#ifndef NPUPLAN_KERNEL_PIPELINED_SCHEDULE_H_
#define NPUPLAN_KERNEL_PIPELINED_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/solution.h"

namespace npuplan::kernel {

struct PipelineOptions {
  int lookahead = 8;  // operations of the reference order that may run ahead of the head
};

struct PipelineResult {
  KernelSolution solution;
  int64_t makespan = 0;  // of the simulation (the evaluator's, for a valid result)
};

// `ops`: every operation node once, in a topological order.
absl::StatusOr<PipelineResult> PipelinedSchedule(const KernelGraph& g, const CacheConfig& config,
                                                 const std::vector<int>& ops,
                                                 const PipelineOptions& options = {});

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_PIPELINED_SCHEDULE_H_
