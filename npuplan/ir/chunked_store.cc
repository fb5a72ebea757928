#include "npuplan/ir/chunked_store.h"

#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace npuplan::internal {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kAdviseFrom = kHugePage;

size_t Alignment(size_t bytes, size_t align) { return bytes >= kAdviseFrom && align < kHugePage ? kHugePage : align; }

}  // namespace

void* AllocateChunk(size_t bytes, size_t align) {
  align = Alignment(bytes, align);
  // Whole huge pages: a 1M-element int32 array is 4,000,000 bytes, and the
  // part of its size that is not a multiple of 2 MiB used to fault in 4 KiB
  // at a time — hundreds of faults per array, many such arrays in the
  // partition's cluster setup. The rounding wastes < 2 MiB per array.
  if (bytes >= kAdviseFrom) bytes = (bytes + kHugePage - 1) & ~(kHugePage - 1);
  void* p = ::operator new(bytes, std::align_val_t{align});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kAdviseFrom) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

void FreeChunk(void* p, size_t bytes, size_t align) { ::operator delete(p, std::align_val_t{Alignment(bytes, align)}); }

}  // namespace npuplan::internal
