#include "npuplan/ir/tensor.h"

#include <gtest/gtest.h>

namespace npuplan {
namespace {

// Shape products are formed from input dims: checked, never wrapped.
TEST(TensorTest, ProductsOfDimsAreChecked) {
  EXPECT_EQ((TensorDesc{{2, 3, 4}, "float16"}).NumElements(), 24);
  EXPECT_EQ((TensorDesc{{2, 3, 4}, "float16"}).ByteSize(), 48);
  EXPECT_EQ((TensorDesc{{}, "int64"}).ByteSize(), 8);  // a scalar
  EXPECT_EQ((TensorDesc{{0, int64_t{1} << 62}, "float32"}).ByteSize(), 0);
  // 2^32 * 2^32 elements, and 2^62 elements of 4 bytes: beyond int64.
  EXPECT_EQ((TensorDesc{{int64_t{1} << 32, int64_t{1} << 32}, "int8"}).NumElements(), std::nullopt);
  EXPECT_EQ((TensorDesc{{int64_t{1} << 62}, "float32"}).NumElements(), int64_t{1} << 62);
  EXPECT_EQ((TensorDesc{{int64_t{1} << 62}, "float32"}).ByteSize(), std::nullopt);
  EXPECT_EQ((TensorDesc{{INT64_MAX}, "int8"}).ByteSize(), INT64_MAX);
  EXPECT_EQ((TensorDesc{{-1, 4}, "int8"}).ByteSize(), std::nullopt);  // dynamic
}

}  // namespace
}  // namespace npuplan
