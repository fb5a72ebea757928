// verifier[physical-streams] (SPEC T2–T5): every node's physical stream maps
// back to its logical one, and no physical stream holds more tasks than its
// limit where the split should have opened a new one. The task count is
// recomputed here (sync_verifier.h says what is shared with the passes).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/plan/loop_order.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {
namespace {

absl::Status PhysicalStreamError(std::string_view what) {
  return absl::InternalError(StrCat("verifier[physical-streams]: ", what));
}

absl::Status CheckLogicalMapping(const Plan& plan) {
  const Model& m = plan.model;
  const StreamResult& sr = plan.streams;
  auto logical_of = [&](int64_t p) {
    auto it = sr.split_to_logical.find(p);
    return it == sr.split_to_logical.end() ? p : it->second;
  };
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (i + kNodePrefetch < m.num_nodes())
      __builtin_prefetch(&m.nodes()[i + kNodePrefetch].stream_id);
    const Node& n = m.nodes()[i];
    int64_t p = plan.physical_stream[i];
    if (n.stream_id >= 0 && (p < 0 || logical_of(p) != n.stream_id)) {
      return PhysicalStreamError(StrCat("node '", n.name, "' on logical stream ", n.stream_id,
                                        " has physical stream ", p, " which maps to logical ",
                                        logical_of(p)));
    }
    if (p >= sr.physical) {
      return PhysicalStreamError(StrCat("node '", n.name, "' uses physical stream ", p,
                                        " but the plan has ", sr.physical, " physical streams"));
    }
  }
  return absl::OkStatus();
}

// The split counted each event's Send/Recv tasks on the slot of the node
// that records / waits for it (GE: the event tasks are that node's
// TaskDefs), and Send/Recv nodes do not exist yet when it runs. So a
// materialised Send/Recv node is folded into its owner slot (a Send's
// control input, the node a Recv is a control input of, on the same
// physical stream) and is never itself a split point. A split event's
// Send/Recv tasks are covered by the 27 reserved (GE adds them after
// NeedSplitNewStream has counted), so they are not counted at all.
struct EventTasks {
  std::vector<int64_t> extra;  // per slot: its events' tasks (INT64_MAX: overflowed)
  std::vector<bool> folded;    // per slot: a Send/Recv node counted elsewhere
};

// A materialised plan: the Send/Recv nodes' tasks, folded into their owners.
void FoldSyncNodeTasks(const Plan& plan, const SyncView& view, const NodeTypes& types,
                       SendSlots& send_slot, EventTasks& et) {
  const Model& m = plan.model;
  std::set<std::tuple<int32_t, int64_t, bool>> split_send, split_recv;  // (owner, id, notify)
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason != SyncReason::kSplit) continue;
    split_send.insert({e.send.value, e.id, e.kind == SyncKind::kNotify});
    split_recv.insert({e.recv.value, e.id, e.kind == SyncKind::kNotify});
  }
  // Owner slot of a sync node: the slot of `owner` on the sync node's
  // physical stream (for a Send, where SendSlots says it runs).
  auto fold_into = [&](size_t sync, NodeId owner) {
    const int64_t p = plan.physical_stream[sync];
    const bool send = types.is(NodeId(static_cast<int32_t>(sync)), NodeTypes::kSend);
    for (int32_t a = -1; a < view.num_attached(owner); ++a) {
      const int32_t slot = send ? send_slot(owner, a) : view.slot(owner, a);
      if (view.stream(slot) != p) continue;
      et.extra[slot] = CheckedAdd(et.extra[slot], plan.tasks[sync])
                           .value_or(INT64_MAX);  // saturated: reported by the limit check
      et.folded[sync] = true;
      return;
    }
  };
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    PrefetchNode(m, i + kNodePrefetch);
    const NodeId nid(static_cast<int32_t>(i));
    const Node& n = m.nodes()[i];
    const bool notify = types.is(nid, NodeTypes::kNotify);
    if (types.is(nid, NodeTypes::kSend) && n.control_inputs.size() == 1) {
      auto id = types.sync_id(nid);
      if (id && split_send.count({n.control_inputs[0].value, *id, notify})) {
        et.folded[i] = true;
      } else {
        fold_into(i, n.control_inputs[0]);
      }
    }
    for (NodeId c : n.control_inputs) {
      if (!types.is(c, NodeTypes::kRecv)) continue;
      const bool rn = types.is(c, NodeTypes::kNotify);
      auto id = types.sync_id(c);
      if (id && split_recv.count({static_cast<int32_t>(i), *id, rn})) {
        et.folded[c.index()] = true;
      } else if (!et.folded[c.index()]) {
        fold_into(c.index(), NodeId(static_cast<int32_t>(i)));
      }
    }
  }
}

// No Send/Recv nodes yet: each event's tasks on the slots that record and wait.
void AddEventTasks(const Plan& plan, const SyncView& view, SendSlots& send_slot, EventTasks& et) {
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason == SyncReason::kSplit)
      continue;  // opened after counting, covered by the reserve (as in GE)
    int64_t& send = et.extra[send_slot.ForEvent(e)];
    int64_t& recv = et.extra[view.slot(e.recv, e.recv_attached)];
    send =
        CheckedAdd(send, kSendTasks).value_or(INT64_MAX);  // saturated: reported by the limit check
    recv = CheckedAdd(recv, kRecvTasks).value_or(INT64_MAX);
  }
}

// Per node: the split's rule does not let it open a stream after the
// previous node on its stream (MayOpenStreamAfter, loop_order.h); its
// Send/Recv nodes go with it. Loop gates never open one: stream-activation adds them after
// the split, as part of their loop.
std::vector<bool> EnclosedNodes(const Plan& plan, const SyncView& view, const NodeTypes& types,
                                bool materialized) {
  const Model& m = plan.model;
  std::vector<bool> enclosed(m.num_nodes(), false);
  if (m.num_graphs() == 1) return enclosed;  // no node owns a graph
  const Enclosure encloses(m);
  const StaticLoopNesting loops(plan);
  for (int64_t s = 0; s < view.num_streams(); ++s) {
    NodeId prev_real;
    for (int32_t slot : view.stream_slots(s)) {
      NodeId n = view.node_of(slot);
      if (types.sync(n)) continue;
      if (IsLoopGate(m.node(n))) {
        enclosed[n.index()] = true;
        continue;
      }
      // The first real node: the split met nothing before it (gates came later).
      if (!prev_real.valid() ||
          MayOpenStreamAfter(encloses, loops, prev_real, n, view.attached_of(slot) < 0) ==
              StreamOpening::kNo) {
        enclosed[n.index()] = true;
      }
      prev_real = n;
    }
  }
  if (materialized) {
    for (size_t i = 0; i < m.num_nodes(); ++i) {
      const NodeId nid(static_cast<int32_t>(i));
      if (types.is(nid, NodeTypes::kSend)) {
        const Node& n = m.nodes()[i];
        if (n.control_inputs.size() == 1 && enclosed[n.control_inputs[0].index()])
          enclosed[i] = true;
        continue;
      }
      if (!enclosed[i]) continue;
      for (NodeId c : m.nodes()[i].control_inputs) {
        if (types.is(c, NodeTypes::kRecv)) enclosed[c.index()] = true;
      }
    }
  }
  return enclosed;
}

// No logical stream continues on another physical stream inside a loop body
// or If/Case branch, nor right after one: the split never opens there
// (Enclosure::InConditional says why), and a plan that does orders one run
// where every run needs ordering, which no other check sees (the events are
// checked for one pass of the order).
absl::Status CheckSplitsOrderEveryRun(const Plan& plan, const SyncView& view,
                                      const NodeTypes& types, const Enclosure& encloses) {
  const Model& m = plan.model;
  const StaticLoopNesting loops(plan);
  std::map<int64_t, std::pair<int64_t, NodeId>>
      last;  // logical → (physical, node) of its last slot
  for (int32_t slot : view.slot_order()) {
    const int64_t p = view.stream(slot);
    const NodeId id = view.node_of(slot);
    if (p < 0 || types.sync(id)) continue;
    const Node& n = m.node(id);
    const int32_t a = view.attached_of(slot);
    const int64_t t = a < 0 ? n.stream_id : n.attached_stream_ids[a];
    auto [it, fresh] = last.try_emplace(t, p, id);
    if (fresh) continue;
    const auto [prev_p, prev] = it->second;
    if (prev_p != p && (encloses.InConditional(id) || encloses.InConditional(prev)) &&
        !(a < 0 && loops.MayOpenAcrossLoops(prev, id))) {
      return PhysicalStreamError(StrCat(
          "logical stream ", t, " moves from physical stream ", prev_p, " at node '",
          m.node(prev).name, "' to ", p, " at node '", n.name,
          "': a physical stream may not open inside a loop body or If/Case branch, nor right after "
          "one, except into or out of whole static loops (the split event would not order every "
          "run)"));
    }
    it->second = {p, id};
  }
  return absl::OkStatus();
}

// Physical stream s's running task count stays within its limit wherever a
// split could have opened a new stream.
absl::Status CheckStreamTaskLimit(const Plan& plan, const SyncView& view, int64_t s,
                                  const EventTasks& et, const std::vector<bool>& enclosed) {
  const Model& m = plan.model;
  const StreamResult& sr = plan.streams;
  bool huge = std::find(sr.huge.begin(), sr.huge.end(), s) != sr.huge.end();
  int64_t limit = huge && sr.huge_task_limit > 0 ? sr.huge_task_limit : sr.task_limit;
  int64_t running = 0, counted = 0;
  const auto& slots = view.stream_slots(s);
  for (size_t k = 0; k < slots.size(); ++k) {
    int32_t slot = slots[k];
    if (et.folded[slot]) continue;
    const Node& n = m.node(view.node_of(slot));
    int64_t t =
        view.attached_of(slot) < 0 ? plan.tasks[view.node_of(slot).index()] : AttachedNodeTasks(n);
    const bool first = counted++ == 0;
    // Task counts are input values: a sum that overflows (two 2^62 counts)
    // must not wrap into a small count that passes the limit.
    std::optional<int64_t> sum = CheckedAdd(first ? 0 : running, t);
    if (sum) sum = CheckedAdd(*sum, et.extra[slot]);
    if (sum) sum = CheckedAdd(*sum, kReservedTasks);
    if (!sum || et.extra[slot] == INT64_MAX) {
      return PhysicalStreamError(StrCat("physical stream ", s, ": the task count up to node '",
                                        n.name, "' (", t, " tasks) overflows int64"));
    }
    running = *sum - kReservedTasks;
    if (!first && running + kReservedTasks > limit && MayOpenStream(n) &&
        !HasAttr(n.attrs, "_continuous_stream_label") && !enclosed[view.node_of(slot).index()]) {
      return PhysicalStreamError(StrCat(
          "physical stream ", s, " holds ", running, " tasks up to node '", n.name, "' (+",
          kReservedTasks, " reserved > limit ", limit, ") and should have been split there"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyPhysicalStreams(const Plan& plan) {
  Verification run(plan);
  return VerifyPhysicalStreams(run);
}

absl::Status VerifyPhysicalStreams(Verification& run) {
  const Plan& plan = run.plan();
  if (plan.physical_stream.size() < plan.model.num_nodes()) {
    return PhysicalStreamError("the plan has no physical stream per node");
  }
  if (absl::Status s = CheckLogicalMapping(plan); !s.ok()) return s;
  if (plan.model.num_graphs() > 1) {
    const Enclosure encloses(plan.model);
    if (encloses.AnyConditional()) {
      absl::Status s = CheckSplitsOrderEveryRun(plan, run.View(true), run.Types(), encloses);
      if (!s.ok()) return s;
    }
  }
  if (plan.streams.task_limit <= 0) return absl::OkStatus();
  const SyncView& view = run.View(true);
  const bool materialized = Has(plan.established, IrProperty::kSyncNodes);
  EventTasks et{std::vector<int64_t>(view.num_slots(), 0),
                std::vector<bool>(view.num_slots(), false)};
  SendSlots send_slot(plan.model, view);  // where each Send runs (and the split counted it)
  const NodeTypes& types = run.Types();
  if (materialized) {
    FoldSyncNodeTasks(plan, view, types, send_slot, et);
  } else {
    AddEventTasks(plan, view, send_slot, et);
  }
  const std::vector<bool> enclosed = EnclosedNodes(plan, view, types, materialized);
  for (int64_t s = 0; s < view.num_streams(); ++s) {
    if (absl::Status st = CheckStreamTaskLimit(plan, view, s, et, enclosed); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace npuplan::verify
