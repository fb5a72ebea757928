// BigVector<T>: a std::vector whose allocations of 2 MiB and more are 2 MiB
// aligned and advised for transparent huge pages (madvise, the mode this
// machine's kernel runs in), so a fresh million-element array is faulted in
// 2 MiB at a time instead of 4 KiB at a time. Page faults were the largest
// single cost of the partition and the engine partition on 1M-node graphs
// (a first-touch fault is expensive on a virtual machine; measurements:
// docs/benchmarks.md, "Heap allocator"). Smaller allocations are plain
// operator new.
#ifndef NPUPLAN_IR_BIG_VECTOR_H_
#define NPUPLAN_IR_BIG_VECTOR_H_

#include <cstddef>
#include <vector>

#include "npuplan/ir/chunk_memory.h"

namespace npuplan {

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(size_t n) { return static_cast<T*>(internal::AllocateChunk(n * sizeof(T), alignof(T))); }
  void deallocate(T* p, size_t n) { internal::FreeChunk(p, n * sizeof(T), alignof(T)); }
  template <typename U>
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator<U>&) {
    return true;
  }
};

template <typename T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace npuplan

#endif  // NPUPLAN_IR_BIG_VECTOR_H_
