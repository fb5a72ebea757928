#include "npuplan/importers/shape_folding.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "npuplan/importers/onnx_tensor_data.h"
#include "npuplan/support/str_util.h"

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
  if (t.dims_size() > 1) return std::nullopt;
  auto v = DecodeInts(t, kMaxTrackedElements);  // checks every size (libonnx's ParseData trusts them)
  if (!v) return std::nullopt;
  return Value{std::move(*v), t.dims_size() == 0};
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
        r = y == 0 || (x == INT64_MIN && y == -1) ? kUnk : x / y;
      } else if (op == "Min") {
        r = std::min(x, y);
      } else if (op == "Max") {
        r = std::max(x, y);
      } else if (op == "Mod") {
        r = y == 0 || (x == INT64_MIN && y == -1) ? kUnk : ((x % y) + y) % y;  // fmod=0: the divisor's sign
      } else if (op == "Equal") {
        r = x == y;
      } else if (op == "Less") {
        r = x < y;
      } else if (op == "Greater") {
        r = x > y;
      } else if (op == "LessOrEqual") {
        r = x <= y;
      } else if (op == "GreaterOrEqual") {
        r = x >= y;
      } else if (op == "And") {
        r = x != 0 && y != 0;
      } else if (op == "Or") {
        r = x != 0 || y != 0;
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

// Number of elements of a Range node: ceil((limit - start) / delta), at
// least 0; nullopt when an input is unknown or the arithmetic overflows.
std::optional<int64_t> RangeLength(const onnx::NodeProto& n, const Scope& s) {
  if (n.input_size() != 3) return std::nullopt;
  const Value* v[3];
  for (int i = 0; i < 3; ++i) {
    v[i] = s.FindValue(n.input(i));
    if (!v[i] || v[i]->v.size() != 1 || v[i]->v[0] == kUnk) return std::nullopt;
  }
  const int64_t start = v[0]->v[0], limit = v[1]->v[0], delta = v[2]->v[0];
  int64_t span;
  if (delta == 0 || __builtin_sub_overflow(limit, start, &span)) return std::nullopt;
  if ((span > 0) != (delta > 0) || span == 0) return 0;
  int64_t q = span / delta;
  return span % delta != 0 ? q + 1 : q;
}

// Input `i` of `n` as a tracked value; nullptr when absent or not tracked.
const Value* TrackedInput(const onnx::NodeProto& n, const Scope& s, int i) {
  if (i >= n.input_size() || n.input(i).empty()) return nullptr;
  return s.FindValue(n.input(i));
}

// The Evaluate* functions below each evaluate one op (or a family of ops
// sharing a rule); nullopt = the output is not tracked.

std::optional<Value> EvaluateConstant(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value" && a.has_t()) return ValueOfTensor(a.t());
    if (a.name() == "value_int") return Value{{a.i()}, true};
    if (a.name() == "value_ints" && a.ints_size() <= kMaxTrackedElements) {
      return Value{std::vector<int64_t>(a.ints().begin(), a.ints().end()), false};
    }
  }
  return std::nullopt;
}

std::optional<Value> EvaluateShape(const onnx::NodeProto& n, const Scope& s) {
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

std::optional<Value> EvaluateSize(const onnx::NodeProto& n, const Scope& s) {
  Dims d = n.input_size() > 0 ? DimsOf(s, n.input(0)) : std::nullopt;
  if (!d) return std::nullopt;
  int64_t p = 1;
  for (int64_t x : *d) {
    if (x == kUnk || __builtin_mul_overflow(p, x, &p)) return Value{{kUnk}, true};
  }
  return Value{{p}, true};
}

// Identity, and a Cast to an integer type.
std::optional<Value> EvaluateIdentityOrCast(const onnx::NodeProto& n, const Scope& s) {
  const Value* a = TrackedInput(n, s, 0);
  if (!a) return std::nullopt;
  if (n.op_type() == "Cast") {
    auto to = IntAttr(n, "to");
    if (!to || !IsIntType(static_cast<int32_t>(*to))) return std::nullopt;
  }
  return *a;
}

// Unsqueeze of a scalar to [1], Squeeze of a 1-element vector to a scalar.
std::optional<Value> EvaluateUnsqueezeOrSqueeze(const onnx::NodeProto& n, const Scope& s) {
  const Value* a = TrackedInput(n, s, 0);
  if (!a) return std::nullopt;
  Value out = *a;
  if (n.op_type() == "Unsqueeze") {
    if (!a->scalar) return std::nullopt;  // only scalar → [1]
    out.scalar = false;
  } else {
    if (a->v.size() != 1) return std::nullopt;
    out.scalar = true;
  }
  return out;
}

std::optional<Value> EvaluateGather(const onnx::NodeProto& n, const Scope& s) {
  const Value* data = TrackedInput(n, s, 0);
  const Value* idx = TrackedInput(n, s, 1);
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

std::optional<Value> EvaluateSlice(const onnx::NodeProto& n, const Scope& s) {
  const Value* data = TrackedInput(n, s, 0);
  if (!data || data->scalar) return std::nullopt;
  int64_t start, end, step = 1;
  if (n.input_size() >= 3) {  // opset >= 10: starts/ends/axes/steps inputs
    const Value *st = TrackedInput(n, s, 1), *en = TrackedInput(n, s, 2),
                *ax = TrackedInput(n, s, 3), *sp = TrackedInput(n, s, 4);
    if (!st || !en || st->v.size() != 1 || en->v.size() != 1) return std::nullopt;
    if (ax && (ax->v.size() != 1 || (ax->v[0] != 0 && ax->v[0] != -1))) return std::nullopt;
    if (n.input_size() > 4 && !n.input(4).empty() && (!sp || sp->v.size() != 1)) {
      return std::nullopt;
    }
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

std::optional<Value> EvaluateConcat(const onnx::NodeProto& n, const Scope& s) {
  if (IntAttr(n, "axis").value_or(0) != 0 && IntAttr(n, "axis").value_or(0) != -1) {
    return std::nullopt;
  }
  Value out;
  for (int i = 0; i < n.input_size(); ++i) {
    const Value* a = TrackedInput(n, s, i);
    if (!a || a->scalar) return std::nullopt;
    out.v.insert(out.v.end(), a->v.begin(), a->v.end());
  }
  if (static_cast<int64_t>(out.v.size()) > kMaxTrackedElements) return std::nullopt;
  return out;
}

bool IsElementwiseBinary(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Min" || op == "Max" ||
         op == "Mod" || op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
         op == "GreaterOrEqual" || op == "And" || op == "Or";
}

std::optional<Value> EvaluateElementwiseBinary(const onnx::NodeProto& n, const Scope& s) {
  if (n.input_size() != 2) return std::nullopt;
  const Value *a = TrackedInput(n, s, 0), *b = TrackedInput(n, s, 1);
  if (!a || !b) return std::nullopt;
  return Elementwise(n.op_type(), *a, *b);
}

// Not, Neg, Abs.
std::optional<Value> EvaluateUnary(const onnx::NodeProto& n, const Scope& s) {
  const std::string& op = n.op_type();
  const Value* a = TrackedInput(n, s, 0);
  if (!a) return std::nullopt;
  Value out = *a;
  for (int64_t& x : out.v) {
    if (x == kUnk) continue;
    if (op == "Not") {
      x = x == 0;
    } else if (x == INT64_MIN) {
      x = kUnk;
    } else if (op == "Neg" || x < 0) {
      x = -x;
    }
  }
  return out;
}

// Element-wise select with 1-element broadcasting.
std::optional<Value> EvaluateWhere(const onnx::NodeProto& n, const Scope& s) {
  const Value *c = TrackedInput(n, s, 0), *x = TrackedInput(n, s, 1), *y = TrackedInput(n, s, 2);
  if (!c || !x || !y) return std::nullopt;
  size_t len = std::max({c->v.size(), x->v.size(), y->v.size()});
  for (const Value* v : {c, x, y}) {
    if (v->v.size() != len && v->v.size() != 1) return std::nullopt;
  }
  Value out;
  out.scalar = c->scalar && x->scalar && y->scalar;
  for (size_t i = 0; i < len; ++i) {
    int64_t ci = c->v[c->v.size() == 1 ? 0 : i], xi = x->v[x->v.size() == 1 ? 0 : i],
            yi = y->v[y->v.size() == 1 ? 0 : i];
    out.v.push_back(ci == kUnk ? (xi == yi ? xi : kUnk) : ci != 0 ? xi : yi);
  }
  return out;
}

std::optional<Value> EvaluateRange(const onnx::NodeProto& n, const Scope& s) {
  auto len = RangeLength(n, s);
  const Value *st = TrackedInput(n, s, 0), *dt = TrackedInput(n, s, 2);
  if (!len || *len > kMaxTrackedElements || !st || !dt || st->v[0] == kUnk || dt->v[0] == kUnk) {
    return std::nullopt;
  }
  Value out;
  for (int64_t i = 0, x = st->v[0]; i < *len; ++i, x += dt->v[0]) out.v.push_back(x);
  return out;
}

std::optional<Value> EvaluateConstantOfShape(const onnx::NodeProto& n, const Scope& s) {
  const Value* shape = TrackedInput(n, s, 0);
  if (!shape || shape->scalar || shape->v.size() > 1) return std::nullopt;
  if (shape->v.empty() || shape->v[0] == kUnk || shape->v[0] < 0 ||
      shape->v[0] > kMaxTrackedElements) {
    return std::nullopt;
  }
  // Only an integer value attribute is tracked (the default is float 0).
  std::optional<int64_t> fill;
  for (const auto& a : n.attribute()) {
    if (a.name() == "value" && a.has_t()) {
      auto v = DecodeInts(a.t(), 1);
      if (v && v->size() == 1) fill = (*v)[0];
    }
  }
  if (!fill) return std::nullopt;
  return Value{std::vector<int64_t>(static_cast<size_t>(shape->v[0]), *fill), false};
}

// A tracked value reshaped to rank 0 or 1 keeps its elements.
std::optional<Value> EvaluateReshape(const onnx::NodeProto& n, const Scope& s) {
  const Value *a = TrackedInput(n, s, 0), *shape = TrackedInput(n, s, 1);
  if (!a || !shape || shape->v.size() > 1) return std::nullopt;
  Value out = *a;
  out.scalar = shape->v.empty();
  return out;
}

std::optional<Value> EvaluateReduceProd(const onnx::NodeProto& n, const Scope& s) {
  const Value* a = TrackedInput(n, s, 0);
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

// Evaluates node `n` if it computes a tracked value; nullopt otherwise.
std::optional<Value> Evaluate(const onnx::NodeProto& n, const Scope& s) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") return std::nullopt;
  if (op == "Constant") return EvaluateConstant(n);
  if (op == "Shape") return EvaluateShape(n, s);
  if (op == "Size") return EvaluateSize(n, s);
  if (op == "Identity" || op == "Cast") return EvaluateIdentityOrCast(n, s);
  if (op == "Unsqueeze" || op == "Squeeze") return EvaluateUnsqueezeOrSqueeze(n, s);
  if (op == "Gather") return EvaluateGather(n, s);
  if (op == "Slice") return EvaluateSlice(n, s);
  if (op == "Concat") return EvaluateConcat(n, s);
  if (IsElementwiseBinary(op)) return EvaluateElementwiseBinary(n, s);
  if (op == "Not" || op == "Neg" || op == "Abs") return EvaluateUnary(n, s);
  if (op == "Where") return EvaluateWhere(n, s);
  if (op == "Range") return EvaluateRange(n, s);
  if (op == "ConstantOfShape") return EvaluateConstantOfShape(n, s);
  if (op == "Reshape") return EvaluateReshape(n, s);
  if (op == "ReduceProd") return EvaluateReduceProd(n, s);
  return std::nullopt;
}

absl::Status BadNode(const onnx::NodeProto& n, std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat("node '", n.name().empty() ? (n.output_size() ? n.output(0) : std::string("?")) : n.name(), "' (",
             n.op_type(), "): ", what));
}

// Dims of a data Slice whose starts/ends (and axes/steps) are tracked.
Dims SliceDims(const onnx::NodeProto& n, const Scope& s) {
  Dims data = DimsOf(s, n.input(0));
  if (!data || n.input_size() < 3) return std::nullopt;
  auto val = [&](int i) -> const Value* { return i < n.input_size() && !n.input(i).empty() ? s.FindValue(n.input(i)) : nullptr; };
  const Value *st = val(1), *en = val(2), *ax = val(3), *sp = val(4);
  if (!st || !en || st->v.size() != en->v.size()) return std::nullopt;
  if ((n.input_size() > 3 && !n.input(3).empty() && !ax) || (n.input_size() > 4 && !n.input(4).empty() && !sp)) {
    return std::nullopt;
  }
  const int64_t r = static_cast<int64_t>(data->size());
  std::vector<int64_t> out = *data;
  for (size_t j = 0; j < st->v.size(); ++j) {
    int64_t axis = ax ? (j < ax->v.size() ? ax->v[j] : kUnk) : static_cast<int64_t>(j);
    int64_t step = sp ? (j < sp->v.size() ? sp->v[j] : kUnk) : 1;
    if (axis == kUnk || axis < -r || axis >= r || step == kUnk || step == 0) return std::nullopt;
    if (axis < 0) axis += r;
    int64_t dim = (*data)[axis], b = st->v[j], e = en->v[j];
    if (dim == kUnk || b == kUnk || e == kUnk) {
      out[axis] = kUnk;
      continue;
    }
    b = ClampIndex(b, dim, step);
    e = ClampIndex(e, dim, step);
    int64_t len = step > 0 ? (e - b + step - 1) / step : (b - e + (-step) - 1) / (-step);
    out[axis] = std::max<int64_t>(0, len);
  }
  return out;
}

// Output dims implied by a consumer of tracked values (Reshape, Expand, …);
// an error for values that make the output invalid (negative or overflowing).
absl::StatusOr<Dims> ImpliedDims(const onnx::NodeProto& n, const Scope& s) {
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
    for (int64_t d : out) {
      if (d != kUnk && d < 0) return BadNode(n, StrCat("the shape input holds the negative dim ", d));
    }
    return out;
  }
  if (op == "Range") {
    auto len = RangeLength(n, s);
    if (!len) return std::nullopt;
    return Dims(std::vector<int64_t>{*len});
  }
  if (op == "Slice" && n.input_size() >= 3) return SliceDims(n, s);
  if (op == "Resize" && n.input_size() >= 4 && IntsAttr(n, "axes").value_or(std::vector<int64_t>{}).empty()) {
    const Value* sizes = in(3);
    if (!sizes || sizes->scalar) return std::nullopt;
    if (auto policy = [&]() -> std::string {
          for (const auto& a : n.attribute()) if (a.name() == "keep_aspect_ratio_policy") return a.s();
          return "stretch";
        }(); policy != "stretch") {
      return std::nullopt;
    }
    std::vector<int64_t> out = sizes->v;
    for (int64_t d : out) {
      if (d != kUnk && d < 0) return BadNode(n, StrCat("the sizes input holds the negative size ", d));
    }
    return out;
  }
  if (op == "Pad" && n.input_size() >= 2 && (n.input_size() < 4 || n.input(3).empty())) {
    const Value* pads = in(1);
    Dims data = DimsOf(s, n.input(0));
    if (!pads || !data || pads->v.size() != 2 * data->size()) return std::nullopt;
    std::vector<int64_t> out = *data;
    const size_t r = data->size();
    for (size_t i = 0; i < r; ++i) {
      int64_t a = pads->v[i], b = pads->v[i + r], d = out[i];
      std::optional<int64_t> sum;
      if (d != kUnk && a != kUnk && b != kUnk) {
        sum = CheckedAdd(d, a);
        if (sum) sum = CheckedAdd(*sum, b);
        if (!sum || *sum < 0) return BadNode(n, StrCat("padding dim ", i, " (", d, ") by ", a, " and ", b, " gives an invalid size"));
      }
      out[i] = sum ? *sum : kUnk;
    }
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
      int64_t d = (*data)[i], r = reps->v[i];
      if (r != kUnk && r < 0) return BadNode(n, StrCat("repeats holds the negative value ", r));
      if (d == kUnk || r == kUnk) {
        out.push_back(kUnk);
        continue;
      }
      auto p = CheckedMul(d, r);
      if (!p) return BadNode(n, StrCat("dim ", i, " (", d, ") repeated ", r, " times overflows int64"));
      out.push_back(*p);
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

// Split whose split input (or equal parts of a known dim) is tracked: the dims of every output.
std::vector<Dims> SplitDims(const onnx::NodeProto& n, const Scope& s) {
  Dims data = DimsOf(s, n.input(0));
  const Value* split = n.input_size() > 1 && !n.input(1).empty() ? s.FindValue(n.input(1)) : nullptr;
  if (!data || !split || split->v.size() != static_cast<size_t>(n.output_size())) return {};
  int64_t axis = IntAttr(n, "axis").value_or(0), r = static_cast<int64_t>(data->size());
  if (axis < -r || axis >= r) return {};
  if (axis < 0) axis += r;
  std::vector<Dims> out;
  for (int64_t part : split->v) {
    std::vector<int64_t> d = *data;
    d[axis] = part < 0 ? kUnk : part;
    out.push_back(d);
  }
  return out;
}

absl::StatusOr<int64_t> FoldGraph(onnx::GraphProto& g, const Scope* outer) {
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
    auto implied = ImpliedDims(node, s);
    if (!implied.ok()) return implied.status();
    if (Dims d = *implied; d && node.output_size() > 0 && !node.output(0).empty()) {
      int32_t elem = node.op_type() == "ConstantOfShape" || node.op_type() == "Range" ? 0 : ElemType(s, node.input(0));
      learnt += Refine(g, s, node.output(0), *d, elem);
    }
    if (node.op_type() == "Split" && (node.domain().empty() || node.domain() == "ai.onnx")) {
      std::vector<Dims> parts = SplitDims(node, s);
      for (size_t o = 0; o < parts.size(); ++o) {
        if (!node.output(static_cast<int>(o)).empty()) {
          learnt += Refine(g, s, node.output(static_cast<int>(o)), *parts[o], ElemType(s, node.input(0)));
        }
      }
    }
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) {
        auto inner = FoldGraph(*attr.mutable_g(), &s);
        if (!inner.ok()) return inner.status();
        learnt += *inner;
      }
      for (auto& sub : *attr.mutable_graphs()) {
        auto inner = FoldGraph(sub, &s);
        if (!inner.ok()) return inner.status();
        learnt += *inner;
      }
    }
  }
  return learnt;
}

}  // namespace

absl::StatusOr<int64_t> FoldShapeArithmetic(onnx::GraphProto& graph) { return FoldGraph(graph, nullptr); }

}  // namespace npuplan::onnx_import
