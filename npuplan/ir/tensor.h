// Tensor descriptions: shape (-1 = unknown dim, [-2] = unknown rank) and dtype.
#ifndef NPUPLAN_IR_TENSOR_H_
#define NPUPLAN_IR_TENSOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npuplan {

inline constexpr int64_t kUnknownDim = -1;
inline constexpr int64_t kUnknownRank = -2;

// Size in bytes of one element of `dtype` ("float16", "int32", …); nullopt if unknown.
std::optional<int64_t> DTypeSize(std::string_view dtype);

struct TensorDesc {
  std::vector<int64_t> shape;  // [] = scalar
  std::string dtype = "float32";

  // True when a dim is -1 or the rank is unknown (-2).
  bool IsDynamic() const;
  // Element count, or nullopt when dynamic or overflowing int64.
  std::optional<int64_t> NumElements() const;
  // Bytes (elements × dtype size), or nullopt when dynamic, unknown dtype or overflow.
  std::optional<int64_t> ByteSize() const;

  friend bool operator==(const TensorDesc&, const TensorDesc&) = default;
};

}  // namespace npuplan

#endif  // NPUPLAN_IR_TENSOR_H_
