#include "npuplan/support/checked_math.h"

#include <gtest/gtest.h>

#include <limits>

namespace npuplan {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedMathTest, AddsInRangeAndRefusesOverflow) {
  EXPECT_EQ(CheckedAdd(int64_t{2}, int64_t{3}), 5);
  EXPECT_EQ(CheckedAdd(kMax - 1, int64_t{1}), kMax);
  EXPECT_EQ(CheckedAdd(kMax, int64_t{1}), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMin, int64_t{-1}), std::nullopt);
  // Two 2^62 task counts on one stream: the case that used to wrap.
  EXPECT_EQ(CheckedAdd(int64_t{1} << 62, int64_t{1} << 62), std::nullopt);
}

TEST(CheckedMathTest, SubtractsAndRefusesOverflow) {
  EXPECT_EQ(CheckedSub(int64_t{2}, int64_t{3}), -1);
  EXPECT_EQ(CheckedSub(kMin, int64_t{1}), std::nullopt);
  EXPECT_EQ(CheckedSub(int64_t{0}, kMin), std::nullopt);
}

TEST(CheckedMathTest, MultipliesAndRefusesOverflow) {
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul(kMin, int64_t{-1}), std::nullopt);
  EXPECT_EQ(CheckedMul(int64_t{-3}, int64_t{4}), -12);
}

TEST(CheckedMathTest, ComputesInTheRequestedType) {
  // int32 results: 2^31 - 1 fits, 2^31 does not.
  EXPECT_EQ(CheckedAdd<int32_t>(int64_t{2147483646}, 1), 2147483647);
  EXPECT_EQ(CheckedAdd<int32_t>(int64_t{2147483647}, 1), std::nullopt);
  // Mixed signedness is exact: 2^63 as uint64 minus 1 is INT64_MAX.
  EXPECT_EQ(CheckedSub(uint64_t{1} << 63, 1), kMax);
}

TEST(CheckedMathTest, CastsOnlyRepresentableValues) {
  EXPECT_EQ(CheckedCast<int32_t>(int64_t{2147483647}), 2147483647);
  EXPECT_EQ(CheckedCast<int32_t>(int64_t{2147483648}), std::nullopt);
  // 2^32 + 5 must not become 5 (the kernel formats' old truncation).
  EXPECT_EQ(CheckedCast<int32_t>((int64_t{1} << 32) + 5), std::nullopt);
  EXPECT_EQ(CheckedCast<int64_t>(uint64_t{1} << 63), std::nullopt);
  EXPECT_EQ(CheckedCast<uint32_t>(int64_t{-1}), std::nullopt);
  EXPECT_EQ(CheckedCast<int>(int64_t{-2147483648}), -2147483648);
}

TEST(CheckedMathTest, RunningSumStopsAtTheFirstOverflow) {
  CheckedSum<> sum;
  EXPECT_TRUE(sum.Add(int64_t{1} << 62));
  EXPECT_TRUE(sum.Add((int64_t{1} << 62) - 1));
  EXPECT_EQ(sum.value(), kMax);
  EXPECT_FALSE(sum.Add(1));
  EXPECT_EQ(sum.value(), kMax);  // unchanged
  EXPECT_TRUE(sum.Add(-1));
}

TEST(CheckedMathTest, RunningProductStopsAtTheFirstOverflow) {
  CheckedProduct<> p;
  EXPECT_TRUE(p.Mul(int64_t{1} << 40));
  EXPECT_FALSE(p.Mul(int64_t{1} << 40));
  EXPECT_EQ(p.value(), int64_t{1} << 40);
  EXPECT_TRUE(p.Mul(0));
  EXPECT_EQ(p.value(), 0);
}

}  // namespace
}  // namespace npuplan
