#include "npuplan/events/stream_activation.h"

#include <algorithm>
#include <set>

#include "npuplan/events/sync_view.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

std::string Join(const std::vector<int64_t>& v) { return StrJoin(v, ","); }

}  // namespace

absl::StatusOr<bool> StreamActivation::Run(Plan& plan, PassContext& ctx) {
  plan.EnsureNodeVectors();
  Model& m = plan.model;
  bool changed = false;
  std::vector<NodeId> order = m.ExecutionOrder();
  // 1. Logical activation (labels, subgraph first-active), expanded to split streams in the activator's graph.
  events::ActivationInfo act = events::ComputeActivation(m, order);
  std::map<int64_t, GraphId> opening_graph;  // split physical stream → graph of its first node
  {
    events::SyncView view(plan, /*physical=*/true);
    for (const auto& [p, l] : plan.streams.split_to_logical) {
      if (p < view.num_streams() && !view.stream_slots(p).empty()) {
        opening_graph[p] = m.node(view.node_of(view.stream_slots(p).front())).graph;
      }
    }
  }
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
  std::map<std::string, std::set<int64_t>> labeled;  // physical
  for (const auto& [label, streams] : act.labeled_streams) {
    for (int64_t s : streams) {
      labeled[label].insert(s);
      for (const auto& [p, l] : plan.streams.split_to_logical) {
        if (l == s) labeled[label].insert(p);
      }
    }
  }
  std::set<int64_t> specifically_activated;
  std::map<int32_t, std::set<int64_t>> lists;
  for (const auto& [a, logical] : act.activated) {
    NodeId id(a);
    const Node& n = m.node(id);
    std::set<int64_t> phys = expand(id, logical);
    if (GetBoolAttr(n.attrs, "subgraph_first_active").value_or(false)) phys.erase(plan.physical_stream[a]);
    lists[a] = phys;
    specifically_activated.insert(phys.begin(), phys.end());
  }

  // 2. StreamSwitch labels spanning several streams get their own StreamActive.
  for (NodeId sw : order) {
    if (m.node(sw).type != "StreamSwitch") continue;
    const AttrValue* v = FindAttr(m.node(sw).attrs, "_active_label_list");
    if (v == nullptr || !v->is<AttrValue::StringList>()) continue;
    std::vector<std::string> labels = *v->as<AttrValue::StringList>();
    std::set<int64_t> switch_list;
    for (size_t i = 0; i < labels.size(); ++i) {
      auto it = labeled.find(labels[i]);
      if (it == labeled.end()) {
        return absl::InvalidArgumentError(StrCat("[", name(), "] StreamSwitch '", m.node(sw).name,
                                                 "' activates label '", labels[i], "' that no node carries"));
      }
      if (it->second.size() <= 1) {
        switch_list.insert(it->second.begin(), it->second.end());
        continue;
      }
      Node active;
      active.name = StrCat(m.node(sw).name, "_StreamActive_", i);
      active.type = "StreamActive";
      active.engine = "DNN_VM_RTS";
      active.control_inputs = {sw};
      active.attrs["_stream_label"] = active.name;
      active.attrs["_active_label_list"] = AttrValue::StringList{labels[i]};
      active.attrs["active_stream_list"] = AttrValue::IntList(it->second.begin(), it->second.end());
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
      plan.tasks[id.index()] = static_cast<int64_t>(it->second.size());
      labels[i] = m.node(id).name;
      lists[id.value] = it->second;
      switch_list.insert(stream);
      specifically_activated.insert(stream);
      specifically_activated.insert(it->second.begin(), it->second.end());
      ctx.log.Record(name(), "StreamActiveCreated", "", Field("node", m.node(id).name), Field("stream", stream),
                     Field("label", label));
      changed = true;
    }
    m.node(sw).attrs["_active_label_list"] = labels;
    lists[sw.value] = switch_list;
    specifically_activated.insert(switch_list.begin(), switch_list.end());
  }
  if (changed) {
    RenumberTopoIds(m);
    order = m.ExecutionOrder();
  }

  // 3. Loop activation.
  for (NodeId id : order) {
    const Node& n = m.node(id);
    if (!GetBoolAttr(n.attrs, "is_loop_active").value_or(false) || HasAttr(n.attrs, "_active_label_list")) continue;
    std::set<int64_t> loop;
    for (int64_t s = 0; s < plan.streams.physical; ++s) {
      if (!specifically_activated.count(s) && s != plan.physical_stream[id.index()]) loop.insert(s);
    }
    lists[id.value].insert(loop.begin(), loop.end());
    NodeId sw;
    for (NodeId c : n.control_inputs) {
      if (m.node(c).type == "StreamSwitch") sw = c;
      for (NodeId cc : m.node(c).control_inputs) {
        if (!sw.valid() && m.node(cc).type == "StreamSwitch") sw = cc;
      }
    }
    if (sw.valid()) {
      events::SyncView view(plan, /*physical=*/true);
      for (int64_t s : loop) {
        if (s >= view.num_streams() || view.stream_slots(s).empty()) continue;
        bool has_switch = false;
        for (int32_t slot : view.stream_slots(s)) has_switch |= m.node(view.node_of(slot)).type == "StreamSwitch";
        int32_t last = view.stream_slots(s).back();
        NodeId ln = view.node_of(last);
        if (has_switch || m.node(ln).graph != kRootGraph || view.stream(last) == plan.physical_stream[sw.index()]) {
          continue;
        }
        SyncEvent e;
        e.kind = ctx.options.Get("ge.event") == "notify" && view.attached_of(last) < 0 ? SyncKind::kNotify : SyncKind::kEvent;
        e.id = events::NextId(plan.events, e.kind);
        e.send = ln;
        e.send_attached = view.attached_of(last);
        e.recv = sw;
        e.reason = SyncReason::kLoop;
        plan.events.events.push_back(e);
        ctx.log.Record(name(), "LoopEvent", "", Field("from", m.node(ln).name), Field("to", m.node(sw).name));
      }
      events::RecountIds(plan.events);
    }
    break;  // GE: the first such node only
  }

  // 4. Write the lists; no node activates its own stream.
  for (const auto& [a, list] : lists) {
    Node& n = m.node(NodeId(a));
    if (list.count(plan.physical_stream[a])) {
      return absl::InvalidArgumentError(StrCat("[", name(), "] node '", n.name, "' would activate its own stream ",
                                               plan.physical_stream[a], " (GE CheckStreamActived)"));
    }
    std::vector<int64_t> v(list.begin(), list.end());
    const AttrValue* old = FindAttr(n.attrs, "active_stream_list");
    if (old == nullptr || !(*old == AttrValue(v))) changed = true;
    n.attrs["active_stream_list"] = v;
    ctx.log.Record(name(), "StreamsActivated", "", Field("node", n.name), Field("streams", Join(v)),
                   Field("reason", n.type == "StreamSwitch" ? "switch" : HasAttr(n.attrs, "is_loop_active") ? "loop"
                                   : HasAttr(n.attrs, "subgraph_first_active")                      ? "subgraph"
                                                                                                    : "label"));
  }
  return changed;
}

}  // namespace npuplan
