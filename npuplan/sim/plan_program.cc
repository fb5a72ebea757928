#include "npuplan/sim/plan_program.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <set>

#include "npuplan/ir/attribute.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/loop_order.h"
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

namespace {

using RunSlot = std::pair<int64_t, int32_t>;  // (position in the unrolled order, attached index)

// The state BuildPlanProgram's steps share; each step is one member function.
class ProgramBuilder {
 public:
  ProgramBuilder(const Plan& plan, PlanProgram& prog)
      : plan_(plan),
        m_(plan.model),
        n_(m_.num_nodes()),
        prog_(prog),
        dynamic_graphs_(DynamicPathGraphs(plan)) {
    prog_.order = m_.ExecutionOrder();
    seq_.assign(n_, -1);
    for (size_t i = 0; i < prog_.order.size(); ++i)
      seq_[prog_.order[i].index()] = static_cast<int64_t>(i);
    depth_.resize(m_.num_graphs());
    for (size_t g = 0; g < m_.num_graphs(); ++g)
      depth_[g] = m_.Depth(GraphId(static_cast<int32_t>(g)));
  }

  void IndexStreams();
  void IndexSyncs();
  absl::Status PlaceEvents();
  void IndexRunSlots();
  void PlaceActivations();
  void PlaceHostSyncs();
  void EmitItems();
  absl::Status BindWaits();
  absl::Status CheckDeadlock();

 private:
  int64_t SlotStream(SlotKey k) const {
    NodeId id(k.node);
    return k.attached < 0 ? MainStreamOf(plan_, id) : AttachedStreamOf(plan_, id, k.attached);
  }
  bool RankLess(SlotKey a, SlotKey b) const {
    return std::pair(seq_[a.node], a.attached) < std::pair(seq_[b.node], b.attached);
  }
  // The owner of the graph of v (invalid for the root), and whether v lies
  // in the subtree of owner a.
  NodeId OwnerOf(NodeId v) const { return m_.graph(m_.node(v).graph).parent_node; }
  bool Inside(NodeId v, NodeId a) const;
  // Whether some loop encloses both nodes (the unrolled order repeats both).
  bool SharesLoop(NodeId a, NodeId b) const {
    const auto& la = prog_.control_flow.loop_chain[m_.node(a).graph.index()];
    const auto& lb = prog_.control_flow.loop_chain[m_.node(b).graph.index()];
    return !la.empty() && !lb.empty() && la.front() == lb.front();
  }
  bool RecordsAtCompletion(const SyncEvent& e) const;
  SlotKey Completion(const SyncEvent& e, bool at_completion);
  const std::vector<int64_t>& CompletionPositions(NodeId owner);
  NodeId OwnerRecord(NodeId send, NodeId recv) const;
  absl::Status PlaceEvent(size_t i);
  void Emit(SlotKey k, int64_t pos, int32_t run);
  bool InDynamicGraph(NodeId n) const {
    const size_t g = m_.node(n).graph.index();
    return g < dynamic_graphs_.size() && dynamic_graphs_[g];
  }

  const Plan& plan_;
  const Model& m_;
  const size_t n_;
  PlanProgram& prog_;
  std::vector<int64_t> seq_;
  const std::vector<bool> dynamic_graphs_;
  std::vector<int> depth_;  // per GraphId: nesting depth
  std::map<int64_t, int32_t> stream_index_;
  std::map<std::pair<int, int64_t>, int32_t> sync_index_;
  std::map<SlotKey, std::vector<std::pair<int32_t, int64_t>>> waits_,
      records_;  // (sync, event index)
  // Activation and host syncs, per run slot.
  std::map<RunSlot, std::vector<int32_t>> implicit_waits_, implicit_records_;
  // Owner-completion records, per run of the owner (below): (sync, event index).
  std::map<RunSlot, std::vector<std::pair<int32_t, int64_t>>> run_records_;
  std::map<int32_t, std::vector<int64_t>> completion_positions_;  // owner → record positions
  std::map<int32_t, std::vector<int64_t>> instances_;     // owner of subgraphs → its positions
  std::map<int64_t, std::vector<RunSlot>> stream_slots_;  // plan stream → run slots in order
};

// 1. Streams of every slot; dense stream indices in ascending plan id. A
// stream only a branch not taken uses stays (empty), so indices do not
// depend on the branch.
void ProgramBuilder::IndexStreams() {
  for (NodeId id : prog_.order) {
    int64_t s = MainStreamOf(plan_, id);
    if (s < 0) continue;
    stream_index_[s] = 0;
    for (size_t a = 0; a < m_.node(id).attached_stream_ids.size(); ++a) {
      int64_t as = AttachedStreamOf(plan_, id, static_cast<int32_t>(a));
      if (as >= 0) stream_index_[as] = 0;
    }
  }
  for (auto& [s, idx] : stream_index_) {
    idx = static_cast<int32_t>(prog_.streams.size());
    prog_.streams.push_back(ProgramStream{s, {}});
  }
}

// 2. Sync objects: events then notifies (ascending ids), then activations.
void ProgramBuilder::IndexSyncs() {
  std::set<int64_t> event_ids, notify_ids;
  for (const SyncEvent& e : plan_.events.events)
    (e.kind == SyncKind::kNotify ? notify_ids : event_ids).insert(e.id);
  for (int64_t id : event_ids) {
    sync_index_[{0, id}] = static_cast<int32_t>(prog_.syncs.size());
    prog_.syncs.push_back({SyncObject::Kind::kEvent, id});
  }
  for (int64_t id : notify_ids) {
    sync_index_[{1, id}] = static_cast<int32_t>(prog_.syncs.size());
    prog_.syncs.push_back({SyncObject::Kind::kNotify, id});
  }
}

// GE's dynamic executor records a node's `_send_event_ids` when the node is
// done, its subgraphs included; a Send node after such an owner (an event
// with an attached end has Send/Recv nodes on the dynamic path too) runs
// when the owner is done as well.
bool ProgramBuilder::RecordsAtCompletion(const SyncEvent& e) const {
  const Node& sn = m_.node(e.send);
  if (!IsDynamicStreamMode(plan_.streams.mode) || e.send_attached >= 0 || sn.subgraphs.empty() ||
      seq_[e.send.index()] < 0) {
    return false;
  }
  const AttrValue* v = FindAttr(sn.attrs, "_send_event_ids");
  const auto* ids = v != nullptr ? v->as<AttrValue::IntList>() : nullptr;
  if (ids != nullptr && std::find(ids->begin(), ids->end(), int64_t{e.id}) != ids->end())
    return true;
  return !OnDynamicPath(plan_, dynamic_graphs_, e) && InDynamicGraph(e.send);
}

// Where such a record is made: after the last slot of the owner's subtree
// (contiguous after it in execution order) on its own stream that runs — an
// If/Case owner's subtree holds every branch, and the record follows the
// branch that ran, not the last one in the plan. Other records: the sender.
SlotKey ProgramBuilder::Completion(const SyncEvent& e, bool at_completion) {
  const ControlFlow& cf = prog_.control_flow;
  SlotKey own{e.send.value, std::max(e.send_attached, -1)};
  if (!at_completion) return own;
  const Node& sn = m_.node(e.send);
  const int64_t stream = MainStreamOf(plan_, e.send);
  const int owner_depth = depth_[sn.graph.index()];
  SlotKey last_written = own;  // where the record would be if every branch ran
  for (size_t j = static_cast<size_t>(seq_[e.send.index()]) + 1; j < prog_.order.size(); ++j) {
    const NodeId x = prog_.order[j];
    if (depth_[m_.node(x).graph.index()] <= owner_depth) break;
    if (MainStreamOf(plan_, x) != stream) continue;
    last_written = SlotKey{x.value, -1};
    if (cf.runs[x.index()] > 0) own = last_written;
  }
  if (cf.runs[e.send.index()] > 0 && own != last_written) ++prog_.moved_records;
  return own;
}

// The same place per run of the owner, as positions in the unrolled order: a
// loop owner records once, after its last iteration, not once per run of
// the slot that ends its subtree.
const std::vector<int64_t>& ProgramBuilder::CompletionPositions(NodeId owner) {
  const auto& order = prog_.control_flow.order;
  if (instances_.empty()) {  // one pass: where each owner of subgraphs runs
    for (size_t p = 0; p < order.size(); ++p) {
      if (!m_.node(order[p].node).subgraphs.empty())
        instances_[order[p].node.value].push_back(static_cast<int64_t>(p));
    }
  }
  auto [it, inserted] = completion_positions_.try_emplace(owner.value);
  if (!inserted) return it->second;
  const int64_t stream = MainStreamOf(plan_, owner);
  const int owner_depth = depth_[m_.node(owner).graph.index()];
  auto runs = instances_.find(owner.value);
  if (runs == instances_.end()) return it->second;
  for (const int64_t at : runs->second) {
    const size_t p = static_cast<size_t>(at);
    size_t last = p;
    for (size_t q = p + 1;
         q < order.size() && depth_[m_.node(order[q].node).graph.index()] > owner_depth; ++q) {
      if (MainStreamOf(plan_, order[q].node) == stream) last = q;
    }
    it->second.push_back(static_cast<int64_t>(last));
  }
  return it->second;
}

bool ProgramBuilder::Inside(NodeId v, NodeId a) const {
  for (size_t depth = 0; depth <= m_.num_graphs(); ++depth) {
    const NodeId o = OwnerOf(v);
    if (!o.valid()) return false;
    if (o == a) return true;
    v = o;
  }
  return false;
}

// An If/Case owner records its outgoing events after its subgraph,
// whichever branch ran; plans write that record on a node of one branch
// (the last subgraph's NetOutput on the dynamic path, docs/auto-streams.md).
// When that branch does not run, the record moves to the last node of the
// owner's subtree that runs on the same stream, else to the owner.
NodeId ProgramBuilder::OwnerRecord(NodeId send, NodeId recv) const {
  const ControlFlow& cf = prog_.control_flow;
  NodeId a, v = send;
  for (size_t depth = 0; depth <= m_.num_graphs() && !a.valid(); ++depth) {
    const NodeId o = OwnerOf(v);
    if (!o.valid()) break;
    if (cf.runs[o.index()] > 0) a = o;
    v = o;
  }
  if (!a.valid() || !IsBranchNode(m_.node(a)) || Inside(recv, a)) return NodeId();
  const int64_t stream = MainStreamOf(plan_, send);
  NodeId last;
  for (size_t k = static_cast<size_t>(seq_[a.index()]) + 1;
       k < prog_.order.size() && Inside(prog_.order[k], a); ++k) {
    const NodeId x = prog_.order[k];
    if (cf.runs[x.index()] > 0 && MainStreamOf(plan_, x) == stream) last = x;
  }
  if (!last.valid() && MainStreamOf(plan_, a) == stream) last = a;
  return last;
}

// 3. Waits and records per slot, from the event table.
absl::Status ProgramBuilder::PlaceEvents() {
  for (size_t i = 0; i < plan_.events.events.size(); ++i) NPUPLAN_RETURN_IF_ERROR(PlaceEvent(i));
  return absl::OkStatus();
}

// The wait and record of table entry i, or why it is skipped.
absl::Status ProgramBuilder::PlaceEvent(size_t i) {
  const ControlFlow& cf = prog_.control_flow;
  const SyncEvent& e = plan_.events.events[i];
  if (!e.send.valid() || !e.recv.valid() || e.send.index() >= n_ || e.recv.index() >= n_) {
    return absl::InvalidArgumentError(
        StrCat("event ", e.id, " (table entry ", i, ") names no node of the plan"));
  }
  const Node& sn = m_.node(e.send);
  const Node& rn = m_.node(e.recv);
  if (e.send_attached >= static_cast<int32_t>(sn.attached_stream_ids.size()) ||
      e.recv_attached >= static_cast<int32_t>(rn.attached_stream_ids.size())) {
    return absl::InvalidArgumentError(StrCat("event ", e.id, " from '", EchoName(sn.name), "' to '",
                                             EchoName(rn.name),
                                             "' names an attached stream the node does not have"));
  }
  if (e.reason == SyncReason::kLoop) {
    prog_.skipped.push_back({static_cast<int64_t>(i), "loop-carried"});
    return absl::OkStatus();
  }
  const bool at_completion = RecordsAtCompletion(e);
  SlotKey from = Completion(e, at_completion), to{e.recv.value, std::max(e.recv_attached, -1)};
  if (MainStreamOf(plan_, e.send) < 0 || MainStreamOf(plan_, e.recv) < 0 || SlotStream(from) < 0 ||
      SlotStream(to) < 0) {
    return absl::InvalidArgumentError(StrCat("event ", e.id, " from '", EchoName(sn.name), "' to '",
                                             EchoName(rn.name),
                                             "' touches a node without a stream"));
  }
  // A backward loop-next event into an attached slot (as npuplan wrote them
  // before head gates; verify refuses them): inside a loop around both ends,
  // its wait binds to the previous iteration's record, so running such a
  // plan shows where a wait-reset device blocks.
  const bool next_iteration =
      e.reason == SyncReason::kLoopNext && e.recv_attached >= 0 && SharesLoop(e.send, e.recv);
  if (seq_[from.node] < 0 || seq_[to.node] < 0 || (!next_iteration && !RankLess(from, to))) {
    prog_.skipped.push_back({static_cast<int64_t>(i), "backward"});
    return absl::OkStatus();
  }
  // On the dynamic path the host runs an If/Case and its owner records once
  // the branch that ran is done. A static plan's record or wait in a branch
  // not taken is simply not run; its other end still is: a record no wait
  // consumes stays set, a wait with no record blocks a wait-reset device
  // (the CPU back end reports both; verifier[loop-boundary] refuses such
  // events, docs/events.md "Branch boundaries").
  const bool dynamic = at_completion || InDynamicGraph(e.send) || InDynamicGraph(e.recv);
  if (dynamic && cf.runs[from.node] == 0 && cf.runs[to.node] > 0 && from.attached < 0 &&
      seq_[from.node] >= 0) {
    if (const NodeId moved = OwnerRecord(e.send, e.recv);
        moved.valid() && RankLess({moved.value, -1}, to)) {
      from = {moved.value, -1};
      ++prog_.moved_records;
    }
  }
  const bool record_runs = cf.runs[from.node] > 0, wait_runs = cf.runs[to.node] > 0;
  if (!record_runs || !wait_runs) {
    prog_.skipped.push_back({static_cast<int64_t>(i), "branch-not-taken"});
    if (dynamic || (!record_runs && !wait_runs) || e.kind == SyncKind::kNotify)
      return absl::OkStatus();
  }
  int32_t sync = sync_index_.at({e.kind == SyncKind::kNotify ? 1 : 0, e.id});
  if (!wait_runs) {  // at_completion is dynamic-path only
    records_[from].push_back({sync, static_cast<int64_t>(i)});
    return absl::OkStatus();
  }
  if (!record_runs) {
    waits_[to].push_back({sync, static_cast<int64_t>(i)});
    return absl::OkStatus();
  }
  if (at_completion) {
    for (int64_t pos : CompletionPositions(e.send))
      run_records_[{pos, -1}].push_back({sync, static_cast<int64_t>(i)});
  } else {
    records_[from].push_back({sync, static_cast<int64_t>(i)});
  }
  waits_[to].push_back({sync, static_cast<int64_t>(i)});
  return absl::OkStatus();
}

// 4. Every stream's run slots, ranked (position in the unrolled order,
// attached index), for the implicit syncs below.
void ProgramBuilder::IndexRunSlots() {
  const ControlFlow& cf = prog_.control_flow;
  for (size_t i = 0; i < cf.order.size(); ++i) {
    const NodeId id = cf.order[i].node;
    if (MainStreamOf(plan_, id) < 0) continue;
    stream_slots_[MainStreamOf(plan_, id)].push_back({static_cast<int64_t>(i), -1});
    for (size_t a = 0; a < m_.node(id).attached_stream_ids.size(); ++a) {
      SlotKey k{id.value, static_cast<int32_t>(a)};
      if (SlotStream(k) >= 0)
        stream_slots_[SlotStream(k)].push_back({static_cast<int64_t>(i), k.attached});
    }
  }
}

// 5. Activations, per run: the first slot of an activated stream after the
// activator's run waits on it.
void ProgramBuilder::PlaceActivations() {
  const ControlFlow& cf = prog_.control_flow;
  std::vector<int32_t> act_sync(n_, -1);
  for (size_t i = 0; i < cf.order.size(); ++i) {
    const NodeId id = cf.order[i].node;
    const AttrValue* v = FindAttr(m_.node(id).attrs, "active_stream_list");
    const int64_t own = MainStreamOf(plan_, id);
    if (v == nullptr || !v->is<AttrValue::IntList>() || own < 0) continue;
    const RunSlot from{static_cast<int64_t>(i), -1};
    bool recorded = false;
    for (int64_t s : *v->as<AttrValue::IntList>()) {
      auto it = stream_slots_.find(s);
      if (s == own || it == stream_slots_.end()) continue;
      auto first = std::upper_bound(it->second.begin(), it->second.end(), from);
      if (first == it->second.end()) continue;
      int32_t& sync = act_sync[id.index()];
      if (sync < 0) {
        sync = static_cast<int32_t>(prog_.syncs.size());
        prog_.syncs.push_back({SyncObject::Kind::kActivation, id.value});
      }
      if (!recorded) implicit_records_[from].push_back(sync);
      recorded = true;
      implicit_waits_[*first].push_back(sync);
    }
  }
}

// 6. Host syncs. On GE's dynamic path the host runs a loop whose owner lies
// in a dynamic-path graph (the hybrid executor's While task): after each run
// of the cond subgraph it synchronizes the owner's stream to read the
// condition, and only then enqueues what follows. So every other stream's
// first slot after that point waits on a sync recorded after the owner
// stream's last slot up to it. A loop with one subgraph (For, ONNX Loop)
// reads its condition after each body run.
void ProgramBuilder::PlaceHostSyncs() {
  const ControlFlow& cf = prog_.control_flow;
  if (!IsDynamicStreamMode(plan_.streams.mode)) return;
  // The subgraph of `owner` that x lies in (x is in its subtree).
  auto child_graph = [&](NodeId x, NodeId owner) {
    GraphId g = m_.node(x).graph;
    while (m_.graph(g).parent_node != owner) g = m_.node(m_.graph(g).parent_node).graph;
    return g;
  };
  std::vector<int32_t> host_sync(n_, -1);
  for (size_t p = 0; p < cf.order.size(); ++p) {
    const NodeId owner = cf.order[p].node;
    const Node& on = m_.node(owner);
    const int64_t stream = MainStreamOf(plan_, owner);
    if (!RunsOnHost(plan_, dynamic_graphs_, owner) || stream < 0) continue;
    const GraphId cond = on.subgraphs.size() >= 2 ? on.subgraphs.front() : on.subgraphs.back();
    const int owner_depth = depth_[on.graph.index()];
    auto inside = [&](size_t q) {
      return q < cf.order.size() && depth_[m_.node(cf.order[q].node).graph.index()] > owner_depth;
    };
    size_t last_on_stream = p;
    for (size_t q = p + 1; inside(q); ++q) {
      const NodeId x = cf.order[q].node;
      if (MainStreamOf(plan_, x) == stream) last_on_stream = q;
      if (child_graph(x, owner) != cond) continue;
      // The cond run ends here unless the next entry continues it.
      const bool continues = inside(q + 1) && child_graph(cf.order[q + 1].node, owner) == cond &&
                             seq_[cf.order[q + 1].node.index()] > seq_[x.index()];
      if (continues) continue;
      int32_t& sync = host_sync[owner.index()];
      if (sync < 0) {
        sync = static_cast<int32_t>(prog_.syncs.size());
        prog_.syncs.push_back({SyncObject::Kind::kHostSync, owner.value});
      }
      implicit_records_[{static_cast<int64_t>(last_on_stream), -1}].push_back(sync);
      const RunSlot point{static_cast<int64_t>(q), std::numeric_limits<int32_t>::max()};
      for (auto& [s, slots] : stream_slots_) {
        if (s == stream) continue;
        auto first = std::upper_bound(slots.begin(), slots.end(), point);
        if (first == slots.end()) continue;
        auto& waits = implicit_waits_[*first];
        if (waits.empty() || waits.back() != sync) waits.push_back(sync);
      }
    }
  }
}

// The items of one slot: its waits, its task, its records.
void ProgramBuilder::Emit(SlotKey k, int64_t pos, int32_t run) {
  int64_t s = SlotStream(k);
  if (s < 0) return;
  int32_t si = stream_index_.at(s);
  auto& items = prog_.streams[si].items;
  auto push = [&](ProgramItem item) {
    item.run = run;
    prog_.enqueue.emplace_back(si, static_cast<int32_t>(items.size()));
    items.push_back(item);
  };
  NodeId id(k.node);
  if (auto it = waits_.find(k); it != waits_.end()) {
    for (auto [sync, ev] : it->second) push({ProgramItem::Kind::kWait, id, k.attached, sync, ev});
  }
  if (auto it = implicit_waits_.find({pos, k.attached}); it != implicit_waits_.end()) {
    for (int32_t sync : it->second) push({ProgramItem::Kind::kWait, id, k.attached, sync, -1});
  }
  if (k.attached < 0) {
    prog_.main_stream[k.node] = si;
    if (prog_.main_task[k.node] < 0) prog_.main_task[k.node] = static_cast<int32_t>(items.size());
  }
  push({ProgramItem::Kind::kTask, id, k.attached});
  ++prog_.num_tasks;
  if (auto it = records_.find(k); it != records_.end()) {
    for (auto [sync, ev] : it->second) push({ProgramItem::Kind::kRecord, id, k.attached, sync, ev});
  }
  if (auto it = run_records_.find({pos, k.attached}); it != run_records_.end()) {
    for (auto [sync, ev] : it->second) push({ProgramItem::Kind::kRecord, id, k.attached, sync, ev});
  }
  if (auto it = implicit_records_.find({pos, k.attached}); it != implicit_records_.end()) {
    for (int32_t sync : it->second) push({ProgramItem::Kind::kRecord, id, k.attached, sync, -1});
  }
}

// 7. Items, in the unrolled execution order.
void ProgramBuilder::EmitItems() {
  const ControlFlow& cf = prog_.control_flow;
  prog_.main_stream.assign(n_, -1);
  prog_.main_task.assign(n_, -1);
  for (size_t i = 0; i < cf.order.size(); ++i) {
    const auto [id, run] = cf.order[i];
    if (MainStreamOf(plan_, id) < 0) continue;
    Emit({id.value, -1}, static_cast<int64_t>(i), run);
    for (size_t a = 0; a < m_.node(id).attached_stream_ids.size(); ++a) {
      Emit({id.value, static_cast<int32_t>(a)}, static_cast<int64_t>(i), run);
    }
  }
}

// 8. Bind waits to records (event: latest enqueued before; notify: k-th with k-th).
absl::Status ProgramBuilder::BindWaits() {
  PlanProgram& prog = prog_;
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
        return absl::InvalidArgumentError(
            StrCat("notify ", prog.syncs[k].id, ": the wait of ",
                   SlotName(plan_, item.node, item.attached),
                   " has no matching record; the plan would deadlock"));
      }
      std::tie(item.bound_stream, item.bound_item) = notify_records[k][w];
    }
  }
  return absl::OkStatus();
}

// 9. Deadlock check: Kahn's algorithm over queue order + wait bindings.
absl::Status ProgramBuilder::CheckDeadlock() {
  const PlanProgram& prog = prog_;
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
  if (done == base.back()) return absl::OkStatus();
  for (size_t s = 0; s < prog.streams.size(); ++s) {
    for (size_t i = 0; i < prog.streams[s].items.size(); ++i) {
      const ProgramItem& item = prog.streams[s].items[i];
      if (indeg[base[s] + i] > 0 && item.kind == ProgramItem::Kind::kWait) {
        return absl::InvalidArgumentError(StrCat(
            "the plan would deadlock: the wait of ", SlotName(plan_, item.node, item.attached),
            " on ", prog.syncs[item.sync].kind == SyncObject::Kind::kNotify ? "notify " : "event ",
            prog.syncs[item.sync].id,
            " can never complete (a cycle through the stream queues and events)"));
      }
    }
  }
  return absl::InvalidArgumentError("the plan would deadlock: a cycle through the stream queues");
}

}  // namespace

absl::StatusOr<PlanProgram> BuildPlanProgram(const Plan& plan, ControlFlow control_flow) {
  PlanProgram prog;
  prog.control_flow = std::move(control_flow);
  if (prog.control_flow.runs.size() != plan.model.num_nodes()) {
    return absl::InternalError("control flow resolved for another plan");
  }
  ProgramBuilder builder(plan, prog);
  builder.IndexStreams();
  builder.IndexSyncs();
  NPUPLAN_RETURN_IF_ERROR(builder.PlaceEvents());
  builder.IndexRunSlots();
  builder.PlaceActivations();
  builder.PlaceHostSyncs();
  builder.EmitItems();
  NPUPLAN_RETURN_IF_ERROR(builder.BindWaits());
  NPUPLAN_RETURN_IF_ERROR(builder.CheckDeadlock());
  return prog;
}

}  // namespace npuplan::sim
