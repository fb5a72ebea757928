// Node dependencies of a plan: which producers must have finished before a
// node's task may start. Shared by the dependency checker (npuplan/exec) and
// the simulator's critical path. It looks at the graph only, never at
// streams or events, so it cannot inherit a mistake of the events stage.
//
// Direct producers of node v:
//   data-edge       every data input's producer;
//   control-edge    every control input;
//   subgraph-input  v is a subgraph Data node with _parent_node_index i: the
//                   producer of the parent node's input i.
// A producer that owns subgraphs (If/While/Case/PartitionedCall) produces its
// outputs through them: its consumers also depend on the producers of each
// subgraph's NetOutput ("subgraph-output").
// A producer without a task (main stream -1: Const, skipped engines, a
// NetOutput or Data left off the streams) is complete from the start, so it
// is looked through: v depends on that node's own sources instead (recursively).
//
//   parent If(p) ── then{ Data(i=0) → t1 → NetOutput } ── consumer c
//   t1 depends on p.inputs[0]'s producer (via Data), c on p and t1 (via NetOutput)
//
// Attached-stream tasks are not checked (they are run; see docs/execution.md).
#ifndef NPUPLAN_SIM_DEPENDENCIES_H_
#define NPUPLAN_SIM_DEPENDENCIES_H_

#include <vector>

#include "npuplan/plan/plan.h"

namespace npuplan::sim {

struct Dependency {
  NodeId producer;     // a node with a task
  NodeId via;          // the direct producer it was found through (== producer when direct)
  const char* kind;    // "data-edge" | "control-edge" | "subgraph-input" | "subgraph-output"
};

// Dependencies of every node with a task (main stream >= 0), indexed by
// NodeId; empty for nodes without a task. Each producer appears once per
// consumer (first kind found, in input order), never the consumer itself.
std::vector<std::vector<Dependency>> BuildDependencies(const Plan& plan);

}  // namespace npuplan::sim

#endif  // NPUPLAN_SIM_DEPENDENCIES_H_
