// npuplan's schemas for the default-domain ops whose signature or semantics
// changed in opsets 18–22, and the ops new in 18–20 (onnx_schemas.h). Each
// follows the ONNX operator documentation of its version; shapes only (types
// are propagated, not checked).
#include <algorithm>
#include <cmath>
#include <optional>

#include "npuplan/importers/onnx_inference_util.h"
#include "npuplan/support/checked_math.h"

namespace npuplan::onnx_import {
namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

// Reduce*-18 (ReduceMax/Min -20 only add types): axes is an optional input.
void ReduceInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  if (!in) return;
  const int64_t r = static_cast<int64_t>(in->size());
  const bool keep = onnx::getAttribute(ctx, "keepdims", 1) != 0;
  const bool noop = onnx::getAttribute(ctx, "noop_with_empty_axes", 0) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (HasInput(ctx, 1)) {
    axes = InputInts(ctx, 1);
    if (!axes) {  // axes computed at run time: the rank is known only with keepdims
      if (keep) SetOutputDims(ctx, 0, std::vector<int64_t>(in->size(), -1));
      return;
    }
  }
  std::vector<bool> reduce(in->size(), false);
  if (!axes || axes->empty()) {
    if (noop) {
      SameShape(ctx, 0, 0);
      return;
    }
    std::fill(reduce.begin(), reduce.end(), true);
  } else {
    for (int64_t a : *axes) reduce[NormalizeAxis(a, r)] = true;
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < r; ++i) {
    if (!reduce[i]) out.push_back((*in)[i]);
    else if (keep) out.push_back(1);
  }
  SetOutputDims(ctx, 0, out);
}

OpSchema Reduce(const char* name) {
  OpSchema s = NewSchema(name, "", 18);
  s.Input(0, "data", "", "T")
      .Input(1, "axes", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "reduced", "", "T")
      .Attr("keepdims", "", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("noop_with_empty_axes", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeAndShapeInferenceFunction(ReduceInference);
  return s;
}

// Split-18: num_outputs splits into equal chunks, the last one smaller.
void SplitInference(InferenceContext& ctx) {
  const size_t n = ctx.getNumOutputs();
  for (size_t o = 0; o < n; ++o) onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
  auto in = InputDims(ctx, 0);
  if (!in) return;
  const int64_t axis = NormalizeAxis(onnx::getAttribute(ctx, "axis", 0), static_cast<int64_t>(in->size()));
  const int64_t dim = (*in)[axis];
  std::vector<int64_t> sizes(n, -1);
  const auto* num = ctx.getAttribute("num_outputs");
  if (HasInput(ctx, 1) && num != nullptr) fail_shape_inference("both the split input and num_outputs are given");
  if (HasInput(ctx, 1)) {
    auto split = InputInts(ctx, 1);
    if (split) {
      if (split->size() != n) fail_shape_inference("split has ", split->size(), " values for ", n, " outputs");
      sizes = *split;
    }
  } else if (dim >= 0) {
    const int64_t k = num != nullptr ? num->i() : static_cast<int64_t>(n);
    if (k <= 0 || static_cast<size_t>(k) != n) fail_shape_inference("num_outputs ", k, " but the node has ", n, " outputs");
    const int64_t chunk = num != nullptr ? (dim + k - 1) / k : dim / k;
    if (num == nullptr && dim % k != 0) fail_shape_inference("dim ", dim, " does not split into ", k, " equal parts");
    for (size_t o = 0; o < n; ++o) sizes[o] = std::clamp<int64_t>(dim - chunk * static_cast<int64_t>(o), 0, chunk);
  }
  for (size_t o = 0; o < n; ++o) {
    std::vector<int64_t> d = *in;
    d[axis] = sizes[o];
    SetOutputDims(ctx, o, d);
  }
}

// Pad-18 (19: wrap mode, 21: types): pads for `axes` (default: all).
void PadInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  if (!in) return;
  const int64_t r = static_cast<int64_t>(in->size());
  std::vector<int64_t> out(in->size(), -1);
  auto pads = InputInts(ctx, 1);
  std::optional<std::vector<int64_t>> axes;
  if (HasInput(ctx, 3)) {
    axes = InputInts(ctx, 3);
    if (!axes) return SetOutputDims(ctx, 0, out);
  } else {
    axes.emplace();
    for (int64_t i = 0; i < r; ++i) axes->push_back(i);
  }
  if (!pads) {  // unknown pads: only the untouched dims are known
    out = *in;
    for (int64_t a : *axes) out[NormalizeAxis(a, r)] = -1;
    return SetOutputDims(ctx, 0, out);
  }
  const size_t k = axes->size();
  if (pads->size() != 2 * k) fail_shape_inference("pads has ", pads->size(), " values for ", k, " axes");
  out = *in;
  for (size_t j = 0; j < k; ++j) {
    int64_t a = NormalizeAxis((*axes)[j], r);
    if (out[a] >= 0) {
      std::optional<int64_t> sum = CheckedAdd((*pads)[j], (*pads)[j + k]);
      if (sum) sum = CheckedAdd(out[a], *sum);
      if (!sum) fail_shape_inference("pads make dim ", a, " overflow int64");
      out[a] = *sum;
    }
    if (out[a] < -1) fail_shape_inference("pads make dim ", a, " negative");
  }
  SetOutputDims(ctx, 0, out);
}

// Resize-18/19: sizes or scales, optionally for `axes`, sizes with a
// keep_aspect_ratio_policy.
void ResizeInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  if (!in) return;
  const int64_t r = static_cast<int64_t>(in->size());
  std::vector<int64_t> axes = IntsAttr(ctx, "axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  for (int64_t& a : axes) a = NormalizeAxis(a, r);
  std::vector<int64_t> out(in->size(), -1);
  for (int64_t i = 0; i < r; ++i) {
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) out[i] = (*in)[i];
  }
  if (HasInput(ctx, 3)) {
    auto sizes = InputInts(ctx, 3);
    if (sizes && sizes->size() != axes.size()) fail_shape_inference("sizes has ", sizes->size(), " values for ", axes.size(), " axes");
    const std::string policy = onnx::getAttribute(ctx, "keep_aspect_ratio_policy", std::string("stretch"));
    if (sizes && policy == "stretch") {
      for (size_t j = 0; j < axes.size(); ++j) out[axes[j]] = (*sizes)[j];
    } else if (sizes) {
      double scale = policy == "not_larger" ? INFINITY : 0;
      bool known = true;
      for (size_t j = 0; j < axes.size(); ++j) {
        int64_t d = (*in)[axes[j]];
        if (d <= 0) known = false;
        else scale = policy == "not_larger" ? std::min(scale, double((*sizes)[j]) / d) : std::max(scale, double((*sizes)[j]) / d);
      }
      for (size_t j = 0; known && j < axes.size(); ++j) {
        out[axes[j]] = static_cast<int64_t>(std::round(scale * (*in)[axes[j]]));
      }
    }
  } else if (HasInput(ctx, 2)) {
    auto scales = InputFloats(ctx, 2);
    if (scales && scales->size() != axes.size()) fail_shape_inference("scales has ", scales->size(), " values for ", axes.size(), " axes");
    for (size_t j = 0; scales && j < axes.size(); ++j) {
      int64_t d = (*in)[axes[j]];
      if (d >= 0) out[axes[j]] = static_cast<int64_t>(std::floor(d * (*scales)[j]));
    }
  }
  SetOutputDims(ctx, 0, out);
}

// AveragePool-19 (dilations), LpPool-18 (ceil_mode).
void PoolInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  if (!in) return;
  std::vector<int64_t> kernel = IntsAttr(ctx, "kernel_shape");
  if (in->size() < 2 || kernel.size() != in->size() - 2) {
    fail_shape_inference("kernel_shape has ", kernel.size(), " values for an input of rank ", in->size());
  }
  std::vector<int64_t> out = {(*in)[0], (*in)[1]};
  for (int64_t d : WindowDims(ctx, kernel)) out.push_back(d);
  SetOutputDims(ctx, 0, out);
}

// DeformConv-19: X [N, C, spatial], W [oC, C/group, kernel] → [N, oC, out].
void DeformConvInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto x = InputDims(ctx, 0), w = InputDims(ctx, 1);
  if (!x || !w || x->size() < 3 || w->size() != x->size()) return;
  std::vector<int64_t> kernel = IntsAttr(ctx, "kernel_shape");
  if (kernel.empty()) kernel.assign(w->begin() + 2, w->end());
  std::vector<int64_t> out = {(*x)[0], (*w)[0]};
  for (int64_t d : WindowDims(ctx, kernel)) out.push_back(d);
  SetOutputDims(ctx, 0, out);
}

// Col2Im-18: [N, C·∏block, L] + image_shape + block_shape → [N, C, image...].
void Col2ImInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  auto image = InputInts(ctx, 1), block = InputInts(ctx, 2);
  if (!in || in->size() != 3) return;
  std::vector<int64_t> out = {(*in)[0], -1};
  if (block && (*in)[1] >= 0) {
    int64_t p = 1;
    for (int64_t b : *block) p = b > 0 ? p * b : 0;
    if (p > 0 && (*in)[1] % p == 0) out[1] = (*in)[1] / p;
  }
  if (image) {
    out.insert(out.end(), image->begin(), image->end());
  } else if (int rank = InputDim(ctx, 1, 0); rank >= 0) {
    out.insert(out.end(), rank, -1);
  } else {
    return;
  }
  SetOutputDims(ctx, 0, out);
}

// CenterCropPad-18: the dims of `axes` become the shape input's values.
void CenterCropPadInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  if (!in) return;
  const int64_t r = static_cast<int64_t>(in->size());
  std::vector<int64_t> axes = IntsAttr(ctx, "axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  auto shape = InputInts(ctx, 1);
  std::vector<int64_t> out = *in;
  for (size_t j = 0; j < axes.size(); ++j) {
    out[NormalizeAxis(axes[j], r)] = shape && j < shape->size() ? (*shape)[j] : -1;
  }
  SetOutputDims(ctx, 0, out);
}

// Cast-19 / CastLike-19 (saturate) keep the shape.
void CastInference(InferenceContext& ctx) {
  if (const auto* to = ctx.getAttribute("to")) onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(to->i()));
  SameShape(ctx, 0, 0);
}
void CastLikeInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  SameShape(ctx, 0, 0);
}

// QuantizeLinear-19/21: output type from output_dtype, else the zero point, else uint8.
void QuantizeInference(InferenceContext& ctx) {
  const auto* dtype = ctx.getAttribute("output_dtype");
  if (dtype != nullptr && dtype->i() != 0) {
    onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(dtype->i()));
  } else if (HasInput(ctx, 2)) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  } else {
    onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
  }
  SameShape(ctx, 0, 0);
}
// DequantizeLinear-21: output type of the scale.
void DequantizeInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  SameShape(ctx, 0, 0);
}

// AffineGrid-20: theta [N, 2, 3] and size [N, C, H, W] → [N, H, W, 2]
// (3-D: [N, 3, 4], [N, C, D, H, W] → [N, D, H, W, 3]).
void AffineGridInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto size = InputInts(ctx, 1);
  int64_t n_size = InputDim(ctx, 1, 0);
  if (size && (size->size() == 4 || size->size() == 5)) {
    std::vector<int64_t> out = {(*size)[0]};
    out.insert(out.end(), size->begin() + 2, size->end());
    out.push_back(static_cast<int64_t>(size->size()) - 2);
    SetOutputDims(ctx, 0, out);
  } else if (n_size == 4 || n_size == 5) {
    std::vector<int64_t> out(static_cast<size_t>(n_size), -1);
    out.back() = n_size - 2;
    SetOutputDims(ctx, 0, out);
  }
}

// DFT-20: axis and dft_length are inputs; the last dim becomes 2 (complex).
void DftInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  if (!in || in->size() < 2) return;
  const int64_t r = static_cast<int64_t>(in->size());
  int64_t axis = -2;
  if (HasInput(ctx, 2)) {
    auto a = InputInts(ctx, 2);
    if (!a || a->size() != 1) {
      std::vector<int64_t> out(in->size(), -1);
      out.back() = 2;
      return SetOutputDims(ctx, 0, out);
    }
    axis = (*a)[0];
  }
  axis = NormalizeAxis(axis, r);
  if (axis == r - 1) fail_shape_inference("axis must not be the last (complex) dim");
  std::vector<int64_t> out = *in;
  out.back() = 2;
  int64_t n = (*in)[axis];
  if (HasInput(ctx, 1)) {
    auto len = InputInts(ctx, 1);
    n = len && len->size() == 1 ? (*len)[0] : -1;
  }
  const bool onesided = onnx::getAttribute(ctx, "onesided", 0) != 0;
  out[axis] = n < 0 ? -1 : onesided ? n / 2 + 1 : n;
  SetOutputDims(ctx, 0, out);
}

// GridSample-20: X [N, C, D1..Dr], grid [N, O1..Or, r] → [N, C, O1..Or].
void GridSampleInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto x = InputDims(ctx, 0), grid = InputDims(ctx, 1);
  if (!x || !grid || grid->size() != x->size() || x->size() < 3) return;
  std::vector<int64_t> out = {(*x)[0], (*x)[1]};
  out.insert(out.end(), grid->begin() + 1, grid->end() - 1);
  SetOutputDims(ctx, 0, out);
}

void SameAsInputInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  SameShape(ctx, 0, 0);
}

OpSchema Unary(const char* name, int since) {
  OpSchema s = NewSchema(name, "", since);
  s.Input(0, "X", "", "T").Output(0, "Y", "", "T").TypeAndShapeInferenceFunction(SameAsInputInference);
  return s;
}

OpSchema Binary(const char* name, int since) {
  OpSchema s = NewSchema(name, "", since);
  s.Input(0, "A", "", "T").Input(1, "B", "", "T").Output(0, "C", "", "T").TypeAndShapeInferenceFunction(
      BroadcastInference);
  return s;
}

OpSchema& PoolAttrs(OpSchema& s) {
  return s.Attr("auto_pad", "", AttributeProto::STRING, std::string("NOTSET"))
      .Attr("ceil_mode", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("dilations", "", AttributeProto::INTS, false)
      .Attr("kernel_shape", "", AttributeProto::INTS, true)
      .Attr("pads", "", AttributeProto::INTS, false)
      .Attr("strides", "", AttributeProto::INTS, false);
}

// LayerNormalization-17: libonnx 1.12's inference indexes the input shape
// with an unchecked axis (a crash for axis -7 on rank 2, onnx_schema_sweep_test),
// so npuplan replaces it with the same rule, range-checked.
void StandardLayerNormInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  SameShape(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  const int32_t stash = static_cast<int32_t>(onnx::getAttribute(ctx, "stash_type", 1));
  for (size_t o = 1; o < ctx.getNumOutputs(); ++o) {
    onnx::updateOutputElemType(ctx, o, stash);
    if (!in) continue;
    const int64_t axis = NormalizeAxis(onnx::getAttribute(ctx, "axis", -1), static_cast<int64_t>(in->size()));
    std::vector<int64_t> d = *in;
    for (size_t i = static_cast<size_t>(axis); i < d.size(); ++i) d[i] = 1;
    SetOutputDims(ctx, o, d);
  }
}

// STFT-17: libonnx 1.12's inference reads scalar inputs and the signal's
// dims without checks (crashes in onnx_schema_sweep_test): npuplan's rule.
// signal [B, L, 1|2] → [B, frames, bins, 2], frames = ⌊(L − frame_length) /
// frame_step⌋ + 1, bins = ⌊frame_length / 2⌋ + 1 when onesided.
void StftInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto sig = InputDims(ctx, 0);
  if (!sig || sig->size() != 3) return;
  auto step = InputInts(ctx, 1);
  int64_t frame = -1;
  if (HasInput(ctx, 3)) {
    if (auto f = InputInts(ctx, 3); f && f->size() == 1) frame = (*f)[0];
  } else if (HasInput(ctx, 2)) {
    frame = InputDim(ctx, 2, 0);
  }
  int64_t frames = -1, bins = -1;
  if (frame > 0 && (*sig)[1] >= frame && step && step->size() == 1 && (*step)[0] > 0) {
    frames = ((*sig)[1] - frame) / (*step)[0] + 1;
  }
  if (frame > 0) bins = onnx::getAttribute(ctx, "onesided", 1) != 0 ? frame / 2 + 1 : frame;
  SetOutputDims(ctx, 0, {(*sig)[0], frames, bins, 2});
}

// STFT-17 and LayerNormalization-17: npuplan's checked rules instead of libonnx 1.12's.
void AddOpset17Replacements(std::vector<OpSchema>& out) {
  {
    OpSchema s = NewSchema("STFT", "", 17);
    s.Input(0, "signal", "", "T").Input(1, "frame_step", "", "T")
        .Input(2, "window", "", "T", OpSchema::Optional).Input(3, "frame_length", "", "T", OpSchema::Optional)
        .Output(0, "output", "", "T")
        .Attr("onesided", "", AttributeProto::INT, static_cast<int64_t>(1))
        .TypeAndShapeInferenceFunction(StftInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("LayerNormalization", "", 17);
    s.Input(0, "X", "", "T")
        .Input(1, "Scale", "", "T")
        .Input(2, "B", "", "T", OpSchema::Optional)
        .Output(0, "Y", "", "T")
        .Output(1, "Mean", "", "T", OpSchema::Optional)
        .Output(2, "InvStdDev", "", "T", OpSchema::Optional)
        .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(-1))
        .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
        .Attr("stash_type", "", AttributeProto::INT, static_cast<int64_t>(1))
        .TypeAndShapeInferenceFunction(StandardLayerNormInference);
    out.push_back(std::move(s));
  }
}

// Reduce*-18, Split-18, Pad-18, Resize-18: axes and sizes as inputs, num_outputs.
void AddReduceAndShapeOps(std::vector<OpSchema>& out) {
  for (const char* name : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                           "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
    out.push_back(Reduce(name));
  }
  {
    OpSchema s = NewSchema("Split", "", 18);
    s.Input(0, "input", "", "T")
        .Input(1, "split", "", "tensor(int64)", OpSchema::Optional)
        .Output(0, "outputs", "", "T", OpSchema::Variadic, true, 1)
        .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("num_outputs", "", AttributeProto::INT, false)
        .TypeAndShapeInferenceFunction(SplitInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("Pad", "", 18);
    s.Input(0, "data", "", "T")
        .Input(1, "pads", "", "tensor(int64)")
        .Input(2, "constant_value", "", "T", OpSchema::Optional)
        .Input(3, "axes", "", "Tind", OpSchema::Optional)
        .Output(0, "output", "", "T")
        .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
        .Attr("mode", "", AttributeProto::STRING, std::string("constant"))
        .TypeAndShapeInferenceFunction(PadInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("Resize", "", 18);
    s.Input(0, "X", "", "T")
        .Input(1, "roi", "", "T2", OpSchema::Optional)
        .Input(2, "scales", "", "tensor(float)", OpSchema::Optional)
        .Input(3, "sizes", "", "tensor(int64)", OpSchema::Optional)
        .Output(0, "Y", "", "T")
        .TypeConstraint("T2", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "")
        .Attr("antialias", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("axes", "", AttributeProto::INTS, false)
        .Attr("coordinate_transformation_mode", "", AttributeProto::STRING, std::string("half_pixel"))
        .Attr("cubic_coeff_a", "", AttributeProto::FLOAT, -0.75f)
        .Attr("exclude_outside", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("extrapolation_value", "", AttributeProto::FLOAT, 0.0f)
        .Attr("keep_aspect_ratio_policy", "", AttributeProto::STRING, std::string("stretch"))
        .Attr("mode", "", AttributeProto::STRING, std::string("nearest"))
        .Attr("nearest_mode", "", AttributeProto::STRING, std::string("round_prefer_floor"))
        .TypeAndShapeInferenceFunction(ResizeInference);
    out.push_back(std::move(s));
  }
}

// LpPool-18, AveragePool-19, DeformConv-19, Col2Im-18.
void AddPoolConvAndImageOps(std::vector<OpSchema>& out) {
  {
    OpSchema s = NewSchema("LpPool", "", 18);
    PoolAttrs(s).Attr("p", "", AttributeProto::INT, static_cast<int64_t>(2));
    s.Input(0, "X", "", "T").Output(0, "Y", "", "T").TypeAndShapeInferenceFunction(PoolInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("AveragePool", "", 19);
    PoolAttrs(s).Attr("count_include_pad", "", AttributeProto::INT, static_cast<int64_t>(0));
    s.Input(0, "X", "", "T").Output(0, "Y", "", "T").TypeAndShapeInferenceFunction(PoolInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("DeformConv", "", 19);
    s.Input(0, "X", "", "T").Input(1, "W", "", "T").Input(2, "offset", "", "T")
        .Input(3, "B", "", "T", OpSchema::Optional).Input(4, "mask", "", "T", OpSchema::Optional)
        .Output(0, "Y", "", "T")
        .Attr("dilations", "", AttributeProto::INTS, false)
        .Attr("group", "", AttributeProto::INT, static_cast<int64_t>(1))
        .Attr("kernel_shape", "", AttributeProto::INTS, false)
        .Attr("offset_group", "", AttributeProto::INT, static_cast<int64_t>(1))
        .Attr("pads", "", AttributeProto::INTS, false)
        .Attr("strides", "", AttributeProto::INTS, false)
        .TypeAndShapeInferenceFunction(DeformConvInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("Col2Im", "", 18);
    s.Input(0, "input", "", "T").Input(1, "image_shape", "", "tensor(int64)").Input(2, "block_shape", "", "tensor(int64)")
        .Output(0, "output", "", "T")
        .Attr("dilations", "", AttributeProto::INTS, false)
        .Attr("pads", "", AttributeProto::INTS, false)
        .Attr("strides", "", AttributeProto::INTS, false)
        .TypeAndShapeInferenceFunction(Col2ImInference);
    out.push_back(std::move(s));
  }
}

// GroupNormalization-18/21, CenterCropPad-18, Mish-18, Bitwise*-18, Gelu-20.
void AddNormalizationAndElementwiseOps(std::vector<OpSchema>& out) {
  for (int since : {18, 21}) {  // 21: scale and bias per channel instead of per group
    OpSchema s = NewSchema("GroupNormalization", "", since);
    s.Input(0, "X", "", "T").Input(1, "scale", "", "T").Input(2, "bias", "", "T").Output(0, "Y", "", "T")
        .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
        .Attr("num_groups", "", AttributeProto::INT, true)
        .TypeAndShapeInferenceFunction(SameAsInputInference);
    if (since == 21) s.Attr("stash_type", "", AttributeProto::INT, static_cast<int64_t>(1));
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("CenterCropPad", "", 18);
    s.Input(0, "input_data", "", "T").Input(1, "shape", "", "Tind").Output(0, "output_data", "", "T")
        .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
        .Attr("axes", "", AttributeProto::INTS, false)
        .TypeAndShapeInferenceFunction(CenterCropPadInference);
    out.push_back(std::move(s));
  }
  out.push_back(Unary("Mish", 18));
  out.push_back(Unary("BitwiseNot", 18));
  for (const char* name : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) out.push_back(Binary(name, 18));
  {
    OpSchema s = NewSchema("Gelu", "", 20);
    s.Input(0, "X", "", "T").Output(0, "Y", "", "T")
        .Attr("approximate", "", AttributeProto::STRING, std::string("none"))
        .TypeAndShapeInferenceFunction(SameAsInputInference);
    out.push_back(std::move(s));
  }
}

// Cast-19, CastLike-19 (saturate), QuantizeLinear-19/21, DequantizeLinear-21.
void AddCastAndQuantizeOps(std::vector<OpSchema>& out) {
  {
    OpSchema s = NewSchema("Cast", "", 19);
    s.Input(0, "input", "", "T").Output(0, "output", "", "T")
        .Attr("saturate", "", AttributeProto::INT, static_cast<int64_t>(1))
        .Attr("to", "", AttributeProto::INT, true)
        .TypeAndShapeInferenceFunction(CastInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("CastLike", "", 19);
    s.Input(0, "input", "", "T").Input(1, "target_type", "", "T").Output(0, "output", "", "T")
        .Attr("saturate", "", AttributeProto::INT, static_cast<int64_t>(1))
        .TypeAndShapeInferenceFunction(CastLikeInference);
    out.push_back(std::move(s));
  }
  for (int since : {19, 21}) {
    OpSchema q = NewSchema("QuantizeLinear", "", since);
    q.Input(0, "x", "", "T").Input(1, "y_scale", "", "T").Input(2, "y_zero_point", "", "T", OpSchema::Optional)
        .Output(0, "y", "", "T")
        .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(1))
        .Attr("saturate", "", AttributeProto::INT, static_cast<int64_t>(1))
        .TypeAndShapeInferenceFunction(QuantizeInference);
    if (since == 21) {
      q.Attr("block_size", "", AttributeProto::INT, static_cast<int64_t>(0))
          .Attr("output_dtype", "", AttributeProto::INT, static_cast<int64_t>(0));
    }
    out.push_back(std::move(q));
  }
  {
    OpSchema d = NewSchema("DequantizeLinear", "", 21);
    d.Input(0, "x", "", "T").Input(1, "x_scale", "", "T").Input(2, "x_zero_point", "", "T", OpSchema::Optional)
        .Output(0, "y", "", "T")
        .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(1))
        .Attr("block_size", "", AttributeProto::INT, static_cast<int64_t>(0))
        .TypeAndShapeInferenceFunction(DequantizeInference);
    out.push_back(std::move(d));
  }
}

// AffineGrid, DFT, GridSample and the string and image ops of opset 20.
void AddOpset20Ops(std::vector<OpSchema>& out) {
  {
    OpSchema s = NewSchema("AffineGrid", "", 20);
    s.Input(0, "theta", "", "T").Input(1, "size", "", "tensor(int64)").Output(0, "grid", "", "T")
        .Attr("align_corners", "", AttributeProto::INT, static_cast<int64_t>(0))
        .TypeAndShapeInferenceFunction(AffineGridInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("DFT", "", 20);
    s.Input(0, "input", "", "T").Input(1, "dft_length", "", "Tind", OpSchema::Optional)
        .Input(2, "axis", "", "tensor(int64)", OpSchema::Optional)
        .Output(0, "output", "", "T")
        .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
        .Attr("inverse", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("onesided", "", AttributeProto::INT, static_cast<int64_t>(0))
        .TypeAndShapeInferenceFunction(DftInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("GridSample", "", 20);
    s.Input(0, "X", "", "T").Input(1, "grid", "", "T").Output(0, "Y", "", "T")
        .Attr("align_corners", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("mode", "", AttributeProto::STRING, std::string("linear"))
        .Attr("padding_mode", "", AttributeProto::STRING, std::string("zeros"))
        .TypeAndShapeInferenceFunction(GridSampleInference);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("RegexFullMatch", "", 20);
    s.Input(0, "X", "", "T").Output(0, "Y", "", "T").Attr("pattern", "", AttributeProto::STRING, false)
        .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
          onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::BOOL);
          SameShape(ctx, 0, 0);
        });
    out.push_back(std::move(s));
  }
  out.push_back(Binary("StringConcat", 20));
  {
    OpSchema s = NewSchema("StringSplit", "", 20);
    s.Input(0, "X", "", "T").Output(0, "Y", "", "T").Output(1, "Z", "", "T")
        .Attr("delimiter", "", AttributeProto::STRING, false)
        .Attr("maxsplit", "", AttributeProto::INT, false)
        .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
          onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::STRING);
          onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT64);
          if (auto in = InputDims(ctx, 0)) {
            SetOutputDims(ctx, 1, *in);
            in->push_back(-1);  // the longest split, known at run time
            SetOutputDims(ctx, 0, *in);
          }
        });
    out.push_back(std::move(s));
  }
  {
    OpSchema s = NewSchema("ImageDecoder", "", 20);
    s.Input(0, "encoded_stream", "", "T").Output(0, "image", "", "T")
        .Attr("pixel_format", "", AttributeProto::STRING, std::string("RGB"))
        .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
          onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
          const bool gray = onnx::getAttribute(ctx, "pixel_format", std::string("RGB")) == "Grayscale";
          SetOutputDims(ctx, 0, {-1, -1, gray ? 1 : 3});
        });
    out.push_back(std::move(s));
  }
}

}  // namespace

// One group per family of ops, always registered in this order.
void AddNewOpsetSchemas(std::vector<OpSchema>& out) {
  AddOpset17Replacements(out);
  AddReduceAndShapeOps(out);
  AddPoolConvAndImageOps(out);
  AddNormalizationAndElementwiseOps(out);
  AddCastAndQuantizeOps(out);
  AddOpset20Ops(out);
}

}  // namespace npuplan::onnx_import
