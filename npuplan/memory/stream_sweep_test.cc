#include "npuplan/memory/stream_sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "npuplan/memory/pool_test_util.h"
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

class StreamSweepPropertyTest : public ::testing::TestWithParam<int> {};

// Every pair of pool buffers that share bytes may share by the exact
// happens-before rule (StreamAwareReuse::MayShare, pair by pair).
TEST_P(StreamSweepPropertyTest, SharesOnlyBuffersThatMayShare) {
  const int streams = 1 + GetParam() % 5;
  Case c = MakeCase(static_cast<uint32_t>(GetParam()), 80 + GetParam() % 60, streams);
  StreamAwareReuse reuse(c.plan.model, c.lt);
  const std::vector<SweepBuffer> input = reuse.SweepInput(c.pool, 512);
  const SweepResult r = SweepStreamAware(input, static_cast<int>(reuse.happens_before().num_streams()));
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
      SweepStreamAware(input, static_cast<int>(reuse.happens_before().num_streams()));
  const SweepResult from_table = SweepStreamAware(table);
  EXPECT_EQ(from_table.offsets, from_vector.offsets);
  EXPECT_EQ(from_table.peak, from_vector.peak);
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
