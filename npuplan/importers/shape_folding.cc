#include "npuplan/importers/shape_folding.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/defs/tensor_proto_util.h"

namespace npuplan::onnx_import {
namespace {

constexpr int64_t kUnk = std::numeric_limits<int64_t>::min();

// A small integer tensor known element by element (kUnk = unknown element).
struct Value {
  std::vector<int64_t> v;
  bool scalar = false;  // rank 0 (else rank 1)
};

// Dims of a tensor type: nullopt = unknown rank; kUnk = unknown dim.
using Dims = std::optional<std::vector<int64_t>>;

// One graph's view: its own facts plus the enclosing scope's.
class Scope {
 public:
  explicit Scope(const Scope* outer) : outer_(outer) {}
  const Value* FindValue(const std::string& name) const {
    auto it = values_.find(name);
    if (it != values_.end()) return &it->second;
    return outer_ ? outer_->FindValue(name) : nullptr;
  }
  onnx::TypeProto* FindType(const std::string& name) const {
    auto it = types_.find(name);
    if (it != types_.end()) return it->second;
    return outer_ ? outer_->FindType(name) : nullptr;
  }
  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, onnx::TypeProto*> types_;

 private:
  const Scope* outer_;
};

// The dims of `name`'s type, if it is a tensor with a known rank.
Dims DimsOf(const Scope& s, const std::string& name) {
  const onnx::TypeProto* t = s.FindType(name);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> d;
  for (const auto& dim : t->tensor_type().shape().dim()) {
    d.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : kUnk);
  }
  return d;
}

bool IsIntType(int32_t elem) {
  return elem == onnx::TensorProto::INT64 || elem == onnx::TensorProto::INT32;
}

// Reads a small int tensor (initializer or Constant value); nullopt otherwise.
std::optional<Value> ValueOfTensor(const onnx::TensorProto& t) {
  if (!IsIntType(t.data_type()) || t.dims_size() > 1) return std::nullopt;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  int64_t n = t.dims_size() == 0 ? 1 : t.dims(0);
  if (n < 0 || n > kMaxTrackedElements) return std::nullopt;
  Value out;
  out.scalar = t.dims_size() == 0;
  // Decoded here, not with onnx::ParseData: libonnx trusts the tensor and
  // crashed in memcpy on a fuzzed raw_data (onnx_fuzz, 2026-12-01).
  const bool is64 = t.data_type() == onnx::TensorProto::INT64;
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    const size_t width = is64 ? sizeof(int64_t) : sizeof(int32_t);
    if (raw.size() != static_cast<size_t>(n) * width) return std::nullopt;
    for (int64_t i = 0; i < n; ++i) {  // little-endian, as ONNX stores raw_data
      uint64_t bits = 0;
      for (size_t b = 0; b < width; ++b) bits |= static_cast<uint64_t>(static_cast<uint8_t>(raw[i * width + b])) << (8 * b);
      out.v.push_back(is64 ? static_cast<int64_t>(bits) : static_cast<int64_t>(static_cast<int32_t>(bits)));
    }
  } else if (is64) {
    out.v.assign(t.int64_data().begin(), t.int64_data().end());
  } else {
    out.v.assign(t.int32_data().begin(), t.int32_data().end());
  }
  if (static_cast<int64_t>(out.v.size()) != n) return std::nullopt;
  return out;
}

std::optional<int64_t> IntAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  }
  return std::nullopt;
}
std::optional<std::vector<int64_t>> IntsAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::INTS) {
      return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    }
  }
  return std::nullopt;
}

// Elementwise integer arithmetic with 1-element broadcasting.
std::optional<Value> Elementwise(const std::string& op, const Value& a, const Value& b) {
  size_t n = std::max(a.v.size(), b.v.size());
  if ((a.v.size() != n && a.v.size() != 1) || (b.v.size() != n && b.v.size() != 1)) return std::nullopt;
  Value out;
  out.scalar = a.scalar && b.scalar;
  for (size_t i = 0; i < n; ++i) {
    int64_t x = a.v[a.v.size() == 1 ? 0 : i];
    int64_t y = b.v[b.v.size() == 1 ? 0 : i];
    int64_t r = kUnk;
    if (x != kUnk && y != kUnk) {
      if (op == "Add") {
        if (__builtin_add_overflow(x, y, &r)) r = kUnk;
      } else if (op == "Sub") {
        if (__builtin_sub_overflow(x, y, &r)) r = kUnk;
      } else if (op == "Mul") {
        if (__builtin_mul_overflow(x, y, &r)) r = kUnk;
      } else if (op == "Div") {
        r = y == 0 ? kUnk : x / y;
      } else if (op == "Min") {
        r = std::min(x, y);
      } else if (op == "Max") {
        r = std::max(x, y);
      }
    } else if (op == "Mul" && ((x == 0 && y == kUnk) || (y == 0 && x == kUnk))) {
      r = 0;
    }
    out.v.push_back(r);
  }
  return out;
}

// Normalises a Slice bound as numpy does for a dim of size n.
int64_t ClampIndex(int64_t i, int64_t n, int64_t step) {
  if (i < 0) i += n;
  if (step > 0) return std::clamp<int64_t>(i, 0, n);
  return std::clamp<int64_t>(i, -1, n - 1);
}

// Evaluates node `n` if it computes a tracked value; nullopt otherwise.
std::optional<Value> Evaluate(const onnx::NodeProto& n, const Scope& s) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") return std::nullopt;
  auto in = [&](int i) -> const Value* {
    if (i >= n.input_size() || n.input(i).empty()) return nullptr;
    return s.FindValue(n.input(i));
  };
  if (op == "Constant") {
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) return ValueOfTensor(a.t());
      if (a.name() == "value_int") return Value{{a.i()}, true};
      if (a.name() == "value_ints" && a.ints_size() <= kMaxTrackedElements) {
        return Value{std::vector<int64_t>(a.ints().begin(), a.ints().end()), false};
      }
    }
    return std::nullopt;
  }
  if (op == "Shape") {
    Dims d = n.input_size() > 0 ? DimsOf(s, n.input(0)) : std::nullopt;
    if (!d) return std::nullopt;
    int64_t r = static_cast<int64_t>(d->size());
    int64_t start = IntAttr(n, "start").value_or(0), end = IntAttr(n, "end").value_or(r);
    start = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
    end = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
    Value out;
    for (int64_t i = start; i < end; ++i) out.v.push_back((*d)[i]);
    return out;
  }
  if (op == "Size") {
    Dims d = n.input_size() > 0 ? DimsOf(s, n.input(0)) : std::nullopt;
    if (!d) return std::nullopt;
    int64_t p = 1;
    for (int64_t x : *d) {
      if (x == kUnk || __builtin_mul_overflow(p, x, &p)) return Value{{kUnk}, true};
    }
    return Value{{p}, true};
  }
  if (op == "Identity" || op == "Cast") {
    const Value* a = in(0);
    if (!a) return std::nullopt;
    if (op == "Cast") {
      auto to = IntAttr(n, "to");
      if (!to || !IsIntType(static_cast<int32_t>(*to))) return std::nullopt;
    }
    return *a;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    const Value* a = in(0);
    if (!a) return std::nullopt;
    Value out = *a;
    if (op == "Unsqueeze") {
      if (!a->scalar) return std::nullopt;  // only scalar → [1]
      out.scalar = false;
    } else {
      if (a->v.size() != 1) return std::nullopt;
      out.scalar = true;
    }
    return out;
  }
  if (op == "Gather") {
    const Value* data = in(0);
    const Value* idx = in(1);
    if (!data || !idx || data->scalar || IntAttr(n, "axis").value_or(0) != 0) return std::nullopt;
    Value out;
    out.scalar = idx->scalar;
    int64_t size = static_cast<int64_t>(data->v.size());
    for (int64_t i : idx->v) {
      if (i == kUnk) {
        out.v.push_back(kUnk);
        continue;
      }
      if (i < 0) i += size;
      if (i < 0 || i >= size) return std::nullopt;
      out.v.push_back(data->v[i]);
    }
    return out;
  }
  if (op == "Slice") {
    const Value* data = in(0);
    if (!data || data->scalar) return std::nullopt;
    int64_t start, end, step = 1;
    if (n.input_size() >= 3) {  // opset >= 10: starts/ends/axes/steps inputs
      const Value *st = in(1), *en = in(2), *ax = in(3), *sp = in(4);
      if (!st || !en || st->v.size() != 1 || en->v.size() != 1) return std::nullopt;
      if (ax && (ax->v.size() != 1 || (ax->v[0] != 0 && ax->v[0] != -1))) return std::nullopt;
      if (n.input_size() > 4 && !n.input(4).empty() && (!sp || sp->v.size() != 1)) return std::nullopt;
      start = st->v[0];
      end = en->v[0];
      if (sp) step = sp->v[0];
    } else {  // opset 9: attributes
      auto st = IntsAttr(n, "starts"), en = IntsAttr(n, "ends"), ax = IntsAttr(n, "axes");
      if (!st || !en || st->size() != 1 || en->size() != 1) return std::nullopt;
      if (ax && (ax->size() != 1 || ((*ax)[0] != 0 && (*ax)[0] != -1))) return std::nullopt;
      start = (*st)[0];
      end = (*en)[0];
    }
    if (start == kUnk || end == kUnk || step == kUnk || step == 0) return std::nullopt;
    int64_t size = static_cast<int64_t>(data->v.size());
    start = ClampIndex(start, size, step);
    end = ClampIndex(end, size, step);
    Value out;
    for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.v.push_back(data->v[i]);
    return out;
  }
  if (op == "Concat") {
    if (IntAttr(n, "axis").value_or(0) != 0 && IntAttr(n, "axis").value_or(0) != -1) return std::nullopt;
    Value out;
    for (int i = 0; i < n.input_size(); ++i) {
      const Value* a = in(i);
      if (!a || a->scalar) return std::nullopt;
      out.v.insert(out.v.end(), a->v.begin(), a->v.end());
    }
    if (static_cast<int64_t>(out.v.size()) > kMaxTrackedElements) return std::nullopt;
    return out;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Min" || op == "Max") {
    if (n.input_size() != 2) return std::nullopt;
    const Value *a = in(0), *b = in(1);
    if (!a || !b) return std::nullopt;
    return Elementwise(op, *a, *b);
  }
  if (op == "ReduceProd") {
    const Value* a = in(0);
    if (!a || a->scalar || n.input_size() > 1) return std::nullopt;
    int64_t p = 1;
    for (int64_t x : a->v) {
      if (x == kUnk || __builtin_mul_overflow(p, x, &p)) {
        p = kUnk;
        break;
      }
    }
    bool keep = IntAttr(n, "keepdims").value_or(1) != 0;
    return Value{{p}, !keep};
  }
  return std::nullopt;
}

// Output dims implied by a consumer of tracked values (Reshape, Expand, …).
Dims ImpliedDims(const onnx::NodeProto& n, const Scope& s) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") return std::nullopt;
  auto in = [&](int i) -> const Value* {
    if (i >= n.input_size() || n.input(i).empty()) return nullptr;
    return s.FindValue(n.input(i));
  };
  if (op == "Reshape" && n.input_size() == 2) {
    const Value* shape = in(1);
    if (!shape || shape->scalar) return std::nullopt;
    Dims data = DimsOf(s, n.input(0));
    bool allowzero = IntAttr(n, "allowzero").value_or(0) != 0;
    std::vector<int64_t> out;
    int infer_at = -1;
    for (size_t i = 0; i < shape->v.size(); ++i) {
      int64_t v = shape->v[i];
      if (v == 0 && !allowzero) {
        out.push_back(data && i < data->size() ? (*data)[i] : kUnk);
      } else if (v == -1) {
        if (infer_at >= 0) return std::nullopt;
        infer_at = static_cast<int>(i);
        out.push_back(kUnk);
      } else {
        out.push_back(v < 0 ? kUnk : v);
      }
    }
    if (infer_at >= 0 && data) {
      int64_t total = 1, rest = 1;
      bool ok = true;
      for (int64_t d : *data) ok = ok && d != kUnk && !__builtin_mul_overflow(total, d, &total);
      for (size_t i = 0; i < out.size(); ++i) {
        if (static_cast<int>(i) != infer_at) ok = ok && out[i] != kUnk && !__builtin_mul_overflow(rest, out[i], &rest);
      }
      if (ok && rest > 0 && total % rest == 0) out[infer_at] = total / rest;
    }
    return out;
  }
  if (op == "ConstantOfShape") {
    const Value* shape = in(0);
    if (!shape || shape->scalar) return std::nullopt;
    std::vector<int64_t> out = shape->v;
    for (int64_t& d : out) d = d < 0 ? kUnk : d;
    return out;
  }
  if (op == "Expand") {
    const Value* shape = in(1);
    Dims data = DimsOf(s, n.input(0));
    if (!shape || shape->scalar || !data) return std::nullopt;
    size_t r = std::max(shape->v.size(), data->size());
    std::vector<int64_t> out(r, kUnk);
    for (size_t i = 0; i < r; ++i) {
      int64_t a = i + data->size() >= r ? (*data)[i + data->size() - r] : 1;
      int64_t b = i + shape->v.size() >= r ? shape->v[i + shape->v.size() - r] : 1;
      if (a != kUnk && b != kUnk) {
        out[i] = a == 1 ? b : a;
      } else if (a == kUnk && b != kUnk && b != 1) {
        out[i] = b;
      } else if (b == kUnk && a != kUnk && a != 1) {
        out[i] = a;
      }
    }
    return out;
  }
  if (op == "Tile") {
    const Value* reps = in(1);
    Dims data = DimsOf(s, n.input(0));
    if (!reps || !data || reps->v.size() != data->size()) return std::nullopt;
    std::vector<int64_t> out;
    for (size_t i = 0; i < data->size(); ++i) {
      int64_t d = (*data)[i], r = reps->v[i], p;
      out.push_back(d == kUnk || r == kUnk || __builtin_mul_overflow(d, r, &p) ? kUnk : p);
    }
    return out;
  }
  return std::nullopt;
}

// Element type of `name`, or 0 (UNDEFINED).
int32_t ElemType(const Scope& s, const std::string& name) {
  const onnx::TypeProto* t = s.FindType(name);
  return t && t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
}

// Merges `dims` into the recorded type of output `name`; returns dims learnt.
int64_t Refine(onnx::GraphProto& g, Scope& s, const std::string& name, const std::vector<int64_t>& dims,
               int32_t elem_type) {
  onnx::TypeProto* t = s.FindType(name);
  if (t == nullptr) {
    if (elem_type == 0) return 0;
    onnx::ValueInfoProto* vi = g.add_value_info();
    vi->set_name(name);
    t = vi->mutable_type();
    t->mutable_tensor_type()->set_elem_type(elem_type);
    s.types_[name] = t;
  }
  if (!t->has_tensor_type() && t->value_case() != onnx::TypeProto::VALUE_NOT_SET) return 0;
  auto* tt = t->mutable_tensor_type();
  if (tt->elem_type() == 0 && elem_type != 0) tt->set_elem_type(elem_type);
  int64_t learnt = 0;
  if (!tt->has_shape()) {
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d != kUnk) {
        dim->set_dim_value(d);
        ++learnt;
      }
    }
    return learnt;
  }
  if (tt->shape().dim_size() != static_cast<int>(dims.size())) return 0;  // conflicting rank: keep ONNX's
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* dim = tt->mutable_shape()->mutable_dim(static_cast<int>(i));
    if (!dim->has_dim_value() && dims[i] != kUnk) {
      dim->set_dim_value(dims[i]);
      ++learnt;
    }
  }
  return learnt;
}

int64_t FoldGraph(onnx::GraphProto& g, const Scope* outer) {
  Scope s(outer);
  for (auto& vi : *g.mutable_input()) s.types_[vi.name()] = vi.mutable_type();
  for (auto& vi : *g.mutable_value_info()) s.types_[vi.name()] = vi.mutable_type();
  for (auto& vi : *g.mutable_output()) s.types_[vi.name()] = vi.mutable_type();
  for (const auto& init : g.initializer()) {
    if (auto v = ValueOfTensor(init)) s.values_[init.name()] = std::move(*v);
  }
  int64_t learnt = 0;
  for (auto& node : *g.mutable_node()) {
    if (auto v = Evaluate(node, s); v && node.output_size() > 0 && !node.output(0).empty()) {
      s.values_[node.output(0)] = std::move(*v);
    }
    if (Dims d = ImpliedDims(node, s); d && node.output_size() > 0 && !node.output(0).empty()) {
      int32_t elem = node.op_type() == "ConstantOfShape" ? onnx::TensorProto::FLOAT : ElemType(s, node.input(0));
      learnt += Refine(g, s, node.output(0), *d, elem);
    }
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) learnt += FoldGraph(*attr.mutable_g(), &s);
      for (auto& sub : *attr.mutable_graphs()) learnt += FoldGraph(sub, &s);
    }
  }
  return learnt;
}

}  // namespace

int64_t FoldShapeArithmetic(onnx::GraphProto& graph) { return FoldGraph(graph, nullptr); }

}  // namespace npuplan::onnx_import
