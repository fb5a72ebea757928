#include "npuplan/events/stream_activation.h"

#include <algorithm>
#include <set>
#include <span>

#include "npuplan/events/event_options.h"
#include "npuplan/events/host_join_events.h"
#include "npuplan/events/loop_gates.h"
#include "npuplan/events/loop_order_events.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace events {

// The graph of the first slot (a node's main stream, then its attached ones,
// in execution order) of each split physical stream that has one: what the
// physical SyncView's per-stream slot lists give, without building them.
std::map<int64_t, GraphId> SplitStreamOpeningGraphs(const Plan& plan,
                                                    std::span<const NodeId> order) {
  std::map<int64_t, GraphId> out;
  const auto& split = plan.streams.split_to_logical;
  if (split.empty()) return out;
  const Model& m = plan.model;
  // The split streams still without a slot: a flag per id when the ids are
  // small (as the split numbers them), else a set.
  const int64_t max_split = split.rbegin()->first;
  const bool dense = max_split < (int64_t{1} << 22);
  std::vector<uint8_t> wanted(dense ? static_cast<size_t>(std::max<int64_t>(max_split + 1, 0)) : 0,
                              0);
  std::set<int64_t> wanted_set;
  for (const auto& [p, l] : split) {
    if (p < 0) continue;
    if (dense) {
      wanted[p] = 1;
    } else {
      wanted_set.insert(p);
    }
  }
  size_t left =
      dense ? static_cast<size_t>(std::count(wanted.begin(), wanted.end(), 1)) : wanted_set.size();
  auto visit = [&](int64_t stream, GraphId g) {
    const int32_t s = static_cast<int32_t>(stream);  // as SyncView stores it
    if (s < 0) return;
    if (dense) {
      if (s > max_split || !wanted[s]) return;
      wanted[s] = 0;
    } else if (wanted_set.erase(s) == 0) {
      return;
    }
    --left;
    out[s] = g;
  };
  for (size_t k = 0; k < order.size() && left > 0; ++k) {
    // A walk over up to every Node: fetch the lines it reads ahead.
    if (k + kNodePrefetch < order.size()) {
      const Node& ahead = m.nodes()[order[k + kNodePrefetch].index()];
      __builtin_prefetch(&ahead.graph);
      __builtin_prefetch(&ahead.attached_stream_ids);
    }
    const size_t i = order[k].index();
    const Node& node = m.nodes()[i];
    visit(i < plan.physical_stream.size() ? plan.physical_stream[i] : node.stream_id, node.graph);
    if (node.attached_stream_ids.empty()) continue;
    const std::vector<int64_t>* phys = nullptr;
    if (auto it = plan.streams.attached_physical.find(static_cast<int64_t>(i));
        it != plan.streams.attached_physical.end()) {
      phys = &it->second;
    }
    for (size_t a = 0; a < node.attached_stream_ids.size(); ++a)
      visit(phys != nullptr && a < phys->size() ? (*phys)[a] : node.attached_stream_ids[a],
            node.graph);
  }
  return out;
}

}  // namespace events

namespace {

std::string Join(const std::vector<int64_t>& v) { return StrJoin(v, ","); }

// The activation lists being built, on physical streams.
struct Activation {
  std::map<std::string, std::set<int64_t>> labeled;  // label → its streams
  std::set<int64_t> specifically_activated;          // streams some list names
  std::map<int32_t, std::set<int64_t>> lists;        // activator → streams
};

// The nodes with attributes, in execution order (every rule of this pass
// reads an attribute: the others need not be visited again).
std::vector<NodeId> NodesWithAttrs(const Model& m, std::span<const NodeId> order) {
  std::vector<NodeId> out;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + kNodePrefetch < order.size())
      __builtin_prefetch(&m.node(order[i + kNodePrefetch]).attrs);
    if (!m.node(order[i]).attrs.empty()) out.push_back(order[i]);
  }
  return out;
}

// Step 1: logical activation (labels, subgraph first-active), expanded to
// split streams in the activator's graph.
Activation PhysicalActivation(const Plan& plan, std::span<const NodeId> order,
                              const std::vector<NodeId>& with_attrs) {
  const Model& m = plan.model;
  events::ActivationInfo act = events::ComputeActivation(m, with_attrs);
  std::map<int64_t, GraphId> opening_graph = events::SplitStreamOpeningGraphs(plan, order);
  auto expand = [&](NodeId a, const std::vector<int64_t>& logical) {
    std::set<int64_t> out;
    for (int64_t t : logical) {
      out.insert(t);
      for (const auto& [p, l] : plan.streams.split_to_logical) {
        if (l == t && opening_graph.count(p) && opening_graph[p] == m.node(a).graph) out.insert(p);
      }
    }
    return out;
  };
  Activation out;
  for (const auto& [label, streams] : act.labeled_streams) {
    for (int64_t s : streams) {
      out.labeled[label].insert(s);
      for (const auto& [p, l] : plan.streams.split_to_logical) {
        if (l == s) out.labeled[label].insert(p);
      }
    }
  }
  for (const auto& [a, logical] : act.activated) {
    NodeId id(a);
    const Node& n = m.node(id);
    std::set<int64_t> phys = expand(id, logical);
    if (GetBoolAttr(n.attrs, "subgraph_first_active").value_or(false)) phys.erase(plan.physical_stream[a]);
    out.lists[a] = phys;
    out.specifically_activated.insert(phys.begin(), phys.end());
  }
  return out;
}

// A StreamActive for label `labels[i]` of StreamSwitch `sw`, right after it
// in its graph on a new physical stream, activating `streams`; the label's
// nodes wait for it instead of the switch.
NodeId InsertLabelStreamActive(Plan& plan, NodeId sw, const std::vector<std::string>& labels,
                               size_t i, const std::set<int64_t>& streams) {
  Model& m = plan.model;
  Node active;
  active.name = StrCat(m.node(sw).name, "_StreamActive_", i);
  active.type = "StreamActive";
  active.engine = "DNN_VM_RTS";
  active.control_inputs = {sw};
  active.attrs["_stream_label"] = active.name;
  active.attrs["_active_label_list"] = AttrValue::StringList{labels[i]};
  active.attrs["active_stream_list"] = AttrValue::IntList(streams.begin(), streams.end());
  const std::string label = labels[i];
  const int64_t stream = plan.streams.physical++;
  const GraphId g = m.node(sw).graph;
  NodeId id = m.AddNode(g, std::move(active));
  auto& nodes = m.graph(g).nodes;
  nodes.pop_back();
  nodes.insert(std::find(nodes.begin(), nodes.end(), sw) + 1, id);
  for (NodeId y : m.graph(g).nodes) {
    Node& yn = m.node(y);
    if (y == id || GetStringAttr(yn.attrs, "_stream_label").value_or("") != label) continue;
    for (NodeId& c : yn.control_inputs) {
      if (c == sw) c = id;
    }
  }
  plan.EnsureNodeVectors();
  plan.physical_stream[id.index()] = stream;
  plan.tasks[id.index()] = static_cast<int64_t>(streams.size());
  return id;
}

// Step 2: StreamSwitch labels spanning several streams get their own
// StreamActive. Returns whether it created any.
absl::StatusOr<bool> SplitSwitchLabels(std::string_view pass, Plan& plan, PassContext& ctx,
                                       const std::vector<NodeId>& with_attrs, Activation& act) {
  Model& m = plan.model;
  bool changed = false;
  for (NodeId sw : with_attrs) {
    if (m.node(sw).type != "StreamSwitch") continue;
    const AttrValue* v = FindAttr(m.node(sw).attrs, "_active_label_list");
    if (v == nullptr || !v->is<AttrValue::StringList>()) continue;
    std::vector<std::string> labels = *v->as<AttrValue::StringList>();
    std::set<int64_t> switch_list;
    for (size_t i = 0; i < labels.size(); ++i) {
      auto it = act.labeled.find(labels[i]);
      if (it == act.labeled.end()) {
        return absl::InvalidArgumentError(StrCat("[", pass, "] StreamSwitch '", m.node(sw).name,
                                                 "' activates label '", labels[i],
                                                 "' that no node carries"));
      }
      if (it->second.size() <= 1) {
        switch_list.insert(it->second.begin(), it->second.end());
        continue;
      }
      const std::string label = labels[i];
      const NodeId id = InsertLabelStreamActive(plan, sw, labels, i, it->second);
      const int64_t stream = plan.physical_stream[id.index()];
      labels[i] = m.node(id).name;
      act.lists[id.value] = it->second;
      switch_list.insert(stream);
      act.specifically_activated.insert(stream);
      act.specifically_activated.insert(it->second.begin(), it->second.end());
      ctx.log.Record(pass, "StreamActiveCreated", "", Field("node", m.node(id).name),
                     Field("stream", stream), Field("label", label));
      changed = true;
    }
    m.node(sw).attrs["_active_label_list"] = labels;
    act.lists[sw.value] = switch_list;
    act.specifically_activated.insert(switch_list.begin(), switch_list.end());
  }
  return changed;
}

// The StreamSwitch a loop-activating node follows: a control input, else a
// control input's control input.
NodeId LoopSwitch(const Model& m, const Node& n) {
  NodeId sw;
  for (NodeId c : n.control_inputs) {
    if (m.node(c).type == "StreamSwitch") sw = c;
    for (NodeId cc : m.node(c).control_inputs) {
      if (!sw.valid() && m.node(cc).type == "StreamSwitch") sw = cc;
    }
  }
  return sw;
}

// Events from the last node of each root-graph stream in `loop` (without a
// StreamSwitch, not the switch's stream) to the loop's StreamSwitch `sw`.
void AddLoopEvents(std::string_view pass, Plan& plan, PassContext& ctx, NodeId sw,
                   const std::set<int64_t>& loop, bool notify) {
  const Model& m = plan.model;
  events::SyncView view(plan, /*physical=*/true);
  for (int64_t s : loop) {
    if (s >= view.num_streams() || view.stream_slots(s).empty()) continue;
    bool has_switch = false;
    for (int32_t slot : view.stream_slots(s))
      has_switch |= m.node(view.node_of(slot)).type == "StreamSwitch";
    int32_t last = view.stream_slots(s).back();
    NodeId ln = view.node_of(last);
    if (has_switch || m.node(ln).graph != kRootGraph ||
        view.stream(last) == plan.physical_stream[sw.index()]) {
      continue;
    }
    SyncEvent e;
    e.kind = notify && view.attached_of(last) < 0 ? SyncKind::kNotify : SyncKind::kEvent;
    e.id = events::NextId(plan.events, e.kind);
    e.send = ln;
    e.send_attached = view.attached_of(last);
    e.recv = sw;
    e.reason = SyncReason::kLoop;
    plan.events.events.push_back(e);
    ctx.log.Record(pass, "LoopEvent", "", Field("from", m.node(ln).name),
                   Field("to", m.node(sw).name));
  }
  events::RecountIds(plan.events);
}

// Step 3: the first loop-activating node (GE: that one only) activates
// every stream no list names but its own.
void AddLoopActivation(std::string_view pass, Plan& plan, PassContext& ctx,
                       const std::vector<NodeId>& with_attrs, bool notify, Activation& act) {
  const Model& m = plan.model;
  for (NodeId id : with_attrs) {
    const Node& n = m.node(id);
    if (!GetBoolAttr(n.attrs, "is_loop_active").value_or(false) || HasAttr(n.attrs, "_active_label_list")) continue;
    std::set<int64_t> loop;
    for (int64_t s = 0; s < plan.streams.physical; ++s) {
      if (!act.specifically_activated.count(s) && s != plan.physical_stream[id.index()])
        loop.insert(s);
    }
    act.lists[id.value].insert(loop.begin(), loop.end());
    const NodeId sw = LoopSwitch(m, n);
    if (sw.valid()) AddLoopEvents(pass, plan, ctx, sw, loop, notify);
    break;  // GE: the first such node only
  }
}

// What an input can change when CheckFirstActiveStreams refuses it. GE's label
// maker marks the StreamActive it puts first in a static branch
// `_rts_label_node`, which keeps it on the owner's stream (the stream the
// branch shares with its parent); npuplan's dynamic-shape stream modes share
// streams between graphs, and GE lowers only static branches to labels.
std::string FirstActiveHint(const Plan& plan, const Node& activator) {
  if (IsDynamicStreamMode(plan.streams.mode)) {
    return StrCat(" (stream mode ", StreamModeName(plan.streams.mode),
                  " shares streams between graphs; GE marks first-active nodes only in the static ",
                  "branches it lowers to labels)");
  }
  if (activator.type == "StreamActive" &&
      !GetBoolAttr(activator.attrs, "_rts_label_node").value_or(false)) {
    return " (GE marks the StreamActive it puts first in a branch _rts_label_node, which runs "
           "it on the owner's stream)";
  }
  return "";
}

// A `subgraph_first_active` node activates its graph's streams: on a device
// they start only when that graph runs (GE). A node outside that graph (and
// its subgraphs) on such a stream would wait for that run — for ever when the
// graph does not run (a branch not taken), in a circle when the node comes
// first. GE does not check it; npuplan refuses the assignment.
absl::Status CheckFirstActiveStreams(std::string_view pass, const Plan& plan,
                                     const std::map<int32_t, std::set<int64_t>>& lists) {
  const Model& m = plan.model;
  std::vector<std::pair<NodeId, GraphId>> activators;  // (node, its graph)
  std::set<int64_t> activated;
  for (const auto& [a, list] : lists) {
    const Node& n = m.node(NodeId(a));
    if (!GetBoolAttr(n.attrs, "subgraph_first_active").value_or(false) || list.empty()) continue;
    activators.emplace_back(NodeId(a), n.graph);
    activated.insert(list.begin(), list.end());
  }
  if (activators.empty()) return absl::OkStatus();
  // Per activated stream, the graphs with a node on it (and one such node).
  std::map<int64_t, std::map<int32_t, NodeId>> graphs_on;
  auto note = [&](int64_t stream, NodeId id) {
    if (activated.count(stream)) graphs_on[stream].try_emplace(m.node(id).graph.value, id);
  };
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const NodeId id(static_cast<int32_t>(i));
    note(plan.physical_stream[i], id);
    if (auto it = plan.streams.attached_physical.find(static_cast<int64_t>(i));
        it != plan.streams.attached_physical.end()) {
      for (int64_t p : it->second) note(p, id);
    }
  }
  auto within = [&](GraphId g, GraphId top) {
    for (; g.valid(); g = m.graph(g).parent_graph) {
      if (g == top) return true;
    }
    return false;
  };
  for (const auto& [a, graph] : activators) {
    for (int64_t p : lists.at(a.value)) {
      auto it = graphs_on.find(p);
      if (it == graphs_on.end()) continue;
      for (const auto& [g, example] : it->second) {
        if (within(GraphId(g), graph)) continue;
        return absl::InvalidArgumentError(StrCat(
            "[", pass, "] node '", m.node(a).name, "' (subgraph_first_active) activates stream ", p,
            ", which also runs '", m.node(example).name, "' outside its graph '",
            m.graph(graph).name, "': on a device the stream starts only when that graph runs, so '",
            m.node(example).name, "' would wait for it (for ever when it does not run); give the ",
            "subgraph's nodes streams of their own or put the first-active node on the stream ",
            "they share with the parent", FirstActiveHint(plan, m.node(a))));
      }
    }
  }
  return absl::OkStatus();
}

// Step 4: writes the lists; no node activates its own stream. Returns
// whether any list changed.
absl::StatusOr<bool> WriteActivationLists(std::string_view pass, Plan& plan, PassContext& ctx,
                                          const std::map<int32_t, std::set<int64_t>>& lists) {
  Model& m = plan.model;
  bool changed = false;
  for (const auto& [a, list] : lists) {
    Node& n = m.node(NodeId(a));
    if (list.count(plan.physical_stream[a])) {
      return absl::InvalidArgumentError(
          StrCat("[", pass, "] node '", n.name, "' would activate its own stream ",
                 plan.physical_stream[a], " (GE CheckStreamActived)"));
    }
    std::vector<int64_t> v(list.begin(), list.end());
    const AttrValue* old = FindAttr(n.attrs, "active_stream_list");
    if (old == nullptr || !(*old == AttrValue(v))) changed = true;
    n.attrs["active_stream_list"] = v;
    ctx.log.Record(pass, "StreamsActivated", "", Field("node", n.name), Field("streams", Join(v)),
                   Field("reason", n.type == "StreamSwitch"                    ? "switch"
                                   : HasAttr(n.attrs, "is_loop_active")        ? "loop"
                                   : HasAttr(n.attrs, "subgraph_first_active") ? "subgraph"
                                                                               : "label"));
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> StreamActivation::Run(Plan& plan, PassContext& ctx) {
  NPUPLAN_ASSIGN_OR_RETURN(const events::EventOptions opts, events::ReadEventOptions(ctx.options));
  plan.EnsureNodeVectors();
  Model& m = plan.model;
  // One graph: the execution order is the root's node list.
  std::vector<NodeId> storage;
  if (m.num_graphs() != 1) storage = m.ExecutionOrder();
  std::span<const NodeId> order = m.num_graphs() == 1 ? std::span<const NodeId>(m.root().nodes)
                                                      : std::span<const NodeId>(storage);
  std::vector<NodeId> with_attrs = NodesWithAttrs(m, order);
  Activation act = PhysicalActivation(plan, order, with_attrs);
  NPUPLAN_ASSIGN_OR_RETURN(const bool created,
                           SplitSwitchLabels(name(), plan, ctx, with_attrs, act));
  if (created) {
    RenumberTopoIds(m);
    storage = m.ExecutionOrder();
    with_attrs = NodesWithAttrs(m, storage);
  }
  AddLoopActivation(name(), plan, ctx, with_attrs, opts.notify, act);
  NPUPLAN_RETURN_IF_ERROR(CheckFirstActiveStreams(name(), plan, act.lists));
  NPUPLAN_ASSIGN_OR_RETURN(const bool written, WriteActivationLists(name(), plan, ctx, act.lists));
  // One view of the loops for both: the loop gates read only the runs'
  // regions and streams, which the tail gates the loop-order events add do
  // not change.
  std::vector<OrderedLoop> loops;
  bool ordered = false;
  if (HasLoopSubgraph(m)) {
    const SyncView view(plan, /*physical=*/true);
    loops = LoopsToOrder(plan, view);
    ordered = events::AddLoopOrderEvents(name(), plan, ctx, view, loops);
  }
  // Loops the host runs get no loop-order events; their runs end on the
  // owner's stream. (A view of its own: the loop-order events added nodes.)
  if (IsDynamicStreamMode(plan.streams.mode) && HasLoopSubgraph(m)) {
    const SyncView view(plan, /*physical=*/true);
    ordered |= events::AddHostJoinEvents(name(), plan, ctx, view, HostRunLoops(plan, view));
  }
  // After the loop-order events: one whose end lies in a nested loop crosses
  // that loop's boundary too.
  const bool gated = events::AddLoopGates(name(), plan, ctx, loops);
  return created || written || ordered || gated;
}

}  // namespace npuplan
