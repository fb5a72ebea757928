// sync-event-optimization (SPEC E2): removes events whose ordering is already
// implied. Option npuplan.eventOptimization:
//   exact (default) — keeps exactly the cross-stream edges of the transitive
//       reduction of (events ∪ same-stream order ∪ activation edges): an
//       event u→v is dropped when v's vector clock without it already covers
//       u. One sweep in execution order, O(k·(n+e)) for k streams; provably
//       the fewest events that add no ordering beyond the program's, hence
//       never more than `ge` (docs/events.md).
//   ge — GE's OptimizeSyncEvents exactly: OptimizeBySendEvents (first waiter
//       per (sender node, receiving stream)), OptimizeByRecvEvents (last
//       sender per (sending stream, receiver node)), OptimizeByStreamActivate,
//       then every event sent by a StreamSwitch. Attached-stream events are
//       left alone, as in GE.
//   none — keeps every inserted event.
// Both ge and exact drop StreamSwitch sends (the switch activates its targets).
// Records plan.events.counts naive / ge / exact and renumbers ids GE's way.
//
//   s0: a ──e1──▶ c          exact: e1 is dropped, a → b → c already orders it
//   s1:  └─e2─▶ b ─e3─┘      (a→b via e2, b→c via e3).
//
// Requires: sync-events. Provides: sync-events.
// Decision keywords: EventRemoved event= from= to= reason=
//   (transitive | ge-send-rule | ge-recv-rule | ge-activation | stream-switch)
//                    EventCounts naive= ge= exact= mode=
#ifndef NPUPLAN_EVENTS_SYNC_EVENT_OPTIMIZATION_H_
#define NPUPLAN_EVENTS_SYNC_EVENT_OPTIMIZATION_H_

#include <vector>

#include "npuplan/events/sync_view.h"
#include "npuplan/pass/pass.h"

namespace npuplan {

class SyncEventOptimization final : public Pass {
 public:
  std::string_view name() const override { return "sync-event-optimization"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kSyncEvents); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kSyncEvents); }
  bool preserves_structure() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

namespace events {
// Why an event goes; kKeep for events that stay.
enum class Removal : uint8_t { kKeep, kTransitive, kGeSend, kGeRecv, kGeActivation, kStreamSwitch };
std::string_view RemovalName(Removal r);

// Per event of plan.events.events: kept or why removed.
ScratchVector<Removal> ExactReduction(const Plan& plan, const SyncView& view, const ActivationInfo& act);
ScratchVector<Removal> GeReduction(const Plan& plan, const SyncView& view, const ActivationInfo& act);
}  // namespace events

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_SYNC_EVENT_OPTIMIZATION_H_
