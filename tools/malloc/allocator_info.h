// Which heap allocator this executable runs on, for `npuplan --version` and
// the benchmarks' context (tools/malloc/CMakeLists.txt).
#ifndef NPUPLAN_TOOLS_MALLOC_ALLOCATOR_INFO_H_
#define NPUPLAN_TOOLS_MALLOC_ALLOCATOR_INFO_H_

#include <string>

namespace npuplan {

// "jemalloc 5.3.0 (thp:always)" — version and transparent-huge-page mode as
// jemalloc itself reports them, so a binary whose configuration did not take
// effect says so — or "system malloc".
std::string AllocatorDescription();

}  // namespace npuplan

#endif  // NPUPLAN_TOOLS_MALLOC_ALLOCATOR_INFO_H_
