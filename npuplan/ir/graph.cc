#include "npuplan/ir/graph.h"

#include <algorithm>
#include <bit>

#include "npuplan/support/status_macros.h"

namespace npuplan {

Model::Model() {
  graphs_.push_back(Graph{});
  graphs_[0].name = "graph";
}

namespace {

uint32_t NameHash32(std::string_view name) {
  const uint64_t h = std::hash<std::string_view>{}(name);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace

size_t Model::NameSlotFor(std::string_view name, uint32_t hash) const {
  const size_t mask = name_slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const NameSlot& s = name_slots_[i];
    if (s.id == kEmptySlot) return i;
    if (s.id >= 0 && s.hash == hash && nodes_[s.id].name == name) return i;
  }
}

void Model::GrowNameIndex(size_t entries) {
  if (2 * entries <= name_slots_.size()) return;
  size_t cap = 16;
  while (cap < 2 * entries) cap *= 2;
  BigVector<NameSlot> old = std::move(name_slots_);
  name_slots_.assign(cap, NameSlot{});
  name_slots_used_ = 0;
  const size_t mask = cap - 1;
  for (const NameSlot& s : old) {
    if (s.id < 0) continue;  // empty or erased: dropped
    size_t i = s.hash & mask;
    while (name_slots_[i].id != kEmptySlot) i = (i + 1) & mask;
    name_slots_[i] = s;
    ++name_slots_used_;
  }
}

NodeId Model::AddNode(GraphId g, Node node) {
  NPUPLAN_CHECK(g.valid() && g.index() < graphs_.size());
  NodeId id(static_cast<int32_t>(nodes_.size()));
  node.graph = g;
  GrowNameIndex(name_slots_used_ + 1);
  const uint32_t hash = NameHash32(node.name);
  const size_t slot = NameSlotFor(node.name, hash);
  NPUPLAN_CHECK(name_slots_[slot].id == kEmptySlot);  // the name must be new
  name_slots_[slot] = NameSlot{hash, id.value};
  ++name_slots_used_;
  nodes_.push_back(std::move(node));
  graphs_[g.index()].nodes.push_back(id);
  return id;
}

NodeId Model::AddNodeDeferred(GraphId g, Node node) {
  NPUPLAN_CHECK(g.valid() && g.index() < graphs_.size());
  NodeId id(static_cast<int32_t>(nodes_.size()));
  node.graph = g;
  deferred_names_.push_back(NameSlot{NameHash32(node.name), id.value});
  nodes_.push_back(std::move(node));
  graphs_[g.index()].nodes.push_back(id);
  return id;
}

void Model::IndexDeferredNodes() {
  if (deferred_names_.empty()) return;
  GrowNameIndex(name_slots_used_ + deferred_names_.size());
  const size_t mask = name_slots_.size() - 1;
  // Counting sort by the top bits of the home slot (4096 buckets, stable):
  // the inserts then walk the table front to back; within a bucket the
  // probes stay in a few KB.
  const int shift = std::max(0, static_cast<int>(std::bit_width(mask)) - 12);
  std::vector<uint32_t> start((mask >> shift) + 2, 0);
  for (const NameSlot& d : deferred_names_) ++start[((d.hash & mask) >> shift) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  BigVector<NameSlot> sorted(deferred_names_.size());  // one slot per new node: huge pages
  for (const NameSlot& d : deferred_names_) sorted[start[(d.hash & mask) >> shift]++] = d;
  for (const NameSlot& d : sorted) {
    const size_t slot = NameSlotFor(nodes_[d.id].name, d.hash);
    NPUPLAN_CHECK(name_slots_[slot].id == kEmptySlot);  // the name must be new
    name_slots_[slot] = d;
    ++name_slots_used_;
  }
  std::vector<NameSlot>().swap(deferred_names_);
}

GraphId Model::AddDetachedGraph(std::string name) {
  GraphId id(static_cast<int32_t>(graphs_.size()));
  Graph g;
  g.name = std::move(name);
  graph_index_.emplace(g.name, id);
  graphs_.push_back(std::move(g));
  return id;
}

GraphId Model::AddSubgraph(NodeId parent, std::string name) {
  GraphId id = AddDetachedGraph(std::move(name));
  graphs_[id.index()].parent_node = parent;
  graphs_[id.index()].parent_graph = nodes_[parent.index()].graph;
  nodes_[parent.index()].subgraphs.push_back(id);
  return id;
}

void Model::Reserve(size_t nodes) {
  nodes_.reserve(nodes);
  GrowNameIndex(nodes);
}

NodeId Model::FindNode(std::string_view name) const {
  if (name_slots_.empty()) return NodeId();
  const NameSlot& s = name_slots_[NameSlotFor(name, NameHash32(name))];
  return s.id >= 0 ? NodeId(s.id) : NodeId();
}

GraphId Model::FindGraph(std::string_view name) const {
  if (name == graphs_[0].name) return kRootGraph;
  auto it = graph_index_.find(name);
  return it == graph_index_.end() ? GraphId() : it->second;
}

void Model::RenameNode(NodeId id, std::string name) {
  if (name == nodes_[id.index()].name) return;
  const size_t old_slot = NameSlotFor(nodes_[id.index()].name, NameHash32(nodes_[id.index()].name));
  NPUPLAN_CHECK(name_slots_[old_slot].id == id.value);
  GrowNameIndex(name_slots_used_ + 1);  // may drop erased slots: look the old name up again
  const uint32_t hash = NameHash32(name);
  const size_t slot = NameSlotFor(name, hash);
  NPUPLAN_CHECK(name_slots_[slot].id == kEmptySlot);  // the new name must be new
  name_slots_[NameSlotFor(nodes_[id.index()].name, NameHash32(nodes_[id.index()].name))].id = kErasedSlot;
  name_slots_[slot] = NameSlot{hash, id.value};
  ++name_slots_used_;
  nodes_[id.index()].name = std::move(name);
}

std::vector<GraphId> Model::GraphsPreOrder() const {
  // One graph: nothing to walk (the walk reads every node's subgraph list).
  if (graphs_.size() == 1) return {kRootGraph};
  std::vector<GraphId> order;
  order.reserve(graphs_.size());
  std::vector<GraphId> stack = {kRootGraph};
  std::vector<bool> seen(graphs_.size(), false);
  while (!stack.empty()) {
    GraphId g = stack.back();
    stack.pop_back();
    if (seen[g.index()]) continue;  // malformed ownership is the verifier's business
    seen[g.index()] = true;
    order.push_back(g);
    // Push children in reverse so they pop in node order, subgraph-index order.
    std::vector<GraphId> children;
    for (NodeId n : graphs_[g.index()].nodes) {
      for (GraphId sg : nodes_[n.index()].subgraphs) children.push_back(sg);
    }
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
  }
  return order;
}

std::vector<NodeId> Model::ExecutionOrder() const {
  std::vector<NodeId> out;
  out.reserve(nodes_.size());
  // Explicit stack of (graph, next position) so deep nesting cannot overflow.
  std::vector<std::pair<GraphId, size_t>> stack = {{kRootGraph, 0}};
  std::vector<bool> entered(graphs_.size(), false);
  entered[0] = true;
  while (!stack.empty()) {
    auto& [g, pos] = stack.back();
    const std::vector<NodeId>& list = graphs_[g.index()].nodes;
    if (pos == list.size()) {
      stack.pop_back();
      continue;
    }
    NodeId id = list[pos++];
    out.push_back(id);
    const std::vector<GraphId>& subs = nodes_[id.index()].subgraphs;
    // Push in reverse so subgraph 0 runs first; an ownership cycle (rejected
    // by the verifier) is entered once only.
    for (auto it = subs.rbegin(); it != subs.rend(); ++it) {
      if (!entered[it->index()]) {
        entered[it->index()] = true;
        stack.emplace_back(*it, 0);
      }
    }
  }
  return out;
}

int Model::Depth(GraphId g) const {
  int depth = 0;
  while (g.valid() && !graphs_[g.index()].IsRoot() && depth <= static_cast<int>(graphs_.size())) {
    g = graphs_[g.index()].parent_graph;
    ++depth;
  }
  return depth;
}

Adjacency::Adjacency(const Model& model) {
  const size_t n = model.num_nodes();
  offsets.assign(n + 1, 0);
  auto valid_src = [&](NodeId s) { return s.valid() && s.index() < n; };
  for (const Node& node : model.nodes()) {
    for (const OutputRef& in : node.inputs) {
      if (valid_src(in.node)) ++offsets[in.node.index() + 1];
    }
    for (NodeId c : node.control_inputs) {
      if (valid_src(c)) ++offsets[c.index() + 1];
    }
  }
  for (size_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
  succ.resize(offsets[n]);
  is_control.resize(offsets[n]);
  std::vector<uint32_t> cursor(offsets.begin(), offsets.end() - 1);
  // Consumers in graph order (topological once sorted); data edges of every
  // producer first, then control edges.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Graph& g : model.graphs()) {
      for (NodeId consumer : g.nodes) {
        const Node& node = model.node(consumer);
        if (pass == 0) {
          for (const OutputRef& in : node.inputs) {
            if (!valid_src(in.node)) continue;
            uint32_t pos = cursor[in.node.index()]++;
            succ[pos] = consumer;
            is_control[pos] = 0;
          }
        } else {
          for (NodeId c : node.control_inputs) {
            if (!valid_src(c)) continue;
            uint32_t pos = cursor[c.index()]++;
            succ[pos] = consumer;
            is_control[pos] = 1;
          }
        }
      }
    }
  }
}

}  // namespace npuplan
