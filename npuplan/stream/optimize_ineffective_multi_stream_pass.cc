#include "npuplan/stream/optimize_ineffective_multi_stream_pass.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace npuplan::stream {
namespace {

bool Exempt(const Node& n) {
  return HasStreamLabel(n) || HasAttr(n.attrs, kAttrNewStreamId) || HasAttr(n.attrs, kAttrParallelGroup);
}

}  // namespace

absl::StatusOr<bool> OptimizeIneffectiveMultiStreamPass::Run(GraphState& gs, AssignContext& ctx) {
  const Graph& graph = gs.g(ctx.model);
  const Adjacency& adj = *ctx.adjacency;
  std::set<int64_t> label_streams;
  // ids[s]: topo ids of the graph's nodes on stream s, ascending (graph order).
  std::unordered_map<int64_t, std::vector<int64_t>> ids;
  for (NodeId id : graph.nodes) {
    const Node& n = ctx.model.node(id);
    if (n.stream_id == -1) continue;
    if (HasStreamLabel(n)) label_streams.insert(n.stream_id);
    ids[n.stream_id].push_back(n.topo_id);
  }
  if (ids.size() < 2) return false;
  bool changed = false;
  std::vector<NodeId> ins, outs;
  for (NodeId id : graph.nodes) {
    Node& n = ctx.model.node(id);
    const int64_t c = n.stream_id;
    if (c == -1 || Exempt(n)) continue;
    ins.clear();
    outs.clear();
    for (const OutputRef& in : n.inputs) ins.push_back(in.node);
    for (NodeId p : n.control_inputs) ins.push_back(p);
    for (size_t e = adj.begin(id); e < adj.end(id); ++e) outs.push_back(adj.succ[e]);
    bool touches_own = false;
    for (NodeId x : ins) touches_own |= ctx.model.node(x).stream_id == c;
    for (NodeId x : outs) touches_own |= ctx.model.node(x).stream_id == c;
    if (touches_own) continue;
    std::set<int64_t> neighbour_streams;
    for (NodeId x : ins) neighbour_streams.insert(ctx.model.node(x).stream_id);
    for (NodeId x : outs) neighbour_streams.insert(ctx.model.node(x).stream_id);
    neighbour_streams.erase(-1);
    for (int64_t s : neighbour_streams) {
      if (label_streams.count(s)) continue;
      int64_t inp = -1, out = -1;  // last producer on s, first consumer on s (topo ids)
      for (NodeId x : ins) {
        const Node& p = ctx.model.node(x);
        if (p.stream_id == s) inp = std::max(inp, p.topo_id);
      }
      for (NodeId x : outs) {
        const Node& q = ctx.model.node(x);
        if (q.stream_id == s && (out == -1 || q.topo_id < out)) out = q.topo_id;
      }
      if (inp == -1 || out == -1) continue;
      std::vector<int64_t>& on_s = ids[s];
      auto next = std::upper_bound(on_s.begin(), on_s.end(), inp);
      if (next == on_s.end() || *next != out) continue;
      // Move n from its stream to s; keep ids[] current.
      std::vector<int64_t>& from = ids[n.stream_id];
      from.erase(std::lower_bound(from.begin(), from.end(), n.topo_id));
      on_s.insert(std::upper_bound(on_s.begin(), on_s.end(), n.topo_id), n.topo_id);
      ctx.log.Record(kName, "IneffectiveStreamMoved", "", Field("node", n.name), Field("from", n.stream_id),
                     Field("to", s));
      n.stream_id = s;
      changed = true;
      ctx.stats.Add(kName, "nodes_moved");
    }
  }
  return changed;
}

}  // namespace npuplan::stream
