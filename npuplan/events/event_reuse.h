// event-reuse (SPEC E3–E5): final event/notify numbering.
//   1. GE's continuous order (RefreshContinuousEvents): by sender node name,
//      main-stream events first, attached-stream events after.
//   2. Multi-gear reuse (GE ReuseEventForMultiDims): for each Case with
//      `_batch_num`, the events with both ends inside one branch (nested
//      subgraphs included, depth ≤ 10) are numbered from a common base per
//      branch — only one gear runs — so the Case costs the max over branches
//      (4/5/3 → 5). Everything else is numbered after. Notifies likewise.
//   3. `_event_multiplexing` ("SendTo;<peer>;<id>" / "RecvFrom;<peer>;<id>")
//      maps the pair's event onto id + count when the event count exceeds
//      npuplan.eventReuseThreshold (GE kEventReuseThreshold = 65500); ids are
//      compacted again.
//   4. More than 1024 notifies is an error (GE kMaxNotifyNum).
// With npuplan.eventIdReuse=none steps 2 and 3 are skipped (one id per sync
// edge); with min, event-id-allocation replaces the ids after the split.
//
// Requires: sync-events. Provides: sync-events.
// Decision keywords: EventIdsReused case= branch= events= base=
//                    EventMultiplexed node= peer= id=
#ifndef NPUPLAN_EVENTS_EVENT_REUSE_H_
#define NPUPLAN_EVENTS_EVENT_REUSE_H_

#include "npuplan/pass/pass.h"

namespace npuplan {

class EventReuse final : public Pass {
 public:
  std::string_view name() const override { return "event-reuse"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kSyncEvents); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kSyncEvents); }
  bool preserves_structure() const override { return true; }
  PlanAccess access() const override {
    return {kAllPlanParts & ~PlanPart::kMemory, PlanPart::kEvents};
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_EVENT_REUSE_H_
