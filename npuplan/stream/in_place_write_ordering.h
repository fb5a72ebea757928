// in-place-write-ordering: orders every in-place write with the other touches
// of the memory it writes (ir/in_place_writes.h: ref outputs, `_ref_input_index`,
// and control-flow owners whose subgraphs write a parent input in place).
//
// A graph may let an AssignAdd overwrite its input while another node reads
// that input with no path between the two; GE compiles it as it is, so the
// plan's streams decide whether the reader sees the old value, the new one or
// a write half done. npuplan adds a control edge wherever the graph has no
// path (docs/memory.md, "In-place writes"), in the graph's topological order
// (the earlier node first: as TF's automatic control dependencies keep
// program order), before streams are assigned, so that the stream passes and
// the events see an ordinary edge. A graph without such a pair is left as it
// is: GE's plans stay GE's. An edge goes forward in the topological order, so
// no cycle can form — except into a NetOutput (or a subgraph's
// `_subgraph_end_node`) that reads written memory: what follows the owner
// waits for that node, not for the rest of the graph, so every touch of that
// memory goes before it. When such an edge comes from a node the order lists later (an
// unread node under stable RDFS), the graph is sorted again keeping its order
// wherever the edges allow; if the graph orders the end node before the
// write, the pass fails naming both. An owner is ordered after a node
// through the producers of what its subgraphs read or through its control
// inputs (ir/in_place_writes.h, OwnerEntry): a pair into an owner gets its
// control edge even where a path through another input of the owner exists.
//
// Requires: topo-sorted. Provides nothing new; the verifier's
// [in-place-writes] row (verify/stage_checks.def) checks the rule once the
// events are in.
// Decision keywords: InPlaceOrder from= to=  (a control edge from → to added)
//                    InPlaceReordered graph= nodes_moved=  (a graph sorted again)
#ifndef NPUPLAN_STREAM_IN_PLACE_WRITE_ORDERING_H_
#define NPUPLAN_STREAM_IN_PLACE_WRITE_ORDERING_H_

#include <string_view>

#include "npuplan/pass/pass.h"

namespace npuplan {

class InPlaceWriteOrdering final : public Pass {
 public:
  static constexpr std::string_view kName = "in-place-write-ordering";
  std::string_view name() const override { return kName; }
  IrProperties required() const override {
    return static_cast<IrProperties>(IrProperty::kTopoSorted);
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_STREAM_IN_PLACE_WRITE_ORDERING_H_
