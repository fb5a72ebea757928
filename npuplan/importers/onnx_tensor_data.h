// Small helpers that read the values of ONNX tensors (initializers, Constant
// values) without trusting them: libonnx's ParseData crashed on fuzzed
// raw_data, so the importer decodes values itself, checking every size.
#ifndef NPUPLAN_IMPORTERS_ONNX_TENSOR_DATA_H_
#define NPUPLAN_IMPORTERS_ONNX_TENSOR_DATA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npuplan/support/checked_math.h"
#include "onnx/onnx_pb.h"

namespace npuplan::onnx_import {

// Overflow-checked arithmetic: the project's one helper (issue #19).
using ::npuplan::CheckedAdd;
using ::npuplan::CheckedMul;
// Product of `dims` (all ≥ 0), nullopt when it overflows int64.
std::optional<int64_t> DimsProduct(const std::vector<int64_t>& dims);

// Element count of `t` from its dims: nullopt when a dim is negative or the
// product overflows int64.
std::optional<int64_t> ElementCount(const onnx::TensorProto& t);

// Bits per element of an ONNX element type (4 for INT4/UINT4, 0 for STRING
// and unknown types).
int ElementBits(int32_t elem_type);

// The values of an integer tensor (INT8…UINT64, BOOL) with at most
// `max_elements` elements stored inline; nullopt otherwise (external data,
// too many elements, a data count that disagrees with the dims).
std::optional<std::vector<int64_t>> DecodeInts(const onnx::TensorProto& t, int64_t max_elements);
// The values of a FLOAT/DOUBLE/FLOAT16 tensor likewise (for Resize scales).
std::optional<std::vector<double>> DecodeFloats(const onnx::TensorProto& t, int64_t max_elements);

// How many values the typed data fields of `t` hold (raw_data in elements;
// -1 when `t` has no inline data: empty, external, or a raw_data byte count
// that is not a whole number of elements). Used to reject tensors whose data
// count disagrees with their dims.
int64_t StoredElements(const onnx::TensorProto& t);

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_ONNX_TENSOR_DATA_H_
