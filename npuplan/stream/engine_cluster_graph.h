// The cluster graph behind PartitionByEngine's MarkClusters
// (engine_partition.h): union-find clusters, their edge lists, and the
// "second path" test that decides whether an input cluster may merge into a
// node's cluster. Internal to the stream module (engine_partition.cc).
#ifndef NPUPLAN_STREAM_ENGINE_CLUSTER_GRAPH_H_
#define NPUPLAN_STREAM_ENGINE_CLUSTER_GRAPH_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "npuplan/support/big_vector.h"

namespace npuplan::stream::engine_internal {

// The cluster graph of one graph with an incrementally maintained
// topological order (Pearce–Kelly ranks) for the "second path" test. Edge
// lists live in one pool (offset, size, capacity per cluster): no allocation
// per node; a merged list moves to the pool's end when it outgrows its slot.
//
// The second-path test first looks for certificates: a landmark node between
// pred and succ (Landmarks: a random DAG's long skip edges ask whether an old
// cluster reaches a recent one, which a search answers only after meeting in
// the middle of a window holding a share of the whole graph); another input
// of succ that descends from pred in a spanning forest of the cluster graph
// (Settle; on a layered model this answers the long paths a control edge to
// an early layer asks about). Else it searches both ways at once, breadth-first, one
// list entry at a time: forward from pred over clusters ranked before succ,
// backward from succ over clusters ranked after pred; a path is found when
// either side reaches the other end or a cluster the other side reached. The
// first side to run out answers. When the side that ran out found nothing, the
// merged cluster can take that end's rank and nothing moves (the common case
// of a node with one producer: its backward side is empty at once); only
// otherwise both sides are completed and reordered as in Pearce–Kelly. So a
// hub with many consumers costs each consumer its own in-list, not the hub's
// out-list (which held every earlier consumer: quadratic in the fan-out).
class ClusterGraph {
 public:
  // `count_out[i]`: number of edges leaving node i; `pred_first`: CSR offsets
  // of the edges entering each node.
  ClusterGraph(int32_t n, const BigVector<int32_t>& count_out, const BigVector<int32_t>& pred_first)
      : slot_(n), out_(n), in_(n), forest_(n), deg_low_(n, 0), deg_exact_(n, 0) {
    size_t off = 0;
    for (int32_t i = 0; i < n; ++i) {
      slot_[i] = {i, i, 0, 0};
      forest_[i] = {-1, 0, i};
      out_[i] = {static_cast<uint32_t>(off), 0, static_cast<uint32_t>(count_out[i]), 0};
      off += count_out[i];
      const int32_t count_in = pred_first[i + 1] - pred_first[i];
      in_[i] = {static_cast<uint32_t>(off), 0, static_cast<uint32_t>(count_in), 0};
      off += count_in;
    }
    // Merged lists move to the pool's end (Append): room for about as much
    // again as the initial lists, reserved up front so the pool is not copied
    // into fresh memory while it grows (untouched reserve costs no pages).
    pool_.reserve(3 * off + 1024);
    pool_.resize(off);
  }

  // The huge-page blocks the constructor takes for n nodes (the edge pool
  // aside), for warming them ahead (engine_partition.cc).
  static std::vector<size_t> BlockSizes(int32_t n) {
    std::vector<size_t> sizes;
    const size_t count = static_cast<size_t>(n);
    for (size_t bytes :
         {sizeof(Slot) * count, sizeof(List) * count, sizeof(List) * count, sizeof(Forest) * count,
          sizeof(uint32_t) * count, sizeof(uint8_t) * count}) {
      if (bytes >= kHugeFromBytes) sizes.push_back(HugePageAllocator<char>::Rounded(bytes));
    }
    return sizes;
  }

  // The root of every node (moves the union-find array out: the graph is
  // unusable afterwards).
  int64_t reads() const { return reads_; }
  // The roots land in MinInputs' storage (dead by now: no fresh pages).
  BigVector<int32_t> TakeRoots() {
    const int32_t n = static_cast<int32_t>(slot_.size());
    BigVector<int32_t> roots = std::move(min_input_);
    roots.resize(n);
    for (int32_t i = 0; i < n; ++i) roots[i] = Find(i);
    return roots;
  }

  // Union-find root with path halving.
  int32_t Find(int32_t x) {
    while (slot_[x].parent != x) {
      slot_[x].parent = slot_[slot_[x].parent].parent;
      x = slot_[x].parent;
    }
    return x;
  }

  // Prefetches: node x's union-find entry; what a merge reads of cluster c;
  // what UpdateDegrees reads of node j's consumers (its initial out-list).
  void PrefetchNode(int32_t x) const { __builtin_prefetch(&slot_[x]); }
  int32_t ParentOf(int32_t x) const { return slot_[x].parent; }
  void PrefetchCluster(int32_t c) const {
    __builtin_prefetch(&lm_[c]);
    __builtin_prefetch(&forest_[c]);
    __builtin_prefetch(&out_[c]);
    __builtin_prefetch(&slot_[c]);
  }
  void PrefetchConsumers(int32_t j) const {
    const List& out = out_[j];
    for (uint32_t e = out.off; e < out.off + out.size; ++e)
      __builtin_prefetch(&min_input_[pool_[e]]);
  }

  // Within the capacities given to the constructor.
  void AddEdge(int32_t from, int32_t to) {
    pool_[out_[from].off + out_[from].size++] = to;
    pool_[in_[to].off + in_[to].size++] = from;
  }

  // Distinct successor clusters of cluster c (compacts its list).
  size_t OutDegree(int32_t c) {
    if (deg_exact_[c]) return deg_low_[c];
    Compact(out_[c], c);
    NoteDegree(c);
    return out_[c].size;
  }
  // Bounds of OutDegree(c) without reading its list: exact when known
  // (deg_exact_). Else upper: the list's length (each successor cluster
  // appears at least once); lower: deg_low_, which every merge that may
  // remove a successor of c lowers by one (see TryMerge).
  uint32_t OutDegreeHigh(int32_t c) const { return deg_exact_[c] ? deg_low_[c] : out_[c].size; }
  uint32_t OutDegreeLow(int32_t c) const { return deg_low_[c]; }

  // The out-degree by brute force (no list is changed): for tests of the
  // bounds.
  uint32_t BruteOutDegree(int32_t c) {
    const uint32_t stamp = ++stamp_;
    uint32_t count = 0;
    for (uint32_t e = out_[c].off; e < out_[c].off + out_[c].size; ++e) {
      const int32_t y = Find(pool_[e]);
      if (y == c || slot_[y].mark == stamp) continue;
      slot_[y].mark = stamp;
      ++count;
    }
    return count;
  }
  // Whether c's bounds hold its out-degree (exact ones equal it).
  bool BoundsHold(int32_t c) {
    const uint32_t d = BruteOutDegree(c);
    return OutDegreeLow(c) <= d && d <= OutDegreeHigh(c) && (!deg_exact_[c] || deg_low_[c] == d);
  }

  // Reachability labels over 64 landmark nodes, one per equal slice of the
  // topological order (the one with the most consumers among its first
  // few, so that its descendants reach far): for every node, the landmarks
  // it reaches and those that reach it; a cluster holds the union over its
  // members, and which landmarks it contains. Node paths are cluster paths,
  // so a landmark outside pred and succ that pred reaches and that reaches
  // succ proves a path pred → L → … → succ besides the direct edge. The
  // labels only grow stale (merges add paths), never wrong.
  struct Landmark {
    uint64_t reaches = 0, reached = 0, holds = 0;
  };
  // In steps that need no ClusterGraph (another thread can label while this
  // one builds the graph): the landmark node of each bit (-1: none), the
  // labels of the n = pred_first.size() - 1 nodes, and handing them to the
  // graph.
  static std::vector<int32_t> ChooseLandmarks(const BigVector<int32_t>& count_out) {
    const int64_t n = static_cast<int64_t>(count_out.size());
    std::vector<int32_t> chosen(kLandmarks, -1);
    for (int64_t j = 0; j < kLandmarks; ++j) {
      const int64_t lo = j * n / kLandmarks, hi = (j + 1) * n / kLandmarks;
      if (lo >= hi) continue;
      int64_t best = lo;
      for (int64_t x = lo + 1; x < std::min(hi, lo + kLandmarkCandidates); ++x) {
        if (count_out[x] > count_out[best]) best = x;
      }
      chosen[j] = static_cast<int32_t>(best);
    }
    return chosen;
  }
  static BigVector<Landmark> LandmarkLabels(const std::vector<int32_t>& chosen,
                                            const BigVector<int32_t>& pred_first,
                                            const BigVector<int32_t>& preds) {
    const int64_t n = static_cast<int64_t>(pred_first.size()) - 1;
    BigVector<Landmark> lm(n);
    for (int64_t j = 0; j < kLandmarks; ++j) {
      if (chosen[j] >= 0) lm[chosen[j]].holds |= uint64_t{1} << j;
    }
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits = lm[i].holds;
      for (int32_t e = pred_first[i]; e < pred_first[i + 1]; ++e) bits |= lm[preds[e]].reached;
      lm[i].reached = bits;
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      lm[i].reaches |= lm[i].holds;
      for (int32_t e = pred_first[i]; e < pred_first[i + 1]; ++e)
        lm[preds[e]].reaches |= lm[i].reaches;
    }
    return lm;
  }
  void SetLandmarks(BigVector<Landmark> lm) { lm_ = std::move(lm); }

  // The smallest input of every node (itself when it has none), in
  // `storage`'s memory.
  void MinInputs(BigVector<int32_t> storage, const BigVector<int32_t>& pred_first,
                 const BigVector<int32_t>& preds) {
    const int32_t n = static_cast<int32_t>(slot_.size());
    min_input_ = std::move(storage);
    min_input_.resize(n);
    for (int32_t i = 0; i < n; ++i) {
      int32_t m = i;
      for (int32_t e = pred_first[i]; e < pred_first[i + 1]; ++e) m = std::min(m, preds[e]);
      min_input_[i] = m;
    }
  }

  // Merges `succ` into `pred` (a direct edge pred → succ) unless a path
  // pred → … → succ exists besides the direct edge. Returns the surviving
  // cluster (the smaller index), or -1 when refused; keeps the rank order
  // topological.
  // `succ_fresh`: succ is the node being placed, alone in its cluster (its
  // successors are later nodes, each alone in its cluster too).
  int32_t TryMerge(int32_t pred, int32_t succ, bool succ_fresh) {
    const Landmark& lp = lm_[pred];
    const Landmark& ls = lm_[succ];
    if ((lp.reaches & ls.reached & ~lp.holds & ~ls.holds) != 0) return -1;
    Side fwd(out_[pred], ++stamp_, &Slot::mark), bwd(in_[succ], ++back_stamp_, &Slot::back_mark);
    // A forest certificate answers many second-path questions at once (see
    // Settle): another input Q of succ that descends from pred.
    if (in_[succ].size <= kShortList) {
      for (uint32_t e = in_[succ].off; e < in_[succ].off + in_[succ].size; ++e) {
        const int32_t y = Find(pool_[e]);
        if (y != pred && y != succ && IsAncestor(pred, y)) return -1;
      }
    }
    const int32_t lower = slot_[pred].rank, upper = slot_[succ].rank;
    int32_t rank_of_merged = -1;
    for (;;) {
      const Step f = Advance(fwd, bwd, /*forward=*/true, pred, succ, lower, upper);
      if (f == Step::kPath) return -1;
      if (f == Step::kDone) {
        if (fwd.found.empty())
          rank_of_merged = upper;  // nothing between: the merged cluster sits at succ
        break;
      }
      const Step b = Advance(bwd, fwd, /*forward=*/false, succ, pred, lower, upper);
      if (b == Step::kPath) return -1;
      if (b == Step::kDone) {
        if (bwd.found.empty())
          rank_of_merged = lower;  // nothing between: the merged cluster sits at pred
        break;
      }
    }
    const int32_t keep = std::min(pred, succ);
    const int32_t gone = std::max(pred, succ);
    if (rank_of_merged >= 0) {
      slot_[keep].rank = rank_of_merged;
    } else {
      // Both sides hold clusters: complete them (no path remains to be
      // found) and give backward, merged, forward the same rank slots.
      while (Advance(fwd, bwd, true, pred, succ, lower, upper) == Step::kMore) {
      }
      while (Advance(bwd, fwd, false, succ, pred, lower, upper) == Step::kMore) {
      }
      auto by_rank = [&](int32_t a, int32_t b) { return slot_[a].rank < slot_[b].rank; };
      std::sort(bwd.found.begin(), bwd.found.end(), by_rank);
      std::sort(fwd.found.begin(), fwd.found.end(), by_rank);
      slots_.clear();
      for (int32_t x : bwd.found) slots_.push_back(slot_[x].rank);
      for (int32_t x : fwd.found) slots_.push_back(slot_[x].rank);
      slots_.push_back(lower);
      slots_.push_back(upper);
      std::sort(slots_.begin(), slots_.end());
      size_t k = 0;
      for (int32_t x : bwd.found) slot_[x].rank = slots_[k++];
      slot_[keep].rank = slots_[k++];
      for (int32_t x : fwd.found) slot_[x].rank = slots_[k++];
    }
    UpdateDegrees(pred, succ, keep, gone, succ_fresh);
    slot_[gone].parent = keep;
    lm_[keep].reaches |= lm_[gone].reaches;
    lm_[keep].reached |= lm_[gone].reached;
    lm_[keep].holds |= lm_[gone].holds;
    if (Join(out_[keep], out_[gone], keep)) NoteDegree(keep);
    Join(in_[keep], in_[gone], keep);
    return keep;
  }

  // Node i's step is over: when it formed a cluster of its own (it merged
  // into no input), the cluster joins a spanning forest of the cluster graph
  // under its deepest input. A forest path is a path of the cluster graph,
  // and stays one through merges (a merged cluster keeps the survivor's id),
  // so "P is a forest ancestor of Q" proves P ⇝ Q without a search: an
  // O(log n) climb with jump pointers (Myers' skew-binary scheme: one
  // pointer per cluster).
  void Settle(int32_t i, const std::vector<int32_t>& inputs) {
    if (Find(i) != i) return;  // joined an older cluster, which keeps its place
    int32_t up = -1;
    for (int32_t p0 : inputs) {
      const int32_t y = Find(p0);
      if (y != i && (up < 0 || forest_[y].depth > forest_[up].depth ||
                     (forest_[y].depth == forest_[up].depth && y < up)))
        up = y;
    }
    Forest& f = forest_[i];
    f.tree_parent = up;
    if (up < 0) {
      f.depth = 0;
      f.jump = i;
      return;
    }
    const Forest& u = forest_[up];
    const Forest& j = forest_[u.jump];
    f.depth = u.depth + 1;
    f.jump = u.depth - j.depth == j.depth - forest_[j.jump].depth && u.jump != up ? j.jump : up;
  }

  // True when a is a proper forest ancestor of b.
  bool IsAncestor(int32_t a, int32_t b) const {
    const int32_t da = forest_[a].depth;
    if (da >= forest_[b].depth) return false;
    for (;;) {
      const Forest& f = forest_[b];
      if (f.depth <= da) break;
      b = forest_[f.jump].depth >= da ? f.jump : f.tree_parent;
    }
    return a == b;
  }

 private:
  struct List {
    uint32_t off = 0, size = 0, cap = 0;
    uint32_t clean = 0;  // size after the last compaction
  };
  // One side of the second-path search: the list being read and the
  // clusters still to read (stack) or read (found).
  // Per node: what a union-find step and a search step read, in one line.
  struct Slot {
    int32_t parent;      // union-find parent
    int32_t rank;        // topological rank of the cluster (roots)
    uint32_t mark;       // forward search / compaction stamp
    uint32_t back_mark;  // backward search stamp
  };
  // The spanning forest (Settle): parent, depth, skew-binary jump pointer.
  struct Forest {
    int32_t tree_parent, depth, jump;
  };
  struct Side {
    Side(const List& first, uint32_t s, uint32_t Slot::*m)
        : next(first.off), end(first.off + first.size), stamp(s), mark(m) {}
    uint32_t next, end;  // pool positions of the list being read
    bool first_level = true;
    uint32_t stamp;
    uint32_t Slot::*mark;
    std::vector<int32_t> found;  // clusters reached, in breadth-first order
    size_t head = 0;             // found[head..] are still to be read
  };
  enum class Step { kMore, kPath, kDone };
  static constexpr uint32_t kShortList = 64;
  static constexpr int64_t kLandmarks = 64;  // the bits of a uint64_t
  static constexpr int64_t kLandmarkCandidates = 32;

  // c's out-list was just compacted: its length is its degree.
  void NoteDegree(int32_t c) {
    deg_low_[c] = out_[c].size;
    deg_exact_[c] = 1;
  }

  // Out-degree bookkeeping for merging succ into pred (before the union).
  // A cluster x other than the two loses at most one successor, and only
  // when both are its successors: x is then in both in-lists, so lowering
  // the bound of every cluster in the shorter in-list covers them. The
  // merged cluster has at least max(both) - 1 successors (each side loses
  // at most the other). When succ is the fresh node and pred's degree is
  // exact, the merged degree is exact too: pred loses succ and gains each
  // successor of succ it did not have (later nodes, each alone, so "had"
  // is one of its inputs lying in pred).
  void UpdateDegrees(int32_t pred, int32_t succ, int32_t keep, int32_t gone, bool succ_fresh) {
    const List& shorter = in_[pred].size <= in_[succ].size ? in_[pred] : in_[succ];
    for (uint32_t e = shorter.off; e < shorter.off + shorter.size; ++e) {
      const int32_t x = Find(pool_[e]);
      if (x == pred || x == succ) continue;
      deg_exact_[x] = 0;
      if (deg_low_[x] > 0) --deg_low_[x];
    }
    uint32_t merged;
    bool exact = false;
    if (succ_fresh && deg_exact_[pred]) {
      merged = deg_low_[pred] - 1;
      // succ's out-list is still its own edges in AddEdge order: ascending,
      // a repeated successor in adjacent entries.
      const List& out = out_[succ];
      int32_t last = -1;
      for (uint32_t e = out.off; e < out.off + out.size; ++e) {
        const int32_t y = pool_[e];
        if (y == last) continue;
        last = y;
        // Only an input before succ can lie in pred (succ and the later
        // nodes are alone): none when succ is y's first input, which spares
        // reading the lists of far successors (a random DAG's long edges).
        bool had = false;
        if (min_input_[y] < succ) {
          for (uint32_t f = in_[y].off; f < in_[y].off + in_[y].size && !had; ++f) {
            const int32_t x = pool_[f];
            had = x < succ && Find(x) == pred;
          }
        }
        merged += had ? 0 : 1;
      }
      exact = true;
    } else {
      const uint32_t low = std::max(deg_low_[pred], deg_low_[succ]);
      merged = low > 0 ? low - 1 : 0;
    }
    deg_low_[keep] = merged;
    deg_exact_[keep] = exact ? 1 : 0;
    (void)gone;
  }

  // Reads one list entry of `side`, which starts at `origin` and looks for
  // `target` through other clusters ranked strictly between lower and upper.
  Step Advance(Side& side, const Side& other, bool forward, int32_t origin, int32_t target,
               int32_t lower, int32_t upper) {
    while (side.next == side.end) {
      if (side.head == side.found.size()) return Step::kDone;
      const int32_t x = side.found[side.head++];
      const List& l = forward ? out_[x] : in_[x];
      side.next = l.off;
      side.end = l.off + l.size;
      side.first_level = false;
    }
    ++reads_;
    const int32_t y = Find(pool_[side.next++]);
    if (y == target)
      return side.first_level ? Step::kMore : Step::kPath;  // the direct edge, or a second path
    Slot& sy = slot_[y];
    if (y == origin || sy.*side.mark == side.stamp || sy.rank <= lower || sy.rank >= upper)
      return Step::kMore;
    // The other side reached y too: pred ⇝ y ⇝ succ through a cluster y
    // that is neither end (the searches meet in the middle).
    if (sy.*other.mark == other.stamp) return Step::kPath;
    sy.*side.mark = side.stamp;
    side.found.push_back(y);
    return Step::kMore;
  }

  // dst += src (src emptied), keeping the longer list in place: its entries
  // are not copied again. Compacts once the list has doubled since its last
  // compaction, so stale entries stay a bounded share. Returns whether it
  // compacted.
  bool Join(List& dst, List& src, int32_t self) {
    if (src.size > dst.size) std::swap(dst, src);
    Append(dst, src);
    src.size = src.clean = 0;
    if (dst.size <= 2 * dst.clean + 16) return false;
    Compact(dst, self);
    return true;
  }

  // dst += src, moving dst to the pool's end (doubled capacity) when full.
  void Append(List& dst, const List& src) {
    if (src.size == 0) return;
    if (dst.size + src.size > dst.cap) {
      const uint32_t cap = 2 * (dst.size + src.size);
      const size_t off = pool_.size();
      pool_.resize(off + cap);
      std::copy_n(pool_.begin() + dst.off, dst.size, pool_.begin() + off);
      dst.off = static_cast<uint32_t>(off);
      dst.cap = cap;
    }
    std::copy_n(pool_.begin() + src.off, src.size, pool_.begin() + dst.off + dst.size);
    dst.size += src.size;
  }

  // Resolves every entry to its cluster, drops `self` and duplicates.
  void Compact(List& list, int32_t self) {
    const uint32_t stamp = ++stamp_;
    int32_t* data = pool_.data() + list.off;
    uint32_t w = 0;
    for (uint32_t r = 0; r < list.size; ++r) {
      int32_t y = Find(data[r]);
      if (y == self || slot_[y].mark == stamp) continue;
      slot_[y].mark = stamp;
      data[w++] = y;
    }
    list.size = list.clean = w;
  }

  BigVector<Slot> slot_;
  BigVector<List> out_;
  BigVector<List> in_;
  BigVector<int32_t> pool_;
  std::vector<int32_t> slots_;
  BigVector<Forest> forest_;  // Settle
  BigVector<Landmark> lm_;    // Landmarks
  // OutDegreeLow: a lower bound of the out-degree, exact when deg_exact_.
  BigVector<uint32_t> deg_low_;
  BigVector<uint8_t> deg_exact_;
  BigVector<int32_t> min_input_;  // MinInputs
  uint32_t stamp_ = 0, back_stamp_ = 0;
  int64_t reads_ = 0;  // list entries the second-path tests read
};

}  // namespace npuplan::stream::engine_internal

#endif  // NPUPLAN_STREAM_ENGINE_CLUSTER_GRAPH_H_
