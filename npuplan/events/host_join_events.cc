#include "npuplan/events/host_join_events.h"

#include <algorithm>
#include <map>
#include <set>

#include "npuplan/events/ge_order.h"
#include "npuplan/events/loop_gates.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/support/str_util.h"

namespace npuplan::events {
namespace {

// One-pass happens-before between two slots, asked a few times per loop:
// back from the later slot over stream order and the events into each
// slot, through slots ranked at or after the earlier one.
class Reachability {
 public:
  Reachability(const Plan& plan, const SyncView& view) : view_(view) {
    RecordSlots record_slot(plan, view);  // a dynamic-path owner records after its subgraphs
    const Model& m = plan.model;
    for (const SyncEvent& e : plan.events.events) {
      if (e.reason == SyncReason::kLoop || !e.send.valid() || !e.recv.valid() ||
          e.send.index() >= m.num_nodes() || e.recv.index() >= m.num_nodes() ||
          e.send_attached >= view.num_attached(e.send) ||
          e.recv_attached >= view.num_attached(e.recv)) {
        continue;
      }
      Add(record_slot.ForEvent(e), view.slot(e.recv, e.recv_attached));
    }
  }
  void Add(int32_t from, int32_t to) {
    if (view_.stream(from) >= 0 && view_.stream(to) >= 0) senders_[to].push_back(from);
  }
  bool Before(int32_t from, int32_t to) const {
    const int32_t lo = view_.rank(from);
    std::vector<int32_t> stack = {to};
    std::set<int32_t> seen = {to};
    auto push = [&](int32_t v) {
      if (view_.rank(v) >= lo && seen.insert(v).second) stack.push_back(v);
    };
    while (!stack.empty()) {
      const int32_t v = stack.back();
      stack.pop_back();
      if (view_.stream(v) == view_.stream(from)) return true;  // at or after `from` on its stream
      const auto slots = view_.stream_slots(view_.stream(v));
      auto at = std::lower_bound(slots.begin(), slots.end(), view_.rank(v),
                                 [&](int32_t s, int32_t r) { return view_.rank(s) < r; });
      if (at != slots.begin()) push(*std::prev(at));
      if (auto it = senders_.find(v); it != senders_.end()) {
        for (int32_t s : it->second) push(s);
      }
    }
    return false;
  }

 private:
  const SyncView& view_;
  std::map<int32_t, std::vector<int32_t>> senders_;  // receiving slot → sending slots
};

}  // namespace

bool AddHostJoinEvents(std::string_view pass, Plan& plan, PassContext& ctx, const SyncView& view,
                       const std::vector<OrderedLoop>& loops) {
  if (loops.empty()) return false;
  Reachability hb(plan, view);
  LoopGateNodes gates(plan);
  bool added = false;
  for (const OrderedLoop& loop : loops) {
    const int64_t hub = view.stream(view.slot(loop.owner, -1));
    for (const LoopRun& run : loop.runs) {
      // The owner stream's last slot, per region and in the whole run.
      std::map<int32_t, int32_t> hub_last;
      int32_t run_last = -1;
      for (const LoopRegionEnds& e : run.ends) {
        if (e.stream != hub) continue;
        hub_last[e.region] = e.last;
        if (run_last < 0 || view.rank(e.last) > view.rank(run_last)) run_last = e.last;
      }
      for (const LoopRegionEnds& e : run.ends) {
        if (e.stream == hub) continue;
        int32_t to = run_last;
        if (auto it = hub_last.find(e.region);
            it != hub_last.end() && view.rank(it->second) > view.rank(e.last)) {
          to = it->second;
        }
        const bool after = to >= 0 && view.rank(to) > view.rank(e.last);
        if (after && hb.Before(e.last, to)) continue;
        SyncEvent ev;
        ev.kind = SyncKind::kEvent;
        ev.send = view.node_of(e.last);
        ev.send_attached = view.attached_of(e.last);
        if (after) {
          ev.recv = view.node_of(to);
          ev.recv_attached = view.attached_of(to);
          hb.Add(e.last, to);
        } else {
          // Nothing on the owner's stream follows it in the run (a task
          // the topological order put after the NetOutput): a tail gate
          // there ends the run.
          ev.recv = gates.For(loop.owner, LoopGateSide::kTail, loop.owner, run.graph);
        }
        ev.reason = SyncReason::kLoopJoin;
        ev.id = static_cast<int32_t>(NextId(plan.events, ev.kind));
        plan.events.events.push_back(ev);
        added = true;
        const Model& m = plan.model;
        ctx.log.Record(pass, "HostJoinEvent", "", Field("loop", m.node(loop.owner).name),
                       Field("from", m.node(ev.send).name), Field("to", m.node(ev.recv).name));
      }
    }
  }
  gates.Place();
  if (added) RecountIds(plan.events);
  return added;
}

}  // namespace npuplan::events
