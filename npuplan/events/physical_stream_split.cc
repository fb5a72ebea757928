#include "npuplan/events/physical_stream_split.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "npuplan/events/event_options.h"
#include "npuplan/events/loop_gates.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/plan/loop_order.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

// Task counts come from attributes: every sum is checked and kept below
// int64's end by the reserve (so `tasks + reserve > limit` cannot overflow;
// a limit may be as large as int64).
class TaskAdder {
 public:
  TaskAdder(std::string_view pass, const Model& m, const events::SyncView& view)
      : pass_(pass), m_(m), view_(view) {}

  absl::Status Add(int64_t& to, int64_t v, int32_t slot, std::string_view what) const {
    return TryAdd(to, v) ? absl::OkStatus() : Overflow(slot, what);
  }
  // The same for a stream's task total; its message is built only on overflow.
  absl::Status AddToStream(int64_t& to, int64_t v, int32_t slot, int64_t stream) const {
    return TryAdd(to, v) ? absl::OkStatus()
                         : Overflow(slot, StrCat("the task count of stream ", stream));
  }

 private:
  // to += v unless the sum (plus the reserved tasks) overflows int64.
  static bool TryAdd(int64_t& to, int64_t v) {
    std::optional<int64_t> sum = CheckedAdd(to, v);
    if (!sum || *sum > INT64_MAX - events::kReservedTasks) return false;
    to = *sum;
    return true;
  }
  absl::Status Overflow(int32_t slot, std::string_view what) const {
    return absl::InvalidArgumentError(
        StrCat("[", pass_, "] node '", m_.node(view_.node_of(slot)).name, "': ", what,
               " overflows int64 (task counts from _node_sqe_num / _hccl_task_num / "
               "_hccl_attached_task_num are too large)"));
  }

  std::string_view pass_;
  const Model& m_;
  const events::SyncView& view_;
};

// The branch gates stream-activation will add (events::BranchGateVia): an
// event's end inside a static branch, on an attached stream or on a stream
// the branch activates, is split at a head or tail gate on another main
// stream — a wait and a record more there, counted at that node's slot (the
// gates and the node lie in one physical piece: no stream opens inside a
// branch or right after one). Events the gates later merge are counted
// twice, which splits no later than needed.
absl::Status AddBranchGateTasks(const Plan& plan, const events::SyncView& view,
                                const TaskAdder& adder, std::vector<int64_t>& count) {
  const Model& m = plan.model;
  if (plan.events.events.empty() || !HasBranchSubgraph(m)) return absl::OkStatus();
  const StaticLoopNesting nesting(plan, NestingScopes::kLoopsAndBranches);
  if (nesting.empty()) return absl::OkStatus();
  std::vector<int64_t> stream(m.num_nodes());
  for (size_t i = 0; i < m.num_nodes(); ++i) stream[i] = m.nodes()[i].stream_id;
  std::optional<ActivationInfo> act;
  const std::function<const ActivationInfo&()> activation = [&]() -> const ActivationInfo& {
    if (!act) act = ComputeActivation(m, m.ExecutionOrder());
    return *act;
  };
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason == SyncReason::kLoop) continue;
    for (const bool at_recv : {true, false}) {
      const NodeId via = events::BranchGateVia(m, nesting, activation, stream,
                                               at_recv ? e.recv : e.send, at_recv ? e.send : e.recv,
                                               at_recv ? e.recv_attached : e.send_attached)
                             .via;
      if (!via.valid()) continue;
      const int32_t slot = view.slot(via, -1);
      NPUPLAN_RETURN_IF_ERROR(adder.Add(count[slot], events::kSendTasks + events::kRecvTasks, slot,
                                        "its task count with a branch gate's events"));
    }
  }
  return absl::OkStatus();
}

// Step 1a (GE CollectTaskSize): each slot's tasks, with its events' Send
// (on the slot where the Send runs) and Recv tasks.
absl::StatusOr<std::vector<int64_t>> SlotTaskCounts(const Plan& plan, const events::SyncView& view,
                                                    const TaskAdder& adder) {
  const Model& m = plan.model;
  std::vector<int64_t> count(view.num_slots(), 0);
  for (size_t i = 0; i < m.num_nodes(); ++i) count[i] = plan.tasks[i];
  for (size_t s = m.num_nodes(); s < view.num_slots(); ++s) {
    count[s] = AttachedNodeTasks(m.node(view.node_of(static_cast<int32_t>(s))));
  }
  events::SendSlots send_slot(m, view);  // a subgraph owner's Send runs after its subgraphs
  auto add = [&](const SyncEvent& e) -> absl::Status {
    const int32_t send = send_slot.ForEvent(e), recv = view.slot(e.recv, e.recv_attached);
    NPUPLAN_RETURN_IF_ERROR(
        adder.Add(count[send], events::kSendTasks, send, "its task count with the event's Send"));
    return adder.Add(count[recv], events::kRecvTasks, recv, "its task count with the event's Recv");
  };
  for (const SyncEvent& e : plan.events.events) NPUPLAN_RETURN_IF_ERROR(add(e));
  // The loop-order events stream-activation adds later (plan/loop_order.h):
  // their tasks count here, where the split is decided. A loop is never
  // split, so the logical view gives the slots they will have.
  if (HasLoopSubgraph(m) && !HasLoopOrderEvents(plan)) {
    for (const LoopOrderEvent& l : LoopOrderEvents(LoopsToOrder(plan, view), view))
      NPUPLAN_RETURN_IF_ERROR(add(l.event));
  }
  NPUPLAN_RETURN_IF_ERROR(AddBranchGateTasks(plan, view, adder, count));
  return count;
}

// Step 1b: each logical stream's task total.
absl::StatusOr<std::vector<int64_t>> StreamTaskTotals(const events::SyncView& view,
                                                      const std::vector<int64_t>& count,
                                                      const TaskAdder& adder) {
  std::vector<int64_t> total(view.num_streams(), 0);
  for (size_t s = 0; s < view.num_slots(); ++s) {
    const int32_t slot = static_cast<int32_t>(s);
    if (view.stream(slot) >= 0) {
      NPUPLAN_RETURN_IF_ERROR(
          adder.AddToStream(total[view.stream(slot)], count[s], slot, view.stream(slot)));
    }
  }
  return total;
}

// Step 1c (StreamActive): one activation task per future physical stream of
// each activated stream; they replace the node's own tasks in Plan::tasks.
absl::Status AddActivationTasks(Plan& plan, const events::SyncView& view,
                                const std::vector<int64_t>& stream_limit,
                                const std::vector<int64_t>& total, std::vector<int64_t>& count,
                                const TaskAdder& adder) {
  const Model& m = plan.model;
  const int64_t streams = view.num_streams();
  // The view's overload reads only the nodes with attributes.
  events::ActivationInfo act = events::ComputeActivation(m, view);
  for (const auto& [a, list] : act.activated) {
    const Node& n = m.node(NodeId(a));
    if (n.type != "StreamActive") continue;
    int64_t c = 0;
    for (int64_t t : list) {
      if (t < 0 || t >= streams) continue;
      const int64_t lim = std::max<int64_t>(stream_limit[t], 1);
      const int64_t pieces = total[t] > 0 ? 1 + (total[t] - 1) / lim : 1;  // ceil(total / lim), at least 1
      NPUPLAN_RETURN_IF_ERROR(adder.Add(c, pieces, a, "its activation tasks"));
    }
    if (c == 0) continue;
    int64_t own = count[a] - plan.tasks[a];  // the node's event tasks
    NPUPLAN_RETURN_IF_ERROR(adder.Add(own, c, a, "its task count with the activation tasks"));
    count[a] = own;
    plan.tasks[a] = c;
  }
  return absl::OkStatus();
}

// The slots at the end of `segment` with `n`'s non-empty
// `_continuous_stream_label`: they move to the new stream with `n`, unless
// they are the whole segment (then none move).
std::vector<int32_t> ContinuousLabelRun(const Model& m, const events::SyncView& view,
                                        const std::vector<int32_t>& segment, const Node& n) {
  std::vector<int32_t> moved;
  if (auto label = GetStringAttr(n.attrs, "_continuous_stream_label"); label && !label->empty()) {
    size_t k = segment.size();
    while (k > 0 && GetStringAttr(m.node(view.node_of(segment[k - 1])).attrs,
                                  "_continuous_stream_label") == *label) {
      --k;
    }
    if (k > 0) moved.assign(segment.begin() + static_cast<std::ptrdiff_t>(k), segment.end());
  }
  return moved;
}

// The event that orders the new physical stream's first slot `open` after
// the old stream's last slot `pre`.
// `notify` false for an event across loop levels (insertion's rule, docs/events.md).
void AppendSplitEvent(Plan& plan, const events::SyncView& view, int32_t pre, int32_t open,
                      bool notify) {
  SyncEvent e;
  bool attached = view.attached_of(pre) >= 0 || view.attached_of(open) >= 0;
  e.kind = notify && !attached ? SyncKind::kNotify : SyncKind::kEvent;
  e.id = events::NextId(plan.events, e.kind);
  e.send = view.node_of(pre);
  e.recv = view.node_of(open);
  e.send_attached = view.attached_of(pre);
  e.recv_attached = view.attached_of(open);
  e.reason = SyncReason::kSplit;
  plan.events.events.push_back(e);
}

// Step 2's inputs and results: per slot its physical stream (`phys`, set
// to the logical stream before the walk), the last physical id used.
struct SplitState {
  std::vector<int64_t> phys;
  int64_t last_id = -1;
  int64_t splits = 0;
};

// Step 2: walks the slots in execution order and opens a new physical
// stream where a logical stream's running task count would exceed its limit.
absl::Status WalkAndSplit(std::string_view pass, Plan& plan, PassContext& ctx,
                          const events::SyncView& view, const std::vector<int64_t>& count,
                          const std::vector<int64_t>& stream_limit, bool notify,
                          const TaskAdder& adder, SplitState& st) {
  const Model& m = plan.model;
  const events::Enclosure encloses(m);
  const StaticLoopNesting loops(plan);
  const int64_t streams = view.num_streams();
  StreamResult& sr = plan.streams;
  std::vector<int64_t> tasks(streams, 0), current(streams, -1);
  std::vector<std::vector<int32_t>> segment(streams);
  for (int32_t slot : view.slot_order()) {
    const int64_t t = view.stream(slot);
    if (t < 0) continue;
    const Node& n = m.node(view.node_of(slot));
    const bool first = current[t] < 0;
    if (first) current[t] = t;
    NPUPLAN_RETURN_IF_ERROR(adder.AddToStream(tasks[t], count[slot], slot, t));
    if (!first && tasks[t] + events::kReservedTasks > stream_limit[t] && events::MayOpenStream(n)) {
      // Nodes of this node's continuous-label run move along (unless that is the whole segment).
      std::vector<int32_t> moved = ContinuousLabelRun(m, view, segment[t], n);
      const int32_t open = moved.empty() ? slot : moved.front();
      const int32_t pre = view.stream_slots(t)[view.pos(open) - 1];
      // An enclosing owner: the event would run backwards; a loop body or
      // branch: it would not order every run (Enclosure::InConditional),
      // unless it enters or leaves whole static loops on a main stream
      // (loop gates take it).
      const StreamOpening opening = MayOpenStreamAfter(
          encloses, loops, view.node_of(pre), view.node_of(open), view.attached_of(open) < 0);
      const bool across_loops = opening == StreamOpening::kAcrossLoops;
      if (opening == StreamOpening::kNo) {
        st.phys[slot] = current[t];
        segment[t].push_back(slot);
        continue;
      }
      const int64_t id = ++st.last_id;
      sr.split_to_logical[id] = t;
      tasks[t] = count[slot];
      for (int32_t mv : moved) {
        st.phys[mv] = id;
        NPUPLAN_RETURN_IF_ERROR(adder.AddToStream(tasks[t], count[mv], mv, id));
      }
      segment[t].clear();
      segment[t].insert(segment[t].end(), moved.begin(), moved.end());
      current[t] = id;
      ++st.splits;
      AppendSplitEvent(plan, view, pre, open, notify && !across_loops);
      ctx.log.Record(pass, "StreamSplit", "", Field("logical", t), Field("physical", id),
                     Field("at", n.name), Field("tasks", tasks[t]), Field("moved", moved.size()));
    }
    st.phys[slot] = current[t];
    segment[t].push_back(slot);
  }
  return absl::OkStatus();
}

// Step 3: the physical streams of the nodes and of their attached streams
// (only those an attached stream moved off its logical id).
void WritePhysicalStreams(Plan& plan, const events::SyncView& view,
                          const std::vector<int64_t>& phys) {
  const Model& m = plan.model;
  StreamResult& sr = plan.streams;
  for (size_t i = 0; i < m.num_nodes(); ++i) plan.physical_stream[i] = phys[i];
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    NodeId id(static_cast<int32_t>(i));
    if (view.num_attached(id) == 0) continue;
    std::vector<int64_t> ids;
    bool moved = false;
    for (int32_t a = 0; a < view.num_attached(id); ++a) {
      ids.push_back(phys[view.slot(id, a)]);
      moved |= ids.back() != m.nodes()[i].attached_stream_ids[a];
    }
    if (moved) sr.attached_physical[static_cast<int64_t>(i)] = std::move(ids);
  }
}

}  // namespace

absl::StatusOr<bool> PhysicalStreamSplit::Run(Plan& plan, PassContext& ctx) {
  plan.EnsureNodeVectors();
  const Model& m = plan.model;
  NPUPLAN_ASSIGN_OR_RETURN(const events::EventOptions opts, events::ReadEventOptions(ctx.options));
  const int64_t limit = opts.max_tasks_per_stream;
  const int64_t huge_limit = opts.huge_stream_tasks;
  const bool unlimited = opts.unlimited_stream_depth;
  // GE splits only static models ("dynamic = logical stream allocation →
  // GenTask", ge-reference §1/§3): no split (and no huge stream) when the
  // streams were assigned in a dynamic mode.
  const bool dynamic = IsDynamicStreamMode(plan.streams.mode);
  events::SyncView view(plan, /*physical=*/false);
  const int64_t streams = view.num_streams();
  StreamResult& sr = plan.streams;
  sr.split_to_logical.clear();
  sr.attached_physical.clear();
  sr.huge.clear();
  const TaskAdder adder(name(), m, view);

  // 1. Task counts.
  NPUPLAN_ASSIGN_OR_RETURN(std::vector<int64_t> count, SlotTaskCounts(plan, view, adder));
  NPUPLAN_ASSIGN_OR_RETURN(const std::vector<int64_t> total, StreamTaskTotals(view, count, adder));
  // Huge stream: single-stream mode that would overflow a normal stream.
  std::vector<int64_t> stream_limit(streams, limit);
  if (opts.single_stream && !dynamic && streams == 1 && total[0] + events::kReservedTasks > limit) {
    sr.huge = {0};
    stream_limit[0] = huge_limit;
    ctx.log.Record(name(), "HugeStream", "", Field("stream", 0), Field("tasks", total[0]),
                   Field("limit", huge_limit));
  }
  NPUPLAN_RETURN_IF_ERROR(AddActivationTasks(plan, view, stream_limit, total, count, adder));

  // 2. Walk and split.
  SplitState st;
  st.phys.assign(view.num_slots(), -1);
  for (size_t s = 0; s < view.num_slots(); ++s) st.phys[s] = view.stream(static_cast<int32_t>(s));
  st.last_id = streams - 1;
  if (unlimited || dynamic) {
    ctx.log.Record(name(), "SplitDisabled", "",
                   Field("reason", unlimited ? "unlimited-depth" : "dynamic-shape"));
  } else {
    NPUPLAN_RETURN_IF_ERROR(
        WalkAndSplit(name(), plan, ctx, view, count, stream_limit, opts.notify, adder, st));
  }
  events::RecountIds(plan.events);
  if (plan.events.notify_count > events::kMaxNotifies) {
    return absl::ResourceExhaustedError(
        StrCat("[", name(), "] ", plan.events.notify_count, " notifies exceed the device limit of ",
               events::kMaxNotifies, " after the split (ge.event=notify)"));
  }

  // 3. Results.
  WritePhysicalStreams(plan, view, st.phys);
  sr.physical = st.last_id + 1;
  sr.task_limit = unlimited || dynamic ? 0 : limit;
  sr.huge_task_limit = sr.huge.empty() ? 0 : huge_limit;
  for (LogicalStream& ls : sr.streams) {
    ls.physical_count = 1;
    for (const auto& [p, l] : sr.split_to_logical) ls.physical_count += l == ls.id ? 1 : 0;
  }
  ctx.stats.Set(name(), "physical_streams", sr.physical);
  ctx.stats.Set(name(), "splits", st.splits);
  return true;
}

}  // namespace npuplan
