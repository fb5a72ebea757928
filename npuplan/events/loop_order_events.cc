#include "npuplan/events/loop_order_events.h"

#include "npuplan/events/loop_gates.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/plan/loop_order.h"
#include "npuplan/support/str_util.h"

namespace npuplan::events {

bool AddLoopOrderEvents(std::string_view pass, Plan& plan, PassContext& ctx, const SyncView& view,
                        const std::vector<OrderedLoop>& loops) {
  // A plan compiled again already has them (and its tail gates).
  if (loops.empty() || HasLoopOrderEvents(plan)) return false;
  std::vector<LoopOrderEvent> events = LoopOrderEvents(loops, view);
  if (events.empty()) return false;
  LoopGateNodes gates(plan);
  for (auto& [e, loop, send_at_tail, recv_at_tail, tail_run, send_at_head, head_run] : events) {
    const NodeId from = e.send, to = e.recv;
    if (send_at_head) e.send = gates.For(loop, LoopGateSide::kHead, from, head_run);
    if (send_at_tail) e.send = gates.For(loop, LoopGateSide::kTail, from, tail_run);
    if (recv_at_tail) e.recv = gates.For(loop, LoopGateSide::kTail, to, tail_run);
    e.id = static_cast<int32_t>(NextId(plan.events, e.kind));
    plan.events.events.push_back(e);
    const Model& m = plan.model;
    ctx.log.Record(pass, "LoopOrderEvent", "", Field("loop", m.node(loop).name),
                   Field("kind", e.reason == SyncReason::kLoopNext ? "next" : "fork"),
                   Field("from", m.node(e.send).name), Field("to", m.node(e.recv).name));
  }
  gates.Place();
  RecountIds(plan.events);
  return true;
}

}  // namespace npuplan::events
