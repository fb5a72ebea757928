#include "npuplan/support/big_vector.h"

#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define NPUPLAN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPUPLAN_ASAN 1
#endif
#endif
#if defined(NPUPLAN_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

namespace npuplan {
namespace {

struct Block {
  char* p;
  size_t bytes;    // a multiple of kHugePageBytes
  uint64_t freed;  // when it was cached (older blocks are dropped first)
};

struct BlockCache {
  std::mutex mu;
  std::vector<Block> free_blocks;  // no two adjacent: neighbours are merged
  size_t cached_bytes = 0;
  uint64_t clock = 0;
};

std::atomic<size_t> fresh_bytes{0};

BlockCache& Cache() {
  static BlockCache* cache = new BlockCache();  // never destroyed: usable from static destructors
  return *cache;
}

// Blocks are mappings of their own, not heap blocks, so any 2 MiB-aligned
// part of one can be handed out or returned to the system on its own: the
// cache splits a large block for a smaller request and merges neighbours when
// they come back. `bytes`: a multiple of kHugePageBytes.
char* MapBlock(size_t bytes) {
  const size_t span = bytes + kHugePageBytes;  // room to align the start
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t tail = aligned + bytes;
  if (start + span > tail) munmap(reinterpret_cast<void*>(tail), start + span - tail);
  char* p = reinterpret_cast<char*>(aligned);
#if defined(MADV_HUGEPAGE)
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}
// AddressSanitizer does not see into mappings either: a cached block is
// poisoned, so a read or write through a pointer into freed storage is
// reported (use-after-poison), and unpoisoned when it is handed out or goes
// back to the system (the addresses may be mapped again for anything).
void Poison([[maybe_unused]] const char* p, [[maybe_unused]] size_t bytes) {
#if defined(NPUPLAN_ASAN)
  ASAN_POISON_MEMORY_REGION(p, bytes);
#endif
}
void Unpoison([[maybe_unused]] const char* p, [[maybe_unused]] size_t bytes) {
#if defined(NPUPLAN_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#endif
}

void UnmapBlock(const Block& b) {
  Unpoison(b.p, b.bytes);
  munmap(b.p, b.bytes);
}

// LeakSanitizer scans the heap, not mappings: what a live block points to
// (the node table's strings and vectors) would look leaked at exit, where
// the CLI leaves its result to the OS (KeepUntilExit). A handed-out block is
// a root region until it is freed. (A block is handed out at exactly the
// size asked for, so the size its owner frees it with is the one registered.)
void HandOut(char* p, size_t bytes) {
  Unpoison(p, bytes);
#if defined(NPUPLAN_ASAN)
  __lsan_register_root_region(p, bytes);
#endif
}
void TakeBack(char* p, size_t bytes) {
#if defined(NPUPLAN_ASAN)
  __lsan_unregister_root_region(p, bytes);
#endif
  Poison(p, bytes);
}

// Caches `b`, merged with the cached blocks that touch it; returns what is
// dropped to stay within kHugeCacheBytes, to unmap outside the lock. Called
// with the lock held.
std::vector<Block> CacheBlock(BlockCache& c, Block b) {
  for (size_t i = 0; i < c.free_blocks.size();) {
    const Block& n = c.free_blocks[i];
    if (n.p + n.bytes == b.p || b.p + b.bytes == n.p) {
      b = {std::min(b.p, n.p), b.bytes + n.bytes, b.freed};
      c.cached_bytes -= n.bytes;
      c.free_blocks.erase(c.free_blocks.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  c.free_blocks.push_back(b);
  c.cached_bytes += b.bytes;
  // Over the cap: the oldest blocks go, only as much of the last one as needed
  // (a merged block may be most of the cache).
  std::vector<Block> drop;
  while (c.cached_bytes > kHugeCacheBytes && !c.free_blocks.empty()) {
    auto oldest =
        std::min_element(c.free_blocks.begin(), c.free_blocks.end(),
                         [](const Block& x, const Block& y) { return x.freed < y.freed; });
    const size_t excess = c.cached_bytes - kHugeCacheBytes;  // whole huge pages
    if (oldest->bytes > excess) {
      oldest->bytes -= excess;
      drop.push_back({oldest->p + oldest->bytes, excess, 0});
      c.cached_bytes -= excess;
    } else {
      drop.push_back(*oldest);
      c.cached_bytes -= oldest->bytes;
      c.free_blocks.erase(oldest);
    }
  }
  return drop;
}

}  // namespace

void* AllocateHugeBlock(size_t bytes) {
  BlockCache& c = Cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    // The smallest cached block that fits; its front part when it is larger.
    size_t best = c.free_blocks.size();
    for (size_t i = 0; i < c.free_blocks.size(); ++i) {
      const Block& b = c.free_blocks[i];
      if (b.bytes >= bytes &&
          (best == c.free_blocks.size() || b.bytes < c.free_blocks[best].bytes)) {
        best = i;
      }
    }
    if (best < c.free_blocks.size()) {
      Block& b = c.free_blocks[best];
      char* p = b.p;
      if (b.bytes == bytes) {
        c.free_blocks.erase(c.free_blocks.begin() + static_cast<std::ptrdiff_t>(best));
      } else {
        b.p += bytes;
        b.bytes -= bytes;
      }
      c.cached_bytes -= bytes;
      HandOut(p, bytes);
      return p;
    }
  }
  char* p = MapBlock(bytes);
  fresh_bytes.fetch_add(bytes, std::memory_order_relaxed);
  HandOut(p, bytes);
  return p;
}

void FreeHugeBlock(void* p, size_t bytes) {
  BlockCache& c = Cache();
  std::vector<Block> drop;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    TakeBack(static_cast<char*>(p), bytes);
    drop = CacheBlock(c, {static_cast<char*>(p), bytes, ++c.clock});
  }
  for (const Block& b : drop) UnmapBlock(b);
}

size_t PrefaultHugePages(size_t bytes, const std::atomic<bool>& stop) {
  constexpr size_t kChunk = size_t{16} << 20;  // cached as soon as it is faulted in
  BlockCache& c = Cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    bytes = std::min(bytes, kHugeCacheBytes - std::min(kHugeCacheBytes, c.cached_bytes));
  }
  bytes &= ~(kHugePageBytes - 1);
  if (bytes == 0) return 0;
  char* const p = MapBlock(bytes);
  size_t done = 0;
  while (done < bytes && !stop.load(std::memory_order_relaxed)) {
    const size_t chunk = std::min(kChunk, bytes - done);
    for (size_t off = 0; off < chunk; off += 4096) p[done + off] = 0;
    Poison(p + done, chunk);
    std::vector<Block> drop;
    {
      std::lock_guard<std::mutex> lock(c.mu);
      drop = CacheBlock(c, {p + done, chunk, ++c.clock});
    }
    for (const Block& b : drop) UnmapBlock(b);
    done += chunk;
  }
  if (done < bytes) munmap(p + done, bytes - done);  // stopped: the rest was never touched
  fresh_bytes.fetch_add(done, std::memory_order_relaxed);
  return done;
}

size_t HugePageFreshBytes() { return fresh_bytes.load(std::memory_order_relaxed); }

size_t ReleaseCachedHugePages() {
  BlockCache& c = Cache();
  std::vector<Block> blocks;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    blocks.swap(c.free_blocks);
    c.cached_bytes = 0;
  }
  size_t released = 0;
  for (const Block& b : blocks) {
    released += b.bytes;
    UnmapBlock(b);
  }
  return released;
}

}  // namespace npuplan
