#include "npuplan/events/loop_order_events.h"

#include <set>
#include <tuple>

#include "npuplan/events/sync_view.h"
#include "npuplan/plan/loop_order.h"

namespace npuplan::events {

bool AddLoopOrderEvents(std::string_view pass, Plan& plan, PassContext& ctx, const SyncView& view,
                        const std::vector<OrderedLoop>& loops) {
  if (loops.empty()) return false;
  const Model& m = plan.model;
  using Key = std::tuple<int32_t, int32_t, int32_t, int32_t, SyncReason>;
  auto key = [](const SyncEvent& e) {
    return Key{e.send.value, e.send_attached, e.recv.value, e.recv_attached, e.reason};
  };
  std::set<Key> have;
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason == SyncReason::kLoopFork || e.reason == SyncReason::kLoopNext) have.insert(key(e));
  }
  bool changed = false;
  for (auto [e, loop] : LoopOrderEvents(loops, view)) {
    if (!have.insert(key(e)).second) continue;  // a plan compiled again
    e.id = static_cast<int32_t>(NextId(plan.events, e.kind));
    plan.events.events.push_back(e);
    changed = true;
    ctx.log.Record(pass, "LoopOrderEvent", "", Field("loop", m.node(loop).name),
                   Field("kind", e.reason == SyncReason::kLoopNext ? "next" : "fork"),
                   Field("from", m.node(e.send).name), Field("to", m.node(e.recv).name));
  }
  if (changed) RecountIds(plan.events);
  return changed;
}

}  // namespace npuplan::events
