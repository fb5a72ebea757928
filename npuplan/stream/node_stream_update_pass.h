// NodeStreamUpdatePass (ge-reference §2.3): copies each engine subgraph's
// stream onto its nodes. Nodes with `_rts_label_node` go to the default
// stream (the parent's stream; 0 in the root graph); the NetOutput of the body
// (subgraph 1) of a While whose owner graph is unknown-shape goes to 0. A
// subgraph of a non-skipped engine without a stream is an Internal error.
// Decision keywords: RtsLabelNodeOnDefault (node, stream),
// WhileBodyNetOutputOnZero (node).
#ifndef NPUPLAN_STREAM_NODE_STREAM_UPDATE_PASS_H_
#define NPUPLAN_STREAM_NODE_STREAM_UPDATE_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

class NodeStreamUpdatePass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "node-stream-update-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_NODE_STREAM_UPDATE_PASS_H_
