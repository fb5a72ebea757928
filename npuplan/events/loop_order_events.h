// Loop-order events, added by stream-activation (SPEC T5) after it writes
// the activation lists: for each static loop whose cond/body tasks use more
// than one physical stream (plan/loop_order.h, LoopsToOrder), at each
// boundary between consecutive runs, an event from each stream's last task
// of the run before (per region) to each other stream's first task of the
// run after (per region):
//   * reason "loop-fork": run j to run j + 1 of the same iteration (cond →
//     body); a forward event like any other, which event-minimization drops
//     when other events already imply it;
//   * reason "loop-next": into the next iteration, a barrier at the end of
//     the last run: each stream's last task (per region) → the tail gate of
//     the hub stream → the tail gate of each other stream with a task in the
//     first run (LoopGate nodes, `loop_gate` = "tail", at the end of the
//     last run's graph; plan/loop_order.h). Forward events recorded and
//     waited once per iteration, so no wait of one iteration can miss its
//     record or see the next one's; the optimisations treat them like any
//     other. A stream with only attached slots cannot hold a gate: its first
//     slot (per region) waits for an event from the earliest first main
//     slot of a gated stream before it in the same region, which runs after
//     that stream's tail gate.
// GE orders its loops' runs by labels and stream activation instead
// (docs/events.md "Loop order"); these events are npuplan's, in every mode.
//
// Decision keyword: LoopOrderEvent loop= kind=fork|next from= to=
// (a tail gate is named <loop>_LoopTail_<stream>, a head gate <loop>_LoopHead_<stream>)
#ifndef NPUPLAN_EVENTS_LOOP_ORDER_EVENTS_H_
#define NPUPLAN_EVENTS_LOOP_ORDER_EVENTS_H_

#include <string_view>
#include <vector>

#include "npuplan/pass/pass.h"
#include "npuplan/plan/loop_order.h"

namespace npuplan::events {

// Adds the events of `loops` (LoopsToOrder over `view`, the physical view:
// after the split) to plan.events, and the tail gates they need (topo ids
// renumbered). Nothing when the table already holds loop-order events (a
// plan compiled again). Returns whether the plan changed.
bool AddLoopOrderEvents(std::string_view pass, Plan& plan, PassContext& ctx, const SyncView& view,
                        const std::vector<OrderedLoop>& loops);

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_LOOP_ORDER_EVENTS_H_
