// Offset alignment shared by the memory planners.
#ifndef NPUPLAN_MEMORY_ALIGN_H_
#define NPUPLAN_MEMORY_ALIGN_H_

#include <cstdint>

namespace npuplan::memory {

// The smallest multiple of `a` that is >= v (v itself when a <= 1). Callers
// keep v + a within int64: offsets are bounded by the checked pool size.
inline int64_t AlignUp(int64_t v, int64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

}  // namespace npuplan::memory

#endif  // NPUPLAN_MEMORY_ALIGN_H_
