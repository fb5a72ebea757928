// Helpers for npuplan's ONNX shape-inference functions (onnx_schemas.h).
#ifndef NPUPLAN_IMPORTERS_ONNX_INFERENCE_UTIL_H_
#define NPUPLAN_IMPORTERS_ONNX_INFERENCE_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

namespace npuplan::onnx_import {

// Schemas npuplan adds (registered by onnx_schemas.cc).
void AddNewOpsetSchemas(std::vector<onnx::OpSchema>& out);  // default domain, opsets 18–22
void AddMicrosoftSchemas(std::vector<onnx::OpSchema>& out);  // com.microsoft

// A schema with `name`, `domain`, `since` and the all-types constraint "T".
onnx::OpSchema NewSchema(const char* name, const char* domain, int since);
// Type constraints used by the schemas (inference runs without type checks).
const std::vector<std::string>& AnyTensor();

// An int64 vector input's values, from an initializer/Constant or from
// libonnx's data propagation; nullopt when absent or not known.
std::optional<std::vector<int64_t>> InputInts(onnx::InferenceContext& ctx, size_t i);
// A float input's values (Resize scales); nullopt when absent or not known.
std::optional<std::vector<double>> InputFloats(onnx::InferenceContext& ctx, size_t i);
bool HasInput(onnx::InferenceContext& ctx, size_t i);
// Input i's rank, or -1 when unknown.
int InputRank(onnx::InferenceContext& ctx, size_t i);
// Dim d of input i, or -1 when unknown.
int64_t InputDim(onnx::InferenceContext& ctx, size_t i, int d);
std::vector<int64_t> IntsAttr(onnx::InferenceContext& ctx, const char* name);
// Sets output `o`'s shape: -1 entries become unknown dims.
void SetOutputDims(onnx::InferenceContext& ctx, size_t o, const std::vector<int64_t>& dims);
// Output o gets input i's shape (when known).
void SameShape(onnx::InferenceContext& ctx, size_t i, size_t o);
// Element-wise op: type of input 0, multidirectional broadcast of all inputs.
void BroadcastInference(onnx::InferenceContext& ctx);
// Normalises an axis against `rank`; fails inference when out of range.
int64_t NormalizeAxis(int64_t axis, int64_t rank);
// Output spatial size of a convolution / pooling window (-1 when unknown).
int64_t WindowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_total,
                     bool ceil_mode);
// Spatial dims of a conv/pool node whose input 0 is [N, C, spatial...] with
// kernel `kernel` (attrs strides, dilations, pads, auto_pad, ceil_mode).
std::vector<int64_t> WindowDims(onnx::InferenceContext& ctx, const std::vector<int64_t>& kernel);
// [..., M, K] x [..., K, N] → [..., M, N] with numpy broadcasting and 1-D
// promotion; `ta`/`tb` transpose the last two dims of A/B first.
bool MatMulDims(std::vector<int64_t> a, std::vector<int64_t> b, bool ta, bool tb, std::vector<int64_t>& out);
// Dims of input i (-1 unknown), nullopt when the rank is unknown.
std::optional<std::vector<int64_t>> InputDims(onnx::InferenceContext& ctx, size_t i);

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_ONNX_INFERENCE_UTIL_H_
