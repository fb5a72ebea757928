#include "npuplan/plan/plan_claims.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

absl::Status Fail(std::string_view rule, std::string_view what) {
  return absl::InternalError(StrCat("verifier[", rule, "]: ", what));
}

std::string Name(const Node& n) { return StrCat("'", EchoName(n.name), "'"); }
std::string StageName(IrProperty p) {
  return StrCat("'", PropertyNames(static_cast<IrProperties>(p)), "'");
}

constexpr IrProperty kAllStages[] = {IrProperty::kTopoSorted,     IrProperty::kPartitioned,
                                     IrProperty::kLogicalStreams, IrProperty::kAttachedStreams,
                                     IrProperty::kMemoryPlanned,  IrProperty::kTasks,
                                     IrProperty::kSyncEvents,     IrProperty::kPhysicalStreams,
                                     IrProperty::kActiveStreams,  IrProperty::kSyncNodes};

// Content that only `stage` produces is present (`what` says which) but the
// plan does not claim the stage, so none of its checks would run. A snapshot
// taken inside the stage (`in_progress`) may hold it: it is never complete.
absl::Status Unclaimed(const Plan& plan, IrProperty stage, bool present, std::string_view what) {
  if (!present || Has(plan.established, stage) || Has(plan.in_progress, stage))
    return absl::OkStatus();
  return Fail("stages", StrCat(what, ", but the plan does not claim stage ", StageName(stage),
                               " (its checks would not run)"));
}

// A snapshot is inside one stage that it does not claim yet and whose
// prerequisites it claims (the stage's pass started).
absl::Status CheckInProgress(const Plan& plan) {
  if (plan.in_progress == 0) return absl::OkStatus();
  const IrProperties p = plan.in_progress;
  if ((p & (p - 1)) != 0) {
    return Fail("stages", StrCat("in_progress names several stages [", PropertyNames(p), "]"));
  }
  if ((plan.established & p) != 0) {
    return Fail("stages", StrCat("the plan claims stage '", PropertyNames(p),
                                 "' and says it is still in progress"));
  }
  const IrProperties missing = StageNeeds(static_cast<IrProperty>(p)) & ~plan.established;
  if (missing != 0) {
    return Fail("stages", StrCat("stage '", PropertyNames(p),
                                 "' is in progress but the plan does not claim [",
                                 PropertyNames(missing), "], which it needs first"));
  }
  return absl::OkStatus();
}

absl::Status CheckStages(const Plan& plan, bool memory_section) {
  NPUPLAN_RETURN_IF_ERROR(CheckInProgress(plan));
  for (IrProperty s : kAllStages) {
    if (!Has(plan.established, s)) continue;
    const IrProperties missing = StageNeeds(s) & ~plan.established;
    if (missing != 0) {
      return Fail("stages", StrCat("the plan claims stage ", StageName(s), " but not [",
                                   PropertyNames(missing), "], which it needs first"));
    }
  }
  // Per node, the message is built only for the node that fails.
  const Model& m = plan.model;
  auto unclaimed = [&plan](IrProperty stage, bool present) {
    return !Unclaimed(plan, stage, present, "").ok();
  };
  // A stage the plan claims (or is inside) cannot be unclaimed by any node:
  // the walks below run only for the stages it does not claim.
  auto open = [&plan](IrProperty stage) {
    return !Has(plan.established, stage) && !Has(plan.in_progress, stage);
  };
  const bool node_walk = open(IrProperty::kLogicalStreams) || open(IrProperty::kAttachedStreams);
  for (size_t i = 0; node_walk && i < m.num_nodes(); ++i) {
    const Node& n = m.nodes()[i];
    if (unclaimed(IrProperty::kLogicalStreams, n.stream_id >= 0)) {
      return Unclaimed(plan, IrProperty::kLogicalStreams, true,
                       StrCat("node ", Name(n), " is on stream ", n.stream_id));
    }
    if (unclaimed(IrProperty::kAttachedStreams, !n.attached_stream_ids.empty())) {
      return Unclaimed(plan, IrProperty::kAttachedStreams, true,
                       StrCat("node ", Name(n), " has attached streams"));
    }
  }
  for (size_t i = 0; open(IrProperty::kTasks) && i < plan.tasks.size() && i < m.num_nodes(); ++i) {
    if (unclaimed(IrProperty::kTasks, plan.tasks[i] != 0)) {
      return Unclaimed(plan, IrProperty::kTasks, true,
                       StrCat("node ", Name(m.nodes()[i]), " has ", plan.tasks[i], " tasks"));
    }
  }
  for (size_t i = 0;
       open(IrProperty::kPhysicalStreams) && i < plan.physical_stream.size() && i < m.num_nodes();
       ++i) {
    if (unclaimed(IrProperty::kPhysicalStreams, plan.physical_stream[i] >= 0)) {
      return Unclaimed(plan, IrProperty::kPhysicalStreams, true,
                       StrCat("node ", Name(m.nodes()[i]), " has a physical stream"));
    }
  }
  const StreamResult& s = plan.streams;
  NPUPLAN_RETURN_IF_ERROR(Unclaimed(
      plan, IrProperty::kLogicalStreams,
      s.logical != 0 || s.physical != 0 || !s.streams.empty() || s.mode != StreamMode::kNone,
      "the plan has a streams section"));
  NPUPLAN_RETURN_IF_ERROR(Unclaimed(plan, IrProperty::kAttachedStreams, !s.attached.empty(),
                                    "streams.attached is not empty"));
  NPUPLAN_RETURN_IF_ERROR(Unclaimed(plan, IrProperty::kPhysicalStreams,
                                    !s.split_to_logical.empty() || !s.attached_physical.empty() ||
                                        !s.huge.empty() || s.task_limit != 0 ||
                                        s.huge_task_limit != 0,
                                    "the streams section has physical-split data"));
  const EventTable& ev = plan.events;
  NPUPLAN_RETURN_IF_ERROR(Unclaimed(
      plan, IrProperty::kSyncEvents,
      !ev.events.empty() || ev.event_count != 0 || ev.notify_count != 0 || !ev.counts.empty(),
      StrCat("the plan has ", ev.events.size(), " events (summary: ", ev.event_count,
             " event ids, ", ev.notify_count, " notify ids)")));
  if (memory_section) NPUPLAN_RETURN_IF_ERROR(VerifyMemorySectionClaim(plan));
  // A partition section is checked whether or not the stage is claimed
  // (CheckPartition; no stage check reads it), so it needs no claim.
  if (Has(plan.established, IrProperty::kPartitioned) && !plan.partition.ran) {
    return Fail("stages", "the plan claims stage 'partitioned' but has no partition section");
  }
  return absl::OkStatus();
}

// Sizes first, against the node count, before anything is sized by them;
// attached ids follow the main ones (the attached-streams check verifies them
// in detail).
absl::Status CheckStreamCounts(const Plan& plan) {
  const StreamResult& s = plan.streams;
  const int64_t nodes = static_cast<int64_t>(plan.model.num_nodes());
  if (s.logical < 0 || s.logical > nodes) {
    return Fail("streams", StrCat("streams.logical is ", s.logical, " but the plan has ", nodes,
                                  " nodes (each main stream carries at least one)"));
  }
  const int64_t logical = s.logical;
  const int64_t attached = static_cast<int64_t>(s.attached.size());
  for (int64_t i = 0; i < attached; ++i) {
    if (s.attached[i] != logical + i) {
      return Fail(
          "streams",
          StrCat("streams.attached[", i, "] is ", s.attached[i], "; attached stream ids are ",
                 logical, "..", logical + attached - 1, " (after the ", logical, " main streams)"));
    }
  }
  return absl::OkStatus();
}

// What the nodes on each main stream carry, for streams.list.
struct MainStreams {
  std::vector<std::set<std::string>> labels;        // `_user_stream_label`s
  std::vector<std::set<int64_t>> attached_of_main;  // attached stream ids
};

// Every node is on an existing stream and every main stream carries a node.
absl::StatusOr<MainStreams> CollectMainStreams(const Plan& plan, int64_t logical,
                                               int64_t attached) {
  std::vector<uint8_t> used(static_cast<size_t>(logical), 0);
  MainStreams out;
  out.labels.resize(static_cast<size_t>(logical));
  out.attached_of_main.resize(static_cast<size_t>(logical));
  const Model& m = plan.model;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (i + kNodePrefetch < m.num_nodes()) {  // the lines read below: attrs, streams
      const Node& ahead = m.nodes()[i + kNodePrefetch];
      __builtin_prefetch(&ahead.attrs);
      __builtin_prefetch(&ahead.stream_id);
      __builtin_prefetch(&ahead.attached_stream_ids);
    }
    const Node& n = m.nodes()[i];
    if (n.stream_id < 0) continue;
    if (n.stream_id >= logical + attached) {
      return Fail("streams", StrCat("node ", Name(n), " is on stream ", n.stream_id,
                                    " but streams.logical is ", logical, " and there are ",
                                    attached, " attached streams"));
    }
    if (n.stream_id >= logical) continue;  // a Send/Recv node on an attached stream
    used[n.stream_id] = 1;
    if (auto label = GetStringAttr(n.attrs, "_user_stream_label"); label && !label->empty()) {
      out.labels[n.stream_id].insert(*label);
    }
    out.attached_of_main[n.stream_id].insert(n.attached_stream_ids.begin(),
                                             n.attached_stream_ids.end());
  }
  for (int64_t i = 0; i < logical; ++i) {
    if (!used[i]) {
      return Fail("streams",
                  StrCat("streams.logical is ", logical, " but no node is on main stream ", i));
    }
  }
  return out;
}

// Each streams.list entry matches its stream: id, physical count (1 + its
// split streams once the split is claimed), attached ids and user label.
absl::Status CheckStreamList(const Plan& plan, const MainStreams& mains,
                             std::map<int64_t, int64_t>& splits_of, bool physical_claimed) {
  const StreamResult& s = plan.streams;
  for (int64_t i = 0; i < static_cast<int64_t>(s.streams.size()); ++i) {
    const LogicalStream& ls = s.streams[i];
    const std::string at = StrCat("streams.list[", i, "]");
    if (ls.id != i) return Fail("streams", StrCat(at, ".id is ", ls.id, ", expected ", i));
    const int64_t physical_count = physical_claimed ? 1 + splits_of[i] : 1;
    if (ls.physical_count != physical_count) {
      return Fail("streams", StrCat(at, ".physical_count is ", ls.physical_count, " but stream ", i,
                                    " has ", physical_count, " physical stream(s)"));
    }
    if (ls.hccl_followed_count < 0) {
      return Fail("streams",
                  StrCat(at, ".hccl_followed_count is negative (", ls.hccl_followed_count, ")"));
    }
    const std::vector<int64_t> want(mains.attached_of_main[i].begin(),
                                    mains.attached_of_main[i].end());
    if (ls.attached_ids != want) {
      return Fail("streams", StrCat(at, ".attached_ids is [", StrJoin(ls.attached_ids, ","),
                                    "] but the nodes on stream ", i, " use attached streams [",
                                    StrJoin(want, ","), "]"));
    }
    const std::set<std::string>& labels = mains.labels[i];
    if (ls.user_label.empty() ? !labels.empty() : labels.count(ls.user_label) == 0) {
      return Fail("streams", StrCat(at, ".user_label is '", EchoName(ls.user_label),
                                    "' but the nodes on stream ", i,
                                    labels.empty() ? " carry no _user_stream_label"
                                                   : StrCat(" carry _user_stream_label '",
                                                            EchoName(*labels.begin()), "'")));
    }
  }
  return absl::OkStatus();
}

// streams.physical: the logical count before the split; after it main +
// attached + split streams, plus at most one stream per StreamActive node
// that stream activation created (no logical stream of its own), each
// carrying one. Returns the count without those activation streams.
absl::StatusOr<int64_t> CheckPhysicalCount(const Plan& plan, int64_t logical, int64_t attached,
                                           bool physical_claimed) {
  const Model& m = plan.model;
  const StreamResult& s = plan.streams;
  const int64_t split_end = logical + attached + static_cast<int64_t>(s.split_to_logical.size());
  const int64_t physical = physical_claimed ? split_end : logical;
  // Before the split the count is the logical one (0 where no pass set it).
  const int64_t activation = physical_claimed ? s.physical - split_end : 0;
  // A pass over every node: only when there are activation streams to
  // account for, or for the message.
  auto count_activation_nodes = [&]() -> int64_t {
    if (!Has(plan.established, IrProperty::kActiveStreams)) return 0;
    return std::count_if(m.nodes().begin(), m.nodes().end(),
                         [](const Node& n) { return n.stream_id < 0 && n.type == "StreamActive"; });
  };
  const bool activation_streams = activation > 0 && activation <= count_activation_nodes();
  if (s.physical != physical && (physical_claimed || s.physical != 0) && !activation_streams) {
    const int64_t activation_nodes = count_activation_nodes();
    return Fail(
        "streams",
        StrCat("streams.physical is ", s.physical, " but the plan has ", physical,
               physical_claimed ? StrCat(" (", logical, " main + ", attached, " attached + ",
                                         s.split_to_logical.size(), " split + ", activation_nodes,
                                         " at most for StreamActive nodes)")
                                : StrCat(" (", logical, " main streams, before the split)")));
  }
  if (activation > 0) {
    std::vector<uint8_t> carried(static_cast<size_t>(activation), 0);
    for (size_t i = 0; i < m.num_nodes() && i < plan.physical_stream.size(); ++i) {
      const int64_t p = plan.physical_stream[i];
      if (p >= split_end && p < s.physical && m.nodes()[i].type == "StreamActive" &&
          m.nodes()[i].stream_id < 0) {
        carried[p - split_end] = 1;
      }
    }
    for (int64_t k = 0; k < activation; ++k) {
      if (!carried[k]) {
        return Fail("streams", StrCat("streams.physical is ", s.physical, " but physical stream ",
                                      split_end + k,
                                      " (after the split streams) carries no StreamActive node"));
      }
    }
  }
  return physical;
}

// The split's data: split streams numbered after the attached ones, huge
// streams and task limits, attached streams' physical ids (`physical`
// streams exist).
absl::Status CheckSplitData(const Plan& plan, int64_t logical, int64_t attached, int64_t physical) {
  const Model& m = plan.model;
  const StreamResult& s = plan.streams;
  int64_t next_split = logical + attached;
  for (const auto& [p, l] : s.split_to_logical) {
    if (p != next_split++) {
      return Fail("streams", StrCat("streams.split_to_logical has physical stream ", p,
                                    "; the streams opened by the "
                                    "split are ",
                                    logical + attached, "..", physical - 1));
    }
  }
  std::set<int64_t> huge;
  for (int64_t h : s.huge) {
    if (h < 0 || h >= physical || !huge.insert(h).second) {
      return Fail("streams", StrCat("streams.huge lists stream ", h, " (",
                                    h < 0 || h >= physical ? "no such stream" : "twice", ")"));
    }
  }
  if (s.task_limit < 0 || s.huge_task_limit < 0 || (s.huge.empty() && s.huge_task_limit != 0)) {
    return Fail("streams", StrCat("streams.task_limit ", s.task_limit, " / huge_task_limit ",
                                  s.huge_task_limit,
                                  " are not >= 0 (huge_task_limit 0 without huge streams)"));
  }
  for (const auto& [node, ids] : s.attached_physical) {
    const Node& n = m.nodes()[node];
    if (ids.size() != n.attached_stream_ids.size()) {
      return Fail("streams", StrCat("streams.attached_physical lists ", ids.size(),
                                    " streams for node ", Name(n), ", which has ",
                                    n.attached_stream_ids.size(), " attached streams"));
    }
    for (int64_t p : ids) {
      if (p < 0 || p >= physical) {
        return Fail("streams", StrCat("streams.attached_physical: node ", Name(n),
                                      " uses physical stream ", p, ", which does not exist"));
      }
    }
  }
  return absl::OkStatus();
}

// The mode agrees with the partition, and the auto mode's makespans are consistent.
absl::Status CheckModeAndMakespan(const Plan& plan) {
  const StreamResult& s = plan.streams;
  // The mode is an enum (kNone where no pass set it): the plan reader
  // refuses a name outside the table with this rule's message.
  const std::vector<uint8_t> unknown = UnknownShapeGraphs(plan);
  const bool dynamic = std::find(unknown.begin(), unknown.end(), 1) != unknown.end();
  if (dynamic != IsDynamicStreamMode(s.mode)) {
    return Fail("streams", StrCat("streams.mode is '", StreamModeName(s.mode), "' but ",
                                  dynamic ? "the partition makes a graph unknown-shape"
                                          : "no graph is unknown-shape"));
  }
  if (s.estimated_makespan < 0 || s.makespan_lower_bound < 0 ||
      s.makespan_lower_bound > s.estimated_makespan ||
      (s.auto_mode.empty() && (s.estimated_makespan != 0 || s.makespan_lower_bound != 0))) {
    return Fail("streams", StrCat("streams.estimated_makespan ", s.estimated_makespan,
                                  " and makespan_lower_bound ", s.makespan_lower_bound,
                                  " must satisfy 0 <= bound <= makespan, and be 0 without "
                                  "auto_mode"));
  }
  return absl::OkStatus();
}

absl::Status CheckStreams(const Plan& plan) {
  if (!Has(plan.established, IrProperty::kLogicalStreams)) return absl::OkStatus();
  const StreamResult& s = plan.streams;
  NPUPLAN_RETURN_IF_ERROR(CheckStreamCounts(plan));
  const int64_t logical = s.logical;
  const int64_t attached = static_cast<int64_t>(s.attached.size());
  // Continuity first (its message says which id is missing).
  NPUPLAN_RETURN_IF_ERROR(VerifyStreamIdsContinuous(plan.model));
  NPUPLAN_ASSIGN_OR_RETURN(const MainStreams mains, CollectMainStreams(plan, logical, attached));
  // The list is informational (an empty one is no claim); a list given is right.
  if (!s.streams.empty() && static_cast<int64_t>(s.streams.size()) != logical) {
    return Fail("streams", StrCat("streams.list has ", s.streams.size(), " entries for ", logical,
                                  " main streams"));
  }
  const bool physical_claimed = Has(plan.established, IrProperty::kPhysicalStreams);
  std::map<int64_t, int64_t> splits_of;  // logical → split streams
  for (const auto& [p, l] : s.split_to_logical) {
    if (l < 0 || l >= logical + attached) {
      return Fail("streams", StrCat("streams.split_to_logical maps physical stream ", p,
                                    " to stream ", l, ", which does not exist"));
    }
    ++splits_of[l];
  }
  NPUPLAN_RETURN_IF_ERROR(CheckStreamList(plan, mains, splits_of, physical_claimed));
  NPUPLAN_ASSIGN_OR_RETURN(const int64_t physical,
                           CheckPhysicalCount(plan, logical, attached, physical_claimed));
  NPUPLAN_RETURN_IF_ERROR(CheckSplitData(plan, logical, attached, physical));
  return CheckModeAndMakespan(plan);
}

// The physical stream of node n's main (attached < 0) or attached stream.
int64_t PhysicalOf(const Plan& plan, NodeId n, int32_t attached) {
  if (attached < 0)
    return n.index() < plan.physical_stream.size() ? plan.physical_stream[n.index()] : -1;
  if (auto it = plan.streams.attached_physical.find(n.value);
      it != plan.streams.attached_physical.end()) {
    return static_cast<size_t>(attached) < it->second.size() ? it->second[attached] : -1;
  }
  const auto& ids = plan.model.node(n).attached_stream_ids;
  return static_cast<size_t>(attached) < ids.size() ? ids[attached] : -1;
}

// The stream a physical stream was split from (itself when not split).
int64_t LogicalOf(const Plan& plan, int64_t physical) {
  auto it = plan.streams.split_to_logical.find(physical);
  return it == plan.streams.split_to_logical.end() ? physical : it->second;
}

absl::Status CheckEvents(const Plan& plan) {
  const Model& m = plan.model;
  const auto& events = plan.events.events;
  for (size_t i = 0; i < events.size(); ++i) {
    const SyncEvent& e = events[i];
    if (!e.send.valid() || !e.recv.valid() || e.send.index() >= m.num_nodes() ||
        e.recv.index() >= m.num_nodes()) {
      return Fail("events", StrCat("events[", i, "] names no node"));
    }
    for (auto [node, index, field] : {std::tuple{e.send, e.send_attached, "send_attached"},
                                      std::tuple{e.recv, e.recv_attached, "recv_attached"}}) {
      const Node& n = m.node(node);
      const int64_t count = static_cast<int64_t>(n.attached_stream_ids.size());
      if (index < -1 || index >= count) {
        return Fail(
            "events",
            StrCat("events[", i, "] (", SyncKindName(e.kind), " ", e.id, "): ", field, " is ",
                   index, "; it must be -1 (the main stream of ", Name(n), ")",
                   count > 0 ? StrCat(" or 0..", count - 1, " (its attached streams)") : ""));
      }
    }
  }
  // A split event (its Send/Recv tasks are not counted against the task
  // limit) is the one event opening each split stream, on the split's logical
  // stream: no other event can be relabelled as one.
  std::map<int64_t, int64_t> opened;  // split physical stream → split events received on it
  const auto& split = plan.streams.split_to_logical;
  for (size_t i = 0; i < events.size(); ++i) {
    const SyncEvent& e = events[i];
    // stream-activation adds the loop-order and loop-join events;
    // verifier[loop-order] checks what they order.
    if (e.reason == SyncReason::kLoopFork || e.reason == SyncReason::kLoopNext ||
        e.reason == SyncReason::kLoopJoin) {
      NPUPLAN_RETURN_IF_ERROR(Unclaimed(plan, IrProperty::kActiveStreams, true,
                                        StrCat("events[", i, "] is a loop-order event")));
    }
    if (e.reason != SyncReason::kSplit) continue;
    NPUPLAN_RETURN_IF_ERROR(Unclaimed(plan, IrProperty::kPhysicalStreams, true,
                                      StrCat("events[", i, "] is a split event")));
    const int64_t p = PhysicalOf(plan, e.recv, e.recv_attached);
    const int64_t from = PhysicalOf(plan, e.send, e.send_attached);
    auto it = split.find(p);
    if (it == split.end() || ++opened[p] > 1 || LogicalOf(plan, from) != it->second) {
      return Fail("events", StrCat("events[", i, "] (", SyncKindName(e.kind), " ", e.id,
                                   ") is a split event but ", "does not open split stream ", p,
                                   " from its logical stream (one split event "
                                   "per split stream, from the stream it was split from)"));
    }
  }
  // An exact-minimal plan (event_counts.minimum) drops a split event that other events imply; the
  // events verifier proves the logical order across the split still holds.
  const bool minimal = plan.events.counts.count("minimum") > 0;
  if (Has(plan.established, IrProperty::kPhysicalStreams) &&
      (minimal ? opened.size() > split.size() : opened.size() != split.size())) {
    return Fail("events", StrCat("the split opened ", split.size(), " streams but ", opened.size(),
                                 " split events open them"));
  }
  // naive / ge / exact: the three event-optimisation counts; minimum: the
  // final table's size when event-minimization made it the fewest events (the
  // events verifier recomputes it: VerifyEventMinimum); device_*: what
  // event-id-allocation recorded (the ids against the table, the bound against
  // the ids: VerifyEventIds); *_exact is a 0/1 flag.
  static constexpr std::string_view kCountKeys[] = {
      "naive",
      "ge",
      "exact",
      "minimum",
      "device_event_ids",
      "device_event_ids_lower_bound",
      "device_notify_ids",
      "device_notify_ids_lower_bound",
  };
  for (const auto& [key, value] : plan.events.counts) {
    const bool flag = key == "device_event_ids_exact" || key == "device_notify_ids_exact";
    const bool known =
        flag || std::find(std::begin(kCountKeys), std::end(kCountKeys), key) != std::end(kCountKeys);
    if (!known || value < 0 || (flag && value > 1)) {
      return Fail("events",
                  StrCat("event_counts.", EchoName(key), " = ", value,
                         " (the keys are naive, ge, exact, minimum and event-id-allocation's "
                         "device_{event,notify}_ids[_lower_bound] (each >= 0) and "
                         "device_{event,notify}_ids_exact (0 or 1))"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTasks(const Plan& plan) {
  if (!Has(plan.established, IrProperty::kTasks)) return absl::OkStatus();
  const Model& m = plan.model;
  if (plan.tasks.size() < m.num_nodes())
    return Fail("tasks", "the plan has no task count per node");
  const bool split = Has(plan.established, IrProperty::kPhysicalStreams);
  EngineRunLookup engines(m.engine_table);
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (i + kNodePrefetch < m.num_nodes()) {  // the lines read below: type, engine, attrs
      const Node& ahead = m.nodes()[i + kNodePrefetch];
      __builtin_prefetch(&ahead.type);
      __builtin_prefetch(&ahead.engine);
      __builtin_prefetch(&ahead.attrs);
    }
    const Node& n = m.nodes()[i];
    if (absl::Status s = CheckTaskAttributes(n); !s.ok())
      return Fail("tasks", std::string(s.message()));
    // A gate only marks a place on its stream (no task): the subgraph-entry
    // rules skip it, so it may read or feed nothing (its Recv nodes' control
    // edges excepted).
    if (IsLoopGate(n) &&
        (!n.inputs.empty() || !n.outputs.empty() || !n.subgraphs.empty() ||
         !std::all_of(n.control_inputs.begin(), n.control_inputs.end(), [&](NodeId c) {
           return c.valid() && c.index() < m.num_nodes() && IsSyncNode(m.node(c));
         }))) {
      return Fail("tasks", StrCat("LoopGate node ", Name(n),
                                  " has inputs, outputs, subgraphs or control inputs other than "
                                  "Recv nodes; a loop gate only marks a place on its stream"));
    }
    const int64_t t = plan.tasks[i];
    if (split && n.type == "StreamActive") {
      // One activation per physical stream of each activated stream (the split's count).
      if (t < 1 || t > std::max<int64_t>(plan.streams.physical, 1)) {
        return Fail("tasks", StrCat("StreamActive node ", Name(n), " has ", t,
                                    " tasks; it activates at most ", plan.streams.physical,
                                    " physical streams"));
      }
      continue;
    }
    std::string_view rule;
    const int64_t want = NodeTasks(n, engines.Find(n.engine), &rule);
    if (t != want) {
      return Fail("tasks", StrCat("node ", Name(n), " has ", t, " tasks but the task model gives ",
                                  want, " (rule ", rule, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPartition(const Plan& plan) {
  const PartitionResult& p = plan.partition;
  if (!p.ran) return absl::OkStatus();
  const Model& m = plan.model;
  // The plan reader refuses a name outside the table with this message.
  if (p.decision == PartitionDecision::kNone) {
    return Fail("partition",
                "partition.decision '' is not one of static, whole-dynamic, partitioned, skipped");
  }
  if (p.subgraphs.empty() == (p.decision == PartitionDecision::kPartitioned)) {
    return Fail("partition",
                StrCat("partition.decision is '", PartitionDecisionName(p.decision),
                       "' but the plan lists ", p.subgraphs.size(), " partitioned subgraphs"));
  }
  std::set<std::string_view> names;
  for (size_t i = 0; i < p.subgraphs.size(); ++i) {
    const PartitionSubgraph& sg = p.subgraphs[i];
    const std::string at = StrCat("partition.subgraphs[", i, "]");
    const GraphId g = m.FindGraph(sg.name);
    const NodeId call = m.FindNode(sg.call_node);
    if (!g.valid() || g == kRootGraph || !names.insert(sg.name).second) {
      return Fail("partition", StrCat(at, ".name '", EchoName(sg.name),
                                      "' names no subgraph of the model (or twice)"));
    }
    if (!call.valid() || m.graph(g).parent_node != call || m.node(call).type != "PartitionedCall") {
      return Fail("partition", StrCat(at, ": subgraph '", EchoName(sg.name),
                                      "' is not owned by a PartitionedCall node '",
                                      EchoName(sg.call_node), "'"));
    }
    std::set<int32_t> members;
    for (NodeId id : sg.nodes) {
      if (!id.valid() || id.index() >= m.num_nodes() || m.node(id).graph != g ||
          !members.insert(id.value).second) {
        return Fail(
            "partition",
            StrCat(at, ".nodes lists ",
                   id.valid() && id.index() < m.num_nodes() ? Name(m.node(id)) : "a node",
                   ", which is not a node of subgraph '", EchoName(sg.name), "' (or twice)"));
      }
    }
  }
  for (const auto& [name, why] : p.unknown_nodes) {
    if (!m.FindNode(name).valid()) {
      return Fail("partition",
                  StrCat("partition.unknown_nodes names no node: '", EchoName(name), "'"));
    }
  }
  for (const std::string& name : p.no_tiling_nodes) {
    if (!m.FindNode(name).valid()) {
      return Fail("partition",
                  StrCat("partition.no_tiling_nodes names no node: '", EchoName(name), "'"));
    }
  }
  for (const auto& [kind, count] : p.cluster_counts) {
    if (count < 0)
      return Fail("partition", StrCat("partition.cluster_counts.", EchoName(kind), " is negative"));
  }
  return absl::OkStatus();
}

}  // namespace

IrProperties StageNeeds(IrProperty stage) {
  switch (stage) {
    case IrProperty::kTopoSorted:
      return 0;
    case IrProperty::kPartitioned:
    case IrProperty::kLogicalStreams:
      return static_cast<IrProperties>(IrProperty::kTopoSorted);
    case IrProperty::kAttachedStreams:
    case IrProperty::kMemoryPlanned:
    case IrProperty::kTasks:
    case IrProperty::kSyncEvents:
      return static_cast<IrProperties>(IrProperty::kLogicalStreams);
    case IrProperty::kPhysicalStreams:
      return IrProperty::kTasks | IrProperty::kSyncEvents;
    case IrProperty::kActiveStreams:
      return static_cast<IrProperties>(IrProperty::kPhysicalStreams);
    case IrProperty::kSyncNodes:
      return static_cast<IrProperties>(IrProperty::kSyncEvents);
  }
  return 0;
}

namespace {

absl::Status VerifyClaims(const Plan& plan, bool memory_section) {
  NPUPLAN_RETURN_IF_ERROR(CheckStages(plan, memory_section));
  NPUPLAN_RETURN_IF_ERROR(CheckStreams(plan));
  NPUPLAN_RETURN_IF_ERROR(CheckEvents(plan));
  NPUPLAN_RETURN_IF_ERROR(CheckTasks(plan));
  return CheckPartition(plan);
}

}  // namespace

absl::Status VerifyPlanClaims(const Plan& plan) {
  return VerifyClaims(plan, /*memory_section=*/true);
}

absl::Status VerifyPlanClaimsButMemory(const Plan& plan) {
  return VerifyClaims(plan, /*memory_section=*/false);
}

absl::Status VerifyMemorySectionClaim(const Plan& plan) {
  return Unclaimed(plan, IrProperty::kMemoryPlanned, plan.memory.planned,
                   "the plan has a memory section");
}

}  // namespace npuplan
