#include "npuplan/support/big_vector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define NPUPLAN_TEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPUPLAN_TEST_LSAN 1
#endif
#endif
#if defined(NPUPLAN_TEST_LSAN)
#include <sanitizer/lsan_interface.h>
#endif

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

TEST(BigVectorTest, ALargerCachedBlockIsSplitAndTheRestStaysCached) {
  ReleaseCachedHugePages();
  const size_t fresh = HugePageFreshBytes();
  const char* big = nullptr;
  {
    BigVector<char> v(size_t{64} << 20);
    big = v.data();
  }
  {
    BigVector<char> small(size_t{2} << 20);  // the big block's first 2 MiB
    EXPECT_EQ(small.data(), big);
    BigVector<char> next(size_t{6} << 20);  // the 6 MiB after them
    EXPECT_EQ(next.data(), big + (size_t{2} << 20));
  }
  EXPECT_EQ(HugePageFreshBytes() - fresh, size_t{64} << 20);
  // Freed, the three parts are one block again: a request for all of it fits.
  {
    BigVector<char> whole(size_t{64} << 20);
    EXPECT_EQ(whole.data(), big);
  }
  EXPECT_EQ(HugePageFreshBytes() - fresh, size_t{64} << 20);
  EXPECT_EQ(ReleaseCachedHugePages(), size_t{64} << 20);
}

TEST(BigVectorTest, TheSmallestCachedBlockThatFitsIsTaken) {
  ReleaseCachedHugePages();
  BigVector<char> a(size_t{8} << 20), gap1(size_t{2} << 20), b(size_t{4} << 20),
      gap2(size_t{2} << 20);
  const char* small = b.data();
  FreeStorage(a);
  FreeStorage(b);  // the gaps keep the two apart
  BigVector<char> c(size_t{4} << 20);
  EXPECT_EQ(c.data(), small);
  FreeStorage(c);
  FreeStorage(gap1);
  FreeStorage(gap2);
  ReleaseCachedHugePages();
}

TEST(BigVectorTest, PrefaultedPagesServeLaterRequestsWithoutFreshOnes) {
  ReleaseCachedHugePages();
  const std::atomic<bool> keep_going{false};
  const size_t faulted = PrefaultHugePages((size_t{40} << 20) + 12345, keep_going);
  EXPECT_EQ(faulted, size_t{40} << 20);  // whole huge pages
  const size_t fresh = HugePageFreshBytes();
  {
    BigVector<int32_t> v(size_t{5} << 20, 3);  // 20 MiB
    BigVector<int64_t> w(size_t{1} << 21, 4);  // 16 MiB
    EXPECT_EQ(v[12345], 3);
    EXPECT_EQ(w.back(), 4);
  }
  EXPECT_EQ(HugePageFreshBytes(), fresh);
  EXPECT_EQ(ReleaseCachedHugePages(), size_t{40} << 20);
}

TEST(BigVectorTest, PrefaultStopsWhenToldAndStaysWithinTheCache) {
  ReleaseCachedHugePages();
  const std::atomic<bool> stop{true};
  EXPECT_EQ(PrefaultHugePages(size_t{32} << 20, stop), 0u);
  EXPECT_EQ(ReleaseCachedHugePages(), 0u);
  const std::atomic<bool> keep_going{false};
  EXPECT_EQ(PrefaultHugePages(kHugeCacheBytes + (size_t{64} << 20), keep_going), kHugeCacheBytes);
  EXPECT_EQ(PrefaultHugePages(size_t{4} << 20, keep_going), 0u);  // no room left
  EXPECT_EQ(ReleaseCachedHugePages(), kHugeCacheBytes);
}

TEST(BigVectorTest, OverTheCapOnlyTheExcessOfTheOldestBlockGoes) {
  ReleaseCachedHugePages();
  BigVector<char> extra(size_t{6} << 20);
  const char* extra_block = extra.data();
  const std::atomic<bool> keep_going{false};
  ASSERT_EQ(PrefaultHugePages(kHugeCacheBytes, keep_going), kHugeCacheBytes);
  FreeStorage(extra);  // 6 MiB over: the prefaulted block, older, gives up 6 MiB
  BigVector<char> again(size_t{6} << 20);
  EXPECT_EQ(again.data(), extra_block);  // the newer block stayed whole
  FreeStorage(again);
  EXPECT_EQ(ReleaseCachedHugePages(), kHugeCacheBytes);
}

#if defined(NPUPLAN_TEST_LSAN)
// Blocks are mappings, which LeakSanitizer does not scan by itself: a heap
// object only a live block points to (a node's name in the node table) is
// not a leak (scripts/sanitize.sh runs this).
TEST(BigVectorTest, WhatALiveBlockPointsToIsNotALeak) {
  auto* v = new BigVector<std::string*>(kHugeFromBytes / sizeof(std::string*));
  (*v)[1000] = new std::string(100, 'x');
  EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0);
  delete (*v)[1000];
  delete v;
}
#endif

#if defined(NPUPLAN_TEST_LSAN)
// Blocks are mappings, outside AddressSanitizer's heap: a cached block is
// poisoned, so a read through a pointer into freed storage is reported, and
// the same bytes handed out again are usable.
TEST(BigVectorTest, ReadingFreedStorageIsReported) {
  ReleaseCachedHugePages();
  auto* v = new BigVector<char>(kHugeFromBytes);
  volatile char* stale = v->data();
  stale[10] = 1;
  delete v;  // cached
  EXPECT_DEATH(static_cast<void>(stale[10]), "use-after-poison");
  BigVector<char> again(kHugeFromBytes);
  ASSERT_EQ(again.data(), stale) << "the cached block was not reused: the test checks little";
  again[10] = 2;
  EXPECT_EQ(again[10], 2);
  FreeStorage(again);
  ReleaseCachedHugePages();
}
#endif

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
