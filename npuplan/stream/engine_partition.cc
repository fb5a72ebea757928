#include "npuplan/stream/engine_partition.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <queue>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "npuplan/ir/node_prefetch.h"
#include "npuplan/stream/engine_cluster_graph.h"
#include "npuplan/stream/logical_stream_pass.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/str_util.h"

namespace npuplan::stream {
namespace {

using engine_internal::ClusterGraph;

// String interning into `storage` (stable addresses): a linear scan over the
// few distinct engines and labels of a graph, a hash map beyond that.
class Interner {
 public:
  explicit Interner(std::deque<std::string>& storage) : storage_(storage) {}
  int32_t operator()(std::string_view s) {
    if (map_.empty()) {
      for (size_t i = 0; i < views_.size(); ++i) {
        if (views_[i] == s) return static_cast<int32_t>(i);
      }
      Add(s);
      if (views_.size() > 16) {
        for (size_t i = 0; i < views_.size(); ++i) map_.emplace(views_[i], static_cast<int32_t>(i));
      }
      return static_cast<int32_t>(views_.size()) - 1;
    }
    auto it = map_.find(s);
    if (it != map_.end()) return it->second;
    Add(s);
    map_.emplace(views_.back(), static_cast<int32_t>(views_.size()) - 1);
    return static_cast<int32_t>(views_.size()) - 1;
  }
  std::string_view view(int32_t id) const { return views_[id]; }

 private:
  void Add(std::string_view s) { views_.push_back(storage_.emplace_back(s)); }
  std::deque<std::string>& storage_;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, int32_t> map_;
};

// The storage of a dead array, reused for a new one of `size` elements
// (no fresh pages when it fits: on a 1M-node graph, first-touch page faults
// cost more than the loops that fill the arrays).
BigVector<int32_t> Recycle(BigVector<int32_t>& dead, size_t size, int32_t value) {
  BigVector<int32_t> v = std::move(dead);
  v.assign(size, value);
  return v;
}

// EffectiveStreamLabel without copies; a combined "<user>_<inner>" label is
// kept in `combined` (stable addresses).
std::string_view EffectiveLabelView(const Node& node, std::deque<std::string>& combined) {
  const std::string& inner = StringAttrOrEmpty(node.attrs, kAttrStreamLabel);
  const std::string& user = StringAttrOrEmpty(node.attrs, kAttrUserStreamLabel);
  if (user.empty()) return inner;
  if (!inner.empty() && GetBoolAttr(node.attrs, kAttrEnableInnerParallel).value_or(false)) {
    return combined.emplace_back(StrCat(user, "_", inner));
  }
  return user;
}

}  // namespace

bool IsInputDataNode(const Node& node) {
  if (!node.inputs.empty() || !node.control_inputs.empty()) return false;
  return node.type == "Data" || node.type == "RefData" || node.type == "AippData";
}

std::string EffectiveStreamLabel(const Node& node) {
  std::string inner = GetStringAttr(node.attrs, kAttrStreamLabel).value_or("");
  std::string user = GetStringAttr(node.attrs, kAttrUserStreamLabel).value_or("");
  if (user.empty()) return inner;
  if (!inner.empty() && GetBoolAttr(node.attrs, kAttrEnableInnerParallel).value_or(false)) {
    return StrCat(user, "_", inner);
  }
  return user;
}

namespace {

void BuildSuccessorLists(const BigVector<int32_t>& pred_first, const BigVector<int32_t>& preds,
                         const BigVector<uint8_t>& pred_is_control, BigVector<int32_t>& succ_first,
                         BigVector<int32_t>& succs, BigVector<uint8_t>& succ_is_control) {
  const int32_t n = pred_first.empty() ? 0 : static_cast<int32_t>(pred_first.size()) - 1;
  succ_first.assign(static_cast<size_t>(n) + 1, 0);
  for (int32_t p : preds) ++succ_first[p + 1];
  for (int32_t i = 0; i < n; ++i) succ_first[i + 1] += succ_first[i];
  succs.resize(preds.size());
  succ_is_control.resize(preds.size());
  // Data consumers of every producer first, then control consumers: two
  // sweeps over the consumers in index order with one cursor per producer.
  BigVector<int32_t> cursor(succ_first.begin(), succ_first.end() - 1);
  for (uint8_t control = 0; control < 2; ++control) {
    for (int32_t i = 0; i < n; ++i) {
      for (int32_t e = pred_first[i]; e < pred_first[i + 1]; ++e) {
        if (pred_is_control[e] != control) continue;
        const int32_t pos = cursor[preds[e]]++;
        succs[pos] = i;
        succ_is_control[pos] = control;
      }
    }
  }
}

}  // namespace

void GraphEdges::BuildSuccessors() {
  BuildSuccessorLists(pred_first, preds, pred_is_control, succ_first, succs, succ_is_control);
}

std::string EngineSubgraphName::str() const {
  return StrCat(graph != nullptr ? *graph : std::string(), "_", index, "_", engine);
}

namespace {

// The working arrays of one PartitionByEngine, indexed by topo index (per
// node) or cluster id (= the topo index of its first node), each filled by
// the step named beside it. Steps hand dead arrays' storage on (Recycle).
struct PartitionWork {
  int32_t n = 0;
  std::vector<int32_t> attr_nodes;  // topo indices of nodes with attributes
  // 1. ReadNodeKeys: engine (complemented for Data-like inputs), label and
  //    user label ids, side by side (the merge loop reads all three of a
  //    cluster: one cache miss); predecessors (data, then control) as a CSR.
  struct Keys {
    int32_t engine, label, user;
  };
  BigVector<Keys> keys;
  BigVector<int32_t> pred_first, preds;
  BigVector<uint8_t> pred_is_control;
  int32_t no_user = 0;  // the id of ""
  bool any_user = false;  // some non-Data node has a user stream label
  // 2. MarkClusters: the cluster of each node.
  BigVector<int32_t> rep;
  // 3. BuildClusterEdges: CSR by source cluster (`len` deduplicated targets
  //    from `first`), in-degrees; `seen` is scratch.
  BigVector<int32_t> first, targets, fill, len, indeg, seen;
  // 4. OrderClusters: the position of each cluster, the cluster at each.
  BigVector<int32_t> index_of, cluster_at;

  ConstRange<int32_t> Preds(int32_t i) const {
    return ConstRange<int32_t>(preds.data() + pred_first[i], preds.data() + pred_first[i + 1]);
  }
};

// 1. Per-node keys: engine, effective label, user label (interned). The
//    engine id of a Data-like input node is stored complemented (< 0): the
//    pseudo-engine DATA, which never merges. Predecessors (data inputs, then
//    control inputs) as topo indices, CSR: every later step reads these flat
//    arrays, not the nodes.
//    When the graph holds every node of the model in index order, a
//    producer's topo id is its index (topo ids number the positions in
//    graph.nodes), and the producers' structs are not read: each node's own
//    topo id is checked on the way (returns false on a mismatch, which the
//    caller answers with the general walk).
template <bool kIndexIsTopo>
bool ReadNodeKeysWalk(const Model& model, const Graph& graph, bool keep_edges, Interner& intern,
                      PartitionWork& w) {
  const int32_t n = w.n;
  auto topo = [&](NodeId id) {
    return kIndexIsTopo ? id.value : static_cast<int32_t>(model.node(id).topo_id);
  };
  std::deque<std::string> combined;
  w.no_user = intern("");
  w.any_user = false;
  w.keys.resize(n);
  w.pred_first.assign(n + 1, 0);
  w.preds.clear();
  w.preds.reserve(static_cast<size_t>(n) * 2);
  w.pred_is_control.clear();
  w.attr_nodes.clear();
  if (keep_edges) w.pred_is_control.reserve(static_cast<size_t>(n) * 2);
  bool topo_ok = true;
  // The loop's time is cache misses: each node's struct and arrays, and the
  // topo id of every producer (scattered). Fetched in stages ahead of the
  // node being read: the struct, then its arrays, then its producers.
  constexpr int32_t kStructAhead = 16, kArraysAhead = 8, kProducersAhead = 4;
  for (int32_t i = 0; i < n; ++i) {
    if (i + kStructAhead < n) PrefetchNodeRecord(model.node(graph.nodes[i + kStructAhead]));
    if (i + kArraysAhead < n) {
      const Node& ahead = model.node(graph.nodes[i + kArraysAhead]);
      if (!ahead.inputs.empty()) __builtin_prefetch(ahead.inputs.data());
      if (!ahead.control_inputs.empty()) __builtin_prefetch(ahead.control_inputs.data());
      if (!ahead.attrs.empty()) __builtin_prefetch(&*ahead.attrs.begin());
    }
    if (!kIndexIsTopo && i + kProducersAhead < n) {
      const Node& ahead = model.node(graph.nodes[i + kProducersAhead]);
      for (const OutputRef& in : ahead.inputs) __builtin_prefetch(&model.node(in.node).topo_id);
      for (NodeId c : ahead.control_inputs) __builtin_prefetch(&model.node(c).topo_id);
    }
    const Node& node = model.node(graph.nodes[i]);
    if (kIndexIsTopo) topo_ok &= node.topo_id == i;
    if (!node.attrs.empty()) w.attr_nodes.push_back(i);
    const bool data = IsInputDataNode(node);
    PartitionWork::Keys& k = w.keys[i];
    k.engine = data ? ~intern(node.engine) : intern(node.engine);
    k.label = intern(EffectiveLabelView(node, combined));
    k.user = data ? w.no_user : intern(StringAttrOrEmpty(node.attrs, kAttrUserStreamLabel));
    w.any_user |= k.user != w.no_user;
    for (const OutputRef& in : node.inputs) w.preds.push_back(topo(in.node));
    if (keep_edges) w.pred_is_control.resize(w.preds.size(), 0);
    for (NodeId c : node.control_inputs) w.preds.push_back(topo(c));
    if (keep_edges) w.pred_is_control.resize(w.preds.size(), 1);
    w.pred_first[i + 1] = static_cast<int32_t>(w.preds.size());
  }
  return topo_ok;
}

void ReadNodeKeys(const Model& model, const Graph& graph, bool keep_edges, Interner& intern,
                  PartitionWork& w) {
  bool index_is_topo = graph.nodes.size() == model.num_nodes();
  for (int32_t i = 0; i < w.n && index_is_topo; ++i) index_is_topo = graph.nodes[i].value == i;
  if (index_is_topo && ReadNodeKeysWalk<true>(model, graph, keep_edges, intern, w)) return;
  ReadNodeKeysWalk<false>(model, graph, keep_edges, intern, w);
}

// Faults in blocks of the given sizes and hands them to BigVector's cache of
// freed blocks, from which the next requests of those sizes are served: a
// thread otherwise idle pays the first touch of pages (the kernel's zeroing)
// instead of the thread that will fill them.
void WarmHugeBlocks(const std::vector<size_t>& sizes) {
  std::vector<void*> blocks;
  blocks.reserve(sizes.size());
  for (size_t bytes : sizes) {
    char* p = static_cast<char*>(AllocateHugeBlock(bytes));
    for (size_t off = 0; off < bytes; off += 4096) p[off] = 0;
    blocks.push_back(p);
  }
  for (size_t k = 0; k < sizes.size(); ++k) FreeHugeBlock(blocks[k], sizes[k]);
}

// The blocks MarkClusters takes for n nodes: the out-degree counts, then the
// cluster graph's.
std::vector<size_t> MarkClustersBlocks(int32_t n) {
  std::vector<size_t> sizes = ClusterGraph::BlockSizes(n);
  const size_t count_out = sizeof(int32_t) * static_cast<size_t>(n);
  if (count_out >= kHugeFromBytes) sizes.push_back(HugePageAllocator<char>::Rounded(count_out));
  return sizes;
}

// 2. MarkClusters: merge input clusters into each cluster in index order.
//    The cluster graph lives only until every node's cluster is known: the
//    later arrays then reuse its memory (fresh pages are the dearest part of
//    PartitionByEngine on a 1M-node graph).
//    `count_out`: each node's out-edge count (CountOut); `await_labels`:
//    returns the landmark labels (ClusterGraph::LandmarkLabels), which may
//    be built on another thread meanwhile: asked for after the graph is.
// `bound_failures` (tests): counts the out-degree bounds found not to hold,
// checked for every parent of every node and every merged cluster.
BigVector<int32_t> CountOut(const PartitionWork& w) {
  BigVector<int32_t> count_out(w.n, 0);
  for (int32_t p : w.preds) ++count_out[p];
  return count_out;
}

void MarkClusters(PartitionWork& w, BigVector<int32_t> count_out,
                  const std::function<BigVector<ClusterGraph::Landmark>()>& await_labels,
                  int64_t& second_path_reads, int64_t* bound_failures = nullptr) {
  const int32_t n = w.n;
  ClusterGraph cg(n, count_out, w.pred_first);
  cg.MinInputs(std::move(count_out), w.pred_first, w.preds);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t p : w.Preds(i)) cg.AddEdge(p, i);
  }
  cg.SetLandmarks(await_labels());
  // Keys of a cluster are those of its smallest member (its first node).
  auto Mergeable = [&](int32_t a, int32_t b) {
    const PartitionWork::Keys& ka = w.keys[a];
    const PartitionWork::Keys& kb = w.keys[b];
    if (ka.engine < 0 || kb.engine < 0) return false;
    if (ka.user != w.no_user && ka.user == kb.user) return true;
    return ka.engine == kb.engine && ka.label == kb.label;
  };
  std::vector<int32_t> parents;
  std::vector<std::pair<size_t, int32_t>> order;
  struct DegreeBounds {
    uint32_t low, high;
    int32_t cluster;
  };
  std::vector<DegreeBounds> bounds;
  // Past this many parents, every degree is computed (the pairwise check of
  // bounds is quadratic in the parents).
  constexpr size_t kBoundedParents = 8;
  // Without user labels, Mergeable is an equivalence on non-Data nodes
  // ((engine, label) equal), a cluster holds one class, and a merge keeps
  // the class of `self`: a parent of another class is skipped wherever it
  // sorts. So only the parents of i's class are ordered (the order of a
  // subset of a sorted list is the same), and one such parent needs no
  // out-degree (whose exact value costs a compaction of its list). A
  // Data-like parent never merges, with or without labels.
  std::vector<int32_t> candidates;
  // The loop's time is cache misses on the clusters of long edges' ends:
  // the nodes (union-find entries) are fetched far ahead, the clusters they
  // point to (their union-find parent then) near.
  constexpr int32_t kFarAhead = 32, kNearAhead = 12;
  // Every input before its consumer (a topological order): then, at node
  // i, the nodes after i are still alone in their clusters (TryMerge's
  // `succ_fresh`).
  bool inputs_first = true;
  for (int32_t i = 0; i < n && inputs_first; ++i) {
    for (int32_t p : w.Preds(i)) inputs_first &= p < i;
  }
  for (int32_t i = 0; i < n; ++i) {
    if (i + kFarAhead < n) {
      const int32_t j = i + kFarAhead;
      for (int32_t p : w.Preds(j)) cg.PrefetchNode(p);
      cg.PrefetchConsumers(j);
    }
    if (i + kNearAhead < n) {
      for (int32_t p : w.Preds(i + kNearAhead)) {
        const int32_t up = cg.ParentOf(p);
        cg.PrefetchCluster(up);
        __builtin_prefetch(&w.keys[up]);
      }
    }
    parents.clear();
    for (int32_t p : w.Preds(i)) parents.push_back(cg.Find(p));
    if (parents.empty()) continue;
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    if (bound_failures != nullptr) {
      for (int32_t p : parents) *bound_failures += cg.BoundsHold(p) ? 0 : 1;
    }
    candidates.clear();
    for (int32_t p : parents) {
      if ((w.keys[p].engine >= 0 && (w.any_user || Mergeable(p, i)))) candidates.push_back(p);
    }
    order.clear();
    // The out-degrees only order two or more parents, and an exact one
    // costs a compaction of the parent's list (a hub's would be read once
    // per consumer): bounds order most pairs. A parent's degree is computed
    // when its bounds overlap another's; else any value within them sorts
    // it right (its lower bound).
    if (candidates.size() <= 1) {
      if (!candidates.empty()) order.emplace_back(0, candidates[0]);
    } else if (candidates.size() > kBoundedParents) {
      for (int32_t p : candidates) order.emplace_back(cg.OutDegree(p), p);
    } else {
      bounds.clear();
      for (int32_t p : candidates) bounds.push_back({cg.OutDegreeLow(p), cg.OutDegreeHigh(p), p});
      for (size_t a = 0; a < bounds.size(); ++a) {
        for (size_t b = a + 1; b < bounds.size(); ++b) {
          if (bounds[a].high < bounds[b].low || bounds[b].high < bounds[a].low) continue;
          for (DegreeBounds* x : {&bounds[a], &bounds[b]}) {
            if (x->low != x->high)
              x->low = x->high = static_cast<uint32_t>(cg.OutDegree(x->cluster));
          }
        }
      }
      for (const DegreeBounds& x : bounds) order.emplace_back(x.low, x.cluster);
    }
    std::sort(order.begin(), order.end());
    int32_t self = i;
    for (const auto& [deg, p0] : order) {
      int32_t p = cg.Find(p0);
      self = cg.Find(self);
      if (p == self || !Mergeable(p, self)) continue;
      if (const int32_t kept = cg.TryMerge(p, self, inputs_first && self == i); kept >= 0) {
        self = kept;
        if (bound_failures != nullptr) *bound_failures += cg.BoundsHold(kept) ? 0 : 1;
      }
    }
    cg.Settle(i, parents);
  }
  second_path_reads = cg.reads();
  w.rep = cg.TakeRoots();
}

// 3. Cluster edges (CSR by source cluster, deduplicated in place, lengths in
//    `len`) and in-degrees.
void BuildClusterEdges(PartitionWork& w) {
  const int32_t n = w.n;
  const BigVector<int32_t>& rep = w.rep;
  w.first.assign(n + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t p : w.Preds(i)) w.first[rep[p] + 1] += rep[p] != rep[i];
  }
  for (int32_t i = 0; i < n; ++i) w.first[i + 1] += w.first[i];
  w.targets.resize(w.first[n]);
  w.fill.assign(w.first.begin(), w.first.end() - 1);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t p : w.Preds(i)) {
      if (rep[p] != rep[i]) w.targets[w.fill[rep[p]]++] = rep[i];
    }
  }
  w.len.assign(n, 0);
  w.indeg.assign(n, 0);
  w.seen = Recycle(w.fill, n, -1);
  for (int32_t a = 0; a < n; ++a) {
    int32_t out = w.first[a];
    for (int32_t e = w.first[a]; e < w.first[a + 1]; ++e) {
      const int32_t b = w.targets[e];
      if (w.seen[b] == a) continue;
      w.seen[b] = a;
      w.targets[out++] = b;
      ++w.indeg[b];
    }
    w.len[a] = out - w.first[a];
  }
}

// 4. Topological numbering of the clusters with ties by smallest member (=
//    the cluster's id): Kahn's algorithm with a min-heap. When every cluster
//    edge goes from a smaller to a larger cluster id (the usual case:
//    clusters are named by their first node in topological order), that
//    order is simply ascending ids, and the heap is skipped.
void OrderClusters(PartitionWork& w) {
  const int32_t n = w.n;
  bool ascending = true;
  for (int32_t a = 0; a < n && ascending; ++a) {
    for (int32_t e = w.first[a]; e < w.first[a] + w.len[a]; ++e) ascending &= w.targets[e] > a;
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  w.index_of.assign(n, -1);
  {
    int32_t clusters = 0;
    for (int32_t i = 0; i < n; ++i) clusters += w.rep[i] == i;
    w.cluster_at.reserve(clusters);
  }
  if (ascending) {
    for (int32_t i = 0; i < n; ++i) {
      if (w.rep[i] != i) continue;
      w.index_of[i] = static_cast<int32_t>(w.cluster_at.size());
      w.cluster_at.push_back(i);
    }
  } else {
    for (int32_t i = 0; i < n; ++i) {
      if (w.rep[i] == i && w.indeg[i] == 0) ready.push(i);
    }
  }
  while (!ready.empty()) {
    int32_t c = ready.top();
    ready.pop();
    w.index_of[c] = static_cast<int32_t>(w.cluster_at.size());
    w.cluster_at.push_back(c);
    for (int32_t e = w.first[c]; e < w.first[c] + w.len[c]; ++e) {
      if (--w.indeg[w.targets[e]] == 0) ready.push(w.targets[e]);
    }
  }
}

// 5. Subgraph records: members by counting sort, producers then consumers
//    built in index order (so both ascending without sorting).
void BuildSubgraphs(const Graph& graph, const Interner& intern, PartitionWork& w,
                    EnginePartition& result) {
  const int32_t n = w.n;
  const int32_t k = static_cast<int32_t>(w.cluster_at.size());
  const BigVector<int32_t>& first = w.first;
  const BigVector<int32_t>& len = w.len;
  const BigVector<int32_t>& targets = w.targets;
  const BigVector<int32_t>& index_of = w.index_of;
  const BigVector<int32_t>& cluster_at = w.cluster_at;
  BigVector<int32_t> member_first = Recycle(w.seen, k + 1, 0),
                     prod_first = Recycle(w.indeg, k + 1, 0);
  BigVector<int32_t> cons_first(k + 1, 0);
  BigVector<int32_t>& fill = w.fill;
  for (int32_t i = 0; i < n; ++i) {
    result.subgraph_of[i] = index_of[w.rep[i]];
    ++member_first[result.subgraph_of[i] + 1];
  }
  for (int32_t s = 0; s < k; ++s) {
    const int32_t c = cluster_at[s];
    cons_first[s + 1] = len[c];
    for (int32_t e = first[c]; e < first[c] + len[c]; ++e) ++prod_first[index_of[targets[e]] + 1];
  }
  for (int32_t s = 0; s < k; ++s) {
    member_first[s + 1] += member_first[s];
    prod_first[s + 1] += prod_first[s];
    cons_first[s + 1] += cons_first[s];
  }
  result.member_storage.resize(n);
  fill.assign(member_first.begin(), member_first.end() - 1);
  for (int32_t i = 0; i < n; ++i) result.member_storage[fill[result.subgraph_of[i]]++] = graph.nodes[i];
  const int32_t links = prod_first[k];
  result.link_storage.resize(2 * static_cast<size_t>(links));
  int32_t* prod = result.link_storage.data();
  int32_t* cons = prod + links;
  fill.assign(prod_first.begin(), prod_first.end() - 1);
  for (int32_t s = 0; s < k; ++s) {
    const int32_t c = cluster_at[s];
    for (int32_t e = first[c]; e < first[c] + len[c]; ++e) prod[fill[index_of[targets[e]]]++] = s;
  }
  fill.assign(cons_first.begin(), cons_first.end() - 1);
  for (int32_t t = 0; t < k; ++t) {
    for (int32_t e = prod_first[t]; e < prod_first[t + 1]; ++e) cons[fill[prod[e]]++] = t;
  }
  result.subgraphs.resize(k);
  const NodeId* members = result.member_storage.data();
  for (int32_t s = 0; s < k; ++s) {
    EngineSubgraph& sg = result.subgraphs[s];
    sg.index = s;
    // A cluster is named by its smallest member: its first node.
    const int32_t first_topo = cluster_at[s];
    const PartitionWork::Keys& k = w.keys[first_topo];
    sg.engine = intern.view(k.engine < 0 ? ~k.engine : k.engine);
    sg.stream_label = intern.view(k.label);
    sg.user_stream_label = intern.view(k.user);
    sg.graph_name = &graph.name;
    sg.nodes = {members + member_first[s], members + member_first[s + 1]};
    sg.producers = {prod + prod_first[s], prod + prod_first[s + 1]};
    sg.consumers = {cons + cons_first[s], cons + cons_first[s + 1]};
  }
}

}  // namespace

int64_t OutDegreeBoundFailuresForTesting(const Model& model, GraphId g) {
  const Graph& graph = model.graph(g);
  std::deque<std::string> strings;
  Interner intern(strings);
  PartitionWork w;
  w.n = static_cast<int32_t>(graph.nodes.size());
  if (w.n == 0) return 0;
  ReadNodeKeys(model, graph, /*keep_edges=*/false, intern, w);
  int64_t reads = 0, failures = 0;
  BigVector<int32_t> count_out = CountOut(w);
  const std::vector<int32_t> landmarks = ClusterGraph::ChooseLandmarks(count_out);
  MarkClusters(
      w, std::move(count_out),
      [&] { return ClusterGraph::LandmarkLabels(landmarks, w.pred_first, w.preds); }, reads,
      &failures);
  return failures;
}

EnginePartition PartitionByEngine(const Model& model, GraphId g, GraphEdges* edges,
                                  int32_t second_thread_from_nodes) {
  const Graph& graph = model.graph(g);
  EnginePartition result;
  result.graph = g;
  PartitionWork w;
  w.n = static_cast<int32_t>(graph.nodes.size());
  result.subgraph_of.assign(w.n, -1);
  if (w.n == 0) {
    if (edges != nullptr) *edges = GraphEdges{};
    if (edges != nullptr) {
      edges->pred_first.assign(1, 0);
      edges->succ_first.assign(1, 0);
    }
    return result;
  }
  Interner intern(result.strings);
  {
    // The fresh pages of MarkClusters' per-node arrays are faulted in on a
    // second thread while this one reads the nodes (WarmHugeBlocks).
    std::jthread warm;  // joins on every way out
    try {
      if (w.n >= second_thread_from_nodes)
        warm = std::jthread(WarmHugeBlocks, MarkClustersBlocks(w.n));
    } catch (const std::system_error&) {  // no thread to be had: faulted where used
    }
    ReadNodeKeys(model, graph, edges != nullptr, intern, w);
  }
  // A second thread builds what does not depend on the clusters while this
  // one merges them: the landmark labels (two walks over the edges, and
  // their fresh pages), handed over before the merge loop, then the
  // successor lists of `edges`. Both only read the predecessor CSR.
  BigVector<int32_t> count_out = CountOut(w);
  const std::vector<int32_t> landmarks = ClusterGraph::ChooseLandmarks(count_out);
  // An exception there (bad_alloc) is carried over and rethrown here, as on
  // this thread, instead of terminating the process.
  BigVector<ClusterGraph::Landmark> labels;
  std::promise<void> labelled;
  std::future<void> labels_ready = labelled.get_future();
  std::exception_ptr successors_failed;
  auto beside_work = [&] {
    try {
      labels = ClusterGraph::LandmarkLabels(landmarks, w.pred_first, w.preds);
    } catch (...) {
      labelled.set_exception(std::current_exception());
      return;
    }
    labelled.set_value();
    if (edges == nullptr) return;
    try {
      BuildSuccessorLists(w.pred_first, w.preds, w.pred_is_control, edges->succ_first, edges->succs,
                          edges->succ_is_control);
    } catch (...) {
      successors_failed = std::current_exception();
    }
  };
  {
    std::jthread beside;  // joins on every way out
    try {
      if (w.n >= second_thread_from_nodes) beside = std::jthread(beside_work);
    } catch (const std::system_error&) {  // no thread to be had: built here first
    }
    if (!beside.joinable()) beside_work();
    MarkClusters(
        w, std::move(count_out),
        [&] {
          labels_ready.get();
          return std::move(labels);
        },
        result.second_path_reads);
    BuildClusterEdges(w);
    OrderClusters(w);
    BuildSubgraphs(graph, intern, w, result);
  }
  if (successors_failed) std::rethrow_exception(successors_failed);
  result.attr_nodes = std::move(w.attr_nodes);
  if (edges != nullptr) {
    edges->pred_first = std::move(w.pred_first);
    edges->preds = std::move(w.preds);
    edges->pred_is_control = std::move(w.pred_is_control);
  }
  return result;
}

}  // namespace npuplan::stream
