#include "npuplan/stream/all_reduce_parallel_pass.h"

#include <algorithm>
#include <map>

namespace npuplan::stream {

absl::StatusOr<bool> AllReduceParallelPass::Run(GraphState& gs, AssignContext& ctx) {
  if (!ctx.stream_options.hcom_parallel) return false;
  const std::vector<NodeId>& nodes = gs.g(ctx.model).nodes;
  const GraphEdges& edges = gs.edges;
  const int32_t n = static_cast<int32_t>(nodes.size());
  std::vector<uint8_t> collected(n, 0);
  std::vector<int32_t> seed_of(n, -1);  // topo index of the collecting seed
  std::vector<int32_t> queue;
  bool any = false;
  for (int32_t si = 0; si < n; ++si) {
    const Node& s = ctx.model.node(nodes[si]);
    if (s.type != "HcomAllReduce" && s.type != "HorovodAllreduce") continue;
    if (GetIntAttr(s.attrs, kAttrFusion).value_or(-1) <= 0) continue;
    if (gs.node_flags[si] & kNodeUserLabelAttr) continue;
    const std::string& label = StringAttrOrEmpty(s.attrs, kAttrStreamLabel);
    // BFS forward along data edges.
    queue.assign(1, si);
    for (size_t q = 0; q < queue.size(); ++q) {
      const int32_t x = queue[q];
      for (int32_t e = edges.succ_first[x]; e < edges.succ_first[x + 1]; ++e) {
        if (edges.succ_is_control[e]) continue;
        const int32_t t = edges.succs[e];
        if (collected[t]) continue;
        const std::string& l = StringAttrOrEmpty(ctx.model.node(nodes[t]).attrs, kAttrStreamLabel);
        if (!(l == label || (!label.empty() && l.empty()))) continue;
        collected[t] = 1;
        seed_of[t] = si;
        any = true;
        queue.push_back(t);
      }
    }
  }
  if (!any) return false;
  std::map<int64_t, int64_t> new_stream;  // old → new, first sight in topological order
  bool changed = false;
  for (int32_t i = 0; i < n; ++i) {
    if (!collected[i]) continue;
    Node& node = ctx.model.node(nodes[i]);
    if (node.stream_id == -1 || IsHcomNode(node, ctx.model.engine_table)) continue;
    auto [it, inserted] = new_stream.emplace(node.stream_id, ctx.next_stream);
    if (inserted) ++ctx.next_stream;
    ctx.log.Record(kName, "AllReduceSuccessorMoved", "", Field("node", node.name),
                   Field("seed", ctx.model.node(nodes[seed_of[i]]).name), Field("from", node.stream_id),
                   Field("to", it->second));
    node.stream_id = it->second;
    changed = true;
  }
  return changed;
}

}  // namespace npuplan::stream
