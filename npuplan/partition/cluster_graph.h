// Clusters over the nodes of one graph, with GE's merge primitives
// (ge-reference §7, base_cluster.cc), in near-linear form.
//
// A cluster is a set of nodes with a type (DATA, INPUT_NODE, NETOUTPUT, STAGE,
// UNKNOWN, KNOWN) and a rank interval [min, max]. Initially every node is its
// own cluster with min = max = its topological position; TopoSort() re-ranks
// the live clusters (min = max = cluster rank, as GE's UpdateRank does).
// Cluster edges are the node edges (data and control) between clusters.
//
// Representation: union-find over node indices, linked by size (the smaller
// tree goes under the larger root) with path halving; a cluster's id is kept
// apart from its tree root (a root r stores ~id in parent_[r]), so
// Merge(into, other) keeps the id `into` whichever root survives. (Linking
// `other` under `into`, as before, hung the large old cluster under each new
// singleton that absorbed it: a chain as long as the number of merges,
// walked by every Find of a stale id.) Node lists are circular linked lists
// through the cluster id (O(1) splice on merge, no head/tail arrays); in/out
// cluster lists may hold stale or repeated ids and are compacted lazily when
// read (small-to-large concatenation on merge). So a merge never rewrites the
// neighbours' lists, unlike GE's vector find/erase.
//
// Cycle avoidance, as in GE:
//   TryMerge(c, o)          o is an input of c. BFS forward from o over
//                           clusters whose min < c.max; reaching c from any
//                           cluster other than o is a second path → refuse.
//   MergeAllPathFrom(c, o)  every cluster on a path o → … → c inside the
//                           window (min < c.max); all of them and o merge
//                           into c. Found by a forward search from o and a
//                           backward one from c run side by side: the first
//                           one done has them all.
// Both searches are bounded by the rank window between the two clusters; no
// reachability is ever precomputed.
#ifndef NPUPLAN_PARTITION_CLUSTER_GRAPH_H_
#define NPUPLAN_PARTITION_CLUSTER_GRAPH_H_

#include <climits>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "npuplan/support/big_vector.h"

namespace npuplan::partition {

enum class ClusterType : uint8_t { kData, kInputNode, kNetOutput, kStage, kUnknown, kKnown };
inline constexpr int kNumClusterTypes = 6;
// "data", "input", "netoutput", "stage", "unknown", "known".
std::string_view ClusterTypeName(ClusterType t);
// Only KNOWN, UNKNOWN and INPUT_NODE clusters take part in merges.
inline bool IsMergeable(ClusterType t) {
  return t == ClusterType::kKnown || t == ClusterType::kUnknown || t == ClusterType::kInputNode;
}

// A list of cluster ids (node-sized at first: on huge pages, as BigVector).
using ClusterList = BigVector<int32_t>;

class ClusterGraph {
 public:
  // `types[i]` is node i's cluster type; node i's producers (data and
  // control, any order, repeats allowed) are pred_list[pred_offsets[i] ..
  // pred_offsets[i+1]), each < i (nodes are in topological order).
  // The arrays are taken over (no copy).
  ClusterGraph(std::vector<ClusterType> types, BigVector<uint32_t> pred_offsets, BigVector<int32_t> pred_list);

  int32_t num_nodes() const { return static_cast<int32_t>(parent_.size()); }
  // The live cluster containing node (or cluster id) x (path halving; one
  // read when x is a tree root, e.g. a live singleton).
  int32_t Find(int32_t x) { return ~parent_[Root(x)]; }
  // A cluster id is one of its own nodes, so c is live iff its node's tree
  // is named c.
  bool IsLive(int32_t c) const {
    int32_t r = c;
    while (parent_[r] >= 0) r = parent_[r];
    return ~parent_[r] == c;
  }

  ClusterType type(int32_t c) const { return type_[c]; }
  void set_type(int32_t c, ClusterType t) { type_[c] = t; }
  int32_t min(int32_t c) const { return min_[c]; }
  int32_t max(int32_t c) const { return max_[c]; }
  int32_t size(int32_t c) const { return size_[c]; }
  // Smallest node index in the cluster (stable key for ordering and naming).
  int32_t first(int32_t c) const { return first_[c]; }

  // Live input / output clusters of live cluster c (deduplicated, no self).
  // Valid until the next merge.
  std::span<const int32_t> Ins(int32_t c) { return Compact(c, in_); }
  std::span<const int32_t> Outs(int32_t c) { return Compact(c, out_); }

  // Merges live cluster `other` into live cluster `into` (no checks). The
  // result is UNKNOWN when either side is. `on_node` (if set) is called for
  // every node of a KNOWN side that turns UNKNOWN by this merge.
  template <typename F>
  void Merge(int32_t into, int32_t other, F&& on_node_turned_unknown);
  void Merge(int32_t into, int32_t other) {
    Merge(into, other, [](int32_t) {});
  }

  // GE TryMerge: true (and merged) unless a second path other → … → into exists.
  template <typename F>
  bool TryMerge(int32_t into, int32_t other, F&& on_node_turned_unknown);

  // GE MergeAllPathFrom, path part: the clusters on paths other → … → into,
  // `other` first, then by rank. Empty when into == other.
  std::vector<int32_t> PathClusters(int32_t into, int32_t other);

  // True when a path from → … → to of length >= 1 exists (bounded BFS).
  bool Reaches(int32_t from, int32_t to);
  // True when a path from → x → … → to exists through some x != from, to.
  // Only clusters whose first node is <= max_first are visited (a caller
  // that knows later clusters cannot lead back passes the bound).
  bool ReachesIndirectly(int32_t from, int32_t to, int32_t max_first = INT32_MAX);

  // Topologically sorts the live clusters (Kahn; among ready clusters the
  // smallest first() goes first), sets min = max = rank, returns them in order.
  ClusterList TopoSort();

  // Live clusters ordered by first().
  ClusterList LiveClusters() const;
  // Node indices of live cluster c, ascending.
  std::vector<int32_t> Members(int32_t c) const;
  template <typename F>
  void ForEachNode(int32_t c, F&& f) const {
    int32_t v = c;  // a cluster's id is one of its nodes; the list is a cycle through it
    do {
      f(v);
      v = next_[v];
    } while (v != c);
  }

  // Rank-window pruning is sound while merges happen in cluster rank order
  // into the cluster being visited (GE's merge loops after a topological
  // sort: everything that reaches the visited cluster has a smaller min).
  // Other merge orders (control-flow groups) turn it off: searches are then
  // unbounded.
  void set_bounded(bool on) { bounded_ = on; }
  bool bounded() const { return bounded_; }

  // Work counters (for --stats and the benchmark).
  int64_t bfs_visits = 0;

 private:
  // Edge lists: a cluster that never absorbed another uses its slice of the
  // initial CSR arrays (compacted in place, `len` shrinks); the first merge
  // into it moves its list into `own[slot_[c]]` (slots are handed out on
  // merges and reused: a std::vector per node costs 24 bytes even when empty).
  struct EdgeLists {
    BigVector<uint32_t> off;
    BigVector<int32_t> csr;
    BigVector<int32_t> len;
    std::vector<std::vector<int32_t>> own;
  };
  std::span<const int32_t> Compact(int32_t c, EdgeLists& e);
  // c's list as stored: may hold stale ids (Find them), repeats and c itself.
  std::span<const int32_t> RawList(int32_t c, const EdgeLists& e) const;
  void Join(int32_t into, int32_t other, EdgeLists& e);
  void MergeLists(int32_t into, int32_t other);
  // Union-find tree root of node x (path halving).
  int32_t Root(int32_t x) {
    for (;;) {
      const int32_t p = parent_[x];
      if (p < 0) return x;
      const int32_t gp = parent_[p];
      if (gp < 0) return p;
      parent_[x] = gp;
      x = gp;
    }
  }
  uint32_t NewStamp(BigVector<uint32_t>& stamps, uint32_t& counter);
  // One of PathClusters' two searches: forward over out lists from `other`
  // or backward over in lists from `into`, read a few entries per Step.
  struct PathSearch {
    std::vector<int32_t> queue;  // queue[0] is the start
    size_t qi = 0, pos = 0;      // the list being read and the next entry in it
    uint32_t stamp = 0;
    // (y, x) for each entry y read from x's list, y entered or the far end:
    // y leads to x towards the start.
    std::vector<std::pair<int32_t, int32_t>> found;
    void Start(int32_t from, uint32_t s);
  };
  bool Step(PathSearch& s, EdgeLists& e, BigVector<uint32_t>& stamps, int32_t far_end,
            int32_t limit);
  template <typename F>
  void ReachOver(std::vector<std::pair<int32_t, int32_t>>& pairs, int32_t seed, F&& f);

  // Node-sized arrays: BigVector (huge pages; page faults dominate at 1M nodes).
  // Union-find forest over node indices: the parent node, or ~id of the
  // cluster the tree holds at a root (< 0).
  BigVector<int32_t> parent_;
  std::vector<ClusterType> type_;
  BigVector<int32_t> min_, max_, size_, first_;
  BigVector<int32_t> next_;  // node lists: one cycle per cluster (O(1) splice on merge)
  EdgeLists in_, out_;
  BigVector<int32_t> slot_;  // cluster → its own lists' slot in in_.own / out_.own, -1 = CSR slices
  std::vector<int32_t> free_slots_;
  BigVector<uint32_t> stamp_a_, stamp_b_, stamp_c_;
  uint32_t counter_a_ = 0, counter_b_ = 0, counter_c_ = 0;
  std::vector<int32_t> queue_;
  PathSearch fwd_search_, bwd_search_;
  // Node-sized scratch of TopoSort and LiveClusters (run several times per
  // partition: one allocation, on huge pages, instead of a fresh 4 MB
  // std::vector faulted in 4 KiB at a time on each call).
  BigVector<int32_t> pending_;
  mutable BigVector<int32_t> by_first_;
  bool bounded_ = true;
  int32_t Limit(int32_t max_rank) const { return bounded_ ? max_rank : INT32_MAX; }
};

template <typename F>
void ClusterGraph::Merge(int32_t into, int32_t other, F&& on_node_turned_unknown) {
  const bool into_unknown = type_[into] == ClusterType::kUnknown;
  const bool other_unknown = type_[other] == ClusterType::kUnknown;
  if (into_unknown != other_unknown) {
    int32_t known_side = into_unknown ? other : into;
    ForEachNode(known_side, on_node_turned_unknown);
    type_[into] = ClusterType::kUnknown;
  }
  // Link by size; the cluster keeps the id `into`.
  const int32_t ra = Root(into), rb = Root(other);
  if (size_[into] >= size_[other]) {
    parent_[rb] = ra;
  } else {
    parent_[ra] = rb;
    parent_[rb] = ~into;
  }
  size_[into] += size_[other];
  if (min_[other] < min_[into]) min_[into] = min_[other];
  if (max_[other] > max_[into]) max_[into] = max_[other];
  if (first_[other] < first_[into]) first_[into] = first_[other];
  std::swap(next_[into], next_[other]);  // splices the two cycles
  MergeLists(into, other);
}

template <typename F>
bool ClusterGraph::TryMerge(int32_t into, int32_t other, F&& on_node_turned_unknown) {
  if (ReachesIndirectly(other, into)) return false;  // a second path other → … → into
  Merge(into, other, on_node_turned_unknown);
  return true;
}

}  // namespace npuplan::partition

#endif  // NPUPLAN_PARTITION_CLUSTER_GRAPH_H_
