#include "npuplan/events/scratch_vector.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace npuplan::events {
namespace {

TEST(ScratchVectorTest, AFreedLargeBlockIsReusedAndReleasedOnRequest) {
  ReleaseScratchMemory();
  const int32_t* first = nullptr;
  {
    ScratchVector<int32_t> v(size_t{1} << 20, 7);  // 4 MiB: a cached 2 MiB-page block
    first = v.data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kHugePageBytes, 0u);
  }
  {
    ScratchVector<int32_t> w(size_t{1} << 20);  // same size: the freed block, value-initialised
    EXPECT_EQ(w.data(), first);
    EXPECT_EQ(w.front(), 0);
    EXPECT_EQ(w.back(), 0);
  }
  EXPECT_EQ(ReleaseScratchMemory(), size_t{4} << 20);
  EXPECT_EQ(ReleaseScratchMemory(), 0u);
}

TEST(ScratchVectorTest, SmallVectorsDoNotUseTheCache) {
  ReleaseScratchMemory();
  { ScratchVector<int32_t> v(1000, 1); }
  EXPECT_EQ(ReleaseScratchMemory(), 0u);
}

TEST(ScratchVectorTest, ABlockMuchLargerThanTheRequestIsNotHandedOut) {
  ReleaseScratchMemory();
  const char* big = nullptr;
  {
    ScratchVector<char> v(size_t{64} << 20);
    big = v.data();
  }
  {
    ScratchVector<char> small(size_t{2} << 20);  // 64 MiB > 2 × 2 MiB + 2 MiB: a new block
    EXPECT_NE(small.data(), big);
  }
  EXPECT_EQ(ReleaseScratchMemory(), (size_t{64} << 20) + (size_t{2} << 20));
}

}  // namespace
}  // namespace npuplan::events
