#include "npuplan/events/ready_lists.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace npuplan::events {
namespace {

// Against the reference the counting sort replaced: per stream, the
// (ready, edge) pairs sorted by ready descending, then edge ascending; and
// AtLeast, the prefix a left's position selects.
TEST(ReadyListsTest, MatchesAComparisonSortOnRandomRights) {
  std::mt19937 rng(5);
  int ties = 0;
  for (int round = 0; round < 300; ++round) {
    const size_t k = 1 + rng() % 6;
    const int32_t edges = 1 + static_cast<int32_t>(rng() % 40);
    const int32_t max_ready = 1 + static_cast<int32_t>(rng() % 12);
    std::vector<int32_t> rights;
    for (int32_t e = 0; e < edges; ++e) {
      if (rng() % 4 != 0) rights.push_back(e);
    }
    std::shuffle(rights.begin(), rights.end(), rng);  // the sweep's order, not the edges'
    std::vector<std::pair<int32_t, int32_t>> flat;
    std::vector<size_t> begin(edges, 0), end(edges, 0);
    std::vector<std::vector<std::pair<int32_t, int32_t>>> want(k);
    for (int32_t e : rights) {
      begin[e] = flat.size();
      for (size_t s = 0; s < k; ++s) {
        if (rng() % 3 == 0) continue;  // no entry on this stream
        const int32_t ready = static_cast<int32_t>(rng() % (max_ready + 1));
        flat.emplace_back(static_cast<int32_t>(s), ready);
        want[s].emplace_back(ready, e);
      }
      end[e] = flat.size();
    }
    for (auto& w : want) {
      std::sort(w.begin(), w.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      for (size_t i = 1; i < w.size(); ++i) ties += w[i].first == w[i - 1].first;
    }
    ReadyLists got(flat, begin, end, rights, k);
    ASSERT_EQ(got.streams(), k) << "round " << round;
    size_t total = 0;
    for (size_t s = 0; s < k; ++s) {
      const auto list = got.list(s);
      total += list.size();
      std::vector<std::pair<int32_t, int32_t>> have;
      for (size_t i = 0; i < list.size(); ++i) have.emplace_back(got.ReadyAt(s, i), list[i]);
      EXPECT_EQ(have, want[s]) << "round " << round << " stream " << s;
      // The prefix a left at position p precedes: the entries with ready >= p.
      for (int32_t p = -1; p <= max_ready + 1; ++p) {
        const size_t expected = static_cast<size_t>(std::count_if(
            want[s].begin(), want[s].end(), [&](const auto& x) { return x.first >= p; }));
        EXPECT_EQ(got.AtLeast(s, p), expected)
            << "round " << round << " stream " << s << " p " << p;
      }
    }
    EXPECT_EQ(total, flat.size()) << "round " << round;
  }
  EXPECT_GT(ties, 1000);  // equal ready values: the edge tie-break is exercised
}

TEST(ReadyListsTest, NoRightsGiveEmptyLists) {
  ReadyLists got({}, {}, {}, {}, 3);
  ASSERT_EQ(got.streams(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_TRUE(got.list(s).empty());
    EXPECT_EQ(got.AtLeast(s, 0), 0u);
  }
}

}  // namespace
}  // namespace npuplan::events
