#include "npuplan/stream/update_for_skipped_engine_pass.h"

#include <algorithm>

namespace npuplan::stream {

absl::StatusOr<bool> UpdateForSkippedEnginePass::Run(GraphState& gs, AssignContext& ctx) {
  const GraphEdges& edges = gs.edges;
  const std::vector<NodeId>& nodes = gs.g(ctx.model).nodes;
  auto stream_of = [&](int32_t t) { return ctx.model.node(nodes[t]).stream_id; };
  bool changed = false;
  for (int32_t i = 0; i < static_cast<int32_t>(nodes.size()); ++i) {
    const StreamSubgraph& sg = gs.subgraphs[gs.partition.subgraph_of[i]];
    if (!sg.conf->skip_assign_stream || (gs.node_flags[i] & kNodeLabelled)) continue;
    Node& node = ctx.model.node(nodes[i]);
    if (node.stream_id == -1) continue;
    // Rule 1: no subgraph and no producer with a stream → no stream.
    bool all_inputs_unassigned = true;
    for (int32_t p : edges.Preds(i)) all_inputs_unassigned &= stream_of(p) == -1;
    if (node.subgraphs.empty() && all_inputs_unassigned) {
      ctx.log.Record(kName, "SkippedEngineNoStream", "", Field("node", node.name), Field("from", node.stream_id));
      node.stream_id = -1;
      changed = true;
      continue;
    }
    // Rule 2: every neighbour with a stream is on one stream s → move to s.
    if (edges.Succs(i).empty()) continue;
    int64_t only = -1;
    bool single = true;
    auto see = [&](int32_t t) {
      const int64_t s = stream_of(t);
      if (s == -1) return;
      if (only == -1) only = s;
      else if (only != s) single = false;
    };
    for (int32_t p : edges.Preds(i)) see(p);
    for (int32_t q : edges.Succs(i)) {
      if (!single) break;
      see(q);
    }
    if (single && only != -1 && only != node.stream_id) {
      ctx.log.Record(kName, "SkippedEngineMoved", "", Field("node", node.name), Field("from", node.stream_id),
                     Field("to", only));
      node.stream_id = only;
      changed = true;
    }
  }
  return changed;
}

}  // namespace npuplan::stream
