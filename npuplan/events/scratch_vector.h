// ScratchVector<T>: a std::vector for the events passes' per-node and
// per-event working arrays. Allocations of 512 KiB and more are rounded up to
// whole 2 MiB pages, 2 MiB-aligned and advised for transparent huge pages, so
// a fresh million-element array is faulted in a few 2 MiB pages instead of
// hundreds of 4 KiB ones. A first-touch page fault is expensive on a virtual
// machine: with 4 KiB pages the faults of the fresh arrays one events pass
// writes on a 1M-node graph were a large share of its time. The blocks come from
// npuplan/ir's chunk allocator (chunk_memory.h, as BigVector's do); what this
// adds is the cache of freed blocks below, so the stage's passes reuse each
// other's pages. Smaller allocations are plain operator new.
#ifndef NPUPLAN_EVENTS_SCRATCH_VECTOR_H_
#define NPUPLAN_EVENTS_SCRATCH_VECTOR_H_

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace npuplan::events {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
// (512 KiB: a 1M-node byte array — the view's flags — is 0.95 MiB; in
// 4 KiB pages that was hundreds of faults per view.)
inline constexpr size_t kScratchHugeFrom = size_t{512} << 10;

// Large scratch blocks (whole 2 MiB pages, 2 MiB-aligned). A freed block is
// kept for the next request it fits (the smallest such block) instead of
// being returned to the kernel: the events passes run one after another and
// each allocates and frees 100+ MB of per-node/per-event arrays on a
// 1M-node graph, and a fresh page costs a fault plus zeroing where a reused
// one costs nothing. At most
// kScratchCacheBytes stay cached (older blocks are freed first); thread-safe.
inline constexpr size_t kScratchCacheBytes = size_t{512} << 20;
void* AllocateScratch(size_t bytes);  // bytes: a multiple of kHugePageBytes
void FreeScratch(void* p, size_t bytes);
// Returns every cached block to the system; returns the bytes released.
size_t ReleaseScratchMemory();
// Bytes of blocks taken from the allocator so far (not served by the
// cache). For benchmarks: an upper bound on what the passes fault in (the
// allocator may hand back memory the process freed earlier).
size_t ScratchFreshBytes();

template <typename T>
struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() = default;
  template <typename U>
  ScratchAllocator(const ScratchAllocator<U>&) {}  // NOLINT: rebinding
  static size_t Rounded(size_t bytes) { return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kScratchHugeFrom) return std::allocator<T>().allocate(n);
    return static_cast<T*>(AllocateScratch(Rounded(bytes)));
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kScratchHugeFrom) return std::allocator<T>().deallocate(p, n);
    FreeScratch(p, Rounded(n * sizeof(T)));
  }
  template <typename U>
  friend bool operator==(const ScratchAllocator&, const ScratchAllocator<U>&) {
    return true;
  }
};

template <typename T>
using ScratchVector = std::vector<T, ScratchAllocator<T>>;

// Returns a vector's storage now (to the scratch cache for a large
// ScratchVector). `v = {}` does not: it picks the initializer_list
// assignment, which only clears and keeps the capacity.
template <typename V>
void FreeStorage(V& v) {
  V().swap(v);
}

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_SCRATCH_VECTOR_H_
