// Q2: cache allocation with spill on a fixed order of the original nodes.
//
// Both allocators walk the order, place every buffer at its ALLOC, and when a
// cache is full insert SPILL_OUT (before the node that needs the space) and
// SPILL_IN (just before the spilled buffer's next user, or before its FREE).
// L0 buffers are never spilled. The result is a KernelSolution whose spill
// records are in SPILL_OUT order, so record k owns nodes N+2k and N+2k+1.
//
// AllocateSeed: the seed design (seeds/cache-allocation-spill.zh.txt): best-fit
// over a free list, merging adjacent free blocks only when an allocation fails;
// on failure spill the live non-L0 buffer of the same cache with the largest
// remaining life x size, repeat; else postpone the ALLOC (at most 5 times);
// else fail. Readings of its unclear points are in docs/kernel.md.
//
// AllocateBest: cost-aware farthest-next-use eviction. The space for a buffer
// is the window [a, a+Size) whose live occupants have the smallest total
// sum(traffic(b) / distance-to-next-use(b)) (Belady for equal sizes; a
// COPY_IN-backed buffer costs half). Placement in free space is best-fit, or
// (Placement::kOldestFree) the fitting window whose addresses were released
// longest ago, which removes address-reuse waits in the makespan.
//
// Decision keywords (docs/kernel.md), pass names `seed-allocator` and
// `best-allocator`:
//   BufferSpilled  buf, cache, size, traffic, before_node (the node needing space)
//   BufferReloaded buf, cache, offset, before_node (its next user, or its FREE)
//   AllocPostponed buf, node, after_node (seed only: the FREE it now follows)
#ifndef NPUPLAN_KERNEL_ALLOCATOR_H_
#define NPUPLAN_KERNEL_ALLOCATOR_H_

#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/solution.h"
#include "npuplan/pass/decision_log.h"

namespace npuplan::kernel {

struct SeedOptions {
  int max_postpone = 5;  // times one ALLOC may be moved later before giving up
  DecisionLog* log = nullptr;  // BufferSpilled / BufferReloaded / AllocPostponed
};

absl::StatusOr<KernelSolution> AllocateSeed(const KernelGraph& g, const std::vector<int>& order,
                                            const CacheConfig& config,
                                            const SeedOptions& options = {});

enum class Placement {
  kBestFit,     // smallest hole that fits, lowest offset on ties
  kOldestFree,  // window released longest ago (fewer address-reuse waits)
};

struct BestOptions {
  Placement placement = Placement::kBestFit;
  DecisionLog* log = nullptr;  // BufferSpilled / BufferReloaded
};

absl::StatusOr<KernelSolution> AllocateBest(const KernelGraph& g, const std::vector<int>& order,
                                            const CacheConfig& config,
                                            const BestOptions& options = {});

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_ALLOCATOR_H_
