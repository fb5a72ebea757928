// Loop-order events, added by stream-activation (SPEC T5) after it writes
// the activation lists: for each static loop whose cond/body tasks use more
// than one physical stream (plan/loop_order.h, LoopsToOrder), at each
// boundary between consecutive runs, an event from each stream's last task
// of the run before (per region) to each other stream's first task of the
// run after (per region):
//   * reason "loop-fork": run j to run j + 1 of the same iteration (cond →
//     body); a forward event like any other, which event-minimization drops
//     when other events already imply it;
//   * reason "loop-next": the last run to the first run of the next
//     iteration. It is recorded after its wait in execution order, so the
//     wait binds to the previous iteration's record (none in the first
//     iteration: no wait). Always an event, never a notify (a notify's k-th
//     wait would pair with its k-th record, one iteration off); never
//     dropped by the optimisation and never sharing its id (it is live for
//     the whole loop).
// GE orders its loops' runs by labels and stream activation instead
// (docs/events.md "Loop order"); these events are npuplan's, in every mode.
//
// Decision keyword: LoopOrderEvent loop= kind=fork|next from= to=
#ifndef NPUPLAN_EVENTS_LOOP_ORDER_EVENTS_H_
#define NPUPLAN_EVENTS_LOOP_ORDER_EVENTS_H_

#include <string_view>
#include <vector>

#include "npuplan/pass/pass.h"
#include "npuplan/plan/loop_order.h"

namespace npuplan::events {

// Adds the events of `loops` (LoopsToOrder over `view`, the physical view:
// after the split) to plan.events. A pair already in the table with the
// same reason is not added again. Returns whether the table changed.
bool AddLoopOrderEvents(std::string_view pass, Plan& plan, PassContext& ctx, const SyncView& view,
                        const std::vector<OrderedLoop>& loops);

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_LOOP_ORDER_EVENTS_H_
