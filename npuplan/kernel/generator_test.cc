#include "npuplan/kernel/generator.h"

#include <climits>

#include <gtest/gtest.h>

#include "npuplan/testing/status_matchers.h"

namespace npuplan::kernel {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// Issue #19: what `kernel gen` writes, the kernel reader accepts. Sizes whose
// node count exceeds the reader's limit are refused before anything is
// allocated (--m/--n/--k 100000 ended in bad_alloc).
TEST(KernelGeneratorTest, RefusesSizesBeyondTheNodeLimit) {
  GeneratorOptions o;
  o.m = o.n = o.k = 100000;  // 10^10 * (7 * 10^5 + 3) + 6 * 10^10 nodes
  EXPECT_THAT(GenerateKernelGraph(o, CacheConfig{}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "generator: the sizes give up to 7000090000000000 nodes, more than a kernel "
                       "case may have (1048576)"));
  GeneratorOptions fa;
  fa.kind = GraphKind::kFlashAttention;
  fa.seq = 200;  // 45 * 200^2 + 20 * 200
  EXPECT_THAT(GenerateKernelGraph(fa, CacheConfig{}),
              StatusIs(absl::StatusCode::kInvalidArgument, "up to 1804000 nodes"));
}

// The count is a checked product of the sizes: int32 sizes whose product is
// beyond int64 must not wrap into a small count that passes the limit.
TEST(KernelGeneratorTest, RefusesSizesWhoseNodeCountOverflows) {
  GeneratorOptions mm;
  mm.m = mm.n = mm.k = INT_MAX;
  GeneratorOptions conv;
  conv.kind = GraphKind::kConv;
  conv.layers = conv.width = INT_MAX;  // 26 * (2^31 - 1)^2 > 2^63
  for (const GeneratorOptions& o : {mm, conv}) {
    EXPECT_THAT(GenerateKernelGraph(o, CacheConfig{}),
                StatusIs(absl::StatusCode::kInvalidArgument, "up to more than 2^63 nodes"));
  }
}

// The bound is an upper bound of what is built (GenerateKernelGraph fails
// with an internal error otherwise), for uneven shapes of every kind.
TEST(KernelGeneratorTest, SmallSizesStayWithinTheirBound) {
  for (GeneratorOptions o :
       {GeneratorOptions{GraphKind::kMatmul, 1, 1, 1},
        GeneratorOptions{GraphKind::kMatmul, 3, 1, 5},
        GeneratorOptions{GraphKind::kMatmul, 2, 7, 1}, GeneratorOptions{GraphKind::kFlashAttention},
        GeneratorOptions{GraphKind::kConv, 1, 1, 1, 1, 1, 1},
        GeneratorOptions{GraphKind::kConv, 1, 1, 1, 1, 5, 2}}) {
    o.seq = o.kind == GraphKind::kFlashAttention ? 3 : o.seq;
    EXPECT_THAT(GenerateKernelGraph(o, CacheConfig{}), IsOk());
  }
}

}  // namespace
}  // namespace npuplan::kernel
