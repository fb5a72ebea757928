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
//   5. Build the Model graph by graph (onnx_graph_builder.h), sort, verify.
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

#include "google/protobuf/io/coded_stream.h"
#include "npuplan/importers/import_error.h"
#include "npuplan/importers/isolated_inference.h"
#include "npuplan/importers/onnx_graph_builder.h"
#include "npuplan/importers/onnx_model_checks.h"
#include "npuplan/importers/onnx_pins.h"
#include "npuplan/importers/onnx_schemas.h"
#include "npuplan/importers/onnx_shape_report.h"
#include "npuplan/importers/onnx_tensor_data.h"
#include "npuplan/importers/shape_folding.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace npuplan {
namespace {

using onnx_import::Bad;
using onnx_import::DescFromType;
using onnx_import::NodeLabel;

// Protobuf's default recursion limit, and the one used to tell a too-deep
// model from a corrupted one (deep enough for any exporter's output, shallow
// enough for the stack).
constexpr int kProtobufDepthLimit = 100;
constexpr int kDeepParseLimit = 2000;

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
  NPUPLAN_RETURN_IF_ERROR(onnx_import::BuildModelGraphs(proto.graph(), src, out));
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
