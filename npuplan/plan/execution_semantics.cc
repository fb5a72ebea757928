#include "npuplan/plan/execution_semantics.h"

#include <algorithm>
#include <string_view>

#include "npuplan/ir/attribute.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/support/big_vector.h"

namespace npuplan {

ActivationInfo ComputeActivation(const Model& model, std::span<const NodeId> order,
                                 const std::map<int64_t, int64_t>* split_to_logical) {
  ActivationInfo info;
  std::map<int64_t, std::vector<int64_t>> expand;  // logical → physical ids
  if (split_to_logical != nullptr) {
    for (const auto& [p, l] : *split_to_logical) expand[l].push_back(p);
  }
  auto add_stream = [&](std::set<int64_t>& set, int64_t s) {
    if (s < 0) return;
    set.insert(s);
    if (auto it = expand.find(s); it != expand.end())
      set.insert(it->second.begin(), it->second.end());
  };
  for (NodeId id : order) {
    const Node& n = model.node(id);
    if (auto label = GetStringAttr(n.attrs, "_stream_label"); label && !label->empty()) {
      add_stream(info.labeled_streams[*label], n.stream_id);
    }
  }
  for (NodeId id : order) {
    const Node& n = model.node(id);
    std::set<int64_t> streams;
    bool activator = false;
    if (const AttrValue* v = FindAttr(n.attrs, "active_stream_list");
        v != nullptr && v->is<AttrValue::IntList>()) {
      activator = true;
      for (int64_t s : *v->as<AttrValue::IntList>()) streams.insert(s);
    } else {
      if (const AttrValue* v = FindAttr(n.attrs, "_active_label_list");
          v != nullptr && v->is<AttrValue::StringList>()) {
        activator = true;
        for (const std::string& label : *v->as<AttrValue::StringList>()) {
          info.activators_of_label[label].push_back(id);
          if (auto it = info.labeled_streams.find(label); it != info.labeled_streams.end()) {
            for (int64_t s : it->second) streams.insert(s);
          }
        }
      }
      if (GetBoolAttr(n.attrs, "subgraph_first_active").value_or(false)) {
        activator = true;
        std::set<int64_t> own;
        add_stream(own, n.stream_id);
        for (NodeId other : model.graph(n.graph).nodes) {
          const Node& o = model.node(other);
          if (GetStringAttr(o.attrs, "_stream_label").value_or("").empty()) {
            std::set<int64_t> s;
            add_stream(s, o.stream_id);
            for (int64_t a : o.attached_stream_ids) add_stream(s, a);
            for (int64_t x : s) {
              if (!own.count(x)) streams.insert(x);
            }
          }
        }
      }
    }
    if (!activator) continue;
    info.activated[id.value] = std::vector<int64_t>(streams.begin(), streams.end());
    for (int64_t s : streams) info.activators_of_stream[s].push_back(id);
  }
  return info;
}

bool MayOpenStream(const Node& node) {
  if (!node.subgraphs.empty()) return false;
  if (GetBoolAttr(node.attrs, "subgraph_first_active").value_or(false)) return false;
  return node.type != "LabelSet" && node.type != "LabelGotoEx" && node.type != "LabelSwitchByIndex";
}

Enclosure::Enclosure(const Model& model)
    : model_(model), first_(model.num_graphs(), -1), last_(model.num_graphs(), -1) {
  const std::vector<GraphId> order = model.GraphsPreOrder();
  for (size_t i = 0; i < order.size(); ++i)
    first_[order[i].index()] = last_[order[i].index()] = static_cast<int32_t>(i);
  // A graph's descendants follow it in pre-order: its last one is the
  // largest index met when each graph hands its own up to its parent.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Graph& g = model.graph(*it);
    if (!g.parent_graph.valid()) continue;
    int32_t& up = last_[g.parent_graph.index()];
    up = std::max(up, last_[it->index()]);
  }
  // Parents precede their subgraphs in pre-order.
  std::vector<uint8_t> conditional(model.num_graphs(), 0);
  bool any = false;
  for (GraphId id : order) {
    const Graph& g = model.graph(id);
    if (!g.parent_graph.valid() || !g.parent_node.valid()) continue;
    const Node& owner = model.node(g.parent_node);
    conditional[id.index()] =
        conditional[g.parent_graph.index()] || IsLoopNode(owner) || IsBranchNode(owner);
    any = any || conditional[id.index()];
  }
  if (any) conditional_ = std::move(conditional);
}

bool Enclosure::operator()(NodeId owner, NodeId n) const {
  const int32_t at = first_[model_.node(n).graph.index()];
  if (at < 0) return false;
  for (GraphId sg : model_.node(owner).subgraphs) {
    if (first_[sg.index()] >= 0 && first_[sg.index()] <= at && at <= last_[sg.index()]) return true;
  }
  return false;
}

std::vector<uint8_t> UnknownShapeGraphs(const Plan& plan) {
  const Model& m = plan.model;
  const size_t ng = m.num_graphs();
  std::map<std::string_view, bool>
      subgraph_unknown;  // the first entry of a name, as a scan finds it
  for (const PartitionSubgraph& ps : plan.partition.subgraphs) {
    subgraph_unknown.emplace(ps.name, ps.kind != SubgraphKind::kKnown);
  }
  constexpr uint8_t kUnset = 2, kOnWalk = 3;
  std::vector<uint8_t> unknown(ng, kUnset);
  std::vector<size_t> walk;
  for (size_t start = 0; start < ng; ++start) {
    walk.clear();
    uint8_t value = 0;
    for (size_t g = start;;) {
      if (unknown[g] != kUnset) {
        value = unknown[g] == kOnWalk ? 0 : unknown[g];  // a cycle: the structure check names it
        break;
      }
      walk.push_back(g);
      const Graph& graph = m.graph(GraphId(static_cast<int32_t>(g)));
      if (graph.IsRoot()) {
        value =
            plan.partition.ran && (plan.partition.decision == PartitionDecision::kWholeDynamic ||
                                   plan.partition.decision == PartitionDecision::kPartitioned);
        break;
      }
      if (auto it = subgraph_unknown.find(graph.name); it != subgraph_unknown.end()) {
        value = it->second;
        break;
      }
      if (auto flag = GetBoolAttr(m.node(graph.parent_node).attrs, "_is_unknown_shape")) {
        value = *flag;
        break;
      }
      unknown[g] = kOnWalk;
      g = static_cast<size_t>(graph.parent_graph.index());
    }
    for (size_t w : walk) unknown[w] = value;
  }
  return unknown;
}

std::vector<bool> DynamicPathGraphs(const Plan& plan) {
  const Model& m = plan.model;
  if (!IsDynamicStreamMode(plan.streams.mode)) return std::vector<bool>(m.num_graphs(), false);
  const std::vector<uint8_t> unknown = UnknownShapeGraphs(plan);
  return std::vector<bool>(unknown.begin(), unknown.end());
}

bool OnDynamicPath(const Plan& plan, const std::vector<bool>& dynamic_graphs, const SyncEvent& e) {
  if (e.kind != SyncKind::kEvent || e.send_attached >= 0 || e.recv_attached >= 0) return false;
  const Model& m = plan.model;
  return dynamic_graphs[m.node(e.send).graph.index()] &&
         dynamic_graphs[m.node(e.recv).graph.index()];
}

bool DynamicSubgraphBoundary(const Model& m, const std::vector<bool>& dynamic_graphs, GraphId g) {
  const Graph& graph = m.graph(g);
  if (!graph.parent_node.valid() || !dynamic_graphs[g.index()]) return false;
  return dynamic_graphs[m.node(graph.parent_node).graph.index()];
}

NodeId DynamicAttrNode(const Model& m, NodeId send, NodeId recv) {
  const GraphId target = m.node(recv).graph;
  NodeId n = send;
  while (m.node(n).graph != target) {
    const Graph& g = m.graph(m.node(n).graph);
    if (!g.parent_node.valid()) return send;  // not nested under the receiver's graph
    n = g.parent_node;
  }
  return n;
}

namespace {

// Distinct values of `ids` and whether they are exactly 0..m-1. A bitmap when
// the ids are dense (the usual case), else sort + unique.
bool DistinctContinuous(BigVector<int64_t>& ids, int64_t* distinct) {
  if (ids.empty()) {
    if (distinct) *distinct = 0;
    return true;
  }
  int64_t lo = ids[0], hi = ids[0];
  for (int64_t v : ids) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  int64_t count = 0;
  if (lo >= 0 && hi < 4 * static_cast<int64_t>(ids.size()) + 1024) {
    BigVector<uint8_t> seen(static_cast<size_t>(hi) + 1, 0);
    for (int64_t v : ids) {
      count += seen[v] == 0;
      seen[v] = 1;
    }
  } else {
    std::sort(ids.begin(), ids.end());
    count = std::unique(ids.begin(), ids.end()) - ids.begin();
  }
  if (distinct) *distinct = count;
  return lo == 0 && hi == count - 1;
}

}  // namespace

bool IdsContinuous(const EventTable& table, int64_t* events, int64_t* notifies) {
  BigVector<int64_t> ev, nt;
  ev.reserve(table.events.size());
  for (const SyncEvent& e : table.events) (e.kind == SyncKind::kNotify ? nt : ev).push_back(e.id);
  const bool a = DistinctContinuous(ev, events);
  const bool b = DistinctContinuous(nt, notifies);
  return a && b;
}

}  // namespace npuplan
