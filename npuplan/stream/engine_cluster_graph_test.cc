#include "npuplan/stream/engine_cluster_graph.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "npuplan/support/big_vector.h"

namespace npuplan::stream {
namespace {

using engine_internal::ClusterGraph;

// ClusterGraph::BlockSizes restates which per-node arrays the constructor
// allocates (engine_partition.cc warms those blocks ahead). With exactly
// those blocks cached, the constructor takes no fresh block but its edge
// pool's, and leaves none of them cached: a member array added or dropped
// without BlockSizes following fails one of the two.
TEST(ClusterGraphTest, BlockSizesAreTheBlocksTheConstructorTakes) {
  for (int32_t n : {1 << 16, 1 << 20}) {
    SCOPED_TRACE(n);
    // A chain: one edge out of every node but the last.
    BigVector<int32_t> count_out(n, 1);
    count_out[n - 1] = 0;
    BigVector<int32_t> pred_first(n + 1);
    for (int32_t i = 0; i <= n; ++i) pred_first[i] = i == 0 ? 0 : i - 1;
    const size_t edges = static_cast<size_t>(n - 1);
    // The edge pool (both lists of every edge, reserved three times over).
    const size_t pool_bytes = sizeof(int32_t) * (3 * 2 * edges + 1024);
    const size_t pool_block =
        pool_bytes >= kHugeFromBytes ? HugePageAllocator<char>::Rounded(pool_bytes) : 0;

    ReleaseCachedHugePages();
    const std::vector<size_t> sizes = ClusterGraph::BlockSizes(n);
    ASSERT_FALSE(sizes.empty()) << "no array is large enough: the test checks nothing";
    std::vector<void*> blocks;
    for (size_t bytes : sizes) blocks.push_back(AllocateHugeBlock(bytes));
    for (size_t k = 0; k < sizes.size(); ++k) FreeHugeBlock(blocks[k], sizes[k]);

    const size_t fresh_before = HugePageFreshBytes();
    {
      ClusterGraph graph(n, count_out, pred_first);
      EXPECT_EQ(HugePageFreshBytes() - fresh_before, pool_block);
      EXPECT_EQ(ReleaseCachedHugePages(), 0u)
          << "BlockSizes lists a block the constructor does not take";
    }
    ReleaseCachedHugePages();
  }
}

}  // namespace
}  // namespace npuplan::stream
