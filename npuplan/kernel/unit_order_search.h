// Q3: local search over the unit order for makespan (pass name
// `unit-order-search`).
//
// What it does: a unit order (scheduler.h: the operations that share an L0
// buffer, e.g. one output tile's MOVEs, MATMULs and COPY_OUT) decides when
// each shared buffer is first needed, hence the order in which the loads can
// feed the compute pipes. The search starts from a unit order, and at each
// step moves one block of 1-4 units to another position or swaps two units
// (positions drawn from a std::mt19937 seeded with `seed`), then evaluates
// the order as the planner builds plans: demand-driven expansion,
// AllocateBest with oldest-free placement, then ReorderForMakespan (the
// allocator's own order when that is shorter). A move is kept when its key
// (traffic above `max_extra_movement`, makespan, traffic) is not larger than
// the current one: a start above the cap descends towards it, and plateaus
// are walked. Only plans within the cap are returned. The search stops after
// `max_steps` evaluations, or after `patience` steps in a row that did not
// lower the key: a deterministic budget, never a clock.
//
// Requires: a valid graph, a unit partition of it and a permutation of its
// units. Provides: the best plan found (the start order's plan when nothing
// beats it) with its traffic and makespan, as the list scheduler computes
// them; the planner verifies it with the evaluator. NotFound when no
// evaluated order gives a plan within `max_extra_movement`.
// Decision keywords (docs/kernel.md; logged by the planner for the plans it
// builds from the result): UnitOrderSearched (candidate, start_makespan,
// makespan, steps, accepted).
#ifndef NPUPLAN_KERNEL_UNIT_ORDER_SEARCH_H_
#define NPUPLAN_KERNEL_UNIT_ORDER_SEARCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/scheduler.h"
#include "npuplan/kernel/solution.h"

namespace npuplan::kernel {

struct UnitSearchOptions {
  int64_t max_steps = 100;         // evaluated moves (the start order is evaluated too)
  uint32_t seed = 1;               // of the move generator
  int64_t max_extra_movement = 0;  // plans moving more data are rejected
  int64_t patience = 300;          // stop after this many steps without a lower key (0: never)
};

struct UnitSearchResult {
  KernelSolution solution;
  std::vector<int> unit_order;
  int64_t extra_movement = 0;
  int64_t makespan = 0;
  int64_t start_makespan = -1;  // of the start order's plan (-1: it was rejected)
  int64_t accepted = 0;         // moves kept
  int64_t steps = 0;            // moves evaluated
};

// The units of `p` in the order their first operation appears in `ops`
// (units without an operation in `ops` follow, by index).
std::vector<int> UnitOrderOf(const UnitPartition& p, const std::vector<int>& ops);

absl::StatusOr<UnitSearchResult> SearchUnitOrder(const KernelGraph& g, const CacheConfig& config,
                                                 const UnitPartition& p,
                                                 const std::vector<int>& start_order,
                                                 const UnitSearchOptions& options);

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_UNIT_ORDER_SEARCH_H_
