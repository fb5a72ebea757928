// The ONNX importer works in five steps:
//   1. Parse the ModelProto (protobuf, at the boundary: any failure becomes
//      InvalidArgument naming the file) and check the IR version and opset.
//   2. Pin --input-shape dims into the graph inputs' declared types.
//   3. Sort every graph's nodes topologically (ONNX files need not be sorted;
//      subgraphs' outer-scope reads count as dependencies).
//   4. Check every node against its ONNX schema (inference functions assume
//      it), then shape inference rounds: onnx::shape_inference::InferShapes with data
//      propagation, then our shape-arithmetic folding, until nothing new is
//      learnt.
//   5. Build the Model graph by graph (Builder), sort, verify.
#include "npuplan/importers/onnx_importer.h"

#include <algorithm>
#include <climits>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "npuplan/importers/isolated_inference.h"
#include "npuplan/importers/onnx_model_checks.h"
#include "npuplan/importers/onnx_pins.h"
#include "npuplan/importers/onnx_schemas.h"
#include "npuplan/importers/onnx_shape_report.h"
#include "npuplan/importers/onnx_tensor_data.h"
#include "npuplan/importers/shape_folding.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "onnx/defs/schema.h"
#include "google/protobuf/io/coded_stream.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace npuplan {
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
    std::stable_sort(out.begin(), out.end(), [&](const auto* a, const auto* b) {
      return rank(a) < rank(b);
    });
  }
  return out;
}

using onnx_import::NodeLabel;

// Protobuf's default recursion limit, and the one used to tell a too-deep
// model from a corrupted one (deep enough for any exporter's output, shallow
// enough for the stack).
constexpr int kProtobufDepthLimit = 100;
constexpr int kDeepParseLimit = 2000;

absl::Status Bad(std::string_view src, std::string_view msg) {
  return absl::InvalidArgumentError(StrCat(src, ": ", msg));
}

// npuplan dtype name of an ONNX element type ("" when it has none).
std::string DTypeName(int32_t elem) {
  switch (elem) {
    case onnx::TensorProto::FLOAT: return "float32";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT16: return "uint16";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::STRING: return "string";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::DOUBLE: return "float64";
    case onnx::TensorProto::UINT32: return "uint32";
    case onnx::TensorProto::UINT64: return "uint64";
    case onnx::TensorProto::COMPLEX64: return "complex64";
    case onnx::TensorProto::COMPLEX128: return "complex128";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    // Opset 19+ (ONNX 1.14+ numbers; Debian's 1.12 proto has no names for them).
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    default: return "";
  }
}

// Tensor description of an ONNX type; unknown → rank [-2]. Element types we
// cannot name (undefined, sequences, maps) are recorded as float32.
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
      d.shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : kUnknownDim);
    }
  }
  return d;
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
      if (auto name = DTypeName(a.sparse_tensor().values().data_type()); !name.empty()) d.dtype = name;
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
    case onnx::AttributeProto::FLOAT: return AttrValue(static_cast<double>(a.f()));
    case onnx::AttributeProto::INT: return AttrValue(static_cast<int64_t>(a.i()));
    case onnx::AttributeProto::STRING: return AttrValue(std::string(a.s()));
    case onnx::AttributeProto::FLOATS:
      return AttrValue(AttrValue::FloatList(a.floats().begin(), a.floats().end()));
    case onnx::AttributeProto::INTS: return AttrValue(AttrValue::IntList(a.ints().begin(), a.ints().end()));
    case onnx::AttributeProto::STRINGS:
      return AttrValue(AttrValue::StringList(a.strings().begin(), a.strings().end()));
    case onnx::AttributeProto::TENSOR: {
      TensorDesc d = DescFromTensor(a.t());
      AttrMap m;
      m["dtype"] = d.dtype;
      m["shape"] = AttrValue::IntList(d.shape);
      return AttrValue(std::move(m));
    }
    default: return std::nullopt;
  }
}

// ---- step 3: topological order of NodeProtos --------------------------------

// Names a graph reads from enclosing scopes (used by nodes, nested bodies included).
void CollectFreeNames(const onnx::GraphProto& g, std::set<std::string>& out) {
  std::unordered_set<std::string> defined;
  for (const auto& vi : g.input()) defined.insert(vi.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& t : g.sparse_initializer()) defined.insert(t.values().name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) defined.insert(o);
  }
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) out.insert(name);
  };
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) use(in);
    for (const auto& a : n.attribute()) {
      std::set<std::string> inner;
      if (a.has_g()) CollectFreeNames(a.g(), inner);
      for (const auto& sub : a.graphs()) CollectFreeNames(sub, inner);
      for (const auto& name : inner) use(name);
    }
  }
  for (const auto& o : g.output()) use(o.name());
}

absl::Status SortGraph(onnx::GraphProto& g, std::string_view gname, std::string_view src, bool& reordered) {
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) NPUPLAN_RETURN_IF_ERROR(SortGraph(*a.mutable_g(), StrCat(n.name(), "/", a.name()), src, reordered));
      for (auto& sub : *a.mutable_graphs()) NPUPLAN_RETURN_IF_ERROR(SortGraph(sub, StrCat(n.name(), "/", a.name()), src, reordered));
    }
  }
  const int n = g.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& o : g.node(i).output()) {
      if (o.empty()) continue;
      auto [it, fresh] = producer.emplace(o, i);
      if (!fresh) {
        return Bad(src, StrCat("graph '", gname, "': tensor '", o, "' is produced by both node ",
                               NodeLabel(g.node(it->second), it->second), " and node ", NodeLabel(g.node(i), i)));
      }
    }
  }
  std::vector<std::vector<int>> succ(n);
  std::vector<int> indeg(n, 0);
  for (int i = 0; i < n; ++i) {
    std::set<std::string> reads(g.node(i).input().begin(), g.node(i).input().end());
    for (const auto& a : g.node(i).attribute()) {
      if (a.has_g()) CollectFreeNames(a.g(), reads);
      for (const auto& sub : a.graphs()) CollectFreeNames(sub, reads);
    }
    std::set<int> preds;
    for (const auto& name : reads) {
      if (auto it = producer.find(name); it != producer.end()) preds.insert(it->second);
    }
    for (int p : preds) {
      succ[p].push_back(i);
      ++indeg[i];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (indeg[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : succ[i]) {
      if (--indeg[s] == 0) ready.push(s);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    std::vector<std::string> stuck;
    for (int i = 0; i < n && stuck.size() < 5; ++i) {
      if (indeg[i] > 0) stuck.push_back(NodeLabel(g.node(i), i));
    }
    return Bad(src, StrCat("graph '", gname, "' has a cycle through nodes ", StrJoin(stuck, ", ")));
  }
  bool same = true;
  for (int i = 0; i < n; ++i) same = same && order[i] == i;
  if (same) return absl::OkStatus();
  reordered = true;
  std::vector<onnx::NodeProto> nodes(n);
  for (int i = 0; i < n; ++i) nodes[i].Swap(g.mutable_node(order[i]));
  for (int i = 0; i < n; ++i) g.mutable_node(i)->Swap(&nodes[i]);
  return absl::OkStatus();
}

// ---- step 4: shape inference ------------------------------------------------

// Node outputs (all graphs) whose recorded type has an unknown rank or dim.
int64_t CountUnknownTensors(const onnx::GraphProto& g) {
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  for (const auto& vi : g.value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : g.output()) types[vi.name()] = &vi.type();
  int64_t count = 0;
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) {
      if (o.empty()) continue;
      auto it = types.find(o);
      if (DescFromType(it == types.end() ? nullptr : it->second).IsDynamic()) ++count;
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) count += CountUnknownTensors(a.g());
      for (const auto& sub : a.graphs()) count += CountUnknownTensors(sub);
    }
  }
  return count;
}

int64_t CountNodes(const onnx::GraphProto& g) {
  int64_t count = g.node_size();
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_g()) count += CountNodes(a.g());
      for (const auto& sub : a.graphs()) count += CountNodes(sub);
    }
  }
  return count;
}

// libonnx 1.12's inference reads the types of a node's inputs without a null
// check in many places (Shape's data propagation, propagateShape for ops
// inferred through their function body, …: found by fuzz/onnx_fuzz and
// onnx_schema_sweep_test), so any tensor inference leaves untyped — an unknown
// op's output, the output of a node whose inference failed, also read from an
// enclosing graph — crashes it when a known op reads it. Every node input
// therefore gets a type entry before inference: an unset TypeProto (in the
// value_info of the graph that defines the tensor), which ONNX's merge fills
// with whatever kind it infers (tensor, sequence, optional) and which the
// builder reads as "unknown". Run once, before the first inference round.
class InputTyper {
 public:
  void Run(onnx::GraphProto& g) {
    Scope& scope = scopes_.emplace_back();
    scope.graph = &g;
    for (int i = 0; i < g.input_size(); ++i) scope.defs.emplace(g.input(i).name(), Def{Def::kInput, i});
    for (const auto& t : g.initializer()) scope.defs.emplace(t.name(), Def{Def::kInitializer, 0});
    for (const auto& t : g.sparse_initializer()) scope.defs.emplace(t.values().name(), Def{Def::kInitializer, 0});
    for (const auto& n : g.node()) {
      for (const auto& o : n.output()) scope.defs.emplace(o, Def{Def::kNodeOutput, 0});
    }
    for (int i = 0; i < g.value_info_size(); ++i) scope.value_info.emplace(g.value_info(i).name(), i);
    for (int k = 0; k < g.node_size(); ++k) {
      onnx::NodeProto& n = *g.mutable_node(k);
      for (const auto& in : n.input()) {
        if (!in.empty()) EnsureTyped(in);
      }
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) Run(*a.mutable_g());
        for (auto& sub : *a.mutable_graphs()) Run(sub);
      }
    }
    scopes_.pop_back();
  }

 private:
  struct Def {
    enum Kind { kInput, kInitializer, kNodeOutput } kind;
    int index;
  };
  struct Scope {
    onnx::GraphProto* graph = nullptr;
    std::unordered_map<std::string, Def> defs;
    std::unordered_map<std::string, int> value_info;
  };

  void EnsureTyped(const std::string& name) {
    for (size_t i = scopes_.size(); i-- > 0;) {
      Scope& s = scopes_[i];
      auto def = s.defs.find(name);
      if (def == s.defs.end()) continue;
      switch (def->second.kind) {
        case Def::kInitializer: return;
        case Def::kInput: s.graph->mutable_input(def->second.index)->mutable_type(); return;
        case Def::kNodeOutput: {
          auto vi = s.value_info.find(name);
          if (vi == s.value_info.end()) {
            onnx::ValueInfoProto* added = s.graph->add_value_info();
            added->set_name(name);
            vi = s.value_info.emplace(name, s.graph->value_info_size() - 1).first;
          }
          s.graph->mutable_value_info(vi->second)->mutable_type();
          return;
        }
      }
    }
  }

  std::vector<Scope> scopes_;
};

absl::Status InferAndFold(onnx::ModelProto& proto, const OnnxImportOptions& opts, OnnxImport& out) {
  const onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*error_mode=*/0,
                                                              /*data_prop=*/true);
  // Once: folding only writes types into value_info (it adds no node), and
  // the backups of later rounds carry the placeholders.
  InputTyper().Run(*proto.mutable_graph());
  for (int round = 1; round <= std::max(1, opts.max_fold_rounds); ++round) {
    std::optional<onnx::GraphProto> backup;  // an isolated failure leaves the model as it was
    if (round > 1 && !opts.isolate_shape_inference) backup = proto.graph();
    if (absl::Status s = onnx_import::InferShapes(proto, inference, opts.isolate_shape_inference); !s.ok()) {
      const char* what = s.code() == absl::StatusCode::kInvalidArgument ? "failed"
                         : s.code() == absl::StatusCode::kAborted       ? "crashed (a libonnx bug)"
                                                                        : "could not run";
      out.warnings.push_back(StrCat("ONNX shape inference ", what, " in round ", round, ": ", s.message(),
                                    "; keeping the shapes known before it"));
      if (backup) proto.mutable_graph()->Swap(&*backup);
      break;
    }
    out.stats.fold_rounds = round;
    if (round == 1) out.stats.unknown_tensors_onnx = CountUnknownTensors(proto.graph());
    if (!opts.fold_shapes) break;
    NPUPLAN_ASSIGN_OR_RETURN(int64_t learnt, onnx_import::FoldShapeArithmetic(*proto.mutable_graph()));
    out.stats.folded_dims += learnt;
    if (learnt == 0) break;
  }
  return absl::OkStatus();
}

// Item 5 of issue 18: one warning per first failing node (an error with
// strict_shapes). At most kMaxShapeWarnings lines, then a count.
constexpr size_t kMaxShapeWarnings = 20;
absl::Status ReportUnknownShapes(const onnx::GraphProto& root, const std::string& root_name,
                                 const OnnxImportOptions& opts, std::string_view src, OnnxImport& out) {
  std::vector<std::string> failed = onnx_import::FirstFailingNodes(root, root_name);
  out.stats.failed_nodes = static_cast<int64_t>(failed.size());
  if (failed.empty()) return absl::OkStatus();
  if (opts.strict_shapes) {
    return Bad(src, StrCat("--strict-shapes: shape inference left ", failed.size(), " node", failed.size() == 1 ? "" : "s",
                           " with unknown output shapes from known input shapes; the first: ", failed[0]));
  }
  for (size_t i = 0; i < failed.size() && i < kMaxShapeWarnings; ++i) {
    out.warnings.push_back(StrCat("shape inference could not determine an output: ", failed[i]));
  }
  if (failed.size() > kMaxShapeWarnings) {
    out.warnings.push_back(StrCat("… and ", failed.size() - kMaxShapeWarnings, " more such nodes"));
  }
  return absl::OkStatus();
}

// A static tensor whose byte size overflows int64 cannot be written (the
// graph reader rejects it): an input error naming the ONNX tensor and node.
absl::Status CheckTensorSizes(const Model& model, std::string_view src) {
  for (const Node& n : model.nodes()) {
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const TensorDesc& t = n.outputs[k];
      if (t.IsDynamic() || t.ByteSize()) continue;
      std::string tensor = StrCat("output ", k);
      if (const AttrValue* names = FindAttr(n.attrs, "_onnx_outputs")) {
        if (const auto* list = names->as<AttrValue::StringList>(); list && k < list->size()) {
          tensor = StrCat("tensor '", (*list)[k], "'");
        }
      }
      return Bad(src, StrCat(tensor, " of node '", n.name, "' (", n.type, ") has shape [", StrJoin(t.shape, ", "),
                             "] ", t.dtype, ", whose size in bytes overflows int64"));
    }
  }
  return absl::OkStatus();
}

// ---- step 5: building the Model ---------------------------------------------

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
  absl::Status BuildGraph(const onnx::GraphProto& g, Scope& s, const std::vector<std::optional<int64_t>>& formal,
                          std::vector<int64_t> netoutput_parent_index);

  void Finish() {
    for (const auto& [type, count] : unknown_ops_) {
      out_.warnings.push_back(StrCat("op type '", type, "' (", count, " node", count == 1 ? "" : "s",
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
absl::StatusOr<OutputRef> Builder::Resolve(Scope& s, const std::string& name, std::string_view user) {
  if (auto it = s.values.find(name); it != s.values.end()) return it->second;
  if (s.outer == nullptr) {
    return Bad(src_, StrCat(user, " reads tensor '", name, "', which no node, input or initializer defines"));
  }
  NPUPLAN_ASSIGN_OR_RETURN(OutputRef outer_ref, Resolve(*s.outer, name, user));
  auto& caps = capture_index_[s.parent.value];
  int64_t idx;
  if (auto it = caps.find(name); it != caps.end()) {
    idx = it->second;
  } else {
    Node& parent = model_.node(s.parent);
    idx = -1;
    if (parent.type == "If") {  // If bodies have no formal inputs: reuse an input carrying the same value
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
  const bool root = s.outer == nullptr;
  const std::string gname = model_.graph(s.graph).name;  // a copy: AddSubgraph reallocates
  model_.graph(s.graph).attrs["_onnx_name"] = std::string(g.name());
  for (const auto& vi : g.input()) s.types[vi.name()] = &vi.type();
  for (const auto& vi : g.value_info()) s.types[vi.name()] = &vi.type();
  for (const auto& vi : g.output()) s.types[vi.name()] = &vi.type();
  std::set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());

  // 1. Inputs → Data.
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
    if (s.values.count(vi.name())) return Bad(src_, StrCat("graph '", gname, "': input '", vi.name(), "' is declared twice"));
    s.values[vi.name()] = {model_.AddNode(s.graph, std::move(d)), 0};
  }
  // 2. Initializers → Const (shape and dtype only).
  auto add_const = [&](const std::string& name, TensorDesc desc) -> absl::Status {
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
  };
  for (const auto& t : g.initializer()) NPUPLAN_RETURN_IF_ERROR(add_const(t.name(), DescFromTensor(t)));
  for (const auto& t : g.sparse_initializer()) {
    TensorDesc d;
    d.shape.assign(t.dims().begin(), t.dims().end());
    if (auto name = DTypeName(t.values().data_type()); !name.empty()) d.dtype = name;
    NPUPLAN_RETURN_IF_ERROR(add_const(t.values().name(), std::move(d)));
  }
  // 3. Nodes, without their inputs yet (so order inside the graph never matters).
  std::vector<NodeId> ids(g.node_size());
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& p = g.node(i);
    const bool constant = p.op_type() == "Constant" && (p.domain().empty() || p.domain() == "ai.onnx");
    Node n;
    std::string base = p.name();
    if (base.empty()) base = constant && p.output_size() > 0 && !p.output(0).empty() ? p.output(0) : p.op_type();
    n.name = UniqueNodeName(base);
    if (!p.name().empty() && n.name != p.name()) n.attrs["_onnx_name"] = std::string(p.name());
    n.type = constant ? "Const" : p.op_type();
    if (constant) n.attrs["_onnx_op_type"] = std::string("Constant");
    if (!p.domain().empty() && p.domain() != "ai.onnx") n.attrs["_onnx_domain"] = std::string(p.domain());
    n.engine = EngineFor(n.type);
    AttrValue::StringList subgraph_attrs;
    for (const onnx::AttributeProto* a : GraphAttributesInBranchOrder(p)) {
      subgraph_attrs.push_back(a->name());
    }
    for (const auto& a : p.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS) continue;
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
    ids[i] = model_.AddNode(s.graph, std::move(n));
    for (int k = 0; k < p.output_size(); ++k) {
      if (!p.output(k).empty()) s.values[p.output(k)] = {ids[i], k};
    }
  }
  // 4. Inputs of each node, then its bodies (whose captures extend its inputs).
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& p = g.node(i);
    const std::string user = StrCat("node '", model_.node(ids[i]).name, "' (", p.op_type(), ")");
    std::vector<std::optional<int64_t>> compact(p.input_size());
    AttrValue::IntList absent_inputs;
    for (int k = 0; k < p.input_size(); ++k) {
      if (p.input(k).empty()) {
        absent_inputs.push_back(k);
        continue;
      }
      NPUPLAN_ASSIGN_OR_RETURN(OutputRef ref, Resolve(s, p.input(k), user));
      compact[k] = static_cast<int64_t>(model_.node(ids[i]).inputs.size());
      model_.node(ids[i]).inputs.push_back(ref);
    }
    if (!absent_inputs.empty()) model_.node(ids[i]).attrs["_onnx_absent_inputs"] = std::move(absent_inputs);
    for (const onnx::AttributeProto* attr : GraphAttributesInBranchOrder(p)) {
      const onnx::AttributeProto& a = *attr;
      std::vector<const onnx::GraphProto*> bodies;
      if (a.has_g()) bodies.push_back(&a.g());
      for (const auto& sub : a.graphs()) bodies.push_back(&sub);
      for (size_t b = 0; b < bodies.size(); ++b) {
        const onnx::GraphProto& body = *bodies[b];
        std::string sub_name = StrCat(model_.node(ids[i]).name, "/", a.name());
        if (bodies.size() > 1) sub_name = StrCat(sub_name, "_", b);
        GraphId sg = model_.AddSubgraph(ids[i], UniqueGraphName(sub_name));
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
        child.parent = ids[i];
        NPUPLAN_RETURN_IF_ERROR(BuildGraph(body, child, body_formal, std::move(out_index)));
      }
    }
  }
  // 5. Graph outputs → NetOutput.
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
    NPUPLAN_ASSIGN_OR_RETURN(OutputRef ref,
                             Resolve(s, vi.name(), StrCat("output '", vi.name(), "' of graph '", gname, "'")));
    model_.node(net_id).inputs.push_back(ref);
  }
  return absl::OkStatus();
}

// Parses `bytes`. Protobuf rejects messages nested deeper than its recursion
// limit (100) exactly like corrupted ones; a second parse with a higher limit
// tells the two apart, so the message can say which.
absl::Status ParseModel(std::string_view bytes, std::string_view src, onnx::ModelProto& proto) {
  if (proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return absl::OkStatus();
  {
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                              static_cast<int>(bytes.size()));
    in.SetRecursionLimit(kDeepParseLimit);
    onnx::ModelProto deep;
    if (deep.ParseFromCodedStream(&in) && in.ConsumedEntireMessage()) {
      return Bad(src, StrCat("the model nests messages (graphs in node attributes, types in types) deeper than "
                             "protobuf's limit of ", kProtobufDepthLimit, " levels"));
    }
  }
  return Bad(src, "not a valid ONNX model: the protobuf is truncated or corrupted");
}

absl::StatusOr<OnnxImport> ImportImpl(std::string_view bytes, std::string_view src, const OnnxImportOptions& opts) {
  // 1. Parse and check versions.
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Bad(src, "the file is larger than 2 GiB, protobuf's limit (models that large keep their weights in "
                    "external data files)");
  }
  onnx::ModelProto proto;
  NPUPLAN_RETURN_IF_ERROR(ParseModel(bytes, src, proto));
  if (!proto.has_graph()) return Bad(src, "not a valid ONNX model: it has no graph (empty or not an .onnx file?)");
  if (proto.ir_version() < kMinOnnxIrVersion || proto.ir_version() > kMaxOnnxIrVersion) {
    return Bad(src, StrCat("unsupported ONNX IR version ", proto.ir_version(), " (supported: ", kMinOnnxIrVersion,
                           "-", kMaxOnnxIrVersion, ")"));
  }
  OnnxImport out;
  out.stats.ir_version = proto.ir_version();
  std::map<std::string, int> opsets;  // for the schema check; "ai.onnx" spelled ""
  for (const auto& op : proto.opset_import()) {
    // Other domains (ai.onnx.ml, com.microsoft …) are not version-checked:
    // their ops must have a schema at the imported version (CheckNodes).
    const bool default_domain = op.domain().empty() || op.domain() == "ai.onnx";
    if (default_domain) out.stats.opset = op.version();
    opsets[default_domain ? "" : op.domain()] = static_cast<int>(op.version());
  }
  if (out.stats.opset == 0) return Bad(src, "the model imports no default-domain (ai.onnx) opset");
  if (out.stats.opset < kMinOnnxOpset || out.stats.opset > kMaxOnnxOpset) {
    return Bad(src, StrCat("unsupported ONNX opset ", out.stats.opset, " (ai.onnx; supported: ", kMinOnnxOpset, "-",
                           kMaxOnnxOpset, ")"));
  }
  onnx_import::NodeCheckContext checks{std::string(src), opsets, {}, opts.allow_unknown_ops};
  if (!proto.functions().empty()) {
    out.warnings.push_back(StrCat(proto.functions_size(), " model-local function(s) are kept as opaque ops"));
    for (const auto& f : proto.functions()) checks.local_functions.insert({f.domain(), f.name()});
  }
  std::string model_dir = opts.model_dir;
  if (model_dir.empty()) model_dir = std::filesystem::path(std::string(src)).parent_path().string();
  NPUPLAN_RETURN_IF_ERROR(onnx_import::CheckTensors(proto.graph(), model_dir, src, out.stats.external_tensors));
  // 2. Pin input shapes.
  NPUPLAN_RETURN_IF_ERROR(onnx_import::PinShapes(*proto.mutable_graph(), opts.input_shapes, opts.dims, src));
  // 3. Topological order.
  std::string root_name = proto.graph().name().empty() ? "main" : proto.graph().name();
  NPUPLAN_RETURN_IF_ERROR(SortGraph(*proto.mutable_graph(), root_name, src, out.stats.sorted));
  if (out.stats.sorted) out.warnings.push_back("the graph was not topologically sorted; nodes were reordered");
  out.stats.onnx_nodes = CountNodes(proto.graph());
  // Undefined names crash ONNX's shape inference (libonnx dereferences the
  // missing type during data propagation; found by fuzz/onnx_fuzz): reject
  // them before it runs, with the builder's message.
  for (const auto& vi : proto.graph().input()) {  // a typeless input crashes it the same way
    if (!vi.has_type()) return Bad(src, StrCat("graph '", root_name, "': input '", vi.name(), "' has no type"));
  }
  std::set<std::string> undefined;
  CollectFreeNames(proto.graph(), undefined);
  if (!undefined.empty()) {
    std::string user = StrCat("graph '", root_name, "'");
    std::string name = *undefined.begin();
    for (int i = 0; i < proto.graph().node_size(); ++i) {  // name the first node that reads one
      const onnx::NodeProto& n = proto.graph().node(i);
      auto it = std::find_if(n.input().begin(), n.input().end(),
                             [&](const std::string& in) { return undefined.count(in) > 0; });
      if (it != n.input().end()) {
        user = StrCat("node ", NodeLabel(n, i));
        name = *it;
        break;
      }
    }
    return Bad(src, StrCat(user, " reads tensor '", name, "', which no node, input or initializer defines"));
  }
  NPUPLAN_RETURN_IF_ERROR(onnx_import::CheckNodes(proto.graph(), root_name, checks, out.warnings));
  // 4. Shapes.
  if (opts.onnx_shape_inference) {
    NPUPLAN_RETURN_IF_ERROR(InferAndFold(proto, opts, out));
  } else if (opts.fold_shapes) {
    NPUPLAN_ASSIGN_OR_RETURN(out.stats.folded_dims, onnx_import::FoldShapeArithmetic(*proto.mutable_graph()));
  }
  out.stats.unknown_tensors = CountUnknownTensors(proto.graph());
  if (absl::Status s = ReportUnknownShapes(proto.graph(), root_name, opts, src, out); !s.ok()) {
    return absl::Status(s.code(), s.message());
  }
  // 5. Build, sort, verify.
  out.model.set_name(root_name);
  out.model.engine_table = opts.engines ? *opts.engines : EngineTable::Default();
  Builder builder(out.model.engine_table, src, out);
  Builder::Scope root;
  root.graph = kRootGraph;
  NPUPLAN_RETURN_IF_ERROR(builder.BuildGraph(proto.graph(), root, {}, {}));
  builder.Finish();
  NPUPLAN_RETURN_IF_ERROR(CheckTensorSizes(out.model, src));
  NPUPLAN_RETURN_IF_ERROR(TopologicalSort(out.model));
  if (absl::Status s = VerifyStructure(out.model); !s.ok()) {
    return absl::InternalError(StrCat(src, ": the imported graph fails verification: ", s.message()));
  }
  out.stats.nodes = static_cast<int64_t>(out.model.num_nodes());
  for (const Node& n : out.model.nodes()) {
    for (const TensorDesc& t : n.outputs) {
      if (t.IsDynamic()) {
        ++out.stats.dynamic_nodes;
        break;
      }
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<OnnxImport> ImportOnnx(std::string_view bytes, std::string_view source, const OnnxImportOptions& opts) {
  try {
    return ImportImpl(bytes, source, opts);
  } catch (const std::exception& e) {  // protobuf / onnx throw; nothing crosses the API
    return Bad(source, StrCat("ONNX import failed: ", e.what()));
  }
}

absl::StatusOr<OnnxImport> ImportOnnxFile(const std::string& path, const OnnxImportOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ImportOnnx(bytes, path, opts);
}

}  // namespace npuplan
