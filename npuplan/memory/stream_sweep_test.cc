#include "npuplan/memory/stream_sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <span>
#include <tuple>

#include "npuplan/memory/align.h"
#include "npuplan/memory/pool_test_util.h"
#include "npuplan/support/sort_util.h"
#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/tensor_lifetimes.h"

namespace npuplan::memory {
namespace {

using Case = testing::PoolCase;

Case MakeCase(uint32_t seed, int nodes, int streams) {
  return testing::RandomPoolCase(seed, nodes, streams, seed * 7 + 1, 4096);
}

bool AddressesOverlap(int64_t oa, int64_t sa, int64_t ob, int64_t sb) {
  return sa > 0 && sb > 0 && oa < ob + sb && ob < oa + sa;
}

// Reference: the sweep as it was with std::map / std::set free lists (the
// b-tree version must place every buffer at the same offset).
struct ReferencePool {
  std::map<int64_t, int64_t> at;                 // offset -> end
  std::set<std::pair<int64_t, int64_t>> by_len;  // (length, offset)

  void Insert(int64_t from, int64_t to) {
    at[from] = to;
    by_len.insert({to - from, from});
  }
  void Erase(std::map<int64_t, int64_t>::iterator it) {
    by_len.erase({it->second - it->first, it->first});
    at.erase(it);
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
      auto dead = it++;
      Erase(dead);
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
      auto dead = it++;
      Erase(dead);
      if (s < from) Insert(s, from);
      if (to < e) Insert(to, e);
    }
  }
};

SweepResult ReferenceSweep(const SweepBuffers& buffers) {
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
  std::vector<ReferencePool> pools(k);
  std::map<int64_t, int> owner = {{0, -1}};  // segment start -> owning buffer
  int64_t top = 0;
  using Release = std::tuple<int64_t, int, int>;  // (time, buffer, stream)
  std::priority_queue<Release, std::vector<Release>, std::greater<>> pending;
  auto split_at = [&](int64_t at) {
    auto it = std::prev(owner.upper_bound(at));
    if (it->first != at) owner[at] = it->second;
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
      const ReferencePool& primary = pools[static_cast<size_t>(streams.front())];
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
      for (ReferencePool& p : pools)
        p.Add(top, at);  // alignment gap above the old top: free for all
    }
    for (ReferencePool& p : pools) p.Remove(at, end);
    top = std::max(top, end);
    split_at(at);
    split_at(end);
    auto first = owner.find(at);
    owner.erase(std::next(first), owner.find(end));
    first->second = b;
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

// A random table: lifetimes, sizes, alignments, streams and release times
// without a graph behind them (the sweep takes any such input).
SweepBuffers RandomTable(uint32_t seed, size_t n, size_t k) {
  std::mt19937 rng(seed);
  SweepBuffers t;
  t.k = k;
  for (size_t i = 0; i < n; ++i) {
    SweepBuffer b;
    b.lower = static_cast<int64_t>(rng() % (2 * n));
    b.upper = b.lower + 1 + static_cast<int64_t>(rng() % 12);
    b.size = rng() % 7 == 0 ? 0 : static_cast<int64_t>(1 + rng() % 8) * 64;
    b.alignment = int64_t{64} << (rng() % 3);
    const size_t uses = rng() % 4 == 0 ? 0 : 1 + rng() % k;
    for (size_t s = 0; s < uses; ++s) {
      const int stream = static_cast<int>(rng() % k);
      if (std::find(b.streams.begin(), b.streams.end(), stream) != b.streams.end()) continue;
      b.streams.push_back(stream);
      b.first_use.push_back(b.lower + static_cast<int64_t>(s));
    }
    for (size_t s = 0; s < k; ++s) {
      b.release.push_back(rng() % 5 == 0 ? SweepBuffer::kNever
                                         : b.upper + static_cast<int64_t>(rng() % 6));
    }
    t.Append(b);
  }
  return t;
}

class StreamSweepPropertyTest : public ::testing::TestWithParam<int> {};

// Every pair of pool buffers that share bytes may share by the exact
// happens-before rule (StreamAwareReuse::MayShare, pair by pair).
TEST_P(StreamSweepPropertyTest, SharesOnlyBuffersThatMayShare) {
  const int streams = 1 + GetParam() % 5;
  Case c = MakeCase(static_cast<uint32_t>(GetParam()), 80 + GetParam() % 60, streams);
  StreamAwareReuse reuse(c.plan.model, c.lt);
  const std::vector<SweepBuffer> input = reuse.SweepInput(c.pool, 512);
  const SweepResult r =
      SweepStreamAware(input, static_cast<int>(reuse.happens_before().num_lanes()));
  ASSERT_EQ(r.offsets.size(), c.pool.size());
  int64_t peak = 0, shared = 0;
  for (size_t i = 0; i < c.pool.size(); ++i) {
    EXPECT_EQ(r.offsets[i] % 512, 0);
    peak = std::max(peak, r.offsets[i] + input[i].size);
    for (size_t j = i + 1; j < c.pool.size(); ++j) {
      if (!AddressesOverlap(r.offsets[i], input[i].size, r.offsets[j], input[j].size)) continue;
      ++shared;
      EXPECT_TRUE(reuse.MayShare(c.pool[i], c.pool[j]))
          << c.lt.buffers[c.pool[i]].name << " and " << c.lt.buffers[c.pool[j]].name << " share bytes";
    }
  }
  EXPECT_EQ(r.peak, peak);
  EXPECT_GT(shared, 0) << "the sweep reused nothing";
}

// With an unlimited pair budget the conflicts are exactly ExtraConflicts plus
// the time overlaps; with small budgets they are a superset (sound).
TEST_P(StreamSweepPropertyTest, ConflictsAreExactUnlimitedAndSoundWhenWidened) {
  const int streams = 2 + GetParam() % 4;
  Case c = MakeCase(static_cast<uint32_t>(GetParam()) + 500, 70, streams);
  StreamAwareReuse reuse(c.plan.model, c.lt);
  const std::vector<std::pair<int, int>> exact_pairs = reuse.ExtraConflicts(c.pool);
  const std::set<std::pair<int, int>> exact(exact_pairs.begin(), exact_pairs.end());
  const size_t n = c.pool.size();
  auto exact_conflict = [&](size_t i, size_t j) {
    const LogicalBuffer &x = c.lt.buffers[c.pool[i]], &y = c.lt.buffers[c.pool[j]];
    if (x.size == 0 || y.size == 0) return false;
    return (x.lower < y.upper && y.lower < x.upper) || exact.count({static_cast<int>(i), static_cast<int>(j)}) > 0;
  };
  for (int64_t limit : {int64_t{1} << 40, int64_t{4}, int64_t{1}, int64_t{0}}) {
    const StreamAwareReuse::PlanningConflicts pc = reuse.Conflicts(c.pool, limit);
    const std::set<std::pair<int, int>> pairs(pc.pairs.begin(), pc.pairs.end());
    int64_t widened_pairs = 0;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_LE(pc.lower[i], c.lt.buffers[c.pool[i]].lower);
      EXPECT_GE(pc.upper[i], c.lt.buffers[c.pool[i]].upper);
      for (size_t j = i + 1; j < n; ++j) {
        const LogicalBuffer &x = c.lt.buffers[c.pool[i]], &y = c.lt.buffers[c.pool[j]];
        if (x.size == 0 || y.size == 0) continue;
        const bool planned = (pc.lower[i] < pc.upper[j] && pc.lower[j] < pc.upper[i]) ||
                             pairs.count({static_cast<int>(i), static_cast<int>(j)}) > 0;
        if (exact_conflict(i, j)) {
          EXPECT_TRUE(planned) << "limit " << limit << ": " << x.name << " / " << y.name << " lost their conflict";
        } else if (planned) {
          ++widened_pairs;
        }
      }
    }
    if (limit == (int64_t{1} << 40)) {
      EXPECT_EQ(pc.extended, 0);
      EXPECT_EQ(widened_pairs, 0) << "unlimited conflicts must be exact";
    }
    EXPECT_LE(static_cast<int64_t>(pc.pairs.size()), std::max<int64_t>(limit, 0) * static_cast<int64_t>(n) + 1);
  }
}

// The flat tables the planner sweeps hold the same buffers as the vector
// form and give the same placement.
TEST_P(StreamSweepPropertyTest, TableInputPlacesLikeVectorInput) {
  Case c = MakeCase(static_cast<uint32_t>(GetParam()), 80 + GetParam() % 60, 1 + GetParam() % 5);
  StreamAwareReuse reuse(c.plan.model, c.lt);
  const std::vector<SweepBuffer> input = reuse.SweepInput(c.pool, 512);
  const SweepBuffers table = reuse.SweepInputTable(c.pool, 512);
  ASSERT_EQ(table.count(), input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    EXPECT_EQ(table.lower[i], input[i].lower);
    EXPECT_EQ(table.upper[i], input[i].upper);
    EXPECT_EQ(table.size[i], input[i].size);
    EXPECT_EQ(std::vector<int>(table.Streams(i).begin(), table.Streams(i).end()), input[i].streams);
    EXPECT_EQ(std::vector<int64_t>(table.FirstUse(i).begin(), table.FirstUse(i).end()),
              input[i].first_use);
    EXPECT_EQ(std::vector<int64_t>(table.Release(i), table.Release(i) + table.k), input[i].release);
  }
  const SweepResult from_vector =
      SweepStreamAware(input, static_cast<int>(reuse.happens_before().num_lanes()));
  const SweepResult from_table = SweepStreamAware(table);
  EXPECT_EQ(from_table.offsets, from_vector.offsets);
  EXPECT_EQ(from_table.peak, from_vector.peak);
}

// The b-tree free lists against the std::map / std::set reference: on the
// planner's input for random graphs and on random tables.
TEST_P(StreamSweepPropertyTest, PlacesLikeTheMapReference) {
  Case c =
      MakeCase(static_cast<uint32_t>(GetParam()) + 100, 100 + GetParam() % 80, 1 + GetParam() % 5);
  StreamAwareReuse reuse(c.plan.model, c.lt);
  const SweepBuffers table = reuse.SweepInputTable(c.pool, 512);
  const SweepResult got = SweepStreamAware(table), want = ReferenceSweep(table);
  EXPECT_EQ(got.offsets, want.offsets);
  EXPECT_EQ(got.peak, want.peak);
  const SweepBuffers random =
      RandomTable(static_cast<uint32_t>(GetParam()), 300 + 40 * GetParam(), 1 + GetParam() % 4);
  const SweepResult got_random = SweepStreamAware(random), want_random = ReferenceSweep(random);
  EXPECT_EQ(got_random.offsets, want_random.offsets);
  EXPECT_EQ(got_random.peak, want_random.peak);
  EXPECT_GT(want_random.peak, 0);
}

INSTANTIATE_TEST_SUITE_P(RandomDags, StreamSweepPropertyTest, ::testing::Range(0, 20));

// Hand-made: b on stream 0 may take a's bytes only once stream 0 has waited
// for a's last use; c on a's own stream may take them right away.
TEST(StreamSweepTest, ReleasesBytesPerStream) {
  std::vector<SweepBuffer> bufs(3);
  bufs[0] = {0, 2, 1024, 512, {1}, {0}, {10, 2}};   // a on s1; s0 waits for it from 10
  bufs[1] = {3, 5, 1024, 512, {0}, {3}, {SweepBuffer::kNever, SweepBuffer::kNever}};  // b on s0 at 3
  bufs[2] = {4, 6, 1024, 512, {1}, {4}, {SweepBuffer::kNever, SweepBuffer::kNever}};  // c on s1 at 4
  SweepResult r = SweepStreamAware(bufs, 2);
  EXPECT_NE(r.offsets[1], r.offsets[0]);
  EXPECT_EQ(r.offsets[2], r.offsets[0]);
  EXPECT_EQ(r.peak, 2048);
  // Once s0 waits early enough, b reuses a and c gets new bytes.
  bufs[0].release[0] = 3;
  r = SweepStreamAware(bufs, 2);
  EXPECT_EQ(r.offsets[1], r.offsets[0]);
  EXPECT_NE(r.offsets[2], r.offsets[0]);
}

// A buffer used on two streams needs the bytes released on both by its first
// use there.
TEST(StreamSweepTest, MultiStreamBufferNeedsEveryStreamReleased) {
  std::vector<SweepBuffer> bufs(2);
  bufs[0] = {0, 2, 1024, 1, {0}, {0}, {2, 50}};  // released to s0 at 2, to s1 at 50
  bufs[1] = {3, 9, 1024, 1, {0, 1}, {3, 40}, {SweepBuffer::kNever, SweepBuffer::kNever}};
  EXPECT_EQ(SweepStreamAware(bufs, 2).peak, 2048);  // first use on s1 (40) < 50
  bufs[1].first_use[1] = 50;
  EXPECT_EQ(SweepStreamAware(bufs, 2).peak, 1024);
}

// Of two equally fitting blocks, b on s0 takes the one only s0 may use, so
// the block also released to s1 is left for c (the lowest offset, first
// before, sent c to the top: peak 4096).
TEST(StreamSweepTest, PrefersBytesNoOtherStreamMayUse) {
  constexpr int64_t kNever = SweepBuffer::kNever;
  std::vector<SweepBuffer> bufs(5);
  bufs[0] = {0, 2, 1024, 512, {0}, {0}, {2, 2}};             // a0: released to s0 and s1
  bufs[1] = {0, 10, 1024, 512, {0}, {0}, {kNever, kNever}};  // x: keeps the two blocks apart
  bufs[2] = {0, 2, 1024, 512, {0}, {0}, {2, kNever}};        // a1: released to s0 only
  bufs[3] = {3, 10, 1024, 512, {0}, {3}, {kNever, kNever}};  // b on s0
  bufs[4] = {4, 10, 1024, 512, {1}, {4}, {kNever, kNever}};  // c on s1
  const SweepResult r = SweepStreamAware(bufs, 2);
  EXPECT_EQ(r.offsets[0], 0);
  EXPECT_EQ(r.offsets[2], 2048);
  EXPECT_EQ(r.offsets[3], 2048);  // a1's bytes
  EXPECT_EQ(r.offsets[4], 0);     // a0's bytes
  EXPECT_EQ(r.peak, 3072);
}

// ... but not a block more than twice as long as the best fit: b takes the
// shared 1 KiB block and leaves the exclusive 4 KiB one whole for d (taking
// it sent d to the top: peak 11264).
TEST(StreamSweepTest, LeavesLongExclusiveBlocksWhole) {
  constexpr int64_t kNever = SweepBuffer::kNever;
  std::vector<SweepBuffer> bufs(7);
  bufs[0] = {0, 2, 1024, 512, {0}, {0}, {2, 2}};             // a0: released to s0 and s1
  bufs[1] = {0, 10, 1024, 512, {0}, {0}, {kNever, kNever}};  // x
  bufs[2] = {1, 2, 4096, 512, {0}, {1}, {2, kNever}};        // a1: released to s0 only
  bufs[3] = {1, 10, 1024, 512, {0}, {1}, {kNever, kNever}};  // y: keeps a1's block off the top
  bufs[4] = {3, 10, 1024, 512, {0}, {3}, {kNever, kNever}};  // b on s0
  bufs[5] = {4, 10, 4096, 512, {0}, {4}, {kNever, kNever}};  // d on s0
  bufs[6] = {4, 10, 1024, 512, {1}, {4}, {kNever, kNever}};  // c on s1
  const SweepResult r = SweepStreamAware(bufs, 2);
  EXPECT_EQ(r.offsets[2], 2048);
  EXPECT_EQ(r.offsets[4], 0);     // a0's bytes
  EXPECT_EQ(r.offsets[5], 2048);  // a1's bytes
  EXPECT_EQ(r.peak, 8192);
}

TEST(StreamSweepTest, ZeroSizeAndEmptyInputs) {
  EXPECT_EQ(SweepStreamAware({}, 0).peak, 0);
  std::vector<SweepBuffer> bufs(1);
  bufs[0] = {0, 1, 0, 1, {}, {}, {}};
  EXPECT_EQ(SweepStreamAware(bufs, 0).offsets, std::vector<int64_t>{0});
}

}  // namespace
}  // namespace npuplan::memory
