#include "npuplan/importers/onnx_inference_util.h"

#include <algorithm>

#include "npuplan/importers/onnx_tensor_data.h"

namespace npuplan::onnx_import {

namespace {
constexpr int64_t kMaxValues = 1024;  // values read from a constant input
}  // namespace

onnx::OpSchema NewSchema(const char* name, const char* domain, int since) {
  onnx::OpSchema s(name, "npuplan/importers", 0);
  s.SetName(name).SetDomain(domain).SinceVersion(since);
  s.TypeConstraint("T", AnyTensor(), "any tensor");
  return s;
}

const std::vector<std::string>& AnyTensor() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> t = onnx::OpSchema::all_tensor_types_with_bfloat();
    return t;
  }();
  return types;
}

bool HasInput(onnx::InferenceContext& ctx, size_t i) {
  return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr;
}

std::optional<std::vector<int64_t>> InputInts(onnx::InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return std::nullopt;
  if (const onnx::TensorProto* t = ctx.getInputData(i)) return DecodeInts(*t, kMaxValues);
  if (const onnx::TensorShapeProto* s = ctx.getSymbolicInput(i)) {
    std::vector<int64_t> v;
    for (const auto& d : s->dim()) {
      if (!d.has_dim_value()) return std::nullopt;
      v.push_back(d.dim_value());
    }
    return v;
  }
  return std::nullopt;
}

std::optional<std::vector<double>> InputFloats(onnx::InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return std::nullopt;
  if (const onnx::TensorProto* t = ctx.getInputData(i)) return DecodeFloats(*t, kMaxValues);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> InputDims(onnx::InferenceContext& ctx, size_t i) {
  if (!HasInput(ctx, i) || !onnx::hasInputShape(ctx, i)) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : onnx::getInputShape(ctx, i).dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

int InputRank(onnx::InferenceContext& ctx, size_t i) {
  auto d = InputDims(ctx, i);
  return d ? static_cast<int>(d->size()) : -1;
}

int64_t InputDim(onnx::InferenceContext& ctx, size_t i, int d) {
  auto dims = InputDims(ctx, i);
  if (!dims) return -1;
  if (d < 0) d += static_cast<int>(dims->size());
  return d >= 0 && d < static_cast<int>(dims->size()) ? (*dims)[d] : -1;
}

std::vector<int64_t> IntsAttr(onnx::InferenceContext& ctx, const char* name) {
  std::vector<int64_t> v;
  onnx::getRepeatedAttribute(ctx, name, v);
  return v;
}

void SetOutputDims(onnx::InferenceContext& ctx, size_t o, const std::vector<int64_t>& dims) {
  if (o >= ctx.getNumOutputs()) return;
  auto* shape = ctx.getOutputType(o)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

void SameShape(onnx::InferenceContext& ctx, size_t i, size_t o) {
  if (o >= ctx.getNumOutputs() || !HasInput(ctx, i)) return;
  if (onnx::hasInputShape(ctx, i)) onnx::propagateShapeFromInputToOutput(ctx, i, o);
}

void BroadcastInference(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<const onnx::TensorShapeProto*> shapes;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    if (!HasInput(ctx, i) || !onnx::hasInputShape(ctx, i)) return;
    shapes.push_back(&onnx::getInputShape(ctx, i));
  }
  onnx::multidirectionalBroadcastShapeInference(shapes, *onnx::getOutputShape(ctx, 0));
}

int64_t NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

int64_t WindowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_total,
                     bool ceil_mode) {
  if (in < 0 || kernel <= 0 || stride <= 0 || dilation <= 0) return -1;
  const int64_t eff = (kernel - 1) * dilation + 1;
  const int64_t span = in + pad_total - eff;
  if (span < 0) fail_shape_inference("the window (", eff, ") is larger than the padded input (", in + pad_total, ")");
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // As in PyTorch and ONNX: the last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_total / 2) --out;
  return out;
}

std::vector<int64_t> WindowDims(onnx::InferenceContext& ctx, const std::vector<int64_t>& kernel) {
  const size_t r = kernel.size();
  std::vector<int64_t> strides = IntsAttr(ctx, "strides"), dil = IntsAttr(ctx, "dilations"),
                       pads = IntsAttr(ctx, "pads");
  strides.resize(r, 1);
  dil.resize(r, 1);
  std::string auto_pad = onnx::getAttribute(ctx, "auto_pad", std::string("NOTSET"));
  const bool ceil_mode = onnx::getAttribute(ctx, "ceil_mode", 0) != 0;
  std::vector<int64_t> out;
  for (size_t i = 0; i < r; ++i) {
    int64_t in = InputDim(ctx, 0, static_cast<int>(i + 2));
    if (in < 0) {
      out.push_back(-1);
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back(strides[i] > 0 ? (in + strides[i] - 1) / strides[i] : -1);
    } else {
      int64_t total = auto_pad == "VALID" || pads.size() != 2 * r ? 0 : pads[i] + pads[i + r];
      out.push_back(WindowOutput(in, kernel[i], strides[i], dil[i], total, ceil_mode));
    }
  }
  return out;
}

bool MatMulDims(std::vector<int64_t> a, std::vector<int64_t> b, bool ta, bool tb, std::vector<int64_t>& out) {
  if (a.empty() || b.empty()) return false;
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (ta) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (tb) std::swap(b[b.size() - 1], b[b.size() - 2]);
  const int64_t ka = a.back(), kb = b[b.size() - 2];
  if (ka >= 0 && kb >= 0 && ka != kb) fail_shape_inference("inner dims differ: ", ka, " and ", kb);
  const size_t batch = std::max(a.size(), b.size()) - 2;
  out.clear();
  for (size_t i = 0; i < batch; ++i) {
    int64_t x = i + a.size() - 2 >= batch ? a[i + a.size() - 2 - batch] : 1;
    int64_t y = i + b.size() - 2 >= batch ? b[i + b.size() - 2 - batch] : 1;
    out.push_back(x == 1 ? y : y == 1 ? x : (x < 0 || y < 0 ? std::max(x, y) : x));
    if (x > 1 && y > 1 && x != y) fail_shape_inference("batch dims ", x, " and ", y, " do not broadcast");
  }
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  return true;
}

}  // namespace npuplan::onnx_import
