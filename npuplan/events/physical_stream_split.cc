#include "npuplan/events/physical_stream_split.h"

#include <algorithm>

#include "npuplan/events/sync_view.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

int64_t OptionInt(const CompileOptions& o, std::string_view key) { return std::stoll(o.Get(key)); }

}  // namespace

absl::StatusOr<bool> PhysicalStreamSplit::Run(Plan& plan, PassContext& ctx) {
  plan.EnsureNodeVectors();
  const Model& m = plan.model;
  const int64_t limit = OptionInt(ctx.options, "npuplan.device.maxTasksPerStream");
  const int64_t huge_limit = OptionInt(ctx.options, "npuplan.device.hugeStreamTasks");
  const bool unlimited = ctx.options.GetBool("npuplan.device.unlimitedStreamDepth");
  // GE splits only static models ("dynamic = logical stream allocation →
  // GenTask", ge-reference §1/§3): no split (and no huge stream) when the
  // streams were assigned in a dynamic mode.
  const bool dynamic = plan.streams.mode.rfind("dynamic", 0) == 0;
  const bool single = ctx.options.GetBool("ge.enableSingleStream");
  const bool notify = ctx.options.Get("ge.event") == "notify";
  events::SyncView view(plan, /*physical=*/false);
  const events::Enclosure encloses(m);
  const int64_t streams = view.num_streams();
  StreamResult& sr = plan.streams;
  sr.split_to_logical.clear();
  sr.attached_physical.clear();
  sr.huge.clear();

  // 1. Task count per slot (GE CollectTaskSize).
  std::vector<int64_t> count(view.num_slots(), 0);
  for (size_t i = 0; i < m.num_nodes(); ++i) count[i] = plan.tasks[i];
  for (size_t s = m.num_nodes(); s < view.num_slots(); ++s) {
    count[s] = AttachedNodeTasks(m.node(view.node_of(static_cast<int32_t>(s))));
  }
  events::SendSlots send_slot(m, view);  // a subgraph owner's Send runs after its subgraphs
  // Task counts come from attributes: every sum is checked and kept below
  // int64's end by the reserve (so `tasks + reserve > limit` cannot overflow;
  // a limit may be as large as int64).
  auto overflow = [&](int32_t slot, std::string_view what) {
    return absl::InvalidArgumentError(StrCat("[", name(), "] node '", m.node(view.node_of(slot)).name, "': ", what,
                                             " overflows int64 (task counts from _node_sqe_num / _hccl_task_num / "
                                             "_hccl_attached_task_num are too large)"));
  };
  auto add = [&](int64_t& to, int64_t v, int32_t slot, std::string_view what) -> absl::Status {
    std::optional<int64_t> sum = CheckedAdd(to, v);
    if (!sum || *sum > INT64_MAX - events::kReservedTasks) return overflow(slot, what);
    to = *sum;
    return absl::OkStatus();
  };
  for (const SyncEvent& e : plan.events.events) {
    const int32_t send = send_slot.ForEvent(e), recv = view.slot(e.recv, e.recv_attached);
    NPUPLAN_RETURN_IF_ERROR(add(count[send], events::kSendTasks, send, "its task count with the event's Send"));
    NPUPLAN_RETURN_IF_ERROR(add(count[recv], events::kRecvTasks, recv, "its task count with the event's Recv"));
  }
  std::vector<int64_t> total(streams, 0);
  for (size_t s = 0; s < view.num_slots(); ++s) {
    const int32_t slot = static_cast<int32_t>(s);
    if (view.stream(slot) >= 0) {
      NPUPLAN_RETURN_IF_ERROR(add(total[view.stream(slot)], count[s], slot,
                                  StrCat("the task count of stream ", view.stream(slot))));
    }
  }
  // Huge stream: single-stream mode that would overflow a normal stream.
  std::vector<int64_t> stream_limit(streams, limit);
  if (single && !dynamic && streams == 1 && total[0] + events::kReservedTasks > limit) {
    sr.huge = {0};
    stream_limit[0] = huge_limit;
    ctx.log.Record(name(), "HugeStream", "", Field("stream", 0), Field("tasks", total[0]), Field("limit", huge_limit));
  }
  // StreamActive: one activation task per future physical stream of each activated stream.
  events::ActivationInfo act = events::ComputeActivation(m, view.order());
  for (const auto& [a, list] : act.activated) {
    const Node& n = m.node(NodeId(a));
    if (n.type != "StreamActive") continue;
    int64_t c = 0;
    for (int64_t t : list) {
      if (t < 0 || t >= streams) continue;
      const int64_t lim = std::max<int64_t>(stream_limit[t], 1);
      const int64_t pieces = total[t] > 0 ? 1 + (total[t] - 1) / lim : 1;  // ceil(total / lim), at least 1
      NPUPLAN_RETURN_IF_ERROR(add(c, pieces, a, "its activation tasks"));
    }
    if (c == 0) continue;
    int64_t own = count[a] - plan.tasks[a];  // the node's event tasks
    NPUPLAN_RETURN_IF_ERROR(add(own, c, a, "its task count with the activation tasks"));
    count[a] = own;
    plan.tasks[a] = c;
  }

  // 2. Walk and split.
  std::vector<int64_t> phys(view.num_slots(), -1);
  for (size_t s = 0; s < view.num_slots(); ++s) phys[s] = view.stream(static_cast<int32_t>(s));
  int64_t last_id = streams - 1;
  int64_t splits = 0;
  if (unlimited || dynamic) {
    ctx.log.Record(name(), "SplitDisabled", "", Field("reason", unlimited ? "unlimited-depth" : "dynamic-shape"));
  } else {
    std::vector<int64_t> tasks(streams, 0), current(streams, -1);
    std::vector<std::vector<int32_t>> segment(streams);
    std::vector<int32_t> prev(streams, -1);
    for (int32_t slot : view.slot_order()) {
      const int64_t t = view.stream(slot);
      if (t < 0) continue;
      const Node& n = m.node(view.node_of(slot));
      const bool first = current[t] < 0;
      if (first) current[t] = t;
      NPUPLAN_RETURN_IF_ERROR(add(tasks[t], count[slot], slot, StrCat("the task count of stream ", t)));
      if (!first && tasks[t] + events::kReservedTasks > stream_limit[t] && events::MayOpenStream(n)) {
        // Nodes of this node's continuous-label run move along (unless that is the whole segment).
        std::vector<int32_t> moved;
        if (auto label = GetStringAttr(n.attrs, "_continuous_stream_label"); label && !label->empty()) {
          size_t k = segment[t].size();
          while (k > 0 && GetStringAttr(m.node(view.node_of(segment[t][k - 1])).attrs, "_continuous_stream_label") ==
                              *label) {
            --k;
          }
          if (k > 0) moved.assign(segment[t].begin() + static_cast<std::ptrdiff_t>(k), segment[t].end());
        }
        const int32_t open = moved.empty() ? slot : moved.front();
        const int32_t pre = view.stream_slots(t)[view.pos(open) - 1];
        if (encloses(view.node_of(pre), view.node_of(open))) {  // the event would run backwards
          phys[slot] = current[t];
          segment[t].push_back(slot);
          continue;
        }
        const int64_t id = ++last_id;
        sr.split_to_logical[id] = t;
        tasks[t] = count[slot];
        for (int32_t mv : moved) {
          phys[mv] = id;
          NPUPLAN_RETURN_IF_ERROR(add(tasks[t], count[mv], mv, StrCat("the task count of stream ", id)));
        }
        segment[t].clear();
        segment[t].insert(segment[t].end(), moved.begin(), moved.end());
        current[t] = id;
        ++splits;
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
        ctx.log.Record(name(), "StreamSplit", "", Field("logical", t), Field("physical", id), Field("at", n.name),
                       Field("tasks", tasks[t]), Field("moved", moved.size()));
      }
      phys[slot] = current[t];
      segment[t].push_back(slot);
    }
  }
  events::RecountIds(plan.events);
  if (plan.events.notify_count > events::kMaxNotifies) {
    return absl::ResourceExhaustedError(StrCat("[", name(), "] ", plan.events.notify_count,
                                               " notifies exceed the device limit of ", events::kMaxNotifies,
                                               " after the split (ge.event=notify)"));
  }

  // 3. Results.
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
  sr.physical = last_id + 1;
  sr.task_limit = unlimited || dynamic ? 0 : limit;
  sr.huge_task_limit = sr.huge.empty() ? 0 : huge_limit;
  for (LogicalStream& ls : sr.streams) {
    ls.physical_count = 1;
    for (const auto& [p, l] : sr.split_to_logical) ls.physical_count += l == ls.id ? 1 : 0;
  }
  ctx.stats.Set(name(), "physical_streams", sr.physical);
  ctx.stats.Set(name(), "splits", splits);
  return true;
}

}  // namespace npuplan
