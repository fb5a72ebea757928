// npuplan's schemas for the com.microsoft contrib ops that ONNX Runtime's
// graph optimisers write into saved models (onnx_schemas.h). Shapes follow
// ONNX Runtime's contrib-op documentation (docs/ContribOperators.md there);
// other contrib ops are unknown ops (an import error listing them).
#include <algorithm>

#include "npuplan/importers/onnx_inference_util.h"
#include "npuplan/importers/onnx_schemas.h"

namespace npuplan::onnx_import {
namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

void SameAsInput(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  SameShape(ctx, 0, 0);
}

OpSchema Ms(const char* name) { return NewSchema(name, kMicrosoftDomain, 1); }

// FusedMatMul: alpha·op(A)·op(B); transA/transB swap the last two dims
// (transBatchA/B move the batch dims, which only ORT's kernels use: shapes
// with them are left to run time).
void FusedMatMulInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto a = InputDims(ctx, 0), b = InputDims(ctx, 1);
  if (!a || !b) return;
  if (onnx::getAttribute(ctx, "transBatchA", 0) || onnx::getAttribute(ctx, "transBatchB", 0)) return;
  std::vector<int64_t> out;
  if (MatMulDims(*a, *b, onnx::getAttribute(ctx, "transA", 0) != 0, onnx::getAttribute(ctx, "transB", 0) != 0, out)) {
    SetOutputDims(ctx, 0, out);
  }
}

// MatMulIntegerToFloat / DynamicQuantizeMatMul: MatMul shape, float output.
void MatMulToFloatInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);  // the scale's type
  auto a = InputDims(ctx, 0), b = InputDims(ctx, 1);
  std::vector<int64_t> out;
  if (a && b && MatMulDims(*a, *b, false, false, out)) SetOutputDims(ctx, 0, out);
}

// Attention: input [B, S, H], weights [H, Hq + Hk + Hv] → output [B, S, Hv];
// present [2, B, heads, past + S, Hv / heads].
void AttentionInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto in = InputDims(ctx, 0), w = InputDims(ctx, 1);
  if (!in || in->size() != 3) return;
  std::vector<int64_t> qkv = IntsAttr(ctx, "qkv_hidden_sizes");
  int64_t hv = -1;
  if (qkv.size() == 3) hv = qkv[2];
  else if (w && w->size() == 2 && (*w)[1] >= 0) hv = (*w)[1] / 3;
  SetOutputDims(ctx, 0, {(*in)[0], (*in)[1], hv});
  if (ctx.getNumOutputs() > 1 && HasInput(ctx, 4)) {  // present from past [2, B, heads, P, head]
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
    auto past = InputDims(ctx, 4);
    if (past && past->size() == 5) {
      std::vector<int64_t> present = *past;
      present[3] = present[3] >= 0 && (*in)[1] >= 0 ? present[3] + (*in)[1] : -1;
      SetOutputDims(ctx, 1, present);
    }
  }
}

// MultiHeadAttention: query [B, S, D] → output [B, S, Dv] (Dv from a 3-D
// value, else D); present_key/value [B, heads, past + L, head].
void MultiHeadAttentionInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto q = InputDims(ctx, 0);
  if (!q || q->size() != 3) return;
  int64_t dv = (*q)[2];
  if (auto v = InputDims(ctx, 2); v && v->size() == 3) dv = (*v)[2];
  SetOutputDims(ctx, 0, {(*q)[0], (*q)[1], dv});
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  auto k = InputDims(ctx, 1);
  for (size_t o = 1; o < 3 && o < ctx.getNumOutputs(); ++o) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
    auto past = InputDims(ctx, 5 + o);  // past_key = 6, past_value = 7
    if (!past || past->size() != 4) continue;
    std::vector<int64_t> present = *past;
    int64_t len = k && k->size() == 3 ? (*k)[1] : k && k->size() == 4 ? (*k)[2] : (*q)[1];
    present[2] = present[2] >= 0 && len >= 0 ? present[2] + len : -1;
    if (heads > 0 && present[1] < 0) present[1] = heads;
    SetOutputDims(ctx, o, present);
  }
}

// Skip(Simplified)LayerNormalization: output and input_skip_bias_sum like
// the input; mean and inv_std_var [B, S, 1].
void SkipLayerNormInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  SameShape(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  for (size_t o = 1; o < ctx.getNumOutputs(); ++o) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
    if (!in || in->empty()) continue;
    std::vector<int64_t> d = *in;
    if (o < 3) d.back() = 1;  // mean, inv_std_var; output 3 (input_skip_bias_sum) is like the input
    SetOutputDims(ctx, o, d);
  }
}

// (Simplified)LayerNormalization in ORT's form: statistics keep the leading
// dims and have size 1 from `axis` on.
void LayerNormInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  SameShape(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  for (size_t o = 1; o < ctx.getNumOutputs(); ++o) {
    onnx::updateOutputElemType(ctx, o, onnx::TensorProto::FLOAT);
    if (!in) continue;
    const int64_t axis = NormalizeAxis(onnx::getAttribute(ctx, "axis", -1), static_cast<int64_t>(in->size()));
    std::vector<int64_t> d = *in;
    for (size_t i = static_cast<size_t>(axis); i < d.size(); ++i) d[i] = 1;
    SetOutputDims(ctx, o, d);
  }
}

// EmbedLayerNormalization: input_ids [B, S], word_embedding [V, H] →
// output [B, S, H], mask_index [B], embedding_sum [B, S, H].
void EmbedLayerNormInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  auto ids = InputDims(ctx, 0), word = InputDims(ctx, 2);
  if (!ids || ids->size() != 2) return;
  const int64_t h = word && word->size() == 2 ? (*word)[1] : -1;
  SetOutputDims(ctx, 0, {(*ids)[0], (*ids)[1], h});
  if (ctx.getNumOutputs() > 1) {
    onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT32);
    SetOutputDims(ctx, 1, {(*ids)[0]});
  }
  if (ctx.getNumOutputs() > 2) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
    SetOutputDims(ctx, 2, {(*ids)[0], (*ids)[1], h});
  }
}

// QLinear element-wise ops: (A, A_scale, A_zp, B, B_scale, B_zp, C_scale,
// C_zp) broadcast like A and B; unary ones keep X's shape.
void QLinearBinaryInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0) || !HasInput(ctx, 3) || !onnx::hasInputShape(ctx, 3)) return;
  onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 3),
                                             *onnx::getOutputShape(ctx, 0));
}

// QLinearGlobalAveragePool: [N, C, spatial] → [N, C, 1…] (channels_last:
// [N, spatial, C] → [N, 1…, C]).
void QLinearGlobalPoolInference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  auto in = InputDims(ctx, 0);
  if (!in || in->size() < 3) return;
  const bool last = onnx::getAttribute(ctx, "channels_last", 0) != 0;
  std::vector<int64_t> out(in->size(), 1);
  out[0] = (*in)[0];
  if (last) out.back() = in->back();
  else out[1] = (*in)[1];
  SetOutputDims(ctx, 0, out);
}

OpSchema Variadic(const char* name, int min_inputs, int max_inputs, int outputs, onnx::InferenceFunction f) {
  OpSchema s = Ms(name);
  for (int i = 0; i < max_inputs; ++i) {
    s.Input(i, "in" + std::to_string(i), "", "T", i < min_inputs ? OpSchema::Single : OpSchema::Optional);
  }
  for (int o = 0; o < outputs; ++o) s.Output(o, "out" + std::to_string(o), "", "T", o == 0 ? OpSchema::Single : OpSchema::Optional);
  s.TypeAndShapeInferenceFunction(std::move(f));
  return s;
}

}  // namespace

void AddMicrosoftSchemas(std::vector<OpSchema>& out) {
  {
    OpSchema s = Variadic("FusedMatMul", 2, 2, 1, FusedMatMulInference);
    s.Attr("alpha", "", AttributeProto::FLOAT, 1.0f)
        .Attr("transA", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("transB", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("transBatchA", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("transBatchB", "", AttributeProto::INT, static_cast<int64_t>(0));
    out.push_back(std::move(s));
  }
  {
    OpSchema s = Variadic("Attention", 2, 7, 2, AttentionInference);
    s.Attr("num_heads", "", AttributeProto::INT, true)
        .Attr("unidirectional", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("qkv_hidden_sizes", "", AttributeProto::INTS, false)
        .Attr("mask_filter_value", "", AttributeProto::FLOAT, false)
        .Attr("scale", "", AttributeProto::FLOAT, false)
        .Attr("do_rotary", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("rotary_embedding_dim", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("past_present_share_buffer", "", AttributeProto::INT, static_cast<int64_t>(0));
    out.push_back(std::move(s));
  }
  {
    OpSchema s = Variadic("MultiHeadAttention", 1, 10, 3, MultiHeadAttentionInference);
    s.Attr("num_heads", "", AttributeProto::INT, true)
        .Attr("mask_filter_value", "", AttributeProto::FLOAT, false)
        .Attr("scale", "", AttributeProto::FLOAT, false)
        .Attr("unidirectional", "", AttributeProto::INT, static_cast<int64_t>(0));
    out.push_back(std::move(s));
  }
  for (const char* name : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
    const bool simplified = std::string(name).find("Simplified") != std::string::npos;
    OpSchema s = Variadic(name, simplified ? 3 : 3, simplified ? 4 : 5, 4, SkipLayerNormInference);
    s.Attr("epsilon", "", AttributeProto::FLOAT, false);
    out.push_back(std::move(s));
  }
  for (const char* domain : {"", kMicrosoftDomain}) {  // ORT writes it in both domains
    OpSchema s = NewSchema("SimplifiedLayerNormalization", domain, 1);
    s.Input(0, "X", "", "T").Input(1, "scale", "", "T")
        .Output(0, "Y", "", "T").Output(1, "inv_std_var", "", "T", OpSchema::Optional)
        .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(-1))
        .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
        .Attr("stash_type", "", AttributeProto::INT, static_cast<int64_t>(1))
        .TypeAndShapeInferenceFunction(LayerNormInference);
    out.push_back(std::move(s));
  }
  out.push_back(Variadic("BiasGelu", 2, 2, 1, BroadcastInference));
  out.push_back(Variadic("FastGelu", 1, 2, 1, SameAsInput));
  {
    OpSchema s = Variadic("QuickGelu", 1, 1, 1, SameAsInput);
    s.Attr("alpha", "", AttributeProto::FLOAT, 1.702f);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = Variadic("Gelu", 1, 1, 1, SameAsInput);
    out.push_back(std::move(s));
  }
  out.push_back(Variadic("BiasAdd", 3, 3, 1, SameAsInput));
  {
    OpSchema s = Variadic("RotaryEmbedding", 4, 4, 1, SameAsInput);
    s.Attr("interleaved", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("num_heads", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("rotary_embedding_dim", "", AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("scale", "", AttributeProto::FLOAT, 1.0f)
        .Attr("is_packed_batching", "", AttributeProto::INT, static_cast<int64_t>(0));
    out.push_back(std::move(s));
  }
  {
    OpSchema s = Variadic("EmbedLayerNormalization", 7, 9, 3, EmbedLayerNormInference);
    s.Attr("epsilon", "", AttributeProto::FLOAT, false).Attr("mask_index_type", "", AttributeProto::INT, false);
    out.push_back(std::move(s));
  }
  out.push_back(Variadic("MatMulIntegerToFloat", 3, 6, 1, MatMulToFloatInference));
  out.push_back(Variadic("DynamicQuantizeMatMul", 3, 5, 1, MatMulToFloatInference));
  for (const char* name : {"QLinearAdd", "QLinearMul"}) out.push_back(Variadic(name, 7, 8, 1, QLinearBinaryInference));
  out.push_back(Variadic("QLinearSigmoid", 4, 5, 1, SameAsInput));
  {
    OpSchema s = Variadic("QLinearLeakyRelu", 4, 5, 1, SameAsInput);
    s.Attr("alpha", "", AttributeProto::FLOAT, 0.01f);
    out.push_back(std::move(s));
  }
  {
    OpSchema s = Variadic("QLinearGlobalAveragePool", 5, 5, 1, QLinearGlobalPoolInference);
    s.Attr("channels_last", "", AttributeProto::INT, static_cast<int64_t>(0));
    out.push_back(std::move(s));
  }
}

}  // namespace npuplan::onnx_import
