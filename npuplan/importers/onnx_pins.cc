#include "npuplan/importers/onnx_pins.h"

#include <algorithm>
#include <map>
#include <set>

#include "npuplan/importers/import_error.h"
#include "npuplan/importers/onnx_tensor_data.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::onnx_import {
namespace {

// A positive decimal integer of at most 18 digits (so it fits int64).
bool ParsePositive(const std::string& tok, int64_t& v) {
  if (tok.empty() || tok.size() > 18 || !std::all_of(tok.begin(), tok.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  v = std::stoll(tok);
  return v > 0;
}

struct ShapePin {
  std::string name;
  std::vector<int64_t> dims;
};

absl::StatusOr<std::vector<ShapePin>> ParsePins(const std::vector<std::string>& specs, std::string_view src) {
  std::vector<ShapePin> pins;
  std::set<std::string> seen;
  for (const std::string& spec : specs) {
    size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      return Bad(src, StrCat("--input-shape '", spec, "': expected NAME=DIMS such as images=1x3x48x320"));
    }
    ShapePin pin{spec.substr(0, eq), {}};
    std::string dims = spec.substr(eq + 1);
    size_t pos = 0;
    while (!dims.empty() && pos <= dims.size()) {
      size_t x = dims.find('x', pos);
      std::string tok = dims.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
      int64_t v = 0;
      if (!ParsePositive(tok, v)) {
        return Bad(src, StrCat("--input-shape '", spec, "': dim '", tok,
                               "' is not a positive integer (dims are separated by 'x')"));
      }
      pin.dims.push_back(v);
      if (x == std::string::npos) break;
      pos = x + 1;
    }
    if (!seen.insert(pin.name).second) {
      return Bad(src, StrCat("--input-shape: input '", pin.name, "' is given twice"));
    }
    pins.push_back(std::move(pin));
  }
  return pins;
}

absl::Status ApplyPins(onnx::GraphProto& g, const std::vector<ShapePin>& pins, std::string_view src) {
  std::set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());
  std::vector<std::string> names;
  for (const auto& vi : g.input()) {
    if (!inits.count(vi.name())) names.push_back(vi.name());
  }
  for (const ShapePin& pin : pins) {
    onnx::ValueInfoProto* vi = nullptr;
    for (auto& in : *g.mutable_input()) {
      if (in.name() == pin.name && !inits.count(in.name())) vi = &in;
    }
    if (vi == nullptr) {
      return Bad(src, StrCat("--input-shape: the model has no input '", pin.name, "' (inputs: ",
                             StrJoin(names, ", "), ")"));
    }
    if (vi->type().value_case() != onnx::TypeProto::kTensorType &&
        vi->type().value_case() != onnx::TypeProto::VALUE_NOT_SET) {
      return Bad(src, StrCat("--input-shape: input '", pin.name, "' is not a tensor"));
    }
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    if (tt->has_shape()) {
      const auto& declared = tt->shape();
      std::vector<std::string> decl;
      for (const auto& d : declared.dim()) {
        decl.push_back(d.has_dim_value() ? StrCat(d.dim_value()) : (d.dim_param().empty() ? "?" : d.dim_param()));
      }
      if (declared.dim_size() != static_cast<int>(pin.dims.size())) {
        return Bad(src, StrCat("--input-shape: input '", pin.name, "' has rank ", declared.dim_size(), " [",
                               StrJoin(decl, ", "), "] but ", pin.dims.size(), " dims were given"));
      }
      for (int i = 0; i < declared.dim_size(); ++i) {
        if (declared.dim(i).has_dim_value() && declared.dim(i).dim_value() != pin.dims[i]) {
          return Bad(src, StrCat("--input-shape: input '", pin.name, "' dim ", i, " is fixed to ",
                                 declared.dim(i).dim_value(), " in the model but ", pin.dims[i], " was given"));
        }
      }
    }
    auto count = DimsProduct(pin.dims);
    const int bits = std::max(ElementBits(tt->elem_type()), 8);
    if (!count || !CheckedMul(*count, bits / 8)) {
      return Bad(src, StrCat("--input-shape: input '", pin.name, "': the size of shape ", StrJoin(pin.dims, "x"),
                             " overflows int64"));
    }
    tt->mutable_shape()->clear_dim();
    for (int64_t d : pin.dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return absl::OkStatus();
}


// Replaces dim_param `name` by `value` in `shape`; returns how many.
int PinDim(onnx::TypeProto& type, const std::string& name, int64_t value) {
  onnx::TypeProto* t = &type;
  while (t->has_optional_type()) t = t->mutable_optional_type()->mutable_elem_type();
  while (t->has_sequence_type()) t = t->mutable_sequence_type()->mutable_elem_type();
  if (!t->has_tensor_type() || !t->tensor_type().has_shape()) return 0;
  int n = 0;
  for (auto& d : *t->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
    if (d.has_dim_param() && d.dim_param() == name) {
      d.set_dim_value(value);  // clears the param (a oneof)
      ++n;
    }
  }
  return n;
}

void CollectDimNames(const onnx::TypeProto& type, std::set<std::string>& out) {
  const onnx::TypeProto* t = &type;
  while (t->has_optional_type()) t = &t->optional_type().elem_type();
  while (t->has_sequence_type()) t = &t->sequence_type().elem_type();
  if (!t->has_tensor_type()) return;
  for (const auto& d : t->tensor_type().shape().dim()) {
    if (d.has_dim_param() && !d.dim_param().empty()) out.insert(d.dim_param());
  }
}

template <typename F>
void ForEachDeclaredType(onnx::GraphProto& g, const F& f) {
  for (auto& vi : *g.mutable_input()) f(*vi.mutable_type());
  for (auto& vi : *g.mutable_output()) f(*vi.mutable_type());
  for (auto& vi : *g.mutable_value_info()) f(*vi.mutable_type());
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) ForEachDeclaredType(*a.mutable_g(), f);
      for (auto& sub : *a.mutable_graphs()) ForEachDeclaredType(sub, f);
    }
  }
}

absl::Status ApplyDims(onnx::GraphProto& root, const std::vector<std::string>& specs, std::string_view src) {
  std::set<std::string> seen;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    int64_t value = 0;
    if (eq == std::string::npos || eq == 0 || !ParsePositive(spec.substr(eq + 1), value)) {
      return Bad(src, StrCat("--dim '", spec, "': expected NAME=VALUE with a positive integer VALUE, such as batch=1"));
    }
    std::string name = spec.substr(0, eq);
    if (!seen.insert(name).second) return Bad(src, StrCat("--dim: dim '", name, "' is given twice"));
    int pinned = 0;
    ForEachDeclaredType(root, [&](onnx::TypeProto& t) { pinned += PinDim(t, name, value); });
    if (pinned == 0) {
      std::set<std::string> names;
      ForEachDeclaredType(root, [&](onnx::TypeProto& t) { CollectDimNames(t, names); });
      std::vector<std::string> list(names.begin(), names.end());
      if (list.size() > 20) {
        list.resize(20);
        list.push_back("…");
      }
      return Bad(src, StrCat("--dim: the model has no dim named '", name, "' (named dims: ",
                             list.empty() ? std::string("none") : StrJoin(list, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PinShapes(onnx::GraphProto& root, const std::vector<std::string>& input_shapes,
                       const std::vector<std::string>& dims, std::string_view src) {
  NPUPLAN_RETURN_IF_ERROR(ApplyDims(root, dims, src));
  NPUPLAN_ASSIGN_OR_RETURN(std::vector<ShapePin> pins, ParsePins(input_shapes, src));
  return ApplyPins(root, pins, src);
}

}  // namespace npuplan::onnx_import
