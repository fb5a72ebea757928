#include "npuplan/sim/plan_program.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "npuplan/ir/attribute.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::sim {
namespace {

// A slot: one stream's share of a node (main or attached).
struct SlotKey {
  int32_t node;
  int32_t attached;
  friend auto operator<=>(const SlotKey&, const SlotKey&) = default;
};

}  // namespace

int64_t MainStreamOf(const Plan& plan, NodeId n) {
  if (n.index() < plan.physical_stream.size() && plan.physical_stream[n.index()] >= 0) {
    return plan.physical_stream[n.index()];
  }
  return plan.model.node(n).stream_id;
}

int64_t AttachedStreamOf(const Plan& plan, NodeId n, int32_t a) {
  if (auto it = plan.streams.attached_physical.find(n.value); it != plan.streams.attached_physical.end() &&
                                                                a >= 0 && static_cast<size_t>(a) < it->second.size()) {
    return it->second[a];
  }
  return plan.model.node(n).attached_stream_ids[a];
}

std::string SlotName(const Plan& plan, NodeId n, int32_t attached) {
  const Node& node = plan.model.node(n);
  int64_t s = attached < 0 ? MainStreamOf(plan, n) : AttachedStreamOf(plan, n, attached);
  return StrCat("'", EchoName(node.name), "'",
                attached >= 0 ? StrCat(" (attached ", attached, ")") : std::string(), " on stream ",
                s);
}

std::string SkippedSummary(const PlanProgram& program) {
  std::map<std::string, size_t> by_reason;
  for (const SkippedEvent& e : program.skipped) ++by_reason[e.reason];
  std::vector<std::string> parts;
  for (const auto& [reason, count] : by_reason) parts.push_back(StrCat(count, " ", reason));
  return StrCat(program.skipped.size(), " (", StrJoin(parts, ", "), ")");
}

absl::StatusOr<PlanProgram> BuildPlanProgram(const Plan& plan) {
  NPUPLAN_ASSIGN_OR_RETURN(ControlFlow cf, ResolveControlFlow(plan, {}, NodeWork(plan, {}, 1.0)));
  return BuildPlanProgram(plan, std::move(cf));
}

absl::StatusOr<PlanProgram> BuildPlanProgram(const Plan& plan, ControlFlow control_flow) {
  const Model& m = plan.model;
  const size_t n = m.num_nodes();
  PlanProgram prog;
  prog.control_flow = std::move(control_flow);
  const ControlFlow& cf = prog.control_flow;
  if (cf.runs.size() != n) return absl::InternalError("control flow resolved for another plan");
  prog.order = m.ExecutionOrder();
  std::vector<int64_t> seq(n, -1);
  for (size_t i = 0; i < prog.order.size(); ++i) seq[prog.order[i].index()] = static_cast<int64_t>(i);

  // 1. Streams of every slot; dense stream indices in ascending plan id. A
  // stream only a branch not taken uses stays (empty), so indices do not
  // depend on the branch.
  auto slot_stream = [&](SlotKey k) {
    NodeId id(k.node);
    return k.attached < 0 ? MainStreamOf(plan, id) : AttachedStreamOf(plan, id, k.attached);
  };
  std::map<int64_t, int32_t> stream_index;
  for (NodeId id : prog.order) {
    int64_t s = MainStreamOf(plan, id);
    if (s < 0) continue;
    stream_index[s] = 0;
    for (size_t a = 0; a < m.node(id).attached_stream_ids.size(); ++a) {
      int64_t as = AttachedStreamOf(plan, id, static_cast<int32_t>(a));
      if (as >= 0) stream_index[as] = 0;
    }
  }
  for (auto& [s, idx] : stream_index) {
    idx = static_cast<int32_t>(prog.streams.size());
    prog.streams.push_back(ProgramStream{s, {}});
  }

  // 2. Sync objects: events then notifies (ascending ids), then activations.
  std::set<int64_t> event_ids, notify_ids;
  for (const SyncEvent& e : plan.events.events) (e.kind == SyncKind::kNotify ? notify_ids : event_ids).insert(e.id);
  std::map<std::pair<int, int64_t>, int32_t> sync_index;
  for (int64_t id : event_ids) {
    sync_index[{0, id}] = static_cast<int32_t>(prog.syncs.size());
    prog.syncs.push_back({SyncObject::Kind::kEvent, id});
  }
  for (int64_t id : notify_ids) {
    sync_index[{1, id}] = static_cast<int32_t>(prog.syncs.size());
    prog.syncs.push_back({SyncObject::Kind::kNotify, id});
  }

  // 3. Waits and records per slot, from the event table.
  std::map<SlotKey, std::vector<std::pair<int32_t, int64_t>>> waits, records;  // (sync, event index)
  // GE's dynamic executor records a node's `_send_event_ids` when the node is
  // done, its subgraphs included: the record follows the last slot of its
  // subtree (contiguous after it in execution order) on its own stream that
  // runs — an If/Case owner's subtree holds every branch, and the record
  // follows the branch that ran, not the last one in the plan.
  const bool dynamic = IsDynamicStreamMode(plan.streams.mode);
  std::vector<int> depth;
  if (dynamic) {
    depth.resize(m.num_graphs());
    for (size_t g = 0; g < m.num_graphs(); ++g) depth[g] = m.Depth(GraphId(static_cast<int32_t>(g)));
  }
  auto completion = [&](const SyncEvent& e) -> SlotKey {
    SlotKey own{e.send.value, std::max(e.send_attached, -1)};
    const Node& sn = m.node(e.send);
    if (!dynamic || e.send_attached >= 0 || sn.subgraphs.empty() || seq[e.send.index()] < 0) return own;
    const AttrValue* v = FindAttr(sn.attrs, "_send_event_ids");
    const auto* ids = v != nullptr ? v->as<AttrValue::IntList>() : nullptr;
    if (ids == nullptr || std::find(ids->begin(), ids->end(), int64_t{e.id}) == ids->end()) return own;
    const int64_t stream = MainStreamOf(plan, e.send);
    const int owner_depth = depth[sn.graph.index()];
    SlotKey last_written = own;  // where the record would be if every branch ran
    for (size_t j = static_cast<size_t>(seq[e.send.index()]) + 1; j < prog.order.size(); ++j) {
      const NodeId x = prog.order[j];
      if (depth[m.node(x).graph.index()] <= owner_depth) break;
      if (MainStreamOf(plan, x) != stream) continue;
      last_written = SlotKey{x.value, -1};
      if (cf.runs[x.index()] > 0) own = last_written;
    }
    if (cf.runs[e.send.index()] > 0 && own != last_written) ++prog.moved_records;
    return own;
  };
  auto rank_less = [&](SlotKey a, SlotKey b) {
    return std::pair(seq[a.node], a.attached) < std::pair(seq[b.node], b.attached);
  };
  // The owner of the graph of v (invalid for the root), and whether v lies
  // in the subtree of owner a.
  auto owner_of = [&](NodeId v) { return m.graph(m.node(v).graph).parent_node; };
  auto inside = [&](NodeId v, NodeId a) {
    for (size_t depth = 0; depth <= m.num_graphs(); ++depth) {
      const NodeId o = owner_of(v);
      if (!o.valid()) return false;
      if (o == a) return true;
      v = o;
    }
    return false;
  };
  // An If/Case owner records its outgoing events after its subgraph,
  // whichever branch ran; plans write that record on a node of one branch
  // (the last subgraph's NetOutput on the dynamic path, docs/auto-streams.md).
  // When that branch does not run, the record moves to the last node of the
  // owner's subtree that runs on the same stream, else to the owner.
  auto owner_record = [&](NodeId send, NodeId recv) -> NodeId {
    NodeId a, v = send;
    for (size_t depth = 0; depth <= m.num_graphs() && !a.valid(); ++depth) {
      const NodeId o = owner_of(v);
      if (!o.valid()) break;
      if (cf.runs[o.index()] > 0) a = o;
      v = o;
    }
    if (!a.valid() || !IsBranchNode(m.node(a)) || inside(recv, a)) return NodeId();
    const int64_t stream = MainStreamOf(plan, send);
    NodeId last;
    for (size_t k = static_cast<size_t>(seq[a.index()]) + 1; k < prog.order.size() && inside(prog.order[k], a); ++k) {
      const NodeId x = prog.order[k];
      if (cf.runs[x.index()] > 0 && MainStreamOf(plan, x) == stream) last = x;
    }
    if (!last.valid() && MainStreamOf(plan, a) == stream) last = a;
    return last;
  };
  for (size_t i = 0; i < plan.events.events.size(); ++i) {
    const SyncEvent& e = plan.events.events[i];
    if (!e.send.valid() || !e.recv.valid() || e.send.index() >= n || e.recv.index() >= n) {
      return absl::InvalidArgumentError(StrCat("event ", e.id, " (table entry ", i, ") names no node of the plan"));
    }
    const Node& sn = m.node(e.send);
    const Node& rn = m.node(e.recv);
    if (e.send_attached >= static_cast<int32_t>(sn.attached_stream_ids.size()) ||
        e.recv_attached >= static_cast<int32_t>(rn.attached_stream_ids.size())) {
      return absl::InvalidArgumentError(
          StrCat("event ", e.id, " from '", EchoName(sn.name), "' to '", EchoName(rn.name),
                 "' names an attached stream the node does not have"));
    }
    if (e.reason == SyncReason::kLoop) {
      prog.skipped.push_back({static_cast<int64_t>(i), "loop-carried"});
      continue;
    }
    SlotKey from = completion(e), to{e.recv.value, std::max(e.recv_attached, -1)};
    if (MainStreamOf(plan, e.send) < 0 || MainStreamOf(plan, e.recv) < 0 || slot_stream(from) < 0 ||
        slot_stream(to) < 0) {
      return absl::InvalidArgumentError(StrCat("event ", e.id, " from '", EchoName(sn.name),
                                               "' to '", EchoName(rn.name),
                                               "' touches a node without a stream"));
    }
    if (seq[from.node] < 0 || seq[to.node] < 0 || !rank_less(from, to)) {
      prog.skipped.push_back({static_cast<int64_t>(i), "backward"});
      continue;
    }
    if (cf.runs[from.node] == 0 && cf.runs[to.node] > 0 && from.attached < 0 && seq[from.node] >= 0) {
      if (const NodeId moved = owner_record(e.send, e.recv); moved.valid() && rank_less({moved.value, -1}, to)) {
        from = {moved.value, -1};
        ++prog.moved_records;
      }
    }
    if (cf.runs[from.node] == 0 || cf.runs[to.node] == 0) {
      prog.skipped.push_back({static_cast<int64_t>(i), "branch-not-taken"});
      continue;
    }
    int32_t sync = sync_index.at({e.kind == SyncKind::kNotify ? 1 : 0, e.id});
    records[from].push_back({sync, static_cast<int64_t>(i)});
    waits[to].push_back({sync, static_cast<int64_t>(i)});
  }

  // 4. Activations, per run: the first slot of an activated stream after the
  // activator's run waits on it. Slots of runs are ranked (position in the
  // unrolled order, attached index).
  using RunSlot = std::pair<int64_t, int32_t>;
  std::map<int64_t, std::vector<RunSlot>> stream_slots;  // plan stream → run slots in order
  for (size_t i = 0; i < cf.order.size(); ++i) {
    const NodeId id = cf.order[i].node;
    if (MainStreamOf(plan, id) < 0) continue;
    stream_slots[MainStreamOf(plan, id)].push_back({static_cast<int64_t>(i), -1});
    for (size_t a = 0; a < m.node(id).attached_stream_ids.size(); ++a) {
      SlotKey k{id.value, static_cast<int32_t>(a)};
      if (slot_stream(k) >= 0) stream_slots[slot_stream(k)].push_back({static_cast<int64_t>(i), k.attached});
    }
  }
  std::map<RunSlot, std::vector<int32_t>> act_waits, act_records;
  std::vector<int32_t> act_sync(n, -1);
  for (size_t i = 0; i < cf.order.size(); ++i) {
    const NodeId id = cf.order[i].node;
    const AttrValue* v = FindAttr(m.node(id).attrs, "active_stream_list");
    const int64_t own = MainStreamOf(plan, id);
    if (v == nullptr || !v->is<AttrValue::IntList>() || own < 0) continue;
    const RunSlot from{static_cast<int64_t>(i), -1};
    bool recorded = false;
    for (int64_t s : *v->as<AttrValue::IntList>()) {
      auto it = stream_slots.find(s);
      if (s == own || it == stream_slots.end()) continue;
      auto first = std::upper_bound(it->second.begin(), it->second.end(), from);
      if (first == it->second.end()) continue;
      int32_t& sync = act_sync[id.index()];
      if (sync < 0) {
        sync = static_cast<int32_t>(prog.syncs.size());
        prog.syncs.push_back({SyncObject::Kind::kActivation, id.value});
      }
      if (!recorded) act_records[from].push_back(sync);
      recorded = true;
      act_waits[*first].push_back(sync);
    }
  }

  // 5. Items, in the unrolled execution order.
  prog.main_stream.assign(n, -1);
  prog.main_task.assign(n, -1);
  auto emit = [&](SlotKey k, int64_t pos, int32_t run) {
    int64_t s = slot_stream(k);
    if (s < 0) return;
    int32_t si = stream_index.at(s);
    auto& items = prog.streams[si].items;
    auto push = [&](ProgramItem item) {
      item.run = run;
      prog.enqueue.emplace_back(si, static_cast<int32_t>(items.size()));
      items.push_back(item);
    };
    NodeId id(k.node);
    if (auto it = waits.find(k); it != waits.end()) {
      for (auto [sync, ev] : it->second) push({ProgramItem::Kind::kWait, id, k.attached, sync, ev});
    }
    if (auto it = act_waits.find({pos, k.attached}); it != act_waits.end()) {
      for (int32_t sync : it->second) push({ProgramItem::Kind::kWait, id, k.attached, sync, -1});
    }
    if (k.attached < 0) {
      prog.main_stream[k.node] = si;
      if (prog.main_task[k.node] < 0) prog.main_task[k.node] = static_cast<int32_t>(items.size());
    }
    push({ProgramItem::Kind::kTask, id, k.attached});
    ++prog.num_tasks;
    if (auto it = records.find(k); it != records.end()) {
      for (auto [sync, ev] : it->second) push({ProgramItem::Kind::kRecord, id, k.attached, sync, ev});
    }
    if (auto it = act_records.find({pos, k.attached}); it != act_records.end()) {
      for (int32_t sync : it->second) push({ProgramItem::Kind::kRecord, id, k.attached, sync, -1});
    }
  };
  for (size_t i = 0; i < cf.order.size(); ++i) {
    const auto [id, run] = cf.order[i];
    if (MainStreamOf(plan, id) < 0) continue;
    emit({id.value, -1}, static_cast<int64_t>(i), run);
    for (size_t a = 0; a < m.node(id).attached_stream_ids.size(); ++a) {
      emit({id.value, static_cast<int32_t>(a)}, static_cast<int64_t>(i), run);
    }
  }

  // 6. Bind waits to records (event: latest enqueued before; notify: k-th with k-th).
  std::vector<std::pair<int32_t, int32_t>> last(prog.syncs.size(), {-1, -1});
  std::vector<std::vector<std::pair<int32_t, int32_t>>> notify_records(prog.syncs.size()), notify_waits(prog.syncs.size());
  for (auto [s, i] : prog.enqueue) {
    ProgramItem& item = prog.streams[s].items[i];
    if (item.kind == ProgramItem::Kind::kTask) continue;
    const bool notify = prog.syncs[item.sync].kind == SyncObject::Kind::kNotify;
    if (item.kind == ProgramItem::Kind::kRecord) {
      if (notify) notify_records[item.sync].emplace_back(s, i);
      last[item.sync] = {s, i};
    } else if (notify) {
      notify_waits[item.sync].emplace_back(s, i);
    } else {
      std::tie(item.bound_stream, item.bound_item) = last[item.sync];
    }
  }
  for (size_t k = 0; k < prog.syncs.size(); ++k) {
    for (size_t w = 0; w < notify_waits[k].size(); ++w) {
      ProgramItem& item = prog.streams[notify_waits[k][w].first].items[notify_waits[k][w].second];
      if (w >= notify_records[k].size()) {
        return absl::InvalidArgumentError(StrCat("notify ", prog.syncs[k].id, ": the wait of ",
                                                 SlotName(plan, item.node, item.attached),
                                                 " has no matching record; the plan would deadlock"));
      }
      std::tie(item.bound_stream, item.bound_item) = notify_records[k][w];
    }
  }

  // 7. Deadlock check: Kahn's algorithm over queue order + wait bindings.
  std::vector<size_t> base(prog.streams.size() + 1, 0);
  for (size_t s = 0; s < prog.streams.size(); ++s) base[s + 1] = base[s] + prog.streams[s].items.size();
  std::vector<int32_t> indeg(base.back(), 0);
  std::vector<std::vector<size_t>> wakes(base.back());
  for (size_t s = 0; s < prog.streams.size(); ++s) {
    for (size_t i = 0; i < prog.streams[s].items.size(); ++i) {
      const ProgramItem& item = prog.streams[s].items[i];
      if (i > 0) ++indeg[base[s] + i];
      if (item.kind == ProgramItem::Kind::kWait && item.bound_stream >= 0) {
        ++indeg[base[s] + i];
        wakes[base[item.bound_stream] + item.bound_item].push_back(base[s] + i);
      }
    }
  }
  std::deque<size_t> ready;
  for (size_t s = 0; s < prog.streams.size(); ++s) {
    if (!prog.streams[s].items.empty() && indeg[base[s]] == 0) ready.push_back(base[s]);
  }
  size_t done = 0;
  auto stream_of = [&](size_t g) {
    return static_cast<size_t>(std::upper_bound(base.begin(), base.end(), g) - base.begin() - 1);
  };
  while (!ready.empty()) {
    size_t g = ready.front();
    ready.pop_front();
    ++done;
    size_t s = stream_of(g);
    if (g + 1 < base[s + 1] && --indeg[g + 1] == 0) ready.push_back(g + 1);
    for (size_t w : wakes[g]) {
      if (--indeg[w] == 0) ready.push_back(w);
    }
  }
  if (done != base.back()) {
    for (size_t s = 0; s < prog.streams.size(); ++s) {
      for (size_t i = 0; i < prog.streams[s].items.size(); ++i) {
        const ProgramItem& item = prog.streams[s].items[i];
        if (indeg[base[s] + i] > 0 && item.kind == ProgramItem::Kind::kWait) {
          return absl::InvalidArgumentError(StrCat(
              "the plan would deadlock: the wait of ", SlotName(plan, item.node, item.attached), " on ",
              prog.syncs[item.sync].kind == SyncObject::Kind::kNotify ? "notify " : "event ", prog.syncs[item.sync].id,
              " can never complete (a cycle through the stream queues and events)"));
        }
      }
    }
    return absl::InvalidArgumentError("the plan would deadlock: a cycle through the stream queues");
  }
  return prog;
}

}  // namespace npuplan::sim
