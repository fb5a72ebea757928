// MemoryRaceChecker (SPEC R3, M): checks a plan's device memory against one
// run of its program, trusting neither the memory planner nor the
// happens-before relation it and the memory verifier reason with.
//
// The run's order is what the device would enforce: each stream's queue
// order, and each wait after the record it binds to (sim::PlanProgram: only
// the branch of each If/Case that runs, loop bodies unrolled). Vector clocks
// (over lanes, below) give, for every task run, the task runs that finish
// before it starts.
//
// What a task touches is read from the graph: its node's data inputs, its
// outputs and its workspace (attached tasks count as touching them too).
// Each touched tensor with a placement in the activation/workspace pool is
// an address range; the logical buffers of tensor_lifetimes.h say which
// tensors are one value (ref / in-place outputs, subgraph boundaries). A
// buffer's *instance* is its touches in the run — one per loop iteration for
// an iteration-local buffer. Two instances whose address ranges intersect
// must be ordered: every touch of one finishes before any touch of the other
// starts. Otherwise one may overwrite what the other still reads:
//
//   s0: [a writes A]            [c reads A]      A and B at the same offset:
//   s1:        [b writes B][d reads B]           b runs between a and c — race
//
// Instances are taken in order of their first touch in the run; an address
// map keeps, per byte range, the instance that touched it last, and a new
// instance is checked against each instance it takes a range from (the
// order is transitive, so the earlier owners are covered). The clocks run
// over lanes, chains of task runs that streams hand on (the physical pieces
// of a logical stream share a few), and are stored once per wait, record and
// lane change: O((T + W + R)·L + I·L·log I) for T task runs, W waits,
// R records, I instances and L lanes.
//
// Hazards: within one buffer instance, a write by a computing node's main
// task must come after every earlier touch by another node run (a write
// over what a reader has not read yet: a ref / in-place output racing
// another reader of its input, a loop-carried value rewritten before the
// last iteration's readers finished), and a read after the latest write.
// Only nodes that compute count there: control-flow owners' tasks and nodes
// that pass a value on (a subgraph's Data / NetOutput) move no data, and
// attached tasks' order inside their node is the kernel's.
//
// Unlike the dependency checker, nothing here depends on timing: the same
// plan and control flow always give the same races.
#ifndef NPUPLAN_EXEC_MEMORY_RACE_CHECKER_H_
#define NPUPLAN_EXEC_MEMORY_RACE_CHECKER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/plan/plan.h"
#include "npuplan/sim/plan_program.h"

namespace npuplan::exec {

struct MemoryRaceReport {
  size_t lanes = 0;      // chains of task runs the clocks run over
  size_t instances = 0;  // buffer instances touched in the run (pool only)
  size_t checked = 0;    // instance pairs checked
  size_t races = 0;      // pairs that overlap in memory and are not ordered
  // Touches of one buffer instance a write is not ordered with (hazard rule,
  // above).
  size_t hazards = 0;
  // The first races described ("memory race: ..."), by first touch, then the
  // first hazards ("memory hazard: ...").
  size_t problems() const { return races + hazards; }
  std::vector<std::string> messages;
  static constexpr size_t kMaxMessages = 20;
  // Non-empty: why the check did not run (its clocks beyond the budget).
  std::string skipped;
};

// The clocks' budget: the entries stored (a clock per wait, record and lane
// change, over the lanes its stream knows then) and the entries read (task
// runs × lanes). 2^28 int32 entries = 1 GiB.
inline constexpr uint64_t kDefaultMemoryCheckBudget = uint64_t{1} << 28;

class MemoryRaceChecker {
 public:
  // An empty report when the plan has no memory plan. InvalidArgument when a
  // tensor of the graph has no valid logical buffer (the graph's memory
  // attributes are malformed) or the program cannot complete.
  // A report with `skipped` set when the clocks would exceed `budget`.
  static absl::StatusOr<MemoryRaceReport> Check(const Plan& plan, const sim::PlanProgram& program,
                                                uint64_t budget = kDefaultMemoryCheckBudget);
};

}  // namespace npuplan::exec

#endif  // NPUPLAN_EXEC_MEMORY_RACE_CHECKER_H_
