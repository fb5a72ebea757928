#include "npuplan/ir/tensor.h"

#include <array>
#include <utility>

namespace npuplan {

std::optional<int64_t> DTypeSize(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, int64_t>, 17> kSizes = {{
      {"bool", 1},    {"int8", 1},    {"uint8", 1},     {"int16", 2},   {"uint16", 2},
      {"float16", 2}, {"bfloat16", 2}, {"int32", 4},    {"uint32", 4},  {"float32", 4},
      {"int64", 8},   {"uint64", 8},  {"float64", 8},   {"double", 8},  {"complex64", 8},
      {"complex128", 16}, {"string", 8},
  }};
  for (const auto& [name, size] : kSizes) {
    if (name == dtype) return size;
  }
  return std::nullopt;
}

bool TensorDesc::IsDynamic() const {
  for (int64_t d : shape) {
    if (d < 0) return true;
  }
  return false;
}

std::optional<int64_t> TensorDesc::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

std::optional<int64_t> TensorDesc::ByteSize() const {
  auto n = NumElements();
  auto s = DTypeSize(dtype);
  if (!n || !s) return std::nullopt;
  int64_t bytes;
  if (__builtin_mul_overflow(*n, *s, &bytes)) return std::nullopt;
  return bytes;
}

}  // namespace npuplan
