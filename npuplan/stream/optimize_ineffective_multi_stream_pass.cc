#include "npuplan/stream/optimize_ineffective_multi_stream_pass.h"

#include <algorithm>
#include <memory>
#include <set>
#include <unordered_map>

namespace npuplan::stream {
namespace {

// Topo ids of one stream's nodes: a sorted vector until the first move
// touches the stream, then a std::set (moves are rare; this keeps the pass
// O(n) when nothing moves and O(n log n) at worst).
class StreamIds {
 public:
  void Append(int64_t id) { vec_.push_back(id); }
  // Smallest id > x, or -1.
  int64_t NextAfter(int64_t x) const {
    if (set_) {
      auto it = set_->upper_bound(x);
      return it == set_->end() ? -1 : *it;
    }
    auto it = std::upper_bound(vec_.begin(), vec_.end(), x);
    return it == vec_.end() ? -1 : *it;
  }
  void Insert(int64_t id) { AsSet().insert(id); }
  void Erase(int64_t id) { AsSet().erase(id); }

 private:
  std::set<int64_t>& AsSet() {
    if (!set_) {
      set_ = std::make_unique<std::set<int64_t>>(vec_.begin(), vec_.end());
      std::vector<int64_t>().swap(vec_);
    }
    return *set_;
  }
  std::vector<int64_t> vec_;
  std::unique_ptr<std::set<int64_t>> set_;
};

bool Exempt(const Node& n) {
  return HasStreamLabel(n) || HasAttr(n.attrs, kAttrNewStreamId) || HasAttr(n.attrs, kAttrParallelGroup);
}

}  // namespace

absl::StatusOr<bool> OptimizeIneffectiveMultiStreamPass::Run(GraphState& gs, AssignContext& ctx) {
  const Graph& graph = gs.g(ctx.model);
  const Adjacency& adj = *ctx.adjacency;
  std::set<int64_t> label_streams;
  // ids[s]: topo ids of the graph's nodes on stream s, ascending (graph order).
  std::unordered_map<int64_t, StreamIds> ids;
  for (NodeId id : graph.nodes) {
    const Node& n = ctx.model.node(id);
    if (n.stream_id == -1) continue;
    if (HasStreamLabel(n)) label_streams.insert(n.stream_id);
    ids[n.stream_id].Append(n.topo_id);
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
      StreamIds& on_s = ids[s];
      if (on_s.NextAfter(inp) != out) continue;
      // Move n from its stream to s; keep ids[] current.
      ids[n.stream_id].Erase(n.topo_id);
      on_s.Insert(n.topo_id);
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
