// Loop-join events, added by stream-activation after the loop-order events.
// On GE's dynamic path the host runs a loop (plan/loop_order.h,
// HostRunLoops): after each run it synchronizes the owner's stream alone,
// then enqueues the next run. A task of the run on another stream that
// nothing orders before the owner stream's end may still be running, or
// waiting, when the next run's tasks start: the next record of its event
// finds the last one unconsumed (a wait-reset device merges them and a wait
// blocks for ever), and the next run may overwrite what it reads. GE's
// dynamic path inserts events for edges only, so a task with no consumer
// there (a side-effect op, a collective whose output nobody reads) is such a
// task. For each run and region, each other stream's last task that does not
// already happen before (one pass) the region's last slot on the owner's
// stream — else the run's; when the topological order put it after all of
// them, a tail gate (LoopGate, `loop_gate` = "tail") at the end of the run
// on the owner's stream — sends it an event (reason "loop-join"). A
// deliberate difference from GE (docs/events.md "Loop order"); plans
// without such a task are unchanged.
//
// Decision keyword: HostJoinEvent loop= from= to=
#ifndef NPUPLAN_EVENTS_HOST_JOIN_EVENTS_H_
#define NPUPLAN_EVENTS_HOST_JOIN_EVENTS_H_

#include <string_view>
#include <vector>

#include "npuplan/pass/pass.h"
#include "npuplan/plan/loop_order.h"

namespace npuplan::events {

// Adds the loop-join events `loops` (HostRunLoops over `view`) need to
// plan.events. Returns whether the plan changed.
bool AddHostJoinEvents(std::string_view pass, Plan& plan, PassContext& ctx, const SyncView& view,
                       const std::vector<OrderedLoop>& loops);

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_HOST_JOIN_EVENTS_H_
