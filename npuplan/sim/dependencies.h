// Node dependencies of a plan: which producers must have finished before a
// node's task may start. Shared by the dependency checker (npuplan/exec) and
// the simulator's critical path. It looks at the graph only, never at
// streams or events, so it cannot inherit a mistake of the events stage.
//
// Direct producers of node v:
//   data-edge       every data input's producer;
//   control-edge    every control input;
//   subgraph-input  v is a subgraph Data node with _parent_node_index i: the
//                   producer of the parent node's input i;
//   owner-control   v is a source of a subgraph (IsGraphSource: no data
//                   input, no control input but Send/Recv nodes and loop
//                   gates): every control input of its owner and of each
//                   enclosing owner (ir/owner_control_inputs.h) — a control
//                   edge into an owner orders all of its subgraphs.
// A producer that owns subgraphs (If/While/Case/PartitionedCall) produces its
// outputs through them: its consumers also depend on the producers of each
// subgraph's NetOutput ("subgraph-output") — except a Send/Recv node, which
// reads no value: behind a control edge from a node with a task it waits for
// that node's own task only (a Send recording an event of an If/While).
// A producer without a task (main stream -1: Const, skipped engines, a
// NetOutput or Data left off the streams) is complete from the start, so it
// is looked through: v depends on that node's own sources instead (recursively).
// Nodes inside an FFTS / FFTS+ subgraph (npuplan/ir/ffts_regions.h) count as
// nodes without a task too: the owner's FFTS task runs and orders them, so
// they have no dependencies of their own and consumers look through them.
//
//   parent If(p) ── then{ Data(i=0) → t1 → NetOutput } ── consumer c
//   t1 depends on p.inputs[0]'s producer (via Data), c on p and t1 (via NetOutput)
//
// Attached-stream tasks (BuildAttachedDependencies) — a node's work on an
// attached stream is a task of its own:
//   attached-value  attached task a of v waits for the producers of the inputs
//                   named by its `_attached_stream_depend_value_list`
//                   (Data/Const-like producers excluded: ready before the
//                   model starts); a producer that has attached streams
//                   produces that value on its first one (GE's attached →
//                   attached case), else on its main task (looked through as
//                   above when it has none);
//   control-edge    a Send/Recv node placed on an attached stream of its
//                   control neighbour (GE's attached-stream sync nodes)
//                   orders that neighbour's attached task: a Send after it
//                   waits for the attached task, a Recv before it is waited
//                   for by the attached task (not by the main task);
//   attached-end    the root graph's NetOutput waits for every attached task
//                   of the model: a model has not finished while work on an
//                   attached stream is still running (what GE's
//                   CoverAllStreamByNetoutput is for).
//
// Control flow (control_flow.h), when a ControlFlow is given: nodes in a
// branch that does not run have no task (looked through like nodes without a
// stream), and a node inside loops runs once per iteration. Each dependency
// then says which producer runs a consumer run needs (RequiredRuns): the run
// of the same iteration of every loop around both, or — for a producer in a
// loop the consumer is not in — all of the producer's runs in that
// iteration. One more kind reads across iterations:
//   loop-carried    a Data of a loop's subgraph that stands for a loop
//                   variable reads, from the second iteration on, the value
//                   the body's NetOutput produced for it in the iteration
//                   before. GE While types (While, _While, StatelessWhile):
//                   cond or body Data with _parent_node_index i reads the
//                   NetOutput input k with _parent_output_index[k] == i,
//                   else k == i. GE For (start, limit, delta, x_0 …): body
//                   Data 3 + j reads body output j (matched the same way);
//                   Data 0, the counter, reads none. ONNX Loop (body inputs
//                   iteration number, condition, v_0 …; outputs condition,
//                   v_0 …, scan outputs): the condition reads body output 0,
//                   v_j the output with _parent_output_index j (else 1 + j),
//                   the iteration number and captured outer values none;
//                   _parent_node_index counts present inputs only, so the
//                   Loop's _onnx_absent_inputs positions are added back. A
//                   value passed through unchanged is traced one iteration
//                   back only.
#ifndef NPUPLAN_SIM_DEPENDENCIES_H_
#define NPUPLAN_SIM_DEPENDENCIES_H_

#include <vector>

#include "npuplan/plan/plan.h"
#include "npuplan/sim/control_flow.h"

namespace npuplan::sim {

struct Dependency {
  NodeId producer;     // a node with a task
  NodeId via;          // the direct producer it was found through (== producer when direct)
  const char* kind;    // "data-edge" | "control-edge" | "subgraph-input" | "owner-control"
                       // | "subgraph-output"
                       // | "attached-value" | "attached-end"
  int32_t producer_attached = -1;  // -1: the producer's main task, else its attached task
  // Loops around both consumer and producer (loop-carried: the level, 1 =
  // outermost, of the loop whose previous iteration it reads).
  uint8_t shared_loops = 0;
  bool loop_carried = false;
};

// How many runs of the producer must have finished before run `run` of the
// consumer (a node `consumer_depth` loops deep; the producer
// `producer_depth`) may start; 0 = none (the first iteration of a
// loop-carried dependency).
int64_t RequiredRuns(const ControlFlow& cf, const Dependency& d, size_t consumer_depth, size_t producer_depth,
                     int64_t run);

// Dependencies of every node with a task (main stream >= 0), indexed by
// NodeId; empty for nodes without a task. Each producer appears once per
// consumer (first kind found, in input order), never the consumer itself.
// With `control_flow`: as described above (nullptr: every node runs once).
std::vector<std::vector<Dependency>> BuildDependencies(const Plan& plan, const ControlFlow* control_flow = nullptr);

struct AttachedDependencies {
  // [NodeId][attached index]: what that attached task waits for; empty for
  // attached streams without a stream id or nodes without a main task.
  std::vector<std::vector<std::vector<Dependency>>> of_attached;
  // [NodeId]: extra dependencies of main tasks ("attached-end", on root
  // NetOutputs only).
  std::vector<std::vector<Dependency>> of_main;
};
AttachedDependencies BuildAttachedDependencies(const Plan& plan, const ControlFlow* control_flow = nullptr);

}  // namespace npuplan::sim

#endif  // NPUPLAN_SIM_DEPENDENCIES_H_
