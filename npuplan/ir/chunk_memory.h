// Raw storage for large node-sized arrays (ChunkedStore, BigVector):
// allocations of 2 MiB and more are 2 MiB-aligned and advised for transparent
// huge pages, so they fault in 2 MiB at a time instead of 4 KiB. Defined in
// chunked_store.cc.
#ifndef NPUPLAN_IR_CHUNK_MEMORY_H_
#define NPUPLAN_IR_CHUNK_MEMORY_H_

#include <cstddef>

namespace npuplan::internal {
void* AllocateChunk(size_t bytes, size_t align);
void FreeChunk(void* p, size_t bytes, size_t align);
}  // namespace npuplan::internal

#endif  // NPUPLAN_IR_CHUNK_MEMORY_H_
