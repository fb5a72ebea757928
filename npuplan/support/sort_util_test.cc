#include "npuplan/support/sort_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace npuplan {
namespace {

// StableSortByKey equals std::stable_sort on all of its paths (items already
// in order, counting sort for dense keys, stable_sort for sparse or few ones).
TEST(SortUtilTest, StableSortByKeyMatchesStableSort) {
  std::mt19937 rng(5);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + static_cast<int>(rng() % 300);
    const bool sparse = round % 3 == 0;
    std::vector<int64_t> key(n);
    for (int64_t& k : key) {
      k = sparse ? static_cast<int64_t>(rng()) * 1'000'003 - (int64_t{1} << 40)
                 : static_cast<int64_t>(rng() % (n + 5)) - 7;
    }
    if (round == 1 && n >= 2) {  // the widest span: stable_sort
      key[0] = std::numeric_limits<int64_t>::min();
      key[1] = std::numeric_limits<int64_t>::max();
    }
    std::vector<int> items;
    for (int i = 0; i < n; ++i) {
      if (rng() % 4 != 0) items.push_back(i);
    }
    // Already in key order (the early return), or in order but for one
    // swapped pair anywhere (the first inversion found late).
    if (round % 4 == 1) {
      std::stable_sort(items.begin(), items.end(), [&](int a, int b) { return key[a] < key[b]; });
      if (round % 8 == 5 && items.size() >= 2) {
        const size_t at = 1 + rng() % (items.size() - 1);
        std::swap(items[at - 1], items[at]);
      }
    }
    std::vector<int> want = items;
    std::stable_sort(want.begin(), want.end(), [&](int a, int b) { return key[a] < key[b]; });
    StableSortByKey(items, [&](int i) { return key[i]; });
    EXPECT_EQ(items, want) << "round " << round;
  }
}

}  // namespace
}  // namespace npuplan
