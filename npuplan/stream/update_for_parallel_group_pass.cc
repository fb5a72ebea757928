#include "npuplan/stream/update_for_parallel_group_pass.h"

#include <map>

namespace npuplan::stream {

absl::StatusOr<bool> UpdateForParallelGroupPass::Run(GraphState& gs, AssignContext& ctx) {
  std::map<int64_t, std::vector<NodeId>> buckets;  // current stream → nodes, graph order
  const std::vector<NodeId>& graph_nodes = gs.g(ctx.model).nodes;
  for (size_t i = 0; i < graph_nodes.size(); ++i) {
    if ((gs.node_flags[i] & (kNodeParallelGroup | kNodeUserLabelAttr)) != kNodeParallelGroup) continue;
    const Node& node = ctx.model.node(graph_nodes[i]);
    if (node.stream_id == -1) continue;
    buckets[node.stream_id].push_back(graph_nodes[i]);
  }
  bool changed = false;
  for (const auto& [stream, nodes] : buckets) {
    std::map<std::string, int64_t> group_streams;  // per bucket
    for (NodeId id : nodes) {
      Node& node = ctx.model.node(id);
      const std::string group = AttrAsKey(*FindAttr(node.attrs, kAttrParallelGroup));
      if (group == "-1" && node.inputs.size() == 1) {
        // UpdateStreamIdFromPreNode, for any node type (GE tests none): the
        // producer (through PlaceHolder/End in GE).
        const Node& producer = ctx.model.node(node.inputs[0].node);
        if (producer.stream_id != -1) {
          changed |= node.stream_id != producer.stream_id;
          node.stream_id = producer.stream_id;
          ctx.log.Record(kName, "HcomAdoptsInputStream", "", Field("node", node.name), Field("input", producer.name),
                         Field("stream", producer.stream_id));
          continue;
        }
      }
      auto [it, inserted] = group_streams.emplace(group, ctx.next_stream);
      if (inserted) ++ctx.next_stream;
      node.stream_id = it->second;
      changed = true;
      ctx.log.Record(kName, "ParallelGroupStream", "", Field("node", node.name), Field("group", group),
                     Field("from", stream), Field("stream", it->second));
    }
  }
  return changed;
}

}  // namespace npuplan::stream
