#include "tools/malloc/allocator_info.h"

#ifdef NPUPLAN_WITH_JEMALLOC
#include <jemalloc/jemalloc.h>

#include <string_view>
#endif

namespace npuplan {

std::string AllocatorDescription() {
#ifdef NPUPLAN_WITH_JEMALLOC
  const char* version = nullptr;
  const char* thp = nullptr;
  size_t size = sizeof(const char*);
  if (mallctl("version", &version, &size, nullptr, 0) != 0 || version == nullptr) return "jemalloc (unknown)";
  size = sizeof(const char*);
  if (mallctl("opt.thp", &thp, &size, nullptr, 0) != 0 || thp == nullptr) thp = "unknown";
  std::string_view v(version);
  v = v.substr(0, v.find('-'));  // "5.3.0-0-g54eaed1…" → "5.3.0"
  return std::string("jemalloc ") + std::string(v) + " (thp:" + thp + ")";
#else
  return "system malloc";
#endif
}

}  // namespace npuplan
