// The control-flow owner types, written once: the simulator repeats a loop
// owner's subgraphs, and tensor lifetimes keep what a loop body touches alive
// across iterations. Two lists once disagreed on ONNX's Loop, so the planner
// and the memory verifier shared memory across iterations that the simulator
// ran.
#ifndef NPUPLAN_IR_CONTROL_FLOW_TYPES_H_
#define NPUPLAN_IR_CONTROL_FLOW_TYPES_H_

#include <string_view>

#include "npuplan/ir/graph.h"

namespace npuplan {

// Owners that run one of their subgraphs (If/Case families).
inline bool IsBranchType(std::string_view t) {
  return t == "If" || t == "_If" || t == "StatelessIf" || t == "Case" || t == "StatelessCase";
}
// Owners whose subgraphs repeat: GE's While family and For, ONNX's Loop.
inline bool IsLoopType(std::string_view t) {
  return t == "While" || t == "_While" || t == "StatelessWhile" || t == "For" || t == "Loop";
}
// A loop gate (events/loop_gates.h): a node without a task, edges or outputs,
// on one stream right before (entry) or after (exit) a static loop's owner in
// the owner's graph, where an event into or out of the loop is waited or
// recorded once per run of the loop instead of once per iteration; or at the
// end of the loop's last run (tail), where the next iteration's barrier waits
// — or, in a loop the host runs, at the end of any run, where a task after
// the run's last slot on the owner's stream joins it (loop-join) — or at the
// start of its first run (head), from where the barrier reaches a stream of
// attached slots only (plan/loop_order.h). Not a subgraph root: it reads
// nothing of the parent.
inline constexpr std::string_view kLoopGateType = "LoopGate";
inline bool IsLoopGate(const Node& n) { return n.type == kLoopGateType; }
inline bool IsBranchNode(const Node& n) { return IsBranchType(n.type); }
inline bool IsLoopNode(const Node& n) { return IsLoopType(n.type); }

}  // namespace npuplan

#endif  // NPUPLAN_IR_CONTROL_FLOW_TYPES_H_
