#include "npuplan/memory/stream_aware_reuse.h"

#include <algorithm>
#include <limits>

namespace npuplan::memory {
namespace {

// Edges whose order the events stage leaves to loop/branch activation.
bool OrdersNothing(const Node& from) {
  return from.type == "Enter" || from.type == "RefEnter" || from.type == "StreamSwitch";
}

bool IsSyncNode(const Node& n) {
  return n.type == "Send" || n.type == "Recv" || n.type == "SendNotify" || n.type == "RecvNotify";
}

}  // namespace

HappensBefore::HappensBefore(const Model& model, const std::vector<NodeId>& order) {
  const size_t n = model.num_nodes();
  stream_.assign(n, -1);
  pos_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    stream_[i] = model.nodes()[i].stream_id;
    k_ = std::max(k_, stream_[i] + 1);
  }
  std::vector<int64_t> seq(n, -1);
  for (size_t i = 0; i < order.size(); ++i) seq[order[i].index()] = static_cast<int64_t>(i);

  // 1. Predecessor lists: data/control edges, subgraph entry and end.
  std::vector<std::vector<NodeId>> preds(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& v = model.nodes()[i];
    for (const OutputRef& in : v.inputs) {
      if (!OrdersNothing(model.node(in.node))) preds[i].push_back(in.node);
    }
    for (NodeId c : v.control_inputs) {
      if (!OrdersNothing(model.node(c))) preds[i].push_back(c);
    }
  }
  Adjacency adj(model);
  for (size_t g = 1; g < model.num_graphs(); ++g) {
    const Graph& graph = model.graphs()[g];
    if (!graph.parent_node.valid()) continue;
    const Node& p = model.node(graph.parent_node);
    NodeId end;
    for (NodeId id : graph.nodes) {
      const Node& x = model.node(id);
      if (IsSyncNode(x)) continue;
      const bool root = x.inputs.empty() && std::all_of(x.control_inputs.begin(), x.control_inputs.end(),
                                                        [&](NodeId c) { return IsSyncNode(model.node(c)); });
      if (root) {
        for (const OutputRef& in : p.inputs) preds[id.index()].push_back(in.node);
        for (NodeId c : p.control_inputs) preds[id.index()].push_back(c);
      }
      if (!end.valid() && GetBoolAttr(x.attrs, "_subgraph_end_node").value_or(false)) end = id;
    }
    if (!end.valid()) {
      for (NodeId id : graph.nodes) {
        if (model.node(id).type == "NetOutput") {
          end = id;
          break;
        }
      }
    }
    if (end.valid()) {
      for (size_t e = adj.begin(graph.parent_node); e < adj.end(graph.parent_node); ++e) {
        preds[adj.succ[e].index()].push_back(end);
      }
    }
  }

  // 2. One sweep in plan order: clock(v) = join of the inclusive clocks of
  // v's streamed predecessors and of its stream predecessor.
  const size_t k = static_cast<size_t>(k_);
  clocks_.assign(n * k, -1);
  std::vector<int32_t> next_pos(k, 0);
  std::vector<NodeId> last_on_stream(k);
  for (NodeId v : order) {
    const int64_t s = stream_[v.index()];
    if (s < 0) continue;
    int32_t* cv = clocks_.data() + v.index() * k;
    auto join = [&](NodeId u) {
      const int64_t su = stream_[u.index()];
      if (su < 0 || seq[u.index()] < 0 || seq[u.index()] >= seq[v.index()]) return;
      const int32_t* cu = clocks_.data() + u.index() * k;
      for (size_t j = 0; j < k; ++j) cv[j] = std::max(cv[j], cu[j]);
      cv[su] = std::max(cv[su], pos_[u.index()]);
    };
    if (last_on_stream[s].valid()) join(last_on_stream[s]);
    for (NodeId u : preds[v.index()]) join(u);
    pos_[v.index()] = next_pos[s]++;
    last_on_stream[s] = v;
  }
}

bool HappensBefore::Before(NodeId a, NodeId b) const {
  const int64_t sa = stream_[a.index()];
  if (sa < 0 || stream_[b.index()] < 0 || a == b) return false;
  return clock(b)[sa] >= pos_[a.index()];
}

StreamAwareReuse::StreamAwareReuse(const Model& model, const TensorLifetimes& lifetimes)
    : lt_(lifetimes), hb_(model, lifetimes.order) {
  const size_t k = static_cast<size_t>(hb_.num_streams());
  const size_t nb = lt_.buffers.size();
  last_.resize(nb);
  meet_.assign(nb, std::vector<int32_t>(k, std::numeric_limits<int32_t>::max()));
  only_stream_.assign(nb, -1);
  for (size_t b = 0; b < nb; ++b) {
    std::vector<int32_t> last(k, -1);
    int64_t only = -2;
    for (NodeId u : lt_.buffers[b].uses) {
      const int64_t s = hb_.stream(u);
      last[s] = std::max(last[s], hb_.stream_pos(u));
      const int32_t* c = hb_.clock(u);
      for (size_t j = 0; j < k; ++j) meet_[b][j] = std::min(meet_[b][j], c[j]);
      only = only == -2 || only == s ? s : -1;
    }
    for (size_t s = 0; s < k; ++s) {
      if (last[s] >= 0) last_[b].emplace_back(static_cast<int64_t>(s), last[s]);
    }
    only_stream_[b] = only < 0 ? -1 : only;
  }
}

bool StreamAwareReuse::SameStream(int a, int b) const {
  return only_stream_[a] >= 0 && only_stream_[a] == only_stream_[b];
}

bool StreamAwareReuse::Ordered(int a, int b) const {
  const LogicalBuffer& x = lt_.buffers[a];
  const LogicalBuffer& y = lt_.buffers[b];
  if (!x.pinned.empty() || !y.pinned.empty() || x.live_to_end) return false;
  if (x.upper > y.lower) return false;  // plan order is a linear extension of H
  if (x.uses.empty() || y.uses.empty()) return false;
  if (lt_.flat_loops && !SameStream(a, b)) return false;
  for (const auto& [s, p] : last_[a]) {
    if (meet_[b][s] < p) return false;
  }
  return true;
}

std::vector<std::pair<int, int>> StreamAwareReuse::ExtraConflicts(const std::vector<int>& buffers) const {
  std::vector<int> by_lower(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) by_lower[i] = static_cast<int>(i);
  std::sort(by_lower.begin(), by_lower.end(), [&](int i, int j) {
    return std::make_pair(lt_.buffers[buffers[i]].lower, i) < std::make_pair(lt_.buffers[buffers[j]].lower, j);
  });
  std::vector<std::pair<int, int>> out;
  for (size_t ii = 0; ii < by_lower.size(); ++ii) {
    const int i = by_lower[ii];
    const LogicalBuffer& x = lt_.buffers[buffers[i]];
    if (x.size == 0) continue;
    for (size_t jj = ii + 1; jj < by_lower.size(); ++jj) {
      const int j = by_lower[jj];
      const LogicalBuffer& y = lt_.buffers[buffers[j]];
      if (y.size == 0 || y.lower < x.upper) continue;  // overlapping in time: already a conflict
      if (!Ordered(buffers[i], buffers[j])) out.emplace_back(std::min(i, j), std::max(i, j));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace npuplan::memory
