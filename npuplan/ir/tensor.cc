#include "npuplan/ir/tensor.h"

#include <array>
#include <utility>

#include "npuplan/support/checked_math.h"

namespace npuplan {
namespace {

// Bits of one element of `dtype` ("float16" 16, "int4" 4, …); nullopt if
// unknown. Sub-byte types (int4, uint4) are packed, so a tensor's byte size
// rounds its total bits up (ByteSize) and one element's is one byte (DTypeSize).
std::optional<int64_t> DTypeBits(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, int64_t>, 23> kBits = {{
      {"bool", 8},          {"int8", 8},            {"uint8", 8},          {"int16", 16},
      {"uint16", 16},       {"float16", 16},        {"bfloat16", 16},      {"int32", 32},
      {"uint32", 32},       {"float32", 32},        {"int64", 64},         {"uint64", 64},
      {"float64", 64},      {"double", 64},         {"complex64", 64},     {"complex128", 128},
      {"string", 64},       {"float8e4m3fn", 8},    {"float8e4m3fnuz", 8}, {"float8e5m2", 8},
      {"float8e5m2fnuz", 8}, {"int4", 4},           {"uint4", 4},
  }};
  for (const auto& [name, bits] : kBits) {
    if (name == dtype) return bits;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> DTypeSize(std::string_view dtype) {
  auto bits = DTypeBits(dtype);
  if (!bits) return std::nullopt;
  return (*bits + 7) / 8;
}

bool TensorDesc::IsDynamic() const {
  for (int64_t d : shape) {
    if (d < 0) return true;
  }
  return false;
}

// Dims come from input files: the products are checked (nullopt on overflow).
std::optional<int64_t> TensorDesc::NumElements() const {
  CheckedProduct<> n;
  for (int64_t d : shape) {
    if (d < 0 || !n.Mul(d)) return std::nullopt;
  }
  return n.value();
}

std::optional<int64_t> TensorDesc::ByteSize() const {
  auto n = NumElements();
  auto bits = DTypeBits(dtype);
  if (!n || !bits) return std::nullopt;
  if (*bits % 8 == 0) return CheckedMul(*n, *bits / 8);
  // Sub-byte types (int4, uint4) are packed, the last byte padded.
  std::optional<int64_t> total_bits = CheckedMul(*n, *bits);
  if (!total_bits) return std::nullopt;
  return *total_bits / 8 + (*total_bits % 8 != 0);
}

}  // namespace npuplan
