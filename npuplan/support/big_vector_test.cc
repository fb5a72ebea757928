#include "npuplan/support/big_vector.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace npuplan {
namespace {

TEST(BigVectorTest, AFreedLargeBlockIsReusedAndReleasedOnRequest) {
  ReleaseCachedHugePages();
  const int32_t* first = nullptr;
  {
    BigVector<int32_t> v(size_t{1} << 20, 7);  // 4 MiB: a cached 2 MiB-page block
    first = v.data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kHugePageBytes, 0u);
  }
  {
    BigVector<int32_t> w(size_t{1} << 20);  // same size: the freed block, value-initialised
    EXPECT_EQ(w.data(), first);
    EXPECT_EQ(w.front(), 0);
    EXPECT_EQ(w.back(), 0);
  }
  EXPECT_EQ(ReleaseCachedHugePages(), size_t{4} << 20);
  EXPECT_EQ(ReleaseCachedHugePages(), 0u);
}

TEST(BigVectorTest, AnArrayFromHalfAMebibyteIsWholeHugePages) {
  ReleaseCachedHugePages();
  const size_t fresh = HugePageFreshBytes();
  {
    BigVector<uint8_t> v(kHugeFromBytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % kHugePageBytes, 0u);
  }
  EXPECT_EQ(HugePageFreshBytes() - fresh, kHugePageBytes);
  EXPECT_EQ(ReleaseCachedHugePages(), kHugePageBytes);
}

TEST(BigVectorTest, SmallVectorsDoNotUseTheCache) {
  ReleaseCachedHugePages();
  { BigVector<int32_t> v(1000, 1); }
  { BigVector<uint8_t> v(kHugeFromBytes - 1); }
  EXPECT_EQ(ReleaseCachedHugePages(), 0u);
}

TEST(BigVectorTest, ABlockMuchLargerThanTheRequestIsNotHandedOut) {
  ReleaseCachedHugePages();
  const char* big = nullptr;
  {
    BigVector<char> v(size_t{64} << 20);
    big = v.data();
  }
  {
    BigVector<char> small(size_t{2} << 20);  // 64 MiB > 2 × 2 MiB + 2 MiB: a new block
    EXPECT_NE(small.data(), big);
  }
  EXPECT_EQ(ReleaseCachedHugePages(), (size_t{64} << 20) + (size_t{2} << 20));
}

TEST(BigVectorTest, FreeStorageReturnsTheBlockAtOnce) {
  ReleaseCachedHugePages();
  BigVector<int64_t> v(size_t{1} << 18, 1);  // 2 MiB
  v = {};                                    // keeps the capacity
  EXPECT_EQ(ReleaseCachedHugePages(), 0u);
  FreeStorage(v);
  EXPECT_EQ(v.capacity(), 0u);
  EXPECT_EQ(ReleaseCachedHugePages(), size_t{2} << 20);
}

}  // namespace
}  // namespace npuplan
