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
  PlanAccess access() const override {
    return {kAllPlanParts & ~PlanPart::kMemory, PlanPart::kEvents};
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

namespace events {
// Why an event goes; kKeep for events that stay.
enum class Removal : uint8_t { kKeep, kTransitive, kGeSend, kGeRecv, kGeActivation, kStreamSwitch };
std::string_view RemovalName(Removal r);

// Whether a StreamSwitch sends e (the switch activates its targets). From the
// view's per-node flags, not a (random, ~250-byte) Node read per event: on a
// 1M-node graph that read dominated the ge reduction.
inline bool SentBySwitch(const SyncView& view, const SyncEvent& e) {
  return e.send_attached < 0 && view.has_flag(e.send, SyncView::kStreamSwitch);
}

// What both reductions read, built once per optimisation: the events the
// exact sweep decides (both ends on a stream, sender first in execution
// order, not sent by a StreamSwitch) and the activation edges, grouped by
// receiving slot (CSR, table order within a slot), and per slot its stream
// and position. The ge rules use them instead of building two CSRs of the
// events (tens of MB on a 1M-node graph, a large share of the optimisation)
// when every main-stream event is in them, the table is in id order and each
// sender's main-stream events are one run of it (`ge_ready`: true after
// insertion in event mode).
struct ReceiverIndex {
  struct SlotInfo {  // one 16-byte entry per slot: one cache line per random lookup
    int32_t stream;
    int32_t pos;
    int32_t handle;  // the exact sweep's clock in its pool, -1 = none (yet / any more)
    int32_t refs;    // the exact sweep's readers of that clock still to come
  };
  BigVector<uint32_t> begin;                     // per slot + 1
  BigVector<std::pair<int32_t, int32_t>> preds;  // (sender slot, event index; -1 = activation edge)
  BigVector<SlotInfo> info;
  size_t switch_sent = 0;  // events sent by a StreamSwitch (not in preds)
  bool ge_ready = false;
  std::vector<bool> activated;  // by stream: some node's activation list names it
};
ReceiverIndex BuildReceiverIndex(const Plan& plan, const SyncView& view, const ActivationInfo& act);

// Per event of plan.events.events: kept or why removed. With an index (from
// BuildReceiverIndex on the same plan and view, which holds the activation
// edges), the exact sweep consumes it and the ge rules only read it.
BigVector<Removal> ExactReduction(const Plan& plan, const SyncView& view,
                                  const ActivationInfo& act);
BigVector<Removal> ExactReduction(const Plan& plan, const SyncView& view, ReceiverIndex& index);
BigVector<Removal> GeReduction(const Plan& plan, const SyncView& view, const ActivationInfo& act);
BigVector<Removal> GeReduction(const Plan& plan, const SyncView& view, const ActivationInfo& act,
                               const ReceiverIndex* index);
}  // namespace events

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_SYNC_EVENT_OPTIMIZATION_H_
