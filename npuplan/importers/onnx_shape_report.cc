#include "npuplan/importers/onnx_shape_report.h"

#include <set>
#include <unordered_map>

#include "npuplan/importers/onnx_model_checks.h"
#include "npuplan/support/str_util.h"

namespace npuplan::onnx_import {
namespace {

// Ops whose output sizes depend on the values of their data inputs.
bool DataDependent(const std::string& op) {
  static const std::set<std::string> kOps = {"NonZero", "Unique", "Compress", "NonMaxSuppression", "StringSplit",
                                             "Loop", "ImageDecoder", "SequenceAt", "SplitToSequence",
                                             "ConcatFromSequence", "OptionalGetElement"};
  return kOps.count(op) > 0;
}

struct Known {
  bool rank = false;
  std::vector<int64_t> dims;  // -1 unknown
  int32_t elem = 0;
  bool Static() const {
    if (!rank) return false;
    for (int64_t d : dims) {
      if (d < 0) return false;
    }
    return true;
  }
  std::string Text() const {
    if (!rank) return "[?]";
    std::vector<std::string> parts;
    for (int64_t d : dims) parts.push_back(d < 0 ? "?" : StrCat(d));
    return StrCat("[", StrJoin(parts, ", "), "]");
  }
};

Known FromType(const onnx::TypeProto& t) {
  Known k;
  if (!t.has_tensor_type()) return k;
  k.elem = t.tensor_type().elem_type();
  if (!t.tensor_type().has_shape()) return k;
  k.rank = true;
  for (const auto& d : t.tensor_type().shape().dim()) k.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return k;
}

class Reporter {
 public:
  void Graph(const onnx::GraphProto& g, const std::string& gname, const Reporter* outer) {
    outer_ = outer;
    for (const auto& vi : g.input()) known_[vi.name()] = FromType(vi.type());
    for (const auto& vi : g.value_info()) known_[vi.name()] = FromType(vi.type());
    for (const auto& vi : g.output()) known_[vi.name()] = FromType(vi.type());
    for (const auto& t : g.initializer()) {
      Known k{true, std::vector<int64_t>(t.dims().begin(), t.dims().end()), t.data_type()};
      known_[t.name()] = k;
    }
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      Check(n, i, gname);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) Inner(a.g(), StrCat(n.name(), "/", a.name()));
        for (const auto& sub : a.graphs()) Inner(sub, StrCat(n.name(), "/", a.name()));
      }
    }
  }
  std::vector<std::string> lines;

 private:
  void Inner(const onnx::GraphProto& g, const std::string& name) {
    Reporter inner;
    inner.Graph(g, name, this);
    lines.insert(lines.end(), inner.lines.begin(), inner.lines.end());
  }
  const Known* Find(const std::string& name) const {
    auto it = known_.find(name);
    if (it != known_.end()) return &it->second;
    return outer_ ? outer_->Find(name) : nullptr;
  }
  void Check(const onnx::NodeProto& n, int index, const std::string& gname) {
    std::vector<std::string> inputs;
    for (const auto& in : n.input()) {
      if (in.empty()) continue;
      const Known* k = Find(in);
      if (k == nullptr || !k->Static()) return;  // not a first failure
      if (inputs.size() < 6) inputs.push_back(StrCat(in, " ", k->Text(), " ", ElemName(k->elem)));
    }
    if (n.input_size() > 6) inputs.push_back("…");
    std::vector<std::string> bad;
    for (const auto& o : n.output()) {
      if (o.empty()) continue;
      const Known* k = Find(o);
      if (k == nullptr || !k->Static()) bad.push_back(StrCat("'", o, "' is ", k ? k->Text() : "[?]"));
    }
    if (bad.empty()) return;
    lines.push_back(StrCat("graph '", gname, "': node ", NodeLabel(n, index),
                           inputs.empty() ? std::string(" (no inputs)") : StrCat(" inputs ", StrJoin(inputs, ", ")),
                           ": output ", StrJoin(bad, ", "),
                           DataDependent(n.op_type()) ? " (its size depends on input values)" : ""));
  }
  static std::string ElemName(int32_t e) {
    static const char* kNames[] = {"undefined", "float32", "uint8",  "int8",    "uint16",    "int16",
                                   "int32",     "int64",   "string", "bool",    "float16",   "float64",
                                   "uint32",    "uint64",  "complex64", "complex128", "bfloat16"};
    return e >= 0 && e <= 16 ? kNames[e] : StrCat("type ", e);
  }

  const Reporter* outer_ = nullptr;
  std::unordered_map<std::string, Known> known_;
};

}  // namespace

std::vector<std::string> FirstFailingNodes(const onnx::GraphProto& root, const std::string& root_name) {
  Reporter r;
  r.Graph(root, root_name, nullptr);
  return std::move(r.lines);
}

}  // namespace npuplan::onnx_import
