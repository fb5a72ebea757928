// SplitMix64: a fast, well-mixed 64-bit hash for deterministic pseudo-random
// draws from (seed, key) — the CPU back end's jitter, drawn branches.
#ifndef NPUPLAN_SUPPORT_SPLIT_MIX_H_
#define NPUPLAN_SUPPORT_SPLIT_MIX_H_

#include <cstdint>

namespace npuplan {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_SPLIT_MIX_H_
