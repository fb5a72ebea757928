#include "npuplan/verify/address_painter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace npuplan::memory {
namespace {

// What each paint sees, from a painter over `end` bytes.
std::vector<std::vector<int>> PaintAll(const std::vector<std::pair<int64_t, int64_t>>& paints,
                                       int64_t end, int64_t unit, int64_t max_slots) {
  AddressPainter painter(end, unit, max_slots);
  std::vector<std::vector<int>> seen(paints.size());
  for (size_t i = 0; i < paints.size(); ++i) {
    painter.Paint(paints[i].first, paints[i].second, static_cast<int>(i),
                  [&](int b) { seen[i].push_back(b); });
  }
  return seen;
}

TEST(AddressPainterTest, SlotsSeeWhatTheMapAndAnArraySee) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t unit = 1 + static_cast<int64_t>(rng() % 5) * 3;
    const int64_t slots = 1 + static_cast<int64_t>(rng() % 300);
    const int64_t end = slots * unit;
    std::vector<std::pair<int64_t, int64_t>> paints;
    std::vector<int> bytes(static_cast<size_t>(end), -1);  // per address: last painter
    std::vector<std::vector<int>> expected;
    for (int i = 0; i < 150; ++i) {
      int64_t a = static_cast<int64_t>(rng() % (slots + 1)),
              b = static_cast<int64_t>(rng() % (slots + 1));
      if (a == b) continue;
      if (a > b) std::swap(a, b);
      std::vector<int>& seen = expected.emplace_back();
      for (int64_t x = a * unit; x < b * unit; ++x) {  // painters of the runs, in order
        if (x == a * unit || bytes[x] != bytes[x - 1]) seen.push_back(bytes[x]);
      }
      std::fill(bytes.begin() + a * unit, bytes.begin() + b * unit,
                static_cast<int>(paints.size()));
      paints.push_back({a * unit, b * unit});
    }
    const auto dense = PaintAll(paints, end, unit, end + 1);
    const auto map = PaintAll(paints, end, unit, 0);
    ASSERT_EQ(dense, map) << "trial " << trial;
    // The painters seen include each run's; equal neighbours may repeat.
    for (size_t i = 0; i < paints.size(); ++i) {
      std::vector<int> runs;
      for (int b : dense[i]) {
        if (runs.empty() || runs.back() != b) runs.push_back(b);
      }
      ASSERT_EQ(runs, expected[i]) << "trial " << trial << " paint " << i;
    }
  }
}

}  // namespace
}  // namespace npuplan::memory
