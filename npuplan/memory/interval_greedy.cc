// Stage 2 of the interval solver (interval_solver.h): greedy first-fit with
// gap reuse over several buffer orders, and a time sweep with best-fit free
// blocks; the best plan wins.
#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "npuplan/memory/interval_solver_internal.h"
#include "npuplan/support/sort_util.h"

namespace npuplan::memory::interval_internal {
namespace {

// Places buffers in `order`, each at the lowest aligned offset where it fits
// between its already placed neighbours. Returns the peak.
int64_t FirstFit(const Compact& c, const std::vector<int>& order, std::vector<int64_t>& off) {
  off.assign(c.count(), -1);
  int64_t peak = 0;
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (int b : order) {
    busy.clear();
    for (int x : c.adj[b]) {
      if (off[x] >= 0) busy.emplace_back(off[x], off[x] + c.size[x]);
    }
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto& [start, end] : busy) {
      if (at + c.size[b] <= start) break;
      at = std::max(at, AlignUp(end, c.align[b]));
    }
    off[b] = at;
    peak = std::max(peak, at + c.size[b]);
  }
  return peak;
}

// Free blocks by (length, offset) as SweepBestFit orders them: the pair, or
// both in one 64-bit key (PackedBlockKeys).
struct PairBlockKeys {
  using Key = std::pair<int64_t, int64_t>;
  Key Make(int64_t length, int64_t offset) const { return {length, offset}; }
  int64_t Length(const Key& k) const { return k.first; }
  int64_t Offset(const Key& k) const { return k.second; }
};
// Every block boundary is a multiple of the granularity g (offsets are
// sums of sizes rounded up to alignments, all multiples of g): when every
// offset over g fits in 32 bits, (length / g) << 32 | offset / g orders the
// blocks as the pair does. The by-length set is the sweep's busiest
// structure (a million buffers, several updates each), and a B-tree of
// 8-byte keys holds twice as many per node as one of pairs.
struct PackedBlockKeys {
  using Key = uint64_t;
  int64_t g;
  Key Make(int64_t length, int64_t offset) const {
    return static_cast<uint64_t>(length / g) << 32 | static_cast<uint64_t>(offset / g);
  }
  int64_t Length(Key k) const { return static_cast<int64_t>(k >> 32) * g; }
  int64_t Offset(Key k) const { return static_cast<int64_t>(k & 0xffffffffu) * g; }
};

// Places buffers in time order (lower, then size descending, then index),
// freeing each block at its buffer's upper: a buffer takes the smallest free
// block it fits in (lowest offset on ties) that no placed neighbour in
// `c.adj` overlaps, else the free block at the top (growing the peak).
// Free blocks are coalesced. O(n log n) plus the neighbours scanned.
template <typename Keys>
int64_t SweepBestFitWith(const Compact& c, const Keys& keys, std::vector<int64_t>& off) {
  const int m = c.count();
  off.assign(m, -1);
  std::vector<int> order(m);
  std::iota(order.begin(), order.end(), 0);
  // By (lower, size descending, index): a counting sort by lower (a plan
  // position), then the few buffers of each lower by size. The memory
  // planner's buffers usually come in that order already: then no sort.
  bool in_order = true;
  for (int i = 1; i < m && in_order; ++i) {
    in_order =
        c.lower[i - 1] < c.lower[i] || (c.lower[i - 1] == c.lower[i] && c.size[i - 1] >= c.size[i]);
  }
  if (!in_order) StableSortByKey(order, [&](int x) { return c.lower[x]; });
  for (size_t i = 0; i < order.size() && !in_order;) {
    size_t j = i + 1;
    while (j < order.size() && c.lower[order[j]] == c.lower[order[i]]) ++j;
    if (j - i > 1) {
      std::sort(order.begin() + static_cast<std::ptrdiff_t>(i),
                order.begin() + static_cast<std::ptrdiff_t>(j), [&](int a, int b) {
                  return c.size[a] != c.size[b] ? c.size[a] > c.size[b] : a < b;
                });
    }
    i = j;
  }
  // B-trees, not red-black trees: a million buffers each take and free a
  // block, several tree updates apiece, and a node allocation and a few
  // cache misses each in a std::map / std::set. Same order, same answers.
  absl::btree_map<int64_t, int64_t> free_at;            // offset -> end, below `top`
  absl::btree_set<typename Keys::Key> by_len;           // (length, offset)
  int64_t top = 0, peak = 0;
  auto add_free = [&](int64_t from, int64_t to) {
    if (from >= to) return;
    auto next = free_at.find(to);
    if (next != free_at.end()) {
      to = next->second;
      by_len.erase(keys.Make(next->second - next->first, next->first));
      free_at.erase(next);
    }
    auto prev = free_at.lower_bound(from);
    if (prev != free_at.begin() && std::prev(prev)->second == from) {
      --prev;
      from = prev->first;
      by_len.erase(keys.Make(prev->second - prev->first, prev->first));
      free_at.erase(prev);
    }
    if (to == top) {  // merges into the space above the top
      top = from;
      return;
    }
    free_at[from] = to;
    by_len.insert(keys.Make(to - from, from));
  };
  auto take = [&](int64_t from, int64_t to, int64_t start, int64_t end) {
    free_at.erase(from);
    by_len.erase(keys.Make(to - from, from));
    if (from < start) {
      free_at[from] = start;
      by_len.insert(keys.Make(start - from, from));
    }
    if (end < to) {
      free_at[end] = to;
      by_len.insert(keys.Make(to - end, end));
    }
  };
  // Lowest aligned start >= from avoiding the placed neighbours of b.
  auto first_clear = [&](int b, int64_t from) {
    int64_t start = AlignUp(from, c.align[b]);
    for (bool moved = true; moved;) {
      moved = false;
      for (int x : c.adj[b]) {
        if (off[x] < 0 || off[x] >= start + c.size[b] || start >= off[x] + c.size[x]) continue;
        start = AlignUp(off[x] + c.size[x], c.align[b]);
        moved = true;
      }
    }
    return start;
  };
  // The blocks dead by b's lower are freed before b is placed: every buffer
  // with upper <= lower(b) (lower < upper, as CheckIntervalProblem ensures,
  // so it was placed before b), and the free blocks after a batch of frees
  // are the coalesced union whatever their order. So the blocks are freed in
  // a fixed order by upper: each buffer's block goes to its slot in that
  // order when placed, and freeing reads the slots in sequence (no heap, no
  // buffer-sized array read at random).
  std::vector<int> by_upper(m);
  std::iota(by_upper.begin(), by_upper.end(), 0);
  StableSortByKey(by_upper, [&](int x) { return c.upper[x]; });
  struct Block {
    int64_t upper, from, to;
  };
  BigVector<Block> blocks(static_cast<size_t>(m));  // by position in by_upper
  BigVector<int32_t> slot(static_cast<size_t>(m));  // per buffer: its position in by_upper
  for (int i = 0; i < m; ++i) {
    slot[static_cast<size_t>(by_upper[static_cast<size_t>(i)])] = i;
    blocks[static_cast<size_t>(i)].upper = c.upper[by_upper[static_cast<size_t>(i)]];
  }
  FreeStorage(by_upper);
  size_t freed = 0;
  constexpr int kBlocksTried = 8;
  for (int b : order) {
    for (; freed < blocks.size() && blocks[freed].upper <= c.lower[b]; ++freed)
      add_free(blocks[freed].from, blocks[freed].to);
    int64_t at = -1;
    int tried = 0;
    for (auto it = by_len.lower_bound(keys.Make(c.size[b], 0));
         it != by_len.end() && tried < kBlocksTried; ++it, ++tried) {
      const int64_t from = keys.Offset(*it), to = from + keys.Length(*it);
      const int64_t start = first_clear(b, from);
      if (start + c.size[b] <= to) {
        take(from, to, start, start + c.size[b]);
        at = start;
        break;
      }
    }
    if (at < 0) {
      // The top: extend the highest free block if it ends there.
      int64_t from = top;
      if (!free_at.empty() && std::prev(free_at.end())->second == top) {
        auto last = std::prev(free_at.end());
        from = last->first;
        by_len.erase(keys.Make(last->second - last->first, last->first));
        free_at.erase(last);
      }
      at = first_clear(b, from);
      if (from < at) {
        free_at[from] = at;
        by_len.insert(keys.Make(at - from, from));
      }
      top = at + c.size[b];
    }
    off[b] = at;
    top = std::max(top, at + c.size[b]);
    peak = std::max(peak, at + c.size[b]);
    blocks[static_cast<size_t>(slot[static_cast<size_t>(b)])].from = at;
    blocks[static_cast<size_t>(slot[static_cast<size_t>(b)])].to = at + c.size[b];
  }
  return peak;
}

// SweepBestFitWith on packed keys when every offset fits them: offsets
// stay below the sum of the sizes padded to their alignments.
int64_t SweepBestFit(const Compact& c, std::vector<int64_t>& off) {
  const int64_t g = std::max<int64_t>(c.granularity, 1);
  // CheckIntervalProblem bounds this sum to int64.
  int64_t bound = 0;
  for (int i = 0; i < c.count(); ++i) bound += c.size[i] + c.align[i] - 1;
  if (bound / g < (int64_t{1} << 32) - 1) return SweepBestFitWith(c, PackedBlockKeys{g}, off);
  return SweepBestFitWith(c, PairBlockKeys{}, off);
}

}  // namespace

// 2. Greedy over several orders (the sweep alone when scalable): the best
// plan into `best`, its peak returned.
int64_t GreedyPlan(const Compact& c, bool scalable, std::vector<int64_t>& best,
                   IntervalSolution& solution) {
  int64_t best_peak = std::numeric_limits<int64_t>::max();
  if (scalable) {
    best_peak = SweepBestFit(c, best);
    solution.stats.greedy_order = "sweep-best-fit";
    solution.stats.greedy_peak = best_peak;
    return best_peak;
  }
  std::vector<int64_t> section_total(c.num_sections, 0);
  for (int s = 0; s < c.num_sections; ++s) {
    for (int b : c.live[s]) section_total[s] += c.size[b];
  }
  std::vector<int> all(c.count());
  std::iota(all.begin(), all.end(), 0);
  const std::vector<BufferKeys> keys = ComputeKeys(c, section_total, all);
  std::vector<int64_t> off;
  for (const NamedOrder& order : GreedyOrders()) {
    std::vector<int> sequence = all;
    SortBy(sequence, keys, order.keys);
    const int64_t peak = FirstFit(c, sequence, off);
    if (peak < best_peak) {
      best_peak = peak;
      best = off;
      solution.stats.greedy_order = order.name;
    }
  }
  const int64_t sweep_peak = SweepBestFit(c, off);
  if (sweep_peak < best_peak) {
    best_peak = sweep_peak;
    best = off;
    solution.stats.greedy_order = "sweep-best-fit";
  }
  if (c.count() == 0) best_peak = 0;
  solution.stats.greedy_peak = best_peak;
  return best_peak;
}

}  // namespace npuplan::memory::interval_internal
