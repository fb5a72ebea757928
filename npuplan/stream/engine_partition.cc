#include "npuplan/stream/engine_partition.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>

#include "npuplan/support/str_util.h"

namespace npuplan::stream {
namespace {

// The cluster graph of one graph with an incrementally maintained
// topological order (Pearce–Kelly) for the "second path" test.
class ClusterGraph {
 public:
  explicit ClusterGraph(int32_t n) : parent_(n), rank_(n), out_(n), in_(n), mark_(n, 0) {
    for (int32_t i = 0; i < n; ++i) parent_[i] = rank_[i] = i;
  }

  // Union-find root with path halving.
  int32_t Find(int32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  void AddEdge(int32_t from, int32_t to) {
    out_[from].push_back(to);
    in_[to].push_back(from);
  }

  // Distinct successor clusters of cluster c (compacts its list).
  size_t OutDegree(int32_t c) {
    Compact(out_[c], c);
    return out_[c].size();
  }

  // True when a path pred → … → succ exists other than the direct edge.
  // Fills `forward` with the clusters reached from pred ranked before succ.
  bool HasSecondPath(int32_t pred, int32_t succ, std::vector<int32_t>& forward) {
    forward.clear();
    const int32_t bound = rank_[succ];
    const uint32_t stamp = ++stamp_;
    std::vector<int32_t> stack;
    for (int32_t y : out_[pred]) {
      y = Find(y);
      if (y == succ || y == pred || mark_[y] == stamp || rank_[y] > bound) continue;
      mark_[y] = stamp;
      stack.push_back(y);
    }
    while (!stack.empty()) {
      int32_t x = stack.back();
      stack.pop_back();
      forward.push_back(x);
      for (int32_t y : out_[x]) {
        y = Find(y);
        if (y == succ) return true;
        if (mark_[y] == stamp || rank_[y] > bound) continue;
        mark_[y] = stamp;
        stack.push_back(y);
      }
    }
    return false;
  }

  // Merges `succ` into `pred` (direct edge pred → succ, no second path;
  // `forward` from HasSecondPath). Returns the surviving cluster (the
  // smaller index) and keeps the rank order topological.
  int32_t Merge(int32_t pred, int32_t succ, const std::vector<int32_t>& forward) {
    // Backward set: clusters reaching succ ranked after pred.
    std::vector<int32_t> backward;
    const int32_t lower = rank_[pred];
    const uint32_t stamp = ++stamp_;
    std::vector<int32_t> stack;
    for (int32_t y : in_[succ]) {
      y = Find(y);
      if (y == pred || y == succ || mark_[y] == stamp || rank_[y] < lower) continue;
      mark_[y] = stamp;
      stack.push_back(y);
    }
    while (!stack.empty()) {
      int32_t x = stack.back();
      stack.pop_back();
      backward.push_back(x);
      for (int32_t y : in_[x]) {
        y = Find(y);
        if (mark_[y] == stamp || rank_[y] < lower || y == pred) continue;
        mark_[y] = stamp;
        stack.push_back(y);
      }
    }
    const int32_t keep = std::min(pred, succ);
    const int32_t gone = std::max(pred, succ);
    if (!backward.empty() || !forward.empty()) {
      // New order in the same rank slots: backward, merged, forward.
      auto by_rank = [&](int32_t a, int32_t b) { return rank_[a] < rank_[b]; };
      std::vector<int32_t> b = backward, f = forward;
      std::sort(b.begin(), b.end(), by_rank);
      std::sort(f.begin(), f.end(), by_rank);
      std::vector<int32_t> slots;
      slots.reserve(b.size() + f.size() + 2);
      for (int32_t x : b) slots.push_back(rank_[x]);
      for (int32_t x : f) slots.push_back(rank_[x]);
      slots.push_back(rank_[pred]);
      slots.push_back(rank_[succ]);
      std::sort(slots.begin(), slots.end());
      size_t k = 0;
      for (int32_t x : b) rank_[x] = slots[k++];
      rank_[keep] = slots[k++];
      for (int32_t x : f) rank_[x] = slots[k++];
    } else {
      rank_[keep] = rank_[pred];
    }
    parent_[gone] = keep;
    out_[keep].insert(out_[keep].end(), out_[gone].begin(), out_[gone].end());
    in_[keep].insert(in_[keep].end(), in_[gone].begin(), in_[gone].end());
    std::vector<int32_t>().swap(out_[gone]);
    std::vector<int32_t>().swap(in_[gone]);
    Compact(out_[keep], keep);
    Compact(in_[keep], keep);
    return keep;
  }

 private:
  // Resolves every entry to its cluster, drops `self` and duplicates.
  void Compact(std::vector<int32_t>& list, int32_t self) {
    const uint32_t stamp = ++stamp_;
    size_t w = 0;
    for (int32_t y : list) {
      y = Find(y);
      if (y == self || mark_[y] == stamp) continue;
      mark_[y] = stamp;
      list[w++] = y;
    }
    list.resize(w);
  }

  std::vector<int32_t> parent_;
  std::vector<int32_t> rank_;
  std::vector<std::vector<int32_t>> out_;
  std::vector<std::vector<int32_t>> in_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
};

}  // namespace

bool IsInputDataNode(const Node& node) {
  if (!node.inputs.empty() || !node.control_inputs.empty()) return false;
  return node.type == "Data" || node.type == "RefData" || node.type == "AippData";
}

std::string EffectiveStreamLabel(const Node& node) {
  std::string inner = GetStringAttr(node.attrs, kAttrStreamLabel).value_or("");
  std::string user = GetStringAttr(node.attrs, kAttrUserStreamLabel).value_or("");
  if (user.empty() || IsInputDataNode(node)) return inner;
  if (!inner.empty() && GetBoolAttr(node.attrs, kAttrEnableInnerParallel).value_or(false)) {
    return StrCat(user, "_", inner);
  }
  return user;
}

EnginePartition PartitionByEngine(const Model& model, GraphId g) {
  const Graph& graph = model.graph(g);
  const int32_t n = static_cast<int32_t>(graph.nodes.size());
  EnginePartition result;
  result.graph = g;
  result.subgraph_of.assign(n, -1);
  if (n == 0) return result;

  // 1. Per-node keys: engine (interned), effective label, user label.
  std::unordered_map<std::string, int32_t> intern;
  auto Intern = [&](const std::string& s) {
    return intern.emplace(s, static_cast<int32_t>(intern.size())).first->second;
  };
  const int32_t kData = Intern(std::string(1, '\001') + "DATA");
  std::vector<int32_t> engine(n), label(n), user(n);
  const int32_t kNoUser = Intern("");
  ClusterGraph cg(n);
  for (int32_t i = 0; i < n; ++i) {
    const Node& node = model.node(graph.nodes[i]);
    engine[i] = IsInputDataNode(node) ? kData : Intern(node.engine);
    label[i] = Intern(EffectiveStreamLabel(node));
    user[i] = IsInputDataNode(node) ? kNoUser : Intern(GetStringAttr(node.attrs, kAttrUserStreamLabel).value_or(""));
    for (const OutputRef& in : node.inputs) cg.AddEdge(static_cast<int32_t>(model.node(in.node).topo_id), i);
    for (NodeId c : node.control_inputs) cg.AddEdge(static_cast<int32_t>(model.node(c).topo_id), i);
  }
  // Keys of a cluster are those of its smallest member (its first node).
  auto Mergeable = [&](int32_t a, int32_t b) {
    if (engine[a] == kData || engine[b] == kData) return false;
    if (user[a] != kNoUser && user[a] == user[b]) return true;
    return engine[a] == engine[b] && label[a] == label[b];
  };

  // 2. MarkClusters: merge input clusters into each cluster in index order.
  std::vector<int32_t> parents, forward;
  std::vector<std::pair<size_t, int32_t>> order;
  for (int32_t i = 0; i < n; ++i) {
    const Node& node = model.node(graph.nodes[i]);
    parents.clear();
    for (const OutputRef& in : node.inputs) parents.push_back(cg.Find(static_cast<int32_t>(model.node(in.node).topo_id)));
    for (NodeId c : node.control_inputs) parents.push_back(cg.Find(static_cast<int32_t>(model.node(c).topo_id)));
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    if (parents.empty()) continue;
    order.clear();
    for (int32_t p : parents) order.emplace_back(cg.OutDegree(p), p);
    std::sort(order.begin(), order.end());
    int32_t self = i;
    for (const auto& [deg, p0] : order) {
      int32_t p = cg.Find(p0);
      self = cg.Find(self);
      if (p == self || !Mergeable(p, self)) continue;
      if (cg.HasSecondPath(p, self, forward)) continue;
      self = cg.Merge(p, self, forward);
    }
  }

  // 3. Members per cluster, cluster edges, topological numbering.
  std::vector<int32_t> rep(n);
  for (int32_t i = 0; i < n; ++i) rep[i] = cg.Find(i);
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (int32_t i = 0; i < n; ++i) {
    const Node& node = model.node(graph.nodes[i]);
    auto add = [&](NodeId p) {
      int32_t a = rep[model.node(p).topo_id];
      if (a != rep[i]) edges.emplace_back(a, rep[i]);
    };
    for (const OutputRef& in : node.inputs) add(in.node);
    for (NodeId c : node.control_inputs) add(c);
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::vector<int32_t> indeg(n, 0), first(n + 1, 0);
  for (const auto& [a, b] : edges) {
    ++indeg[b];
    ++first[a + 1];
  }
  for (int32_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  for (int32_t i = 0; i < n; ++i) {
    if (rep[i] == i && indeg[i] == 0) ready.push(i);
  }
  std::vector<int32_t> index_of(n, -1);
  int32_t next = 0;
  while (!ready.empty()) {
    int32_t c = ready.top();
    ready.pop();
    index_of[c] = next++;
    for (int32_t e = first[c]; e < first[c + 1]; ++e) {
      if (--indeg[edges[e].second] == 0) ready.push(edges[e].second);
    }
  }
  result.subgraphs.resize(next);
  for (int32_t i = 0; i < n; ++i) {
    int32_t s = index_of[rep[i]];
    result.subgraph_of[i] = s;
    EngineSubgraph& sg = result.subgraphs[s];
    if (sg.nodes.empty()) {
      const Node& node = model.node(graph.nodes[i]);
      sg.index = s;
      sg.engine = node.engine;
      sg.stream_label = EffectiveStreamLabel(node);
      sg.user_stream_label = IsInputDataNode(node) ? "" : GetStringAttr(node.attrs, kAttrUserStreamLabel).value_or("");
      sg.name = StrCat(graph.name, "_", s, "_", node.engine);
    }
    sg.nodes.push_back(graph.nodes[i]);
  }
  for (const auto& [a, b] : edges) {
    result.subgraphs[index_of[a]].consumers.push_back(index_of[b]);
    result.subgraphs[index_of[b]].producers.push_back(index_of[a]);
  }
  for (EngineSubgraph& sg : result.subgraphs) {
    std::sort(sg.producers.begin(), sg.producers.end());
    std::sort(sg.consumers.begin(), sg.consumers.end());
  }
  return result;
}

}  // namespace npuplan::stream
