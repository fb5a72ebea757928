// The stream-aware sweep (see stream_sweep.h): per-stream free pools of
// released bytes, an owner map of the address space, and a heap of pending
// per-stream releases.
#include "npuplan/memory/stream_sweep.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <span>
#include <tuple>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "npuplan/memory/align.h"
#include "npuplan/support/sort_util.h"

namespace npuplan::memory {
namespace {

// Free blocks of one stream: by offset (for coalescing and range queries) and
// by (length, offset) for best fit. B-trees, not red-black trees: every
// buffer placed and released updates them, a node allocation and a few
// cache misses per update in a std::map / std::set. A b-tree's insert and
// erase invalidate its iterators: erase returns the next one.
struct Pool {
  absl::btree_map<int64_t, int64_t> at;                 // offset -> end
  absl::btree_set<std::pair<int64_t, int64_t>> by_len;  // (length, offset)

  void Insert(int64_t from, int64_t to) {
    at[from] = to;
    by_len.insert({to - from, from});
  }
  // Returns the block after `it`.
  absl::btree_map<int64_t, int64_t>::iterator Erase(
      absl::btree_map<int64_t, int64_t>::iterator it) {
    by_len.erase({it->second - it->first, it->first});
    return at.erase(it);
  }
  // Adds [from, to), merging with adjacent blocks.
  void Add(int64_t from, int64_t to) {
    if (from >= to) return;
    auto next = at.lower_bound(from);
    // Merge any blocks overlapping or touching [from, to) (overlap cannot
    // happen for released bytes; touching is the common case).
    if (next != at.begin()) {
      auto prev = std::prev(next);
      if (prev->second >= from) {
        from = prev->first;
        to = std::max(to, prev->second);
        Erase(prev);
      }
    }
    for (auto it = at.lower_bound(from); it != at.end() && it->first <= to;) {
      to = std::max(to, it->second);
      it = Erase(it);
    }
    Insert(from, to);
  }
  // True when some byte of [from, to) is free here.
  bool Overlaps(int64_t from, int64_t to) const {
    auto it = at.upper_bound(from);
    if (it != at.begin() && std::prev(it)->second > from) return true;
    return it != at.end() && it->first < to;
  }
  // Removes [from, to) from the pool (splitting blocks it cuts).
  void Remove(int64_t from, int64_t to) {
    auto it = at.upper_bound(from);
    if (it != at.begin() && std::prev(it)->second > from) --it;
    while (it != at.end() && it->first < to) {
      const int64_t s = it->first, e = it->second;
      Erase(it);
      if (s < from) Insert(s, from);
      if (to < e) Insert(to, e);
      // The blocks are disjoint: the next one starts at or after e (the
      // pieces just inserted start before e).
      it = at.lower_bound(e);
    }
  }
};

}  // namespace

SweepResult SweepStreamAware(const std::vector<SweepBuffer>& buffers, int num_streams) {
  SweepBuffers table;
  table.k = static_cast<size_t>(std::max(num_streams, 0));
  for (const SweepBuffer& b : buffers) table.Append(b);
  return SweepStreamAware(table);
}

SweepResult SweepStreamAware(const SweepBuffers& buffers) {
  const int n = static_cast<int>(buffers.count());
  const size_t k = buffers.k;
  const BigVector<int64_t>& lower = buffers.lower;
  const BigVector<int64_t>& size = buffers.size;
  SweepResult result;
  result.offsets.assign(n, 0);
  std::vector<int> order;
  for (int i = 0; i < n; ++i) {
    if (size[i] > 0) order.push_back(i);
  }
  // By (lower, size descending, index): a counting sort by lower (a plan
  // position; `order` is by index), then the few buffers of each lower by size.
  StableSortByKey(order, [&](int x) { return lower[x]; });
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && lower[order[j]] == lower[order[i]]) ++j;
    if (j - i > 1) {
      std::sort(order.begin() + static_cast<std::ptrdiff_t>(i),
                order.begin() + static_cast<std::ptrdiff_t>(j),
                [&](int a, int b) { return size[a] != size[b] ? size[a] > size[b] : a < b; });
    }
    i = j;
  }
  std::vector<Pool> pools(k);
  absl::btree_map<int64_t, int> owner = {{0, -1}};  // segment start -> owning buffer
  int64_t top = 0;
  using Release = std::tuple<int64_t, int, int>;  // (time, buffer, stream)
  std::priority_queue<Release, std::vector<Release>, std::greater<>> pending;
  auto split_at = [&](int64_t at) {
    const auto it = std::prev(owner.upper_bound(at));
    if (it->first == at) return;
    const int holder = it->second;
    owner[at] = holder;
  };
  auto release = [&](int a, size_t t) {
    const int64_t from = result.offsets[a], to = from + size[a];
    auto it = std::prev(owner.upper_bound(from));
    for (; it != owner.end() && it->first < to; ++it) {
      if (it->second != a) continue;
      const int64_t s = std::max(it->first, from);
      auto next = std::next(it);
      const int64_t e = std::min(next == owner.end() ? to : next->first, to);
      pools[t].Add(s, e);
    }
  };
  // On b's other streams, every owner of [from, to) is released by the time
  // b first runs there.
  auto ReleasedInTime = [&](int64_t from, int64_t to, std::span<const int32_t> streams,
                            std::span<const int64_t> first_use) {
    for (auto it = std::prev(owner.upper_bound(from)); it != owner.end() && it->first < to; ++it) {
      if (it->second < 0) continue;
      const size_t a = static_cast<size_t>(it->second);
      const int64_t* a_release = buffers.Release(a);
      for (size_t s = 1; s < streams.size(); ++s) {
        const int64_t r = a_release[static_cast<size_t>(streams[s])];
        if (r == SweepBuffer::kNever || std::max(r, buffers.upper[a]) > first_use[s]) return false;
      }
    }
    return true;
  };
  // Bytes free to a stream b does not use would be lost to that stream's
  // next buffers, which may then have to go to the top.
  auto FreeToOtherStreams = [&](int64_t from, int64_t to, std::span<const int32_t> streams) {
    for (size_t t = 0; t < k; ++t) {
      if (std::find(streams.begin(), streams.end(), static_cast<int32_t>(t)) != streams.end())
        continue;
      if (pools[t].Overlaps(from, to)) return true;
    }
    return false;
  };
  constexpr int kBlocksTried = 8;
  for (int b : order) {
    const size_t bi = static_cast<size_t>(b);
    const int64_t buf_lower = lower[bi], buf_size = size[bi], buf_alignment = buffers.alignment[bi];
    const std::span<const int32_t> streams = buffers.Streams(bi);
    while (!pending.empty() && std::get<0>(pending.top()) <= buf_lower) {
      const auto [time, a, t] = pending.top();
      pending.pop();
      release(a, static_cast<size_t>(t));
    }
    int64_t at = -1;
    if (!streams.empty()) {
      const Pool& primary = pools[static_cast<size_t>(streams.front())];
      // Best fit, preferring a block no other stream could use now if it is
      // at most twice the best fit's length (a longer one is a big block
      // this stream's later buffers need whole); else the best fitting one.
      int tried = 0;
      int64_t best_fit = -1, best_fit_length = 0;
      for (auto it = primary.by_len.lower_bound({buf_size, std::numeric_limits<int64_t>::min()});
           it != primary.by_len.end() && tried < kBlocksTried; ++it, ++tried) {
        if (best_fit >= 0 && it->first - best_fit_length > best_fit_length) break;
        const int64_t start = AlignUp(it->second, buf_alignment);
        if (start + buf_size > it->second + it->first) continue;
        const bool everywhere =
            streams.size() == 1 ||
            ReleasedInTime(start, start + buf_size, streams, buffers.FirstUse(bi));
        if (!everywhere) continue;
        if (!FreeToOtherStreams(start, start + buf_size, streams)) {
          at = start;
          break;
        }
        if (best_fit < 0) {
          best_fit = start;
          best_fit_length = it->first;
        }
      }
      if (at < 0) at = best_fit;
      // The top: a single-stream buffer extends its pool's block ending there.
      if (at < 0 && streams.size() == 1 && !primary.at.empty() &&
          std::prev(primary.at.end())->second == top) {
        const int64_t start = AlignUp(std::prev(primary.at.end())->first, buf_alignment);
        if (start <= top) at = start;
      }
    }
    if (at < 0) at = AlignUp(top, buf_alignment);
    const int64_t end = at + buf_size;
    if (at > top) {
      for (Pool& p : pools) p.Add(top, at);  // alignment gap above the old top: free for all
    }
    for (Pool& p : pools) p.Remove(at, end);
    top = std::max(top, end);
    split_at(at);
    split_at(end);
    // The range erase invalidates `first`: the segment at `at` is the one
    // before the iterator it returns.
    auto first = owner.find(at);
    std::prev(owner.erase(std::next(first), owner.find(end)))->second = b;
    result.offsets[b] = at;
    result.peak = std::max(result.peak, end);
    const int64_t* buf_release = buffers.Release(bi);
    for (size_t t = 0; t < k; ++t) {
      if (buf_release[t] == SweepBuffer::kNever) continue;
      pending.emplace(std::max(buffers.upper[bi], buf_release[t]), b, static_cast<int>(t));
    }
  }
  return result;
}

}  // namespace npuplan::memory
