#include "npuplan/stream/update_for_skipped_engine_pass.h"

#include <algorithm>

namespace npuplan::stream {

absl::StatusOr<bool> UpdateForSkippedEnginePass::Run(GraphState& gs, AssignContext& ctx) {
  const Adjacency& adj = *ctx.adjacency;
  bool changed = false;
  for (NodeId id : gs.g(ctx.model).nodes) {
    Node& node = ctx.model.node(id);
    const StreamSubgraph& sg = gs.SubgraphOf(node);
    if (!sg.conf->skip_assign_stream || HasStreamLabel(node) || node.stream_id == -1) continue;
    // Rule 1: no subgraph and no producer with a stream → no stream.
    bool all_inputs_unassigned = true;
    for (const OutputRef& in : node.inputs) all_inputs_unassigned &= ctx.model.node(in.node).stream_id == -1;
    for (NodeId c : node.control_inputs) all_inputs_unassigned &= ctx.model.node(c).stream_id == -1;
    if (node.subgraphs.empty() && all_inputs_unassigned) {
      ctx.log.Record(kName, "SkippedEngineNoStream", "", Field("node", node.name), Field("from", node.stream_id));
      node.stream_id = -1;
      changed = true;
      continue;
    }
    // Rule 2: every neighbour with a stream is on one stream s → move to s.
    if (adj.begin(id) == adj.end(id)) continue;
    int64_t only = -1;
    bool single = true;
    auto see = [&](NodeId n) {
      const int64_t s = ctx.model.node(n).stream_id;
      if (s == -1) return;
      if (only == -1) only = s;
      else if (only != s) single = false;
    };
    for (const OutputRef& in : node.inputs) see(in.node);
    for (NodeId c : node.control_inputs) see(c);
    for (size_t e = adj.begin(id); e < adj.end(id) && single; ++e) see(adj.succ[e]);
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
