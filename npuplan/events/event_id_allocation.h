// event-id-allocation (issue 23): the device event / notify id each sync
// edge uses. A sync edge (an entry of the event table: record on one stream,
// wait on another) needs a device event object only from its record until
// its wait has consumed it, so edges whose lifetimes never overlap can share
// one object. npuplan.eventIdReuse:
//   none  one id per edge (GE's continuous order, no multi-gear sharing);
//   ge    the ids event-reuse gave (GE: multi-gear reuse only) — unchanged;
//   min   (default unless npuplan.eventOptimization=ge) the fewest ids under
//         the reuse order below.
//
// Reuse order (docs/events.md, "Device event ids"). Edge e1 may precede e2
// on one id, e1 ≺ e2, when in every execution the plan allows
//   (A) e1's wait has completed before e2's record: recv(e1) ⪯ the sender
//       slot of e2 and ⪯ the slot its Send runs after (events::SendSlots);
//   (B) e1's wait has completed before e2's wait starts: recv(e1) ⪯ the
//       slot before recv(e2) on its physical stream (none when recv(e2) is
//       the first: that wait is pending from the stream's start).
// ⪯ is happens-before through stream order, the plan's events and stream
// activation (vector clocks over the logical streams: the split keeps each
// logical stream's order). Why (B): a device event is one flag — a wait that
// is already pending when e1's record sets it could consume it. ≺ is a strict
// partial order (transitive: recv(e2) follows e2's record), so a set of edges
// may share an id iff it is a chain, and the fewest ids is a minimum chain
// cover (Dilworth): edges − a maximum matching of "e1 ≺ e2" pairs. Each
// edge's predecessors are a prefix per stream (receivers sorted by
// position), so the matching works on those prefixes, never on pairs:
// greedy first (the fast allocator), then augmenting phases to a maximum
// matching when the edges are at most npuplan.eventIdExactLimit and the
// phases' lists (an entry per edge and clock stream it follows: their
// memory) at most npuplan.eventIdExactEntries.
// Not shared (conservative, each its own id): edges with an end in a
// subgraph that may not run or may repeat (any owner but PartitionedCall),
// every edge of a plan with loop events or StreamSwitch/Enter nodes, loop
// events, and edges running backwards. Multi-gear edges (both ends in one
// branch of a `_batch_num` Case) keep event-reuse's shared per-Case ranges,
// compacted to the first ids. Chains are numbered by their first edge's
// previous id, so a plan where nothing can be shared keeps its ids.
// Lower bound: the largest set of pairwise-overlapping edges, where edge e
// spans [min(rank of its record points and of the slot before its receiver),
// rank of its receiver) in execution order — e1 ≺ e2 needs e1's end ≤ e2's
// start, so overlapping edges are pairwise incomparable.
//
// Budget: more ids than npuplan.maxEventIds / maxNotifyIds (default: the
// device limits) is ResourceExhausted naming the count, the bound and what
// would lower them.
//
// Requires: sync-events (and not sync-nodes: Send/Recv nodes carry the ids).
// Provides: sync-events. Writes event_counts.device_event_ids(_lower_bound,
// _exact) and the notify equivalents (min and none modes).
// Decision keywords: EventIdsAllocated kind= mode= edges= ids= lower_bound= exact= shared=
#ifndef NPUPLAN_EVENTS_EVENT_ID_ALLOCATION_H_
#define NPUPLAN_EVENTS_EVENT_ID_ALLOCATION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/pass/pass.h"
#include "npuplan/plan/plan.h"

namespace npuplan {

namespace events {

// Per kind (events, notifies).
struct IdAllocationStats {
  int64_t edges = 0;        // sync edges of the kind
  int64_t ids = 0;          // device ids the allocation uses
  int64_t lower_bound = 0;  // proved: pairwise-overlapping edges (+ multi-gear ids kept)
  bool exact = false;       // ids is the minimum chain cover (maximum matching reached)
  int64_t shared = 0;       // edges that reuse the id of an earlier edge
};
struct IdAllocation {
  std::vector<int32_t> id;  // per event-table entry
  IdAllocationStats events, notifies;
};
// When a context's chain cover is exact (else greedy).
struct ExactLimits {
  int64_t edges = 1'000'000;           // at most this many edges of a kind
  int64_t entries = int64_t{1} << 25;  // and lists of at most this many entries
};
// The `min` allocation of `plan`'s event table (the plan is not changed).
IdAllocation MinimumIdAllocation(const Plan& plan, ExactLimits limits);
// The lower bounds alone (the table's ids as they are): for `none`, and for
// reports on plans compiled without them.
IdAllocation IdLowerBounds(const Plan& plan);

}  // namespace events

class EventIdAllocation final : public Pass {
 public:
  std::string_view name() const override { return "event-id-allocation"; }
  IrProperties required() const override {
    return static_cast<IrProperties>(IrProperty::kSyncEvents);
  }
  IrProperties provided() const override {
    return static_cast<IrProperties>(IrProperty::kSyncEvents);
  }
  bool preserves_structure() const override { return true; }
  PlanAccess access() const override {
    return {kAllPlanParts & ~PlanPart::kMemory, PlanPart::kEvents};
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_EVENT_ID_ALLOCATION_H_
