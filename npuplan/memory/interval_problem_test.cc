#include "npuplan/memory/interval_problem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "npuplan/support/str_util.h"

namespace npuplan::memory {
namespace {

// n buffers in [0, horizon) with sizes 0..max_size (a few zero), enough of
// them (>= 64) for the counting sorts.
IntervalProblem RandomLifetimes(std::mt19937& rng, int n, int horizon, int64_t max_size) {
  IntervalProblem p;
  for (int i = 0; i < n; ++i) {
    const int64_t lower = static_cast<int64_t>(rng() % horizon);
    const int64_t length = 1 + static_cast<int64_t>(rng() % (horizon / 4 + 1));
    const int64_t size = rng() % 10 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % max_size);
    p.buffers.push_back({StrCat("b", i), lower, lower + length, size});
  }
  return p;
}

TEST(IntervalProblemTest, MaxLiveBytesAndOverlapsMatchPairwiseCounts) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 300);
    const int horizon = 2 + static_cast<int>(rng() % 400);
    const IntervalProblem p = RandomLifetimes(rng, n, horizon, 1000);
    int64_t best = 0, pairs = 0;
    for (int64_t t = 0; t < 2 * horizon; ++t) {
      int64_t live = 0;
      for (const IntervalBuffer& b : p.buffers) {
        if (b.lower <= t && t < b.upper) live += b.size;
      }
      best = std::max(best, live);
    }
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        pairs += p.buffers[a].size > 0 && p.buffers[b].size > 0 &&
                 LifetimesOverlap(p.buffers[a], p.buffers[b]);
      }
    }
    ASSERT_EQ(MaxLiveBytes(p), best) << "trial " << trial;
    ASSERT_EQ(CountTimeOverlaps(p), pairs) << "trial " << trial;
    const TimeProfile profile = ComputeTimeProfile(p);
    ASSERT_EQ(profile.max_live, best) << "trial " << trial;
    ASSERT_EQ(profile.overlaps, pairs) << "trial " << trial;
  }
}

TEST(IntervalProblemTest, MaxLiveBytesOfReportsOverflow) {
  const int64_t big = int64_t{1} << 62;
  std::vector<int64_t> lower(100), upper(100), size(100, big);
  for (int i = 0; i < 100; ++i) {
    lower[i] = 2 * i;  // two at a time: 2^63 overflows
    upper[i] = 2 * i + 3;
  }
  EXPECT_FALSE(MaxLiveBytesOf(
                   100, [&](int i) { return lower[i]; }, [&](int i) { return upper[i]; },
                   [&](int i) { return size[i]; })
                   .has_value());
  IntervalProblem p;
  for (int i = 0; i < 100; ++i) p.buffers.push_back({StrCat("b", i), lower[i], upper[i], big});
  EXPECT_FALSE(ComputeTimeProfile(p).max_live.has_value());
  EXPECT_EQ(ComputeTimeProfile(p).overlaps, 99);
  for (int i = 0; i < 100; ++i) upper[i] = 2 * i + 2;  // one at a time
  for (int i = 0; i < 100; ++i) p.buffers[i].upper = upper[i];
  EXPECT_EQ(ComputeTimeProfile(p).max_live, big);
  EXPECT_EQ(MaxLiveBytesOf(
                100, [&](int i) { return lower[i]; }, [&](int i) { return upper[i]; },
                [&](int i) { return size[i]; }),
            big);
}

// BufferId against std::string on random operations: owned copies, views,
// copies and moves of both, assignments, comparisons.
TEST(BufferIdTest, BehavesLikeAStringOnRandomOperations) {
  std::mt19937 rng(11);
  std::vector<std::string> backing;  // what the views look at; outlives them
  for (int i = 0; i < 64; ++i) {
    std::string s(rng() % 24, 'a');
    for (char& c : s) c = static_cast<char>('a' + rng() % 3);
    backing.push_back(s);
  }
  std::vector<BufferId> ids(16);
  std::vector<std::string> want(16);
  for (int step = 0; step < 4000; ++step) {
    const size_t i = rng() % ids.size(), j = rng() % ids.size();
    const std::string& s = backing[rng() % backing.size()];
    switch (rng() % 6) {
      case 0:
        ids[i] = BufferId(s), want[i] = s;
        break;
      case 1:
        ids[i] = BufferId::View(s), want[i] = s;
        break;
      case 2:
        ids[i] = ids[j], want[i] = want[j];
        break;
      case 3: {
        BufferId moved = std::move(ids[j]);
        ids[j] = BufferId();
        ids[i] = std::move(moved);
        std::string w = std::move(want[j]);
        want[j].clear();
        want[i] = std::move(w);
        break;
      }
      case 4:
        ids[i] = s.c_str(), want[i] = s;
        break;
      default: {
        BufferId copy(ids[j]);
        ids[i] = copy;
        want[i] = want[j];
      }
    }
    for (size_t k = 0; k < ids.size(); ++k) {
      ASSERT_EQ(ids[k].view(), want[k]) << "step " << step;
      ASSERT_EQ(ids[k].size(), want[k].size());
      ASSERT_EQ(ids[k].empty(), want[k].empty());
    }
    ASSERT_EQ(ids[i] == ids[j], want[i] == want[j]);
    ASSERT_EQ(ids[i] < ids[j], want[i] < want[j]);
  }
  EXPECT_EQ(sizeof(BufferId), 16u);
}

}  // namespace
}  // namespace npuplan::memory
