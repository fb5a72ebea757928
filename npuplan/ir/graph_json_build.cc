// The graph reader's second phase: the collected document becomes the Model.
// Nodes are added in the order the format defines (root nodes, then each
// subgraph's), then references are resolved now that every name exists, then
// ownership, nesting depth and typed attributes are checked, then every graph
// is sorted. Paths are built only for an error.
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/graph_json_internal.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::graph_json_internal {
namespace {

// "node:3" → ("node", 3); "node" → ("node", 0).
bool SplitInputRef(std::string_view ref, std::string_view& name, int64_t& index) {
  size_t colon = ref.rfind(':');
  if (colon == std::string_view::npos) {
    name = ref;
    index = 0;
    return !name.empty();
  }
  name = ref.substr(0, colon);
  std::string_view num = ref.substr(colon + 1);
  if (name.empty() || num.empty()) return false;
  auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), index);
  return ec == std::errc() && ptr == num.data() + num.size() && index >= 0 && index < (1 << 20);
}

class ModelBuilder {
 public:
  ModelBuilder(RawDocument& doc, std::string_view source, const GraphReadOptions& opts)
      : doc_(doc), model_(doc.model), src_(source), opts_(opts) {}

  absl::StatusOr<Model> Run();

 private:
  // A node added to the Model, with what the file said about it.
  struct Pending {
    NodeId id;
    int graph_pos;  // -1: the root, else the index in "subgraphs"
    const RawNode* raw;
  };

  std::string NodePath(int graph_pos, int32_t index) const {
    return graph_pos < 0 ? StrCat("$.nodes[", index, "]")
                         : StrCat("$.subgraphs[", graph_pos, "].nodes[", index, "]");
  }
  std::string RefPath(const Pending& p, const char* field, uint32_t i) const {
    return StrCat(NodePath(p.graph_pos, p.raw->index), ".", field, "[", i, "]");
  }
  std::string_view RefText(uint32_t i) const {
    return std::string_view(doc_.ref_chars).substr(doc_.refs[i].first, doc_.refs[i].second);
  }
  absl::Status AddGraphs();
  absl::Status AddNodes(RawGraph& raw, GraphId g, int graph_pos);
  absl::Status ResolveInputs(const Pending& p);
  absl::Status ResolveControlInputs(const Pending& p);
  absl::Status ResolveSubgraphs(const Pending& p, std::vector<NodeId>& owner);
  absl::Status CheckOwners(const std::vector<NodeId>& owner) const;
  absl::Status CheckDepth() const;
  absl::Status CheckTypedAttrs(const Node& node, const std::string& path) const;
  absl::Status CheckParentIndices() const;
  absl::Status Sort();

  RawDocument& doc_;
  Model& model_;
  std::string_view src_;
  const GraphReadOptions& opts_;
  std::vector<Pending> pending_;
};

absl::StatusOr<Model> ModelBuilder::Run() {
  pending_.reserve(doc_.total_nodes);
  model_.Reserve(static_cast<size_t>(doc_.total_nodes));
  NPUPLAN_RETURN_IF_ERROR(AddGraphs());
  std::vector<NodeId> owner(model_.num_graphs());
  for (const Pending& p : pending_) {
    NPUPLAN_RETURN_IF_ERROR(ResolveInputs(p));
    NPUPLAN_RETURN_IF_ERROR(ResolveControlInputs(p));
    NPUPLAN_RETURN_IF_ERROR(ResolveSubgraphs(p, owner));
  }
  NPUPLAN_RETURN_IF_ERROR(CheckOwners(owner));
  NPUPLAN_RETURN_IF_ERROR(CheckDepth());
  for (const Pending& p : pending_) {
    NPUPLAN_RETURN_IF_ERROR(
        CheckTypedAttrs(model_.node(p.id), NodePath(p.graph_pos, p.raw->index)));
  }
  NPUPLAN_RETURN_IF_ERROR(CheckParentIndices());
  // The collected document is no longer needed.
  pending_ = {};
  doc_.root = {};
  doc_.subgraphs = {};
  doc_.ref_chars = {};
  doc_.refs = {};
  NPUPLAN_RETURN_IF_ERROR(Sort());
  return std::move(model_);
}

// The root's nodes, then each subgraph with its nodes, in file order.
absl::Status ModelBuilder::AddGraphs() {
  NPUPLAN_RETURN_IF_ERROR(AddNodes(doc_.root, kRootGraph, -1));
  for (size_t i = 0; i < doc_.subgraphs.size(); ++i) {
    RawGraph& sg = doc_.subgraphs[i];
    if (model_.FindGraph(sg.name).valid()) {
      return Bad(src_, StrCat("$.subgraphs[", i, "].name"),
                 StrCat("duplicate graph name '", sg.name, "'"));
    }
    GraphId g = model_.AddDetachedGraph(sg.name);
    model_.graph(g).attrs = std::move(sg.attrs);
    NPUPLAN_RETURN_IF_ERROR(AddNodes(sg, g, static_cast<int>(i)));
  }
  return absl::OkStatus();
}

absl::Status ModelBuilder::AddNodes(RawGraph& raw, GraphId g, int graph_pos) {
  const EngineTable& table = model_.engine_table;
  for (RawNode& r : raw.nodes) {
    Node& node = r.node;
    if (model_.FindNode(node.name).valid()) {
      return Bad(src_, NodePath(graph_pos, r.index) + ".name",
                 StrCat("duplicate node name '", node.name, "'"));
    }
    if (node.engine.empty()) node.engine = table.EngineForOp(node.type);
    if (table.Find(node.engine) == nullptr) {
      return Bad(src_, NodePath(graph_pos, r.index),
                 StrCat("node '", node.name, "' has unknown engine '", node.engine,
                        "' (not in the engine table; add it with --engines or \"engines\")"));
    }
    NodeId id = model_.AddNode(g, std::move(node));
    pending_.push_back({id, graph_pos, &r});
  }
  return absl::OkStatus();
}

absl::Status ModelBuilder::ResolveInputs(const Pending& p) {
  Node& node = model_.node(p.id);
  const RefRange& in = p.raw->refs[static_cast<int>(RefKind::kInputs)];
  node.inputs.reserve(in.count);
  for (uint32_t i = 0; i < in.count; ++i) {
    std::string_view ref = RefText(in.begin + i);
    std::string_view name;
    int64_t index;
    if (!SplitInputRef(ref, name, index)) {
      return Bad(src_, RefPath(p, "inputs", i),
                 StrCat("malformed input '", ref, "' (expected \"node:index\")"));
    }
    NodeId producer = model_.FindNode(name);
    if (!producer.valid()) {
      return Bad(src_, RefPath(p, "inputs", i), StrCat("unknown node '", name, "'"));
    }
    const Node& prod = model_.node(producer);
    if (index >= static_cast<int64_t>(prod.outputs.size())) {
      return Bad(src_, RefPath(p, "inputs", i),
                 StrCat("output anchor ", index, " of '", name, "' is out of range (it has ",
                        prod.outputs.size(), " outputs)"));
    }
    if (prod.graph != node.graph) {
      return Bad(src_, RefPath(p, "inputs", i),
                 StrCat("input '", name, "' is in graph '", model_.graph(prod.graph).name,
                        "', not in this node's graph '", model_.graph(node.graph).name, "'"));
    }
    node.inputs.push_back(OutputRef{producer, static_cast<int32_t>(index)});
  }
  return absl::OkStatus();
}

absl::Status ModelBuilder::ResolveControlInputs(const Pending& p) {
  Node& node = model_.node(p.id);
  const RefRange& ctrl = p.raw->refs[static_cast<int>(RefKind::kControl)];
  node.control_inputs.reserve(ctrl.count);
  for (uint32_t i = 0; i < ctrl.count; ++i) {
    std::string_view name = RefText(ctrl.begin + i);
    NodeId producer = model_.FindNode(name);
    if (!producer.valid()) {
      return Bad(src_, RefPath(p, "control_inputs", i), StrCat("unknown node '", name, "'"));
    }
    if (model_.node(producer).graph != node.graph) {
      return Bad(src_, RefPath(p, "control_inputs", i),
                 StrCat("control input '", name, "' is in another graph"));
    }
    node.control_inputs.push_back(producer);
  }
  return absl::OkStatus();
}

// Links the node's subgraphs to it; owner[g] is the node that lists graph g.
absl::Status ModelBuilder::ResolveSubgraphs(const Pending& p, std::vector<NodeId>& owner) {
  Node& node = model_.node(p.id);
  const RefRange& subs = p.raw->refs[static_cast<int>(RefKind::kSubgraphs)];
  for (uint32_t i = 0; i < subs.count; ++i) {
    std::string_view name = RefText(subs.begin + i);
    GraphId g = model_.FindGraph(name);
    if (!g.valid() || g == kRootGraph) {
      return Bad(src_, RefPath(p, "subgraphs", i), StrCat("subgraph '", name, "' is not defined"));
    }
    if (owner[g.index()].valid()) {
      return Bad(src_, RefPath(p, "subgraphs", i),
                 StrCat("subgraph '", name, "' is owned twice (by '",
                        model_.node(owner[g.index()]).name, "' and '", node.name, "')"));
    }
    owner[g.index()] = p.id;
    node.subgraphs.push_back(g);
    model_.graph(g).parent_node = p.id;
    model_.graph(g).parent_graph = node.graph;
  }
  return absl::OkStatus();
}

// Every subgraph is listed by a node, and by the one its "parent" names.
absl::Status ModelBuilder::CheckOwners(const std::vector<NodeId>& owner) const {
  for (size_t g = 1; g < model_.num_graphs(); ++g) {
    auto w = [g] { return StrCat("$.subgraphs[", g - 1, "]"); };
    const std::string& gname = model_.graph(GraphId(static_cast<int32_t>(g))).name;
    if (!owner[g].valid()) {
      return Bad(src_, w(),
                 StrCat("subgraph '", gname, "' is not listed in any node's \"subgraphs\""));
    }
    const std::optional<std::string>& parent = doc_.subgraphs[g - 1].parent;
    if (parent.has_value() && *parent != model_.node(owner[g]).name) {
      return Bad(src_, w() + ".parent",
                 StrCat("subgraph '", gname, "' names parent '", *parent,
                        "' but is listed by node '", model_.node(owner[g]).name, "'"));
    }
  }
  return absl::OkStatus();
}

// Subgraph nesting depth (root = 0) against the limit; a subgraph whose chain
// of owners never reaches the root (an ownership cycle) is rejected.
absl::Status ModelBuilder::CheckDepth() const {
  const size_t n = model_.num_graphs();
  std::vector<int64_t> depth(n, -1);  // -1 unknown, -2 on the current walk / cycle
  depth[0] = 0;
  std::vector<size_t> path;
  for (size_t start = 1; start < n; ++start) {
    path.clear();
    size_t g = start;
    while (depth[g] == -1) {
      depth[g] = -2;
      path.push_back(g);
      GraphId parent = model_.graph(GraphId(static_cast<int32_t>(g))).parent_graph;
      if (!parent.valid()) break;
      g = parent.index();
    }
    int64_t base = depth[g];
    for (size_t i = path.size(); i-- > 0;) {
      depth[path[i]] = base < 0 ? -3 : ++base;  // -3: not under the root
    }
    if (depth[start] < 0) {
      return Bad(src_, StrCat("$.subgraphs[", start - 1, "]"),
                 StrCat("subgraph '", model_.graph(GraphId(static_cast<int32_t>(start))).name,
                        "' is not reachable from the root graph (its owners form a cycle)"));
    }
    if (depth[start] > opts_.limits.max_depth) {
      return Bad(src_, StrCat("$.subgraphs[", start - 1, "]"),
                 StrCat("subgraph '", model_.graph(GraphId(static_cast<int32_t>(start))).name,
                        "' is nested ", depth[start], " deep, deeper than allowed (limit ",
                        opts_.limits.max_depth, "; raise it with --max-depth)"));
    }
  }
  return absl::OkStatus();
}

// Attributes whose value later stages read as a number: a value of the wrong
// type would be silently ignored (a string `_parent_node_index`, a string
// `_node_sqe_num`), a negative cost or task count would be clamped. Refused
// here, naming the attribute's JSON path.
absl::Status ModelBuilder::CheckTypedAttrs(const Node& node, const std::string& path) const {
  auto where = [&](std::string_view attr) { return StrCat(path, ".attrs.", attr); };
  struct IntAttr {
    const char* name;
    bool task_count;  // >= 0 (`_parent_node_index` is range-checked by CheckParentIndices)
  };
  for (const IntAttr a :
       {IntAttr{"_parent_node_index", false}, IntAttr{"_node_sqe_num", true},
        IntAttr{"_hccl_task_num", true}, IntAttr{"_hccl_attached_task_num", true}}) {
    const AttrValue* v = FindAttr(node.attrs, a.name);
    if (v == nullptr) continue;
    const int64_t* i = v->as<int64_t>();
    if (i == nullptr) {
      return Bad(src_, where(a.name),
                 StrCat("expected an integer, found a value of type ", v->TypeName()));
    }
    if (a.task_count && *i < 0) {
      return Bad(src_, where(a.name),
                 StrCat("node '", node.name, "': attribute ", a.name, " is ", *i,
                        "; a task count must be >= 0"));
    }
  }
  if (const AttrValue* v = FindAttr(node.attrs, "_cost")) {
    const int64_t* i = v->as<int64_t>();
    const double* d = v->as<double>();
    if (i == nullptr && d == nullptr) {
      return Bad(src_, where("_cost"),
                 StrCat("expected a number >= 0, found a value of type ", v->TypeName()));
    }
    if (i != nullptr ? *i < 0 : !(*d >= 0)) {
      return Bad(src_, where("_cost"),
                 StrCat("node '", node.name, "': a cost must be >= 0, found ",
                        i != nullptr ? StrCat(*i) : StrCat(*d)));
    }
  }
  return absl::OkStatus();
}

// A subgraph's `_parent_node_index` must name an input of its owner: later
// stages index the owner's inputs with it.
absl::Status ModelBuilder::CheckParentIndices() const {
  for (const Pending& p : pending_) {
    if (p.graph_pos < 0) continue;
    const Node& node = model_.node(p.id);
    std::optional<int64_t> idx = GetIntAttr(node.attrs, "_parent_node_index");
    if (!idx.has_value()) continue;
    const Node& owner_node = model_.node(model_.graph(node.graph).parent_node);
    if (*idx < 0 || *idx >= static_cast<int64_t>(owner_node.inputs.size())) {
      return Bad(src_, NodePath(p.graph_pos, p.raw->index) + ".attrs._parent_node_index",
                 StrCat("node '", node.name, "' has _parent_node_index ", *idx, " but its parent '",
                        owner_node.name, "' has ", owner_node.inputs.size(), " inputs"));
    }
  }
  return absl::OkStatus();
}

// Topological sort (mode from --option, else the graph's ge.topoSortingMode),
// or only topo ids in file order when sorting is off.
absl::Status ModelBuilder::Sort() {
  if (!opts_.topo_sort) {
    RenumberTopoIds(model_);
    return absl::OkStatus();
  }
  auto mode = TopoSortMode::kBfs;
  if (!opts_.topo_sorting_mode.empty()) {  // --option wins over the graph's options
    NPUPLAN_ASSIGN_OR_RETURN(mode, ParseTopoSortMode(opts_.topo_sorting_mode));
  } else if (auto it = model_.options.find("ge.topoSortingMode"); it != model_.options.end()) {
    auto parsed = ParseTopoSortMode(it->second);
    if (!parsed.ok()) return Bad(src_, "$.options", std::string(parsed.status().message()));
    mode = *parsed;
  }
  absl::Status s = TopologicalSort(model_, mode);
  if (!s.ok()) return absl::InvalidArgumentError(StrCat(src_, ": ", s.message()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Model> BuildModel(RawDocument doc, std::string_view source,
                                 const GraphReadOptions& opts) {
  return ModelBuilder(doc, source, opts).Run();
}

}  // namespace npuplan::graph_json_internal
