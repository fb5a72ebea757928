#include "npuplan/ir/in_place_writes.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/ffts_regions.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/union_find.h"

namespace npuplan {
namespace {

absl::Status Bad(const Node& n, std::string_view rule) {
  return absl::InvalidArgumentError(StrCat("node '", n.name, "': ", rule));
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> RefInputIndices(const Node& n) {
  std::vector<int64_t> refs(n.outputs.size(), -1);
  const AttrValue* v = FindAttr(n.attrs, "_ref_input_index");
  if (v == nullptr) return refs;
  if (const int64_t* i = v->as<int64_t>()) {
    if (refs.empty()) return Bad(n, "_ref_input_index on a node without outputs");
    refs[0] = *i;
  } else if (const auto* l = v->as<AttrValue::IntList>()) {
    if (l->size() > refs.size()) {
      return Bad(n, StrCat("_ref_input_index lists ", l->size(), " entries for ", refs.size(),
                           " outputs"));
    }
    std::copy(l->begin(), l->end(), refs.begin());
  } else {
    return Bad(n, "_ref_input_index must be an int or an int list");
  }
  for (int64_t r : refs) {
    if (r < -1 || r >= static_cast<int64_t>(n.inputs.size())) {
      return Bad(n, StrCat("_ref_input_index ", r, " names no data input (node has ",
                           n.inputs.size(), ")"));
    }
  }
  return refs;
}

absl::StatusOr<std::vector<int64_t>> ParentOutputIndices(const Model& model, const Node& net) {
  const Graph& g = model.graph(net.graph);
  const Node& parent = model.node(g.parent_node);
  const int64_t outputs = static_cast<int64_t>(parent.outputs.size());
  std::vector<int64_t> map;
  if (const AttrValue* v = FindAttr(net.attrs, "_parent_output_index")) {
    const auto* l = v->as<AttrValue::IntList>();
    if (l == nullptr) return Bad(net, "_parent_output_index must be an int list");
    if (l->size() > net.inputs.size()) {
      return Bad(net, StrCat("_parent_output_index lists ", l->size(), " entries for ",
                             net.inputs.size(), " inputs"));
    }
    map.assign(net.inputs.size(), -1);
    for (size_t k = 0; k < l->size(); ++k) {
      if ((*l)[k] < -1 || (*l)[k] >= outputs) {
        return Bad(net, StrCat("_parent_output_index ", (*l)[k], " names no output of parent '",
                               parent.name, "' (it has ", outputs, ")"));
      }
      map[k] = (*l)[k];
    }
    return map;
  }
  const bool while_cond =
      (parent.type == "While" || parent.type == "_While" || parent.type == "StatelessWhile") &&
      parent.subgraphs.size() > 1 && parent.subgraphs[0] == net.graph;
  map.assign(net.inputs.size(), -1);
  if (while_cond) return map;
  for (size_t k = 0; k < map.size() && static_cast<int64_t>(k) < outputs; ++k)
    map[k] = static_cast<int64_t>(k);
  return map;
}

bool IsPassOnType(std::string_view type) {
  static constexpr std::string_view kPassOn[] = {
      "Data",      "RefData",       "NetOutput",       "Enter",    "RefEnter",
      "Exit",      "RefExit",       "Merge",           "RefMerge", "Switch",
      "RefSwitch", "NextIteration", "RefNextIteration"};
  return std::find(std::begin(kPassOn), std::end(kPassOn), type) != std::end(kPassOn);
}

namespace {

// An owner whose subgraphs' nodes that read a Data wait for the producer of
// that input (subgraph input) and the owner's control inputs, not for its
// other inputs: every owner but an FFTS one, whose task runs its subgraph.
bool EntersThroughInputs(const Node& n) { return !n.subgraphs.empty() && !IsFftsOwner(n); }

constexpr uint8_t kWrites = 1, kEnd = 2;  // a touch's flags while collecting

// The owner's input a subgraph Data `d` stands for (`_parent_node_index`),
// when it names one of `owner`'s inputs.
std::optional<size_t> ParentInputOf(const Node& d, const Node& owner) {
  if (d.type != "Data" || d.outputs.empty()) return std::nullopt;
  const std::optional<int64_t> k = GetIntAttr(d.attrs, "_parent_node_index");
  if (!k || *k < 0 || *k >= static_cast<int64_t>(owner.inputs.size())) return std::nullopt;
  return static_cast<size_t>(*k);
}

// The analysis of InPlaceBuffers::Of over one model.
class InPlaceAnalysis {
 public:
  explicit InPlaceAnalysis(const Model& m) : m_(m) {}

  // False when no node has a ref output (nothing to do).
  bool FindRefNodes() {
    for (size_t i = 0; i < m_.num_nodes(); ++i) {
      const Node& n = m_.nodes()[i];
      if (n.attrs.empty() || FindAttr(n.attrs, "_ref_input_index") == nullptr) continue;
      absl::StatusOr<std::vector<int64_t>> refs = RefInputIndices(n);
      if (!refs.ok()) continue;  // memory planning names it
      if (std::all_of(refs->begin(), refs->end(), [](int64_t r) { return r < 0; })) continue;
      ref_nodes_.emplace_back(NodeId(static_cast<int32_t>(i)), *std::move(refs));
    }
    return !ref_nodes_.empty();
  }

  std::vector<std::pair<int, OwnerEntry>>& entries() { return entries_; }

  // (node, output, root) of every tensor whose root is one of `roots` (sorted).
  std::vector<std::tuple<NodeId, int32_t, int32_t>> Members(const std::vector<int32_t>& roots) {
    std::vector<std::tuple<NodeId, int32_t, int32_t>> out;
    for (size_t i = 0; i < m_.num_nodes(); ++i) {
      for (int64_t t = first_[i]; t < first_[i + 1]; ++t) {
        const int root = Root(t);
        if (!in_place_[root] || !std::binary_search(roots.begin(), roots.end(), root)) continue;
        out.emplace_back(NodeId(static_cast<int32_t>(i)), static_cast<int32_t>(t - first_[i]),
                         root);
      }
    }
    return out;
  }

  void Run(std::vector<NodeId>& written_nodes, std::vector<int32_t>& written_inputs,
           std::vector<std::tuple<int32_t, NodeId, uint8_t>>& touches) {
    first_.resize(m_.num_nodes() + 1, 0);
    for (size_t i = 0; i < m_.num_nodes(); ++i)
      first_[i + 1] = first_[i] + static_cast<int64_t>(m_.nodes()[i].outputs.size());
    uf_ = std::make_unique<UnionFind>(static_cast<size_t>(first_.back()));
    in_place_.assign(static_cast<size_t>(first_.back()), 0);
    per_graph_.resize(m_.num_graphs());
    for (size_t r = 0; r < ref_nodes_.size(); ++r) {
      const auto& [id, refs] = ref_nodes_[r];
      GraphFacts& f = per_graph_[m_.node(id).graph.index()];
      f.ref_nodes.push_back(r);
      for (int64_t j : refs) {
        if (j >= 0) f.written.emplace_back(id, static_cast<int32_t>(j));
      }
    }
    std::vector<GraphId> order = m_.GraphsPreOrder();
    std::reverse(order.begin(), order.end());  // subgraphs before their owner's graph
    for (GraphId g : order) VisitGraph(g);
    std::reverse(order.begin(), order.end());  // owners' graphs first
    for (GraphId g : order) CoverParentInputs(g);
    for (GraphFacts& f : per_graph_) {
      written_.insert(written_.end(), f.written.begin(), f.written.end());
      aliases_.insert(aliases_.end(), f.aliases.begin(), f.aliases.end());
    }
    per_graph_ = {};
    std::sort(written_.begin(), written_.end());
    written_.erase(std::unique(written_.begin(), written_.end()), written_.end());
    std::sort(aliases_.begin(), aliases_.end());
    for (const auto& [n, j] : written_) {
      written_nodes.push_back(n);
      written_inputs.push_back(j);
    }
    CollectTouches(touches);
  }

 private:
  // What one graph holds: its ref nodes (indices into ref_nodes_), the
  // inputs its nodes write in place, its owners' aliased outputs.
  struct GraphFacts {
    std::vector<size_t> ref_nodes;
    std::vector<std::pair<NodeId, int32_t>> written;            // (node, input)
    std::vector<std::tuple<NodeId, int32_t, int32_t>> aliases;  // (owner, output, input)
  };

  // Tensor index of an anchor; -1 when it names no output.
  int64_t T(NodeId n, int64_t out) const {
    if (!n.valid() || n.index() >= m_.num_nodes() || out < 0) return -1;
    const int64_t t = first_[n.index()] + out;
    return t < first_[n.index() + 1] ? t : -1;
  }
  int64_t T(const OutputRef& r) const { return T(r.node, r.index); }
  int Root(int64_t t) { return uf_->Find(static_cast<int>(t)); }
  void Join(int64_t a, int64_t b) {
    if (a >= 0 && b >= 0) uf_->Union(static_cast<int>(a), static_cast<int>(b));
  }

  // One graph, after its subgraphs: its aliases, which of its buffers are
  // written in place, and what its owner writes and returns.
  void VisitGraph(GraphId g) {
    const auto in_g = [&](const OutputRef& r) {
      return r.node.valid() && r.node.index() < m_.num_nodes() && m_.node(r.node).graph == g;
    };
    const GraphFacts& facts = per_graph_[g.index()];
    for (size_t r : facts.ref_nodes) {
      const auto& [id, refs] = ref_nodes_[r];
      const Node& n = m_.node(id);
      for (size_t o = 0; o < refs.size(); ++o) {
        if (refs[o] >= 0 && in_g(n.inputs[refs[o]]))
          Join(T(id, static_cast<int64_t>(o)), T(n.inputs[refs[o]]));
      }
    }
    for (const auto& [owner, out, in] : facts.aliases) {
      const Node& p = m_.node(owner);
      if (in_g(p.inputs[in])) Join(T(owner, out), T(p.inputs[in]));
    }
    for (const auto& [id, j] : facts.written) {
      const Node& n = m_.node(id);
      if (in_g(n.inputs[j])) in_place_[Root(T(n.inputs[j]))] = 1;
    }
    const Graph& graph = m_.graph(g);
    if (graph.IsRoot()) return;
    const NodeId owner = graph.parent_node;
    const Node& p = m_.node(owner);
    GraphFacts& up = per_graph_[p.graph.index()];
    // The Data nodes' buffers: (root, parent input).
    std::vector<std::pair<int, int32_t>> data;
    for (NodeId id : graph.nodes) {
      const std::optional<size_t> k = ParentInputOf(m_.node(id), p);
      if (!k) continue;
      const int root = Root(T(id, 0));
      data.emplace_back(root, static_cast<int32_t>(*k));
      if (in_place_[root]) up.written.emplace_back(owner, static_cast<int32_t>(*k));
    }
    std::sort(data.begin(), data.end());
    for (NodeId id : graph.nodes) {
      const Node& net = m_.node(id);
      if (net.type != "NetOutput") continue;
      absl::StatusOr<std::vector<int64_t>> to_parent = ParentOutputIndices(m_, net);
      if (!to_parent.ok()) continue;  // memory planning names it
      for (size_t k = 0; k < to_parent->size(); ++k) {
        const int64_t t = T(net.inputs[k]);
        if ((*to_parent)[k] < 0 || t < 0) continue;
        const int root = Root(t);
        for (auto it = std::lower_bound(data.begin(), data.end(), std::make_pair(root, int32_t{0}));
             it != data.end() && it->first == root; ++it) {
          up.aliases.emplace_back(owner, static_cast<int32_t>((*to_parent)[k]), it->second);
        }
      }
    }
  }

  // Subgraph g's Data buffers whose parent input is written in place in the
  // parent's graph: written-in-place memory here too (what reads it counts),
  // and the graph's end must follow every touch of it.
  void CoverParentInputs(GraphId g) {
    const Graph& graph = m_.graph(g);
    if (graph.IsRoot()) return;
    const Node& p = m_.node(graph.parent_node);
    for (NodeId id : graph.nodes) {
      const std::optional<size_t> k = ParentInputOf(m_.node(id), p);
      if (!k) continue;
      const int64_t outer = T(p.inputs[*k]);
      if (outer < 0 || !in_place_[Root(outer)]) continue;
      const int root = Root(T(id, 0));
      in_place_[root] = 1;
      covered_.emplace_back(g, root);
    }
  }

  // Every touch of a buffer written in place: (root, node, kWrites | kEnd).
  void CollectTouches(std::vector<std::tuple<int32_t, NodeId, uint8_t>>& touches) {
    std::sort(covered_.begin(), covered_.end());
    for (size_t i = 0; i < m_.num_nodes(); ++i) {
      const Node& v = m_.nodes()[i];
      const NodeId id(static_cast<int32_t>(i));
      // A NetOutput reads what it returns: the parent's successors (the
      // host, for the root) wait for it, not for the rest of its graph — or,
      // on the static path, for the subgraph's `_subgraph_end_node`, which
      // then stands at the end too.
      const bool net_output = v.type == "NetOutput";
      if (IsPassOnType(v.type) && !net_output) continue;
      const NodeId end = net_output ? MarkedEnd(v.graph) : NodeId();
      for (size_t j = 0; j < v.inputs.size(); ++j) {
        const int64_t t = T(v.inputs[j]);
        if (t < 0 || !in_place_[Root(t)]) continue;
        const uint8_t flags = net_output ? kEnd : Writes(id, static_cast<int32_t>(j)) ? kWrites : 0;
        touches.emplace_back(Root(t), id, flags);
        if (end.valid()) touches.emplace_back(Root(t), end, kEnd);
        if (EntersThroughInputs(v))
          entries_.emplace_back(Root(t), OwnerEntry{id, v.inputs[j].node, static_cast<int32_t>(j)});
      }
      if (net_output) {
        // The parent inputs this graph's end must cover, when it does not return them.
        for (auto it = std::lower_bound(covered_.begin(), covered_.end(), std::pair(v.graph, 0));
             it != covered_.end() && it->first == v.graph; ++it) {
          touches.emplace_back(it->second, id, kEnd);
          if (end.valid()) touches.emplace_back(it->second, end, kEnd);
        }
      }
      for (size_t o = 0; o < v.outputs.size(); ++o) {
        const int64_t t = T(id, static_cast<int64_t>(o));
        if (!in_place_[Root(t)] || IsAlias(id, static_cast<int32_t>(o))) continue;
        touches.emplace_back(Root(t), id, kWrites);
      }
    }
  }

  // The first node of subgraph g marked `_subgraph_end_node` (not a
  // Send/Recv node), as the events stage reads it; invalid for the root or
  // when none is.
  NodeId MarkedEnd(GraphId g) const {
    const Graph& graph = m_.graph(g);
    if (graph.IsRoot()) return NodeId();
    for (NodeId id : graph.nodes) {
      const Node& n = m_.node(id);
      if (n.attrs.empty() || n.type == "NetOutput" || IsSyncNode(n)) continue;
      if (GetBoolAttr(n.attrs, "_subgraph_end_node").value_or(false)) return id;
    }
    return NodeId();
  }

  bool Writes(NodeId n, int32_t input) const {
    return std::binary_search(written_.begin(), written_.end(), std::make_pair(n, input));
  }
  bool IsAlias(NodeId n, int32_t out) const {
    for (const auto& [id, refs] : RefsOf(n)) {
      if (static_cast<size_t>(out) < refs.size() && refs[out] >= 0) return true;
    }
    auto it = std::lower_bound(aliases_.begin(), aliases_.end(),
                               std::make_tuple(n, out, std::numeric_limits<int32_t>::min()));
    return it != aliases_.end() && std::get<0>(*it) == n && std::get<1>(*it) == out;
  }
  std::span<const std::pair<NodeId, std::vector<int64_t>>> RefsOf(NodeId n) const {
    auto it = std::lower_bound(ref_nodes_.begin(), ref_nodes_.end(), n,
                               [](const auto& e, NodeId x) { return e.first < x; });
    auto end = it;
    while (end != ref_nodes_.end() && end->first == n) ++end;
    return {it, end};
  }

  const Model& m_;
  std::vector<std::pair<NodeId, std::vector<int64_t>>> ref_nodes_;  // by node id
  std::vector<int64_t> first_;                                      // tensor index per node
  std::unique_ptr<UnionFind> uf_;
  std::vector<std::pair<int, OwnerEntry>> entries_;  // (root, owner's touch through an input)
  std::vector<std::pair<GraphId, int>> covered_;     // (subgraph, root) CoverParentInputs marked
  std::vector<uint8_t> in_place_;                    // by root tensor: written in place
  std::vector<GraphFacts> per_graph_;                // while visiting the graphs
  std::vector<std::pair<NodeId, int32_t>> written_;  // (node, input), sorted
  std::vector<std::tuple<NodeId, int32_t, int32_t>> aliases_;  // (owner, output, input), sorted
};

}  // namespace

InPlaceBuffers InPlaceBuffers::Of(const Model& model) {
  InPlaceBuffers out;
  InPlaceAnalysis a(model);
  if (!a.FindRefNodes()) return out;
  std::vector<std::tuple<int32_t, NodeId, uint8_t>> touches;
  a.Run(out.written_nodes_, out.written_inputs_, touches);
  std::sort(touches.begin(), touches.end());
  int32_t last_root = -1;
  for (const auto& [root, node, flags] : touches) {
    const bool writes = (flags & kWrites) != 0, end = (flags & kEnd) != 0;
    if (root != last_root) {
      out.begin_.push_back(out.touches_.size());
      last_root = root;
    } else if (out.touches_.back().node == node) {
      out.touches_.back().writes = out.touches_.back().writes || writes;
      out.touches_.back().end = out.touches_.back().end || end;
      continue;
    }
    out.touches_.push_back({node, writes, end});
  }
  if (!out.touches_.empty()) out.begin_.push_back(out.touches_.size());
  // Buffer b is the b-th root in increasing order, as the touches were.
  std::vector<int32_t> roots;
  for (const auto& [root, node, flags] : touches) {
    if (roots.empty() || roots.back() != root) roots.push_back(root);
  }
  // Members of the buffers, for BufferOf.
  for (const auto& [node, output, root] : a.Members(roots)) {
    const size_t b =
        static_cast<size_t>(std::lower_bound(roots.begin(), roots.end(), root) - roots.begin());
    out.members_.push_back({node, output, b});
  }
  std::vector<std::tuple<size_t, NodeId, int32_t, NodeId>>
      entries;  // (buffer, owner, input, producer)
  for (const auto& [root, e] : a.entries()) {
    const size_t b =
        static_cast<size_t>(std::lower_bound(roots.begin(), roots.end(), root) - roots.begin());
    entries.emplace_back(b, e.owner, e.input, e.producer);
  }
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  out.entry_begin_.assign(out.size() + 1, 0);
  for (const auto& [b, owner, input, producer] : entries) {
    ++out.entry_begin_[b + 1];
    out.entries_.push_back({owner, producer, input});
  }
  for (size_t b = 0; b < out.size(); ++b) out.entry_begin_[b + 1] += out.entry_begin_[b];
  return out;
}

std::optional<size_t> InPlaceBuffers::BufferOf(const OutputRef& t) const {
  auto it = std::lower_bound(members_.begin(), members_.end(), t,
                             [](const Member& m, const OutputRef& r) {
                               return std::pair(m.node, m.output) < std::pair(r.node, r.index);
                             });
  if (it == members_.end() || it->node != t.node || it->output != t.index) return std::nullopt;
  return it->buffer;
}

std::span<const OwnerEntry> InPlaceBuffers::owner_entries(size_t b) const {
  if (entry_begin_.empty()) return {};
  return {entries_.data() + entry_begin_[b], entries_.data() + entry_begin_[b + 1]};
}

NodeId UnorderedOwnerEntry(const InPlaceBuffers& buffers, PathFinder& paths,
                           const RequiredPath& p) {
  NodeId unordered;
  for (const OwnerEntry& e : buffers.owner_entries(p.buffer)) {
    if (e.owner != p.to || e.producer == p.from) continue;
    if (!paths.Reaches(p.from, e.producer)) {
      unordered = e.producer;
      break;
    }
  }
  if (!unordered.valid()) return unordered;
  // A control input of the owner orders every node of its subgraphs.
  for (NodeId c : paths.model().node(p.to).control_inputs) {
    if (CarriesOnlyOrder(paths.model().node(c))) continue;
    if (c == p.from || paths.Reaches(p.from, c)) return NodeId();
  }
  return unordered;
}

std::span<const int32_t> InPlaceBuffers::written_inputs(NodeId n) const {
  auto lo = std::lower_bound(written_nodes_.begin(), written_nodes_.end(), n);
  auto hi = lo;
  while (hi != written_nodes_.end() && *hi == n) ++hi;
  return {written_inputs_.data() + (lo - written_nodes_.begin()),
          written_inputs_.data() + (hi - written_nodes_.begin())};
}

bool PathFinder::Reaches(NodeId from, NodeId to, bool unbounded) {
  if (from == to) return true;
  const Node& f = model_.node(from);
  if (model_.node(to).graph != f.graph) return false;
  const int64_t floor = unbounded ? std::numeric_limits<int64_t>::min() : f.topo_id;
  if (to != to_) {
    Restart(to, floor);
  } else if (floor < floor_) {
    Lower(floor);
  }
  while (mark_[from.index()] != query_ && !stack_.empty()) {
    const Node& n = model_.node(stack_.back());
    stack_.pop_back();
    for (const OutputRef& in : n.inputs) Visit(in.node);
    for (NodeId c : n.control_inputs) Visit(c);
  }
  return mark_[from.index()] == query_;
}

void PathFinder::AddedEdge(NodeId from, NodeId to) {
  if (to != to_ || mark_.empty() || mark_[from.index()] == query_) return;
  if (model_.node(from).topo_id < floor_) {
    held_.push_back(from);
  } else {
    mark_[from.index()] = query_;
    stack_.push_back(from);
  }
}

void PathFinder::Restart(NodeId to, int64_t floor) {
  if (mark_.empty()) mark_.assign(model_.num_nodes(), 0);
  if (++query_ == 0) {  // wrapped: forget every mark
    std::fill(mark_.begin(), mark_.end(), 0);
    query_ = 1;
  }
  to_ = to;
  graph_ = model_.node(to).graph;
  floor_ = floor;
  held_.clear();
  mark_[to.index()] = query_;
  stack_.assign(1, to);
}

void PathFinder::Lower(int64_t floor) {
  floor_ = floor;
  std::vector<NodeId> held;
  held.swap(held_);
  for (NodeId u : held) Visit(u);
}

void PathFinder::Visit(NodeId u) {
  if (!u.valid() || u.index() >= model_.num_nodes() || mark_[u.index()] == query_) return;
  const Node& n = model_.node(u);
  if (n.graph != graph_) return;
  if (n.topo_id < floor_) {
    held_.push_back(u);  // may be held twice: Visit skips it once marked
    return;
  }
  mark_[u.index()] = query_;
  stack_.push_back(u);
}

}  // namespace npuplan
