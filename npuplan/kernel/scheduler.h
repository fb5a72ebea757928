// Schedules (topological orders of the original nodes) for kernel graphs.
//
// MinResidencySchedule (Q1): a list scheduler that, at each step, runs the ready
// operation with the smallest net growth of L1+UB bytes (ALLOCs it pulls in minus
// FREEs it enables), preferring the chain it is working on, then the smaller Id.
// ALLOCs are issued lazily (just before their first user), FREEs eagerly (as
// soon as their last user ran). An operation whose L0 ALLOC would make two
// buffers live in one L0 cache waits. Complexity O(N * R) where R is the
// largest number of ready operations (O(N^2) worst case, near-linear on the
// contest graphs).
//
// Units: operations that share an L0 buffer form one unit (a tile's MOVE,
// MATMUL and COPY_OUT chain). Unit orders are what the Q2 planner searches:
// the natural order (by smallest Id) and "band" orders for grid-shaped
// reuse (each unit reads one row group and one column group of shared
// buffers): w row groups stay resident while the column groups stream by in
// zig-zag order (the statement's Appendix F hint), for every w.
#ifndef NPUPLAN_KERNEL_SCHEDULER_H_
#define NPUPLAN_KERNEL_SCHEDULER_H_

#include <vector>

#include "npuplan/kernel/kernel_graph.h"

namespace npuplan::kernel {

struct Q1Result {
  std::vector<int> order;
  bool l0_rule_relaxed = false;  // true if no order honouring the L0 rule was found greedily
};

Q1Result MinResidencySchedule(const KernelGraph& g, const CacheConfig& config);

// Peak residency of an order: combined and per-level max V_stay over the
// vstay levels, and whether every L0 cache holds at most one live buffer.
struct ResidencyProfile {
  int64_t combined_peak = 0;
  int64_t worst_level_peak = 0;
  bool l0_single = true;
};
ResidencyProfile ProfileOrder(const KernelGraph& g, const CacheConfig& config,
                              const std::vector<int>& order);

// Q1 answer: the order with the smallest peak (L0 rule kept first) among the
// greedy MinResidencySchedule (graphs up to 12000 nodes) and the demand-driven
// expansions of every candidate unit order.
Q1Result BestQ1Schedule(const KernelGraph& g, const CacheConfig& config, int max_band_width);

// Emits a full topological order that runs `targets` in the given sequence,
// pulling each target's unscheduled predecessors first (smallest Id first) and
// issuing every FREE as soon as it is ready. Nodes not reached are appended
// in the same way, by Id.
std::vector<int> DemandDrivenOrder(const KernelGraph& g, const std::vector<int>& targets);

struct UnitPartition {
  std::vector<int> unit_of;               // op node -> unit, -1 for ALLOC/FREE and pulled sources
  std::vector<std::vector<int>> units;    // ops of each unit, ascending Id; units by smallest Id
};
UnitPartition PartitionUnits(const KernelGraph& g, const CacheConfig& config);

// Candidate unit orders: natural first, then band orders (both orientations,
// widths 1..max_width) when the graph has grid-shaped reuse. Each entry is a
// permutation of unit indices, tagged with a name for reports.
struct UnitOrder {
  std::string name;
  std::vector<int> units;
};
std::vector<UnitOrder> CandidateUnitOrders(const KernelGraph& g, const UnitPartition& p,
                                           int max_width);

// Expands a unit order into targets (ops of each unit, ascending) for DemandDrivenOrder.
std::vector<int> TargetsFromUnits(const UnitPartition& p, const std::vector<int>& unit_order);

// Like TargetsFromUnits, but consecutive pairs of units run interleaved: chunk
// by chunk, a chunk ending at each use of the unit's most used L0 buffer (two
// accumulators live at once, so an input shared by both is used twice in a row).
std::vector<int> PairInterleavedTargets(const KernelGraph& g, const CacheConfig& config,
                                        const UnitPartition& p, const std::vector<int>& unit_order);

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_SCHEDULER_H_
