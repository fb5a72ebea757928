// event-minimization (issue 22 item 4): with npuplan.eventOptimization=exact
// (the default), makes the final event table the fewest events for the final
// plan. sync-event-optimization reduces the events on the logical streams,
// before physical-stream-split adds one `split` event per new physical stream;
// afterwards a split event can be implied by other events (pre ─e1▶ x ─e2▶
// open orders pre before open without the split event), and an event can be
// implied through a split event or a later activation edge. This pass keeps
// exactly the event edges of the transitive reduction of
//   H = physical-stream order ∪ activation edges ∪ events (split ones included)
// on the final streams — the unique minimum for the plan's dependencies ∪
// logical-stream order (docs/events.md, "Minimality after the split") — and
// records its size as `event_counts.minimum`.
//
//   s0:  pre │ open ─▶ …      (open opens physical stream 2 of logical 0)
//        └─e1─▶ x ─e2─┘ s1   the split event pre → open goes: pre → x → open
//
// One sweep in execution order with vector clocks over the *logical* streams
// (all events present, the logical order is inside H's closure, so a clock
// entry "last logical position known to precede" is exact): O(k·(n+e)) for k
// logical streams. Ids are compacted per kind in their order (shared ids stay
// shared). ge and none modes: nothing happens (no count written either: ge
// plans stay GE's byte for byte).
//
// Requires: sync-events, physical-streams, active-streams. Provides: sync-events.
// Decision keywords: EventRemoved event= from= to= reason=after-split
//                    EventMinimum events= minimum= removed= split_removed=
#ifndef NPUPLAN_EVENTS_EVENT_MINIMIZATION_H_
#define NPUPLAN_EVENTS_EVENT_MINIMIZATION_H_

#include <vector>

#include "npuplan/pass/pass.h"

namespace npuplan {

class EventMinimization final : public Pass {
 public:
  std::string_view name() const override { return "event-minimization"; }
  IrProperties required() const override {
    return IrProperty::kSyncEvents | IrProperty::kPhysicalStreams | IrProperty::kActiveStreams;
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

namespace events {
// Per event of plan.events.events: true when it is implied by the other
// events, physical-stream order and activation (it leaves the minimum).
// Empty when the plan is outside the model (a slot on a physical stream
// without a logical one: StreamSwitch label StreamActives).
std::vector<bool> RedundantAfterSplit(const Plan& plan);
}  // namespace events

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_EVENT_MINIMIZATION_H_
