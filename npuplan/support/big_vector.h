// BigVector<T>: a std::vector for node-, edge- and event-sized arrays, on
// transparent huge pages; HugePageAllocator<T> is its allocator (also used by
// ir's ChunkedStore for the node table's chunks).
//
// Allocations of kHugeFromBytes and more are whole 2 MiB pages, 2 MiB-aligned
// and advised for transparent huge pages (madvise, the kernel's default THP
// mode), so a fresh million-element array is faulted in a few 2 MiB pages
// instead of hundreds of 4 KiB ones: page faults were the largest single cost
// of the partition, the engine partition and the events passes on 1M-node
// graphs (docs/benchmarks.md). A freed block is kept for the next request it
// fits instead of going back to the system: consecutive passes each allocate
// and free 100+ MB of per-node arrays, and a reused page costs neither a fault
// nor zeroing. Blocks are mappings of their own, so a cached block larger
// than a request is split (the request takes its front) and freed neighbours
// are merged. At most kHugeCacheBytes stay cached (the oldest blocks are
// freed first); ReleaseCachedHugePages() empties the cache. PrefaultHugePages
// fills the cache with pages faulted in ahead, on a thread that would
// otherwise idle. Thread-safe.
// Smaller allocations are plain operator new.
#ifndef NPUPLAN_SUPPORT_BIG_VECTOR_H_
#define NPUPLAN_SUPPORT_BIG_VECTOR_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace npuplan {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
// 512 KiB: a 1M-node byte array (flags) is 0.95 MiB; in 4 KiB pages that is
// hundreds of faults.
inline constexpr size_t kHugeFromBytes = size_t{512} << 10;
inline constexpr size_t kHugeCacheBytes = size_t{512} << 20;

// A block of `bytes` (a multiple of kHugePageBytes): the front of the smallest
// cached block that fits, else a fresh one.
void* AllocateHugeBlock(size_t bytes);
// `bytes`: the size the block was allocated with.
void FreeHugeBlock(void* p, size_t bytes);
// Takes up to `bytes` (rounded down to whole huge pages, and no more than the
// cache has room for) fresh from the system, faults them in and caches them,
// 16 MiB at a time, until done or `stop` is set; returns the bytes cached. For
// a thread that would otherwise idle: later requests are served from pages
// already faulted in (the cache splits and merges blocks).
size_t PrefaultHugePages(size_t bytes, const std::atomic<bool>& stop);
// Returns every cached block to the system; returns the bytes released.
size_t ReleaseCachedHugePages();
// Bytes of blocks taken from the system so far (not served by the cache). For
// benchmarks: an upper bound on what the passes fault in (the heap may hand
// back memory the process freed earlier).
size_t HugePageFreshBytes();

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding
  static size_t Rounded(size_t bytes) {
    return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  }
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugeFromBytes) return std::allocator<T>().allocate(n);
    return static_cast<T*>(AllocateHugeBlock(Rounded(bytes)));
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kHugeFromBytes) return std::allocator<T>().deallocate(p, n);
    FreeHugeBlock(p, Rounded(n * sizeof(T)));
  }
  template <typename U>
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator<U>&) {
    return true;
  }
};

template <typename T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

// Returns a vector's storage now (to the cache for a large BigVector).
// `v = {}` does not: it picks the initializer_list assignment, which only
// clears and keeps the capacity.
template <typename V>
void FreeStorage(V& v) {
  V().swap(v);
}

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_BIG_VECTOR_H_
