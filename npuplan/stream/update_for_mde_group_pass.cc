#include "npuplan/stream/update_for_mde_group_pass.h"

#include <map>

namespace npuplan::stream {

absl::StatusOr<bool> UpdateForMdeGroupPass::Run(GraphState& gs, AssignContext& ctx) {
  // Bucket by current stream; one fresh id per distinct NewStreamId per bucket.
  std::map<int64_t, std::map<std::string, int64_t>> buckets;
  bool changed = false;
  const std::vector<NodeId>& nodes = gs.g(ctx.model).nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if ((gs.node_flags[i] & (kNodeNewStreamId | kNodeParallelGroup)) != kNodeNewStreamId) continue;
    Node& node = ctx.model.node(nodes[i]);
    const AttrValue* v = FindAttr(node.attrs, kAttrNewStreamId);
    // GE's OpDesc starts at stream 0: an unassigned node is in bucket 0.
    const int64_t current = node.stream_id >= 0 ? node.stream_id : 0;
    auto& ids = buckets[current];
    auto [it, inserted] = ids.emplace(AttrAsKey(*v), ctx.next_stream);
    if (inserted) ++ctx.next_stream;
    node.stream_id = it->second;
    changed = true;
    ctx.log.Record(kName, "MdeStreamId", "", Field("node", node.name), Field("new_stream_id", it->first),
                   Field("stream", it->second));
  }
  return changed;
}

}  // namespace npuplan::stream
