#include "npuplan/stream/node_stream_update_pass.h"

#include "npuplan/ir/node_prefetch.h"
#include "npuplan/support/str_util.h"

namespace npuplan::stream {

absl::StatusOr<bool> NodeStreamUpdatePass::Run(GraphState& gs, AssignContext& ctx) {
  for (const StreamSubgraph& sg : gs.subgraphs) {
    if (sg.stream_id == -1 && !sg.conf->skip_assign_stream) {
      return absl::InternalError(StrCat("[node-stream-update-pass] engine subgraph ", sg.info->name(), " (engine ",
                                        sg.info->engine, ") has no stream after assignment"));
    }
  }
  const Graph& graph = gs.g(ctx.model);
  // The NetOutput of a While body whose owner graph is unknown-shape goes to 0.
  bool while_body = false;
  if (graph.parent_node.valid() && gs.owner_graph_unknown) {
    const Node& parent = ctx.model.node(graph.parent_node);
    while_body = (parent.type == "While" || parent.type == "StatelessWhile") && parent.subgraphs.size() > 1 &&
                 parent.subgraphs[1] == gs.graph;
  }
  const int64_t default_stream = gs.default_stream >= 0 ? gs.default_stream : 0;
  // Subgraph streams onto the nodes in graph order (every node is in exactly
  // one engine subgraph, so each is written once, sequentially); the rare
  // special nodes are then handled, and logged, in subgraph order.
  bool special = false;
  // The write is a cache miss per node struct: fetched ahead.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (i + kNodePrefetch < graph.nodes.size())
      __builtin_prefetch(&ctx.model.node(graph.nodes[i + kNodePrefetch]).stream_id, 1);
    Node& node = ctx.model.node(graph.nodes[i]);
    node.stream_id = gs.subgraphs[gs.partition.subgraph_of[i]].stream_id;
    special |= (gs.node_flags[i] & kNodeRtsLabel) != 0 || (while_body && node.type == "NetOutput");
  }
  if (!special) return true;
  for (const StreamSubgraph& sg : gs.subgraphs) {
    for (NodeId id : sg.info->nodes) {
      Node& node = ctx.model.node(id);
      if (gs.node_flags[node.topo_id] & kNodeRtsLabel) {
        node.stream_id = default_stream;
        ctx.log.Record(kName, "RtsLabelNodeOnDefault", "", Field("node", node.name), Field("stream", default_stream));
      } else if (while_body && node.type == "NetOutput") {
        node.stream_id = 0;
        ctx.log.Record(kName, "WhileBodyNetOutputOnZero", "", Field("node", node.name));
      }
    }
  }
  return true;
}

}  // namespace npuplan::stream
