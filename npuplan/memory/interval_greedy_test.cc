// The scalable path's sweep (interval_greedy.cc, SweepBestFit) against the
// heap-based sweep it replaced, kept here as the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "npuplan/memory/align.h"
#include "npuplan/memory/interval_solver.h"
#include "npuplan/support/str_util.h"

namespace npuplan::memory {
namespace {

// Reference: the same best-fit sweep freeing through a heap of live buffers, over the positive-size
// buffers of `p` with its extra pairs as the only conflicts; zero-size
// buffers at 0.
std::vector<int64_t> ReferenceSweep(const IntervalProblem& p) {
  std::vector<int> orig;
  for (int i = 0; i < static_cast<int>(p.buffers.size()); ++i) {
    if (p.buffers[i].size > 0) orig.push_back(i);
  }
  const int m = static_cast<int>(orig.size());
  std::vector<int> compact(p.buffers.size(), -1);
  for (int i = 0; i < m; ++i) compact[orig[i]] = i;
  std::vector<std::vector<int>> adj(m);
  for (const auto& [a, b] : p.extra_conflicts) {
    if (compact[a] < 0 || compact[b] < 0) continue;
    adj[compact[a]].push_back(compact[b]);
    adj[compact[b]].push_back(compact[a]);
  }
  auto buf = [&](int i) -> const IntervalBuffer& { return p.buffers[orig[i]]; };
  std::vector<int64_t> off(m, -1);
  std::vector<int> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (buf(a).lower != buf(b).lower) return buf(a).lower < buf(b).lower;
    if (buf(a).size != buf(b).size) return buf(a).size > buf(b).size;
    return a < b;
  });
  std::map<int64_t, int64_t> free_at;
  std::set<std::pair<int64_t, int64_t>> by_len;
  int64_t top = 0;
  auto add_free = [&](int64_t from, int64_t to) {
    if (from >= to) return;
    auto next = free_at.find(to);
    if (next != free_at.end()) {
      to = next->second;
      by_len.erase({next->second - next->first, next->first});
      free_at.erase(next);
    }
    auto prev = free_at.lower_bound(from);
    if (prev != free_at.begin() && std::prev(prev)->second == from) {
      --prev;
      from = prev->first;
      by_len.erase({prev->second - prev->first, prev->first});
      free_at.erase(prev);
    }
    if (to == top) {
      top = from;
      return;
    }
    free_at[from] = to;
    by_len.insert({to - from, from});
  };
  auto first_clear = [&](int b, int64_t from) {
    int64_t start = AlignUp(from, buf(b).alignment);
    for (bool moved = true; moved;) {
      moved = false;
      for (int x : adj[b]) {
        if (off[x] < 0 || off[x] >= start + buf(b).size || start >= off[x] + buf(x).size) continue;
        start = AlignUp(off[x] + buf(x).size, buf(b).alignment);
        moved = true;
      }
    }
    return start;
  };
  std::priority_queue<std::pair<int64_t, int>, std::vector<std::pair<int64_t, int>>, std::greater<>>
      live;
  for (int b : order) {
    while (!live.empty() && live.top().first <= buf(b).lower) {
      const int x = live.top().second;
      live.pop();
      add_free(off[x], off[x] + buf(x).size);
    }
    int64_t at = -1;
    int tried = 0;
    for (auto it = by_len.lower_bound({buf(b).size, std::numeric_limits<int64_t>::min()});
         it != by_len.end() && tried < 8; ++it, ++tried) {
      const int64_t from = it->second, to = from + it->first;
      const int64_t start = first_clear(b, from);
      if (start + buf(b).size <= to) {
        free_at.erase(from);
        by_len.erase({to - from, from});
        if (from < start) {
          free_at[from] = start;
          by_len.insert({start - from, from});
        }
        if (start + buf(b).size < to) {
          free_at[start + buf(b).size] = to;
          by_len.insert({to - start - buf(b).size, start + buf(b).size});
        }
        at = start;
        break;
      }
    }
    if (at < 0) {
      int64_t from = top;
      if (!free_at.empty() && std::prev(free_at.end())->second == top) {
        auto last = std::prev(free_at.end());
        from = last->first;
        by_len.erase({last->second - last->first, last->first});
        free_at.erase(last);
      }
      at = first_clear(b, from);
      if (from < at) {
        free_at[from] = at;
        by_len.insert({at - from, from});
      }
      top = at + buf(b).size;
    }
    off[b] = at;
    top = std::max(top, at + buf(b).size);
    live.emplace(buf(b).upper, b);
  }
  std::vector<int64_t> result(p.buffers.size(), 0);
  for (int i = 0; i < m; ++i) result[orig[i]] = off[i];
  return result;
}

// Random problems whose positive sizes come from `size_of`, solved on the
// scalable path and compared with ReferenceSweep; returns how many were.
// With `sorted`, the buffers come by (lower, size descending), as the
// memory planner's do (the sweep then skips its sort).
int CompareWithReference(std::mt19937& rng, const std::function<int64_t()>& size_of,
                         bool sorted = false) {
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    IntervalProblem p;
    const int n = 2 + static_cast<int>(rng() % 200);
    const int horizon = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const int64_t lower = static_cast<int64_t>(rng() % horizon);
      const int64_t size = rng() % 12 == 0 ? 0 : size_of();
      const int64_t alignment = int64_t{1} << (rng() % 4);
      p.buffers.push_back({StrCat("b", i), lower,
                           lower + 1 + static_cast<int64_t>(rng() % (horizon / 3 + 2)), size,
                           alignment});
    }
    if (sorted) {
      std::stable_sort(p.buffers.begin(), p.buffers.end(),
                       [](const IntervalBuffer& a, const IntervalBuffer& b) {
                         return a.lower != b.lower ? a.lower < b.lower : a.size > b.size;
                       });
    }
    for (int k = static_cast<int>(rng() % (2 * n)); k > 0; --k) {
      const int a = static_cast<int>(rng() % n), b = static_cast<int>(rng() % n);
      if (a != b) p.extra_conflicts.push_back({a, b});
    }
    IntervalSolverOptions options;
    options.search = false;
    options.max_conflict_edges = 1;  // the scalable path: the sweep alone
    const absl::StatusOr<IntervalSolution> s = SolveIntervals(p, options);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok() || !s->stats.scalable) continue;
    EXPECT_EQ(s->assignment.offsets, ReferenceSweep(p)) << "trial " << trial;
    ++compared;
  }
  return compared;
}

// Small sizes: the blocks' (length, offset) keys packed into 64 bits.
TEST(IntervalGreedyTest, ScalableSweepPlacesLikeTheHeapSweep) {
  std::mt19937 rng(3);
  EXPECT_GT(CompareWithReference(rng, [&] { return 1 + static_cast<int64_t>(rng() % 64); }), 250);
}

// Buffers already in the sweep's order.
TEST(IntervalGreedyTest, ScalableSweepOnSortedBuffersPlacesLikeTheHeapSweep) {
  std::mt19937 rng(6);
  EXPECT_GT(CompareWithReference(
                rng, [&] { return 1 + static_cast<int64_t>(rng() % 64); }, /*sorted=*/true),
            250);
}

// Equal sizes (the 1M-node graphs' common case: many blocks of one length).
TEST(IntervalGreedyTest, ScalableSweepOnEqualSizesPlacesLikeTheHeapSweep) {
  std::mt19937 rng(5);
  EXPECT_GT(CompareWithReference(rng, [] { return int64_t{2048}; }), 250);
}

// Offsets beyond 2^32 granules: the keys stay pairs.
TEST(IntervalGreedyTest, ScalableSweepWithHugeOffsetsPlacesLikeTheHeapSweep) {
  std::mt19937 rng(4);
  EXPECT_GT(CompareWithReference(rng,
                                 [&] {
                                   return (int64_t{1} << 30) *
                                              (1 + static_cast<int64_t>(rng() % 64)) +
                                          static_cast<int64_t>(rng() % 3);
                                 }),
            250);
}

}  // namespace
}  // namespace npuplan::memory
