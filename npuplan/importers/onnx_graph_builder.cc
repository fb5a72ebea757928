// Step 5 of the ONNX import (onnx_graph_builder.h): the Builder turns each
// ONNX graph into an IR graph in five steps (BuildGraph: inputs,
// initializers, nodes, their inputs and bodies, NetOutput); the type and
// attribute conversions it uses come first.
#include "npuplan/importers/onnx_graph_builder.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "npuplan/importers/import_error.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::onnx_import {
namespace {

// A node's graph-valued attributes in the order their subgraphs are numbered:
// an If's then_branch is subgraph 0 and its else_branch subgraph 1, as in GE,
// whatever order the file lists them in; other ops keep the file's order.
std::vector<const onnx::AttributeProto*> GraphAttributesInBranchOrder(const onnx::NodeProto& p) {
  std::vector<const onnx::AttributeProto*> out;
  for (const auto& a : p.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS ||
        a.has_g() || a.graphs_size() > 0) {
      out.push_back(&a);
    }
  }
  if (p.op_type() == "If") {
    auto rank = [](const onnx::AttributeProto* a) {
      return a->name() == "then_branch" ? 0 : a->name() == "else_branch" ? 1 : 2;
    };
    std::stable_sort(out.begin(), out.end(),
                     [&](const auto* a, const auto* b) { return rank(a) < rank(b); });
  }
  return out;
}

// npuplan dtype name of an ONNX element type ("" when it has none).
std::string DTypeName(int32_t elem) {
  switch (elem) {
    case onnx::TensorProto::FLOAT:
      return "float32";
    case onnx::TensorProto::UINT8:
      return "uint8";
    case onnx::TensorProto::INT8:
      return "int8";
    case onnx::TensorProto::UINT16:
      return "uint16";
    case onnx::TensorProto::INT16:
      return "int16";
    case onnx::TensorProto::INT32:
      return "int32";
    case onnx::TensorProto::INT64:
      return "int64";
    case onnx::TensorProto::STRING:
      return "string";
    case onnx::TensorProto::BOOL:
      return "bool";
    case onnx::TensorProto::FLOAT16:
      return "float16";
    case onnx::TensorProto::DOUBLE:
      return "float64";
    case onnx::TensorProto::UINT32:
      return "uint32";
    case onnx::TensorProto::UINT64:
      return "uint64";
    case onnx::TensorProto::COMPLEX64:
      return "complex64";
    case onnx::TensorProto::COMPLEX128:
      return "complex128";
    case onnx::TensorProto::BFLOAT16:
      return "bfloat16";
    // Opset 19+ (ONNX 1.14+ numbers; Debian's 1.12 proto has no names for them).
    case 17:
      return "float8e4m3fn";
    case 18:
      return "float8e4m3fnuz";
    case 19:
      return "float8e5m2";
    case 20:
      return "float8e5m2fnuz";
    case 21:
      return "uint4";
    case 22:
      return "int4";
    default:
      return "";
  }
}

TensorDesc DescFromTensor(const onnx::TensorProto& t) {
  TensorDesc d;
  d.shape.assign(t.dims().begin(), t.dims().end());
  if (std::string name = DTypeName(t.data_type()); !name.empty()) d.dtype = name;
  return d;
}

// Shape and dtype of a Constant node's value.
TensorDesc DescFromConstant(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value" && a.has_t()) return DescFromTensor(a.t());
    if (a.name() == "sparse_value" && a.has_sparse_tensor()) {
      TensorDesc d;
      d.shape.assign(a.sparse_tensor().dims().begin(), a.sparse_tensor().dims().end());
      if (auto name = DTypeName(a.sparse_tensor().values().data_type()); !name.empty()) {
        d.dtype = name;
      }
      return d;
    }
    if (a.name() == "value_float") return TensorDesc{{}, "float32"};
    if (a.name() == "value_int") return TensorDesc{{}, "int64"};
    if (a.name() == "value_string") return TensorDesc{{}, "string"};
    if (a.name() == "value_floats") return TensorDesc{{a.floats_size()}, "float32"};
    if (a.name() == "value_ints") return TensorDesc{{a.ints_size()}, "int64"};
    if (a.name() == "value_strings") return TensorDesc{{a.strings_size()}, "string"};
  }
  return TensorDesc{{kUnknownRank}, "float32"};
}

// ONNX attribute → IR attribute (graphs become subgraphs; tensors keep only
// their dtype and shape). nullopt = not representable.
std::optional<AttrValue> ConvertAttr(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      return AttrValue(static_cast<double>(a.f()));
    case onnx::AttributeProto::INT:
      return AttrValue(static_cast<int64_t>(a.i()));
    case onnx::AttributeProto::STRING:
      return AttrValue(std::string(a.s()));
    case onnx::AttributeProto::FLOATS:
      return AttrValue(AttrValue::FloatList(a.floats().begin(), a.floats().end()));
    case onnx::AttributeProto::INTS:
      return AttrValue(AttrValue::IntList(a.ints().begin(), a.ints().end()));
    case onnx::AttributeProto::STRINGS:
      return AttrValue(AttrValue::StringList(a.strings().begin(), a.strings().end()));
    case onnx::AttributeProto::TENSOR: {
      TensorDesc d = DescFromTensor(a.t());
      AttrMap m;
      m["dtype"] = d.dtype;
      m["shape"] = AttrValue::IntList(d.shape);
      return AttrValue(std::move(m));
    }
    default:
      return std::nullopt;
  }
}

class Builder {
 public:
  Builder(const EngineTable& engines, std::string_view src, OnnxImport& out)
      : engines_(engines), src_(src), out_(out), model_(out.model) {}

  // One ONNX graph being built into one IR graph.
  struct Scope {
    Scope* outer = nullptr;
    GraphId graph;
    NodeId parent;  // owner node in the outer graph (invalid at the root)
    std::unordered_map<std::string, OutputRef> values;
    std::unordered_map<std::string, const onnx::TypeProto*> types;
  };

  // Builds `g` into scope `s`; body input i stands for parent input
  // formal[i] (nullopt: the parent's optional input is absent).
  absl::Status BuildGraph(const onnx::GraphProto& g, Scope& s,
                          const std::vector<std::optional<int64_t>>& formal,
                          std::vector<int64_t> netoutput_parent_index);

  void Finish() {
    for (const auto& [type, count] : unknown_ops_) {
      out_.warnings.push_back(
          StrCat("op type '", type, "' (", count, " node", count == 1 ? "" : "s",
                 ") is not in the engine table: mapped to ", kOnnxFallbackEngine));
    }
  }

 private:
  std::string UniqueNodeName(std::string_view base) {
    std::string name(base.empty() ? "node" : base);
    if (!model_.FindNode(name).valid() && !reserved_.count(name)) return name;
    for (int k = 1;; ++k) {
      std::string cand = StrCat(name, "_", k);
      if (!model_.FindNode(cand).valid() && !reserved_.count(cand)) return cand;
    }
  }
  std::string UniqueGraphName(std::string_view base) {
    std::string name(base);
    if (!model_.FindGraph(name).valid()) return name;
    for (int k = 1;; ++k) {
      std::string cand = StrCat(name, "_", k);
      if (!model_.FindGraph(cand).valid()) return cand;
    }
  }
  const std::string& EngineFor(const std::string& type) {
    if (engines_.HasOpMapping(type)) return engines_.EngineForOp(type);
    ++unknown_ops_[type];
    return fallback_;
  }
  TensorDesc TypeOf(const Scope& s, const std::string& name) const {
    for (const Scope* cur = &s; cur != nullptr; cur = cur->outer) {
      if (auto it = cur->types.find(name); it != cur->types.end()) return DescFromType(it->second);
    }
    return DescFromType(nullptr);
  }
  absl::StatusOr<OutputRef> Resolve(Scope& s, const std::string& name, std::string_view user);

  // The steps of BuildGraph, in order; `gname` is the IR graph's name.
  absl::Status AddInputs(const onnx::GraphProto& g, Scope& s, const std::string& gname,
                         const std::set<std::string>& inits,
                         const std::vector<std::optional<int64_t>>& formal);
  absl::Status AddConst(Scope& s, const std::string& gname, const std::set<std::string>& inits,
                        const std::string& name, TensorDesc desc);
  absl::Status AddInitializers(const onnx::GraphProto& g, Scope& s, const std::string& gname,
                               const std::set<std::string>& inits);
  NodeId AddNode(const onnx::NodeProto& p, Scope& s);
  absl::StatusOr<std::vector<std::optional<int64_t>>> ConnectInputs(const onnx::NodeProto& p,
                                                                    NodeId id, Scope& s);
  absl::Status BuildBodies(const onnx::NodeProto& p, NodeId id, Scope& s,
                           const std::vector<std::optional<int64_t>>& compact);
  absl::Status AddNetOutput(const onnx::GraphProto& g, Scope& s, const std::string& gname,
                            std::vector<int64_t> netoutput_parent_index);

  const EngineTable& engines_;
  std::string src_;
  OnnxImport& out_;
  Model& model_;
  std::string fallback_{kOnnxFallbackEngine};
  std::map<std::string, int64_t> unknown_ops_;
  std::set<std::string> reserved_;
  // Per parent node: captured outer name → index of the parent input carrying it.
  std::unordered_map<int32_t, std::map<std::string, int64_t>> capture_index_;
};

// The IR value of tensor `name` in scope `s`; an outer-scope value becomes a
// parent input plus a `_parent_node_index` Data node here.
absl::StatusOr<OutputRef> Builder::Resolve(Scope& s, const std::string& name,
                                           std::string_view user) {
  if (auto it = s.values.find(name); it != s.values.end()) return it->second;
  if (s.outer == nullptr) {
    return Bad(src_, StrCat(user, " reads tensor '", name,
                            "', which no node, input or initializer defines"));
  }
  NPUPLAN_ASSIGN_OR_RETURN(OutputRef outer_ref, Resolve(*s.outer, name, user));
  auto& caps = capture_index_[s.parent.value];
  int64_t idx;
  if (auto it = caps.find(name); it != caps.end()) {
    idx = it->second;
  } else {
    Node& parent = model_.node(s.parent);
    idx = -1;
    // If bodies have no formal inputs: reuse an input carrying the same value.
    if (parent.type == "If") {
      for (size_t k = 0; k < parent.inputs.size() && idx < 0; ++k) {
        if (parent.inputs[k] == outer_ref) idx = static_cast<int64_t>(k);
      }
    }
    if (idx < 0) {
      idx = static_cast<int64_t>(parent.inputs.size());
      parent.inputs.push_back(outer_ref);
      ++out_.stats.captures;
    }
    caps[name] = idx;
  }
  Node d;
  d.name = UniqueNodeName(name);
  d.type = "Data";
  d.engine = engines_.EngineForOp("Data");
  d.attrs["_parent_node_index"] = idx;
  d.attrs["_onnx_implicit_input"] = true;
  d.attrs["_onnx_outputs"] = AttrValue::StringList{name};
  d.outputs = {model_.node(outer_ref.node).outputs[outer_ref.index]};
  NodeId id = model_.AddNode(s.graph, std::move(d));
  OutputRef ref{id, 0};
  s.values[name] = ref;
  return ref;
}

absl::Status Builder::BuildGraph(const onnx::GraphProto& g, Scope& s,
                                 const std::vector<std::optional<int64_t>>& formal,
                                 std::vector<int64_t> netoutput_parent_index) {
  const std::string gname = model_.graph(s.graph).name;  // a copy: AddSubgraph reallocates
  model_.graph(s.graph).attrs["_onnx_name"] = std::string(g.name());
  for (const auto& vi : g.input()) s.types[vi.name()] = &vi.type();
  for (const auto& vi : g.value_info()) s.types[vi.name()] = &vi.type();
  for (const auto& vi : g.output()) s.types[vi.name()] = &vi.type();
  std::set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());

  NPUPLAN_RETURN_IF_ERROR(AddInputs(g, s, gname, inits, formal));
  NPUPLAN_RETURN_IF_ERROR(AddInitializers(g, s, gname, inits));
  // Nodes, without their inputs yet (so order inside the graph never matters).
  std::vector<NodeId> ids(g.node_size());
  for (int i = 0; i < g.node_size(); ++i) ids[i] = AddNode(g.node(i), s);
  // Inputs of each node, then its bodies (whose captures extend its inputs).
  for (int i = 0; i < g.node_size(); ++i) {
    NPUPLAN_ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> compact,
                             ConnectInputs(g.node(i), ids[i], s));
    NPUPLAN_RETURN_IF_ERROR(BuildBodies(g.node(i), ids[i], s, compact));
  }
  return AddNetOutput(g, s, gname, std::move(netoutput_parent_index));
}

// 1. Inputs → Data.
absl::Status Builder::AddInputs(const onnx::GraphProto& g, Scope& s, const std::string& gname,
                                const std::set<std::string>& inits,
                                const std::vector<std::optional<int64_t>>& formal) {
  const bool root = s.outer == nullptr;
  int64_t data_index = 0;
  for (int i = 0; i < g.input_size(); ++i) {
    const auto& vi = g.input(i);
    if (inits.count(vi.name())) continue;  // an initializer with a default: a Const
    Node d;
    d.name = UniqueNodeName(vi.name());
    d.type = "Data";
    d.engine = engines_.EngineForOp("Data");
    d.outputs = {DescFromType(&vi.type())};
    d.attrs["_onnx_outputs"] = AttrValue::StringList{vi.name()};
    if (root) {
      d.attrs["index"] = data_index++;
    } else if (i < static_cast<int>(formal.size()) && formal[i]) {
      d.attrs["_parent_node_index"] = *formal[i];
    } else {
      d.attrs["_onnx_absent_parent_input"] = true;
    }
    if (s.values.count(vi.name())) {
      return Bad(src_, StrCat("graph '", gname, "': input '", vi.name(), "' is declared twice"));
    }
    s.values[vi.name()] = {model_.AddNode(s.graph, std::move(d)), 0};
  }
  return absl::OkStatus();
}

// One initializer → a Const (shape and dtype only).
absl::Status Builder::AddConst(Scope& s, const std::string& gname,
                               const std::set<std::string>& inits, const std::string& name,
                               TensorDesc desc) {
  Node c;
  c.name = UniqueNodeName(name);
  c.type = "Const";
  c.engine = engines_.EngineForOp("Const");
  c.outputs = {std::move(desc)};
  c.attrs["_onnx_initializer"] = true;
  c.attrs["_onnx_outputs"] = AttrValue::StringList{name};
  if (s.values.count(name) && !inits.count(name)) {
    return Bad(src_, StrCat("graph '", gname, "': initializer '", name, "' is defined twice"));
  }
  s.values[name] = {model_.AddNode(s.graph, std::move(c)), 0};
  return absl::OkStatus();
}

// 2. Initializers (dense, then sparse) → Const.
absl::Status Builder::AddInitializers(const onnx::GraphProto& g, Scope& s, const std::string& gname,
                                      const std::set<std::string>& inits) {
  for (const auto& t : g.initializer()) {
    NPUPLAN_RETURN_IF_ERROR(AddConst(s, gname, inits, t.name(), DescFromTensor(t)));
  }
  for (const auto& t : g.sparse_initializer()) {
    TensorDesc d;
    d.shape.assign(t.dims().begin(), t.dims().end());
    if (auto name = DTypeName(t.values().data_type()); !name.empty()) d.dtype = name;
    NPUPLAN_RETURN_IF_ERROR(AddConst(s, gname, inits, t.values().name(), std::move(d)));
  }
  return absl::OkStatus();
}

// 3. One node without its inputs: name, type, engine, attributes, outputs.
NodeId Builder::AddNode(const onnx::NodeProto& p, Scope& s) {
  const bool constant =
      p.op_type() == "Constant" && (p.domain().empty() || p.domain() == "ai.onnx");
  Node n;
  std::string base = p.name();
  if (base.empty()) {
    base = constant && p.output_size() > 0 && !p.output(0).empty() ? p.output(0) : p.op_type();
  }
  n.name = UniqueNodeName(base);
  if (!p.name().empty() && n.name != p.name()) n.attrs["_onnx_name"] = std::string(p.name());
  n.type = constant ? "Const" : p.op_type();
  if (constant) n.attrs["_onnx_op_type"] = std::string("Constant");
  if (!p.domain().empty() && p.domain() != "ai.onnx") {
    n.attrs["_onnx_domain"] = std::string(p.domain());
  }
  n.engine = EngineFor(n.type);
  AttrValue::StringList subgraph_attrs;
  for (const onnx::AttributeProto* a : GraphAttributesInBranchOrder(p)) {
    subgraph_attrs.push_back(a->name());
  }
  for (const auto& a : p.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS) {
      continue;
    }
    if (constant) continue;
    if (auto v = ConvertAttr(a)) n.attrs[a.name()] = std::move(*v);
  }
  if (!subgraph_attrs.empty()) n.attrs["_onnx_subgraph_attrs"] = std::move(subgraph_attrs);
  AttrValue::StringList out_names;
  AttrValue::IntList absent_outputs;
  for (int k = 0; k < p.output_size(); ++k) {
    const std::string& o = p.output(k);
    out_names.push_back(o);
    if (o.empty()) {  // optional output not produced: an empty, static tensor
      n.outputs.push_back(TensorDesc{{0}, "float32"});
      absent_outputs.push_back(k);
    } else {
      n.outputs.push_back(constant ? DescFromConstant(p) : TypeOf(s, o));
    }
  }
  n.attrs["_onnx_outputs"] = std::move(out_names);
  if (!absent_outputs.empty()) n.attrs["_onnx_absent_outputs"] = std::move(absent_outputs);
  const NodeId id = model_.AddNode(s.graph, std::move(n));
  for (int k = 0; k < p.output_size(); ++k) {
    if (!p.output(k).empty()) s.values[p.output(k)] = {id, k};
  }
  return id;
}

// 4a. The node's inputs; returns, per ONNX input, its index among the IR
// inputs (nullopt: an absent optional input).
absl::StatusOr<std::vector<std::optional<int64_t>>> Builder::ConnectInputs(const onnx::NodeProto& p,
                                                                           NodeId id, Scope& s) {
  const std::string user = StrCat("node '", model_.node(id).name, "' (", p.op_type(), ")");
  std::vector<std::optional<int64_t>> compact(p.input_size());
  AttrValue::IntList absent_inputs;
  for (int k = 0; k < p.input_size(); ++k) {
    if (p.input(k).empty()) {
      absent_inputs.push_back(k);
      continue;
    }
    NPUPLAN_ASSIGN_OR_RETURN(OutputRef ref, Resolve(s, p.input(k), user));
    compact[k] = static_cast<int64_t>(model_.node(id).inputs.size());
    model_.node(id).inputs.push_back(ref);
  }
  if (!absent_inputs.empty()) {
    model_.node(id).attrs["_onnx_absent_inputs"] = std::move(absent_inputs);
  }
  return compact;
}

// 4b. The node's bodies, each a subgraph (If: then_branch first).
absl::Status Builder::BuildBodies(const onnx::NodeProto& p, NodeId id, Scope& s,
                                  const std::vector<std::optional<int64_t>>& compact) {
  for (const onnx::AttributeProto* attr : GraphAttributesInBranchOrder(p)) {
    const onnx::AttributeProto& a = *attr;
    std::vector<const onnx::GraphProto*> bodies;
    if (a.has_g()) bodies.push_back(&a.g());
    for (const auto& sub : a.graphs()) bodies.push_back(&sub);
    for (size_t b = 0; b < bodies.size(); ++b) {
      const onnx::GraphProto& body = *bodies[b];
      std::string sub_name = StrCat(model_.node(id).name, "/", a.name());
      if (bodies.size() > 1) sub_name = StrCat(sub_name, "_", b);
      GraphId sg = model_.AddSubgraph(id, UniqueGraphName(sub_name));
      ++out_.stats.subgraphs;
      // Body input j stands for parent input j (Loop: M, cond, carried…;
      // Scan: states, scan inputs). If bodies have no formal inputs.
      std::vector<std::optional<int64_t>> body_formal(body.input_size());
      for (int j = 0; j < body.input_size() && j < p.input_size(); ++j) body_formal[j] = compact[j];
      // Body output j → parent output j, except Loop's leading condition (-1).
      std::vector<int64_t> out_index;
      const int lead = p.op_type() == "Loop" ? 1 : 0;
      for (int j = 0; j < body.output_size(); ++j) out_index.push_back(j < lead ? -1 : j - lead);
      Scope child;
      child.outer = &s;
      child.graph = sg;
      child.parent = id;
      NPUPLAN_RETURN_IF_ERROR(BuildGraph(body, child, body_formal, std::move(out_index)));
    }
  }
  return absl::OkStatus();
}

// 5. Graph outputs → NetOutput.
absl::Status Builder::AddNetOutput(const onnx::GraphProto& g, Scope& s, const std::string& gname,
                                   std::vector<int64_t> netoutput_parent_index) {
  const bool root = s.outer == nullptr;
  Node net;
  net.name = UniqueNodeName(root ? "NetOutput" : StrCat(gname, "/NetOutput"));
  net.type = "NetOutput";
  net.engine = engines_.EngineForOp("NetOutput");
  AttrValue::StringList out_names;
  for (const auto& vi : g.output()) out_names.push_back(vi.name());
  net.attrs["_onnx_outputs"] = out_names;
  if (!root) net.attrs["_parent_output_index"] = AttrValue::IntList(netoutput_parent_index);
  NodeId net_id = model_.AddNode(s.graph, std::move(net));
  for (const auto& vi : g.output()) {
    NPUPLAN_ASSIGN_OR_RETURN(
        OutputRef ref,
        Resolve(s, vi.name(), StrCat("output '", vi.name(), "' of graph '", gname, "'")));
    model_.node(net_id).inputs.push_back(ref);
  }
  return absl::OkStatus();
}

}  // namespace

TensorDesc DescFromType(const onnx::TypeProto* t) {
  TensorDesc d;
  d.shape = {kUnknownRank};
  if (t == nullptr) return d;
  const onnx::TypeProto* cur = t;
  while (cur->has_optional_type()) cur = &cur->optional_type().elem_type();
  if (!cur->has_tensor_type()) return d;
  const auto& tt = cur->tensor_type();
  if (std::string name = DTypeName(tt.elem_type()); !name.empty()) d.dtype = name;
  if (tt.has_shape()) {
    d.shape.clear();
    for (const auto& dim : tt.shape().dim()) {
      d.shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value()
                                                                    : kUnknownDim);
    }
  }
  return d;
}

absl::Status BuildModelGraphs(const onnx::GraphProto& root, std::string_view src, OnnxImport& out) {
  Builder builder(out.model.engine_table, src, out);
  Builder::Scope scope;
  scope.graph = kRootGraph;
  NPUPLAN_RETURN_IF_ERROR(builder.BuildGraph(root, scope, {}, {}));
  builder.Finish();
  return absl::OkStatus();
}

}  // namespace npuplan::onnx_import
