#include "npuplan/support/big_vector.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace npuplan {
namespace {

struct Block {
  void* p;
  size_t bytes;    // capacity of the block
  uint64_t freed;  // when it was cached (older blocks are dropped first)
};

struct BlockCache {
  std::mutex mu;
  std::vector<Block> free_blocks;
  std::unordered_map<void*, size_t> live;  // handed out → capacity
  size_t cached_bytes = 0;
  uint64_t clock = 0;
};

std::atomic<size_t> fresh_bytes{0};

BlockCache& Cache() {
  static BlockCache* cache = new BlockCache();  // never destroyed: usable from static destructors
  return *cache;
}

// bytes: a multiple of kHugePageBytes.
void* NewBlock(size_t bytes) {
  void* p = ::operator new (bytes, std::align_val_t{kHugePageBytes});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}
void DeleteBlock(const Block& b) { ::operator delete (b.p, std::align_val_t{kHugePageBytes}); }

}  // namespace

void* AllocateHugeBlock(size_t bytes) {
  BlockCache& c = Cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    // Smallest cached block that fits, but not one more than twice the
    // request (that one is kept for a larger array).
    size_t best = c.free_blocks.size();
    for (size_t i = 0; i < c.free_blocks.size(); ++i) {
      const Block& b = c.free_blocks[i];
      if (b.bytes >= bytes && b.bytes <= 2 * bytes + kHugePageBytes &&
          (best == c.free_blocks.size() || b.bytes < c.free_blocks[best].bytes)) {
        best = i;
      }
    }
    if (best < c.free_blocks.size()) {
      const Block b = c.free_blocks[best];
      c.free_blocks.erase(c.free_blocks.begin() + static_cast<std::ptrdiff_t>(best));
      c.cached_bytes -= b.bytes;
      c.live.emplace(b.p, b.bytes);
      return b.p;
    }
  }
  void* p = NewBlock(bytes);
  fresh_bytes.fetch_add(bytes, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(c.mu);
  c.live.emplace(p, bytes);
  return p;
}

void FreeHugeBlock(void* p, size_t bytes) {
  BlockCache& c = Cache();
  std::vector<Block> drop;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.live.find(p); it != c.live.end()) {
      bytes = it->second;
      c.live.erase(it);
    }
    c.free_blocks.push_back({p, bytes, ++c.clock});
    c.cached_bytes += bytes;
    // Over the cap: drop the oldest blocks.
    while (c.cached_bytes > kHugeCacheBytes && !c.free_blocks.empty()) {
      auto oldest =
          std::min_element(c.free_blocks.begin(), c.free_blocks.end(),
                           [](const Block& a, const Block& b) { return a.freed < b.freed; });
      drop.push_back(*oldest);
      c.cached_bytes -= oldest->bytes;
      c.free_blocks.erase(oldest);
    }
  }
  for (const Block& b : drop) DeleteBlock(b);
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
    DeleteBlock(b);
  }
  return released;
}

}  // namespace npuplan
