#include "npuplan/partition/cluster_graph.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <queue>
#include <utility>

namespace npuplan::partition {

std::string_view ClusterTypeName(ClusterType t) {
  switch (t) {
    case ClusterType::kData: return "data";
    case ClusterType::kInputNode: return "input";
    case ClusterType::kNetOutput: return "netoutput";
    case ClusterType::kStage: return "stage";
    case ClusterType::kUnknown: return "unknown";
    case ClusterType::kKnown: return "known";
  }
  return "?";
}

namespace {

// A set of indices in [0, n) with insert and pop-smallest: one bit per index
// plus summary levels (bit i of level l+1 = word i of level l is non-zero).
class MinIndexSet {
 public:
  explicit MinIndexSet(size_t n) {
    size_t words = (n + 63) / 64;
    for (;;) {
      levels_.emplace_back(std::max<size_t>(words, 1), 0);
      if (words <= 1) break;
      words = (words + 63) / 64;
    }
  }
  bool empty() const { return levels_.back()[0] == 0; }
  void Insert(size_t i) {
    for (auto& level : levels_) {
      level[i / 64] |= uint64_t{1} << (i % 64);
      i /= 64;
    }
  }
  size_t PopMin() {
    size_t i = 0;
    for (size_t l = levels_.size(); l-- > 0;) i = i * 64 + static_cast<size_t>(std::countr_zero(levels_[l][i]));
    const size_t found = i;
    for (auto& level : levels_) {
      level[i / 64] &= ~(uint64_t{1} << (i % 64));
      if (level[i / 64] != 0) break;
      i /= 64;
    }
    return found;
  }

 private:
  std::vector<std::vector<uint64_t>> levels_;  // levels_[0] = the indices; back() = one word
};

}  // namespace

// One cluster per node; edges from the producer lists.
ClusterGraph::ClusterGraph(std::vector<ClusterType> types, BigVector<uint32_t> pred_offsets,
                           BigVector<int32_t> pred_list)
    : type_(std::move(types)) {
  const int32_t n = static_cast<int32_t>(type_.size());
  parent_.resize(n);
  min_.resize(n);
  max_.resize(n);
  first_.resize(n);
  size_.assign(n, 1);
  next_.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    parent_[i] = ~i;  // a root holding cluster i
    min_[i] = max_[i] = first_[i] = next_[i] = i;
  }
  in_.off = std::move(pred_offsets);
  in_.csr = std::move(pred_list);
  out_.off.assign(n + 1, 0);
  for (int32_t u : in_.csr) ++out_.off[u + 1];
  for (int32_t v = 0; v < n; ++v) out_.off[v + 1] += out_.off[v];
  out_.csr.resize(in_.csr.size());
  // out_.len counts the entries filled so far (the fill cursor; no separate
  // array): it ends as each list's length.
  out_.len.assign(n, 0);
  for (int32_t v = 0; v < n; ++v) {
    for (uint32_t k = in_.off[v]; k < in_.off[v + 1]; ++k) {
      const int32_t u = in_.csr[k];
      out_.csr[out_.off[u] + out_.len[u]++] = v;
    }
  }
  in_.len.resize(n);
  for (int32_t v = 0; v < n; ++v) in_.len[v] = static_cast<int32_t>(in_.off[v + 1] - in_.off[v]);
  slot_.assign(n, -1);
  stamp_a_.assign(n, 0);
  stamp_b_.assign(n, 0);
  stamp_c_.assign(n, 0);
}

// A fresh stamp value (resets the array on wrap-around).
uint32_t ClusterGraph::NewStamp(BigVector<uint32_t>& stamps, uint32_t& counter) {
  if (++counter == 0) {
    std::fill(stamps.begin(), stamps.end(), 0);
    counter = 1;
  }
  return counter;
}

// Resolves stale ids to live clusters, drops self and repeats, in place.
std::span<const int32_t> ClusterGraph::Compact(int32_t c, EdgeLists& e) {
  uint32_t s = NewStamp(stamp_c_, counter_c_);
  const int32_t slot = slot_[c];
  int32_t* data = slot >= 0 ? e.own[slot].data() : e.csr.data() + e.off[c];
  const size_t n = slot >= 0 ? e.own[slot].size() : static_cast<size_t>(e.len[c]);
  size_t w = 0;
  for (size_t r = 0; r < n; ++r) {
    int32_t y = Find(data[r]);
    if (y == c || stamp_c_[y] == s) continue;
    stamp_c_[y] = s;
    data[w++] = y;
  }
  if (slot >= 0) {
    e.own[slot].resize(w);
  } else {
    e.len[c] = static_cast<int32_t>(w);
  }
  return {data, w};
}

std::span<const int32_t> ClusterGraph::RawList(int32_t c, const EdgeLists& e) const {
  if (slot_[c] >= 0) return {e.own[slot_[c]].data(), e.own[slot_[c]].size()};
  return {e.csr.data() + e.off[c], static_cast<size_t>(e.len[c])};
}

// Appends other's list to into's (into owns its list; the shorter is copied).
void ClusterGraph::Join(int32_t into, int32_t other, EdgeLists& e) {
  std::vector<int32_t>& dst = e.own[slot_[into]];
  if (slot_[other] >= 0) {
    std::vector<int32_t>& src = e.own[slot_[other]];
    if (src.size() > dst.size()) dst.swap(src);
    dst.insert(dst.end(), src.begin(), src.end());
    std::vector<int32_t>().swap(src);
  } else {
    const int32_t* b = e.csr.data() + e.off[other];
    dst.insert(dst.end(), b, b + e.len[other]);
    e.len[other] = 0;
  }
}

void ClusterGraph::MergeLists(int32_t into, int32_t other) {
  if (slot_[into] < 0) {
    // into still uses its CSR slice: it takes over other's own lists when
    // there are (no allocation; the slice is appended), else gets a free
    // slot and copies both.
    const bool took = slot_[other] >= 0;
    if (took) {
      slot_[into] = slot_[other];
    } else if (!free_slots_.empty()) {
      slot_[into] = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot_[into] = static_cast<int32_t>(in_.own.size());
      in_.own.emplace_back();
      out_.own.emplace_back();
    }
    slot_[other] = -1;
    for (EdgeLists* e : {&in_, &out_}) {
      std::vector<int32_t>& dst = e->own[slot_[into]];
      for (int32_t c : {into, other}) {
        if (c == other && took) continue;
        const int32_t* b = e->csr.data() + e->off[c];
        dst.insert(dst.end(), b, b + e->len[c]);
        e->len[c] = 0;
      }
    }
    return;
  }
  Join(into, other, in_);
  Join(into, other, out_);
  if (slot_[other] >= 0) free_slots_.push_back(slot_[other]);  // emptied (and freed) by Join
  slot_[other] = -1;
}

std::vector<int32_t> ClusterGraph::PathClusters(int32_t into, int32_t other) {
  std::vector<int32_t> path;
  if (into == other) return path;
  path.push_back(other);
  // The clusters x with other → … → x → … → into, every step inside the
  // window (min < into.max). Two searches run side by side, a few list
  // entries each per step: forward from `other`, backward from `into`. Each holds
  // every path cluster once it is done, so the first one done decides and
  // the other stops: a large cluster's long edge list (or a frontier of
  // dead ends hanging off it, met again by every later call) costs no more
  // than the other side's search. The path is what the finished search
  // found that leads to its far end over the edges it read.
  const int32_t limit = Limit(max_[into]);
  PathSearch& fwd = fwd_search_;
  PathSearch& bwd = bwd_search_;
  fwd.Start(other, NewStamp(stamp_a_, counter_a_));
  bwd.Start(into, NewStamp(stamp_b_, counter_b_));
  PathSearch* done = nullptr;
  while (done == nullptr) {
    if (!Step(fwd, out_, stamp_a_, into, limit)) {
      done = &fwd;
    } else if (!Step(bwd, in_, stamp_b_, other, limit)) {
      done = &bwd;
    }
  }
  const int32_t start = done == &fwd ? other : into;
  const int32_t far_end = done == &fwd ? into : other;
  ReachOver(done->found, far_end, [&](int32_t x) {
    if (x != start) path.push_back(x);
  });
  std::sort(path.begin() + 1, path.end(), [&](int32_t a, int32_t b) {
    return min_[a] != min_[b] ? min_[a] < min_[b] : first_[a] < first_[b];
  });
  return path;
}

void ClusterGraph::PathSearch::Start(int32_t from, uint32_t s) {
  queue.assign(1, from);
  qi = pos = 0;
  stamp = s;
  found.clear();
}

// Lists up to this long are compacted when a search starts reading them (as
// Outs/Ins would: later reads are shorter); longer ones are read raw, a step
// at a time, so that the other search can finish first.
constexpr size_t kCompactOnRead = 64;
// List entries a search reads per step.
constexpr int kEntriesPerStep = 16;

// Reads a few entries of the search's current list (moving on to the next
// queued cluster when the list is read); false when nothing is left. The
// far end is recorded but not entered; the start is never entered again.
bool ClusterGraph::Step(PathSearch& s, EdgeLists& e, BigVector<uint32_t>& stamps, int32_t far_end,
                        int32_t limit) {
  int budget = kEntriesPerStep;
  while (s.qi < s.queue.size()) {
    const int32_t x = s.queue[s.qi];
    std::span<const int32_t> list = RawList(x, e);
    if (s.pos == 0) {
      ++bfs_visits;
      if (list.size() <= kCompactOnRead) list = Compact(x, e);
    }
    while (s.pos < list.size()) {
      if (budget-- == 0) return true;
      const int32_t y = Find(list[s.pos++]);
      if (y == x || y == s.queue[0]) continue;
      if (y != far_end) {
        if (min_[y] >= limit) continue;
        if (stamps[y] != s.stamp) {
          stamps[y] = s.stamp;
          s.queue.push_back(y);
        }
      }
      s.found.emplace_back(y, x);
    }
    ++s.qi;
    s.pos = 0;
  }
  return false;
}

// Calls f on every cluster reached from `seed` over the (y, x) pairs: y
// leads to x. Each once, the seed not included.
template <typename F>
void ClusterGraph::ReachOver(std::vector<std::pair<int32_t, int32_t>>& pairs, int32_t seed, F&& f) {
  std::sort(pairs.begin(), pairs.end());
  const uint32_t s = NewStamp(stamp_c_, counter_c_);
  queue_.assign(1, seed);
  stamp_c_[seed] = s;
  for (size_t qi = 0; qi < queue_.size(); ++qi) {
    auto it = std::lower_bound(pairs.begin(), pairs.end(),
                               std::pair<int32_t, int32_t>(queue_[qi], INT32_MIN));
    for (; it != pairs.end() && it->first == queue_[qi]; ++it) {
      if (stamp_c_[it->second] == s) continue;
      stamp_c_[it->second] = s;
      queue_.push_back(it->second);
      f(it->second);
    }
  }
}

bool ClusterGraph::Reaches(int32_t from, int32_t to) {
  uint32_t s = NewStamp(stamp_a_, counter_a_);
  queue_.clear();
  queue_.push_back(from);
  stamp_a_[from] = s;
  const int32_t limit = Limit(max_[to]);
  for (size_t qi = 0; qi < queue_.size(); ++qi) {
    ++bfs_visits;
    for (int32_t y : Outs(queue_[qi])) {
      if (y == to) return true;
      if (stamp_a_[y] != s && min_[y] < limit) {
        stamp_a_[y] = s;
        queue_.push_back(y);
      }
    }
  }
  return false;
}

// Input lists up to this long are scanned in full for the direct-edge answer.
constexpr size_t kDirectCheckMax = 8;

bool ClusterGraph::ReachesIndirectly(int32_t from, int32_t to, int32_t max_first) {
  const int32_t limit = Limit(max_[to]);
  // Such a path ends with an edge x → to from an input x != from that the
  // search would enter (min < limit, first <= max_first) and that has inputs
  // of its own (else nothing reaches it). No such input: no search — the
  // common case of a cluster whose inputs all lie in `from` (besides Consts).
  // The lists are scanned raw (Find per entry, no compaction, stop at the
  // first candidate): `to` is the cluster being merged into, whose list grows
  // with every merge; compacting it in full before each search was the
  // largest cost of the merge loops. Same set of clusters, so same answer.
  // A candidate that reads `from` directly is the path from → x → to the
  // search would find at its second step (x is an output of `from` inside
  // the window, `to` an output of x): the answer, without the search — whose
  // first step compacts all of from's output list (the frontier of a large
  // cluster, most of the search's cost). Only short input lists are read in
  // full for it: a merged cluster's raw list can be long (reading those in
  // full made the known merge loop slower); for them, as before, the first
  // input is enough. On the 1M-node benchmark this answers a good share of
  // the known loop's searches and cuts the entries their compactions read
  // (the counts: docs/history/benchmarks-2026.md, "Partition").
  bool candidate = false;
  for (int32_t r : RawList(to, in_)) {
    const int32_t x = Find(r);
    if (x == to || x == from || min_[x] >= limit || first_[x] > max_first) continue;
    const std::span<const int32_t> xs = RawList(x, in_);
    if (xs.size() <= kDirectCheckMax) {
      for (int32_t q : xs) {
        const int32_t y = Find(q);
        if (y == from) return true;
        candidate |= y != x;
      }
    } else if (!candidate) {
      for (int32_t q : xs) {
        if (Find(q) != x) {
          candidate = true;
          break;
        }
      }
    }
  }
  if (!candidate) return false;
  uint32_t s = NewStamp(stamp_a_, counter_a_);
  queue_.clear();
  queue_.push_back(from);
  stamp_a_[from] = s;
  for (size_t qi = 0; qi < queue_.size(); ++qi) {
    int32_t cur = queue_[qi];
    ++bfs_visits;
    for (int32_t y : Outs(cur)) {
      if (y == to) {
        if (cur != from) return true;
        continue;
      }
      if (stamp_a_[y] != s && min_[y] < limit && first_[y] <= max_first) {
        stamp_a_[y] = s;
        queue_.push_back(y);
      }
    }
  }
  return false;
}

ClusterList ClusterGraph::TopoSort() {
  ClusterList live = LiveClusters();
  // Kahn with the smallest first() among the ready clusters yields the
  // lexicographically smallest topological order by first(). When the
  // clusters ordered by first() already form a topological order, that order
  // is it: checked in one pass (every input placed earlier), no heap needed.
  BigVector<int32_t>& pending = pending_;  // fast path: position + 1
  pending.assign(parent_.size(), 0);
  bool ordered = true;
  for (size_t i = 0; i < live.size() && ordered; ++i) {
    for (int32_t y : Ins(live[i])) {
      if (pending[y] == 0) {  // not placed yet: an input after its consumer
        ordered = false;
        break;
      }
    }
    pending[live[i]] = static_cast<int32_t>(i) + 1;
  }
  if (ordered) {
    for (size_t i = 0; i < live.size(); ++i) min_[live[i]] = max_[live[i]] = static_cast<int32_t>(i);
    return live;
  }
  std::fill(pending.begin(), pending.end(), 0);
  // Ready clusters keyed by first() (distinct node indices): a bit set with
  // a summary level per 64 bits gives the smallest in a few word scans
  // (a binary heap of (first, cluster) pairs did the same, slower).
  MinIndexSet ready(parent_.size());
  for (int32_t c : live) {
    pending[c] = static_cast<int32_t>(Ins(c).size());
    if (pending[c] == 0) ready.Insert(first_[c]);
  }
  ClusterList order;
  order.reserve(live.size());
  while (!ready.empty()) {
    int32_t c = Find(ready.PopMin());  // the live cluster whose first node it is
    min_[c] = max_[c] = static_cast<int32_t>(order.size());
    order.push_back(c);
    for (int32_t y : Outs(c)) {
      if (--pending[y] == 0) ready.Insert(first_[y]);
    }
  }
  return order;  // shorter than `live` only if the cluster graph has a cycle
}

ClusterList ClusterGraph::LiveClusters() const {
  // first() values are distinct node indices: bucket by them (O(n), no sort).
  BigVector<int32_t>& by_first = by_first_;
  by_first.assign(parent_.size(), -1);
  size_t count = 0;
  for (int32_t r = 0; r < static_cast<int32_t>(parent_.size()); ++r) {
    if (parent_[r] < 0) {  // one tree root per live cluster
      const int32_t c = ~parent_[r];
      by_first[first_[c]] = c;
      ++count;
    }
  }
  ClusterList live;
  live.reserve(count);
  for (int32_t c : by_first) {
    if (c >= 0) live.push_back(c);
  }
  return live;
}

std::vector<int32_t> ClusterGraph::Members(int32_t c) const {
  std::vector<int32_t> m;
  m.reserve(size_[c]);
  ForEachNode(c, [&](int32_t v) { m.push_back(v); });
  std::sort(m.begin(), m.end());
  return m;
}

}  // namespace npuplan::partition
