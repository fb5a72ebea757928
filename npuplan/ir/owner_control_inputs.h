// Owner control inputs (docs/events.md, "Control edges into an owner"): a
// control edge into a node that owns subgraphs orders the whole of them, as
// in GE, where a subgraph runs from its owner's place (a static If / While is
// lowered to labels on the owner's stream, a PartitionedCall is launched once
// all its dependencies are done). npuplan's events enter a subgraph by data
// flow — a node reading a `Data` waits for that input's producer — so the
// rule is stated on each subgraph's *sources*, the nodes with no data input
// and no control input but Send/Recv nodes and loop gates: a source of
// subgraph g runs after every control input of g's owner and of each owner
// enclosing it (an If in a PartitionedCall behind a control edge). Every node
// of g follows a source of g in g's order, so the whole subgraph runs after
// them. FFTS / FFTS+ and thread-scope owners run their subgraphs inside
// their own task, which their own edges order: their subgraphs (and all
// below) add none.
//
// One definition, read by the events stage (sync_event_rules.cc), its
// verifier (verify/sync_dependencies.cc), the memory verifier's happens-before
// (verify/happens_before.cc) and the CPU back end's dependency model
// (sim/dependencies.cc), so that none of them reads it differently.
#ifndef NPUPLAN_IR_OWNER_CONTROL_INPUTS_H_
#define NPUPLAN_IR_OWNER_CONTROL_INPUTS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "npuplan/ir/graph.h"

namespace npuplan {

// A node with no data input and no control input but the order-only ones
// (CarriesOnlyOrder), itself not order-only.
bool IsGraphSource(const Model& model, const Node& node);

class OwnerControlInputs {
 public:
  explicit OwnerControlInputs(const Model& model);
  // What every source of graph g runs after: ascending NodeIds (each once);
  // empty for the root, and for most graphs.
  std::span<const NodeId> Of(GraphId g) const {
    if (set_of_graph_.empty()) return {};
    const int32_t s = set_of_graph_[g.index()];
    return s < 0 ? std::span<const NodeId>() : std::span<const NodeId>(sets_[s]);
  }
  // Whether any graph has a control input to run after.
  bool any() const { return !set_of_graph_.empty(); }

 private:
  std::vector<int32_t> set_of_graph_;  // per GraphId: index into sets_, -1 none; empty: none at all
  std::vector<std::vector<NodeId>> sets_;
};

}  // namespace npuplan

#endif  // NPUPLAN_IR_OWNER_CONTROL_INPUTS_H_
