#include "npuplan/stream/all_reduce_parallel_pass.h"

#include <algorithm>
#include <map>

namespace npuplan::stream {

absl::StatusOr<bool> AllReduceParallelPass::Run(GraphState& gs, AssignContext& ctx) {
  if (!ctx.enable_hcom_parallel) return false;
  const Graph& graph = gs.g(ctx.model);
  std::vector<uint8_t> collected(graph.nodes.size(), 0);
  std::vector<NodeId> seed_of(graph.nodes.size());
  bool any = false;
  for (NodeId seed : graph.nodes) {
    const Node& s = ctx.model.node(seed);
    if (s.type != "HcomAllReduce" && s.type != "HorovodAllreduce") continue;
    if (GetIntAttr(s.attrs, kAttrFusion).value_or(-1) <= 0) continue;
    if (HasAttr(s.attrs, kAttrUserStreamLabel)) continue;
    const std::string label = GetStringAttr(s.attrs, kAttrStreamLabel).value_or("");
    // BFS forward along data edges.
    std::vector<NodeId> queue{seed};
    for (size_t q = 0; q < queue.size(); ++q) {
      for (size_t e = ctx.adjacency->begin(queue[q]); e < ctx.adjacency->end(queue[q]); ++e) {
        if (ctx.adjacency->is_control[e]) continue;
        NodeId succ = ctx.adjacency->succ[e];
        const Node& n = ctx.model.node(succ);
        const std::string l = GetStringAttr(n.attrs, kAttrStreamLabel).value_or("");
        if (!(l == label || (!label.empty() && l.empty()))) continue;
        if (collected[n.topo_id]) continue;
        collected[n.topo_id] = 1;
        seed_of[n.topo_id] = seed;
        any = true;
        queue.push_back(succ);
      }
    }
  }
  if (!any) return false;
  std::map<int64_t, int64_t> new_stream;  // old → new, first sight in topological order
  bool changed = false;
  for (NodeId id : graph.nodes) {
    Node& node = ctx.model.node(id);
    if (!collected[node.topo_id] || node.stream_id == -1 || IsHcomNode(node, ctx.model.engine_table)) continue;
    auto [it, inserted] = new_stream.emplace(node.stream_id, ctx.next_stream);
    if (inserted) ++ctx.next_stream;
    ctx.log.Record(kName, "AllReduceSuccessorMoved", "", Field("node", node.name),
                   Field("seed", ctx.model.node(seed_of[node.topo_id]).name), Field("from", node.stream_id),
                   Field("to", it->second));
    node.stream_id = it->second;
    changed = true;
  }
  return changed;
}

}  // namespace npuplan::stream
