#include "npuplan/importers/onnx_tensor_data.h"

#include <cmath>
#include <cstring>

namespace npuplan::onnx_import {
namespace {

using TP = onnx::TensorProto;

bool IsSignedInt(int32_t t) {
  return t == TP::INT8 || t == TP::INT16 || t == TP::INT32 || t == TP::INT64 || t == 22 /*INT4*/;
}

// Little-endian unsigned value of `width` bytes at `p`.
uint64_t LoadLe(const char* p, int width) {
  uint64_t bits = 0;
  for (int b = 0; b < width; ++b) bits |= static_cast<uint64_t>(static_cast<uint8_t>(p[b])) << (8 * b);
  return bits;
}

int64_t SignExtend(uint64_t bits, int width_bits) {
  if (width_bits >= 64) return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (width_bits - 1);
  bits &= (uint64_t{1} << width_bits) - 1;
  return static_cast<int64_t>((bits ^ sign) - sign);
}

double HalfToDouble(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(mant, -24) : exp == 31 ? (mant ? NAN : INFINITY) : std::ldexp(mant + 1024, exp - 25);
  return (h & 0x8000) ? -v : v;
}

}  // namespace

std::optional<int64_t> DimsProduct(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    auto next = CheckedMul(p, d);
    if (!next) return std::nullopt;
    p = *next;
  }
  return p;
}

std::optional<int64_t> ElementCount(const onnx::TensorProto& t) {
  int64_t p = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return std::nullopt;
    auto next = CheckedMul(p, d);
    if (!next) return std::nullopt;
    p = *next;
  }
  return p;
}

int ElementBits(int32_t elem_type) {
  switch (elem_type) {
    case TP::BOOL: case TP::INT8: case TP::UINT8: return 8;
    case 17: case 18: case 19: case 20: return 8;  // FLOAT8E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ
    case 21: case 22: return 4;                    // UINT4, INT4
    case TP::INT16: case TP::UINT16: case TP::FLOAT16: case TP::BFLOAT16: return 16;
    case TP::INT32: case TP::UINT32: case TP::FLOAT: return 32;
    case TP::INT64: case TP::UINT64: case TP::DOUBLE: case TP::COMPLEX64: return 64;
    case TP::COMPLEX128: return 128;
    default: return 0;
  }
}

int64_t StoredElements(const onnx::TensorProto& t) {
  if (t.data_location() == TP::EXTERNAL) return -1;
  const int32_t type = t.data_type();
  if (t.has_raw_data()) {
    const int bits = ElementBits(type);
    if (bits == 0) return -1;
    const int64_t bytes = static_cast<int64_t>(t.raw_data().size());
    if (bits == 4) return bytes * 2;  // two per byte; an odd count leaves half a byte unused
    if ((bytes * 8) % bits != 0) return -1;
    return bytes * 8 / bits;
  }
  switch (type) {
    case TP::FLOAT: return t.float_data_size();
    case TP::COMPLEX64: return t.float_data_size() / 2;
    case TP::DOUBLE: return t.double_data_size();
    case TP::COMPLEX128: return t.double_data_size() / 2;
    case TP::INT64: return t.int64_data_size();
    case TP::UINT32: case TP::UINT64: return t.uint64_data_size();
    case TP::STRING: return t.string_data_size();
    case 21: case 22: return t.int32_data_size() * 2;  // packed pairs
    default: return t.int32_data_size();
  }
}

std::optional<std::vector<int64_t>> DecodeInts(const onnx::TensorProto& t, int64_t max_elements) {
  const int32_t type = t.data_type();
  const int bits = ElementBits(type);
  const bool integral = type == TP::INT8 || type == TP::UINT8 || type == TP::INT16 || type == TP::UINT16 ||
                        type == TP::INT32 || type == TP::UINT32 || type == TP::INT64 || type == TP::UINT64 ||
                        type == TP::BOOL;
  if (!integral || t.data_location() == TP::EXTERNAL) return std::nullopt;
  auto n = ElementCount(t);
  if (!n || *n > max_elements) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(*n));
  if (t.has_raw_data()) {
    const int width = bits / 8;
    if (static_cast<int64_t>(t.raw_data().size()) != *n * width) return std::nullopt;
    for (int64_t i = 0; i < *n; ++i) {
      uint64_t v = LoadLe(t.raw_data().data() + i * width, width);
      out.push_back(IsSignedInt(type) ? SignExtend(v, bits) : static_cast<int64_t>(v));
    }
  } else if (type == TP::INT64) {
    out.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (type == TP::UINT32 || type == TP::UINT64) {
    for (uint64_t v : t.uint64_data()) out.push_back(static_cast<int64_t>(v));
  } else {
    out.assign(t.int32_data().begin(), t.int32_data().end());
  }
  if (static_cast<int64_t>(out.size()) != *n) return std::nullopt;
  return out;
}

std::optional<std::vector<double>> DecodeFloats(const onnx::TensorProto& t, int64_t max_elements) {
  const int32_t type = t.data_type();
  if ((type != TP::FLOAT && type != TP::DOUBLE && type != TP::FLOAT16) || t.data_location() == TP::EXTERNAL) {
    return std::nullopt;
  }
  auto n = ElementCount(t);
  if (!n || *n > max_elements) return std::nullopt;
  std::vector<double> out;
  const int width = ElementBits(type) / 8;
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != *n * width) return std::nullopt;
    for (int64_t i = 0; i < *n; ++i) {
      uint64_t bits = LoadLe(t.raw_data().data() + i * width, width);
      if (type == TP::FLOAT16) {
        out.push_back(HalfToDouble(static_cast<uint16_t>(bits)));
      } else if (type == TP::FLOAT) {
        float f;
        uint32_t b32 = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b32, sizeof f);
        out.push_back(f);
      } else {
        double d;
        std::memcpy(&d, &bits, sizeof d);
        out.push_back(d);
      }
    }
  } else if (type == TP::FLOAT) {
    out.assign(t.float_data().begin(), t.float_data().end());
  } else if (type == TP::DOUBLE) {
    out.assign(t.double_data().begin(), t.double_data().end());
  } else {
    for (int32_t v : t.int32_data()) out.push_back(HalfToDouble(static_cast<uint16_t>(v)));
  }
  if (static_cast<int64_t>(out.size()) != *n) return std::nullopt;
  return out;
}

}  // namespace npuplan::onnx_import
