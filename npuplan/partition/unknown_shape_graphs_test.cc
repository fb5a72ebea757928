#include "npuplan/partition/unknown_shape_graphs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/partition/partition_test_util.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::partition {
namespace {

using ::npuplan::partition::testing::GraphBuilder;
using ::npuplan::partition::testing::RunPartition;

// x → d (unknown) and a static chain: the root is cut into a known and an
// unknown subgraph.
std::string PartitionedGraph() {
  GraphBuilder b;
  b.Data("x").Unk("d", {"x"});
  std::string prev = "x";
  for (int i = 1; i <= 4; ++i) {
    b.Op(StrCat("k", i), {prev});
    prev = StrCat("k", i);
  }
  b.Output({"d", prev});
  return b.Json();
}

TEST(UnknownShapeGraphsTest, ThePartitionStoresTheFactForEveryGraph) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(PartitionedGraph()));
  const Plan& plan = run->plan;
  ASSERT_EQ(plan.partition.decision, PartitionDecision::kPartitioned);
  ASSERT_EQ(plan.partition.unknown_shape_graphs.size(), plan.model.num_graphs());
  EXPECT_EQ(plan.partition.unknown_shape_graphs, ComputeUnknownShapeGraphs(plan));
  EXPECT_TRUE(plan.partition.unknown_shape_graphs[kRootGraph.index()]);
  for (const PartitionSubgraph& sg : plan.partition.subgraphs) {
    const GraphId g = plan.model.FindGraph(sg.name);
    EXPECT_EQ(plan.partition.unknown_shape_graphs[g.index()], sg.kind != SubgraphKind::kKnown)
        << sg.name;
  }
}

// Later stages read the stored fact, not a recomputation: a changed stored
// value is what they see.
TEST(UnknownShapeGraphsTest, ReadersTakeTheStoredFact) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(PartitionedGraph()));
  Plan& plan = run->plan;
  const std::vector<bool> computed = ComputeUnknownShapeGraphs(plan);
  plan.partition.unknown_shape_graphs.flip();
  EXPECT_NE(UnknownShapeGraphs(plan), computed);
  EXPECT_EQ(IsUnknownShapeGraph(plan, kRootGraph), !computed[kRootGraph.index()]);
}

// Without the stored fact (a plan read from a file, a hand-made plan) the
// rule is applied on the spot.
TEST(UnknownShapeGraphsTest, ComputesTheFactWhenThePartitionDidNotStoreIt) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(PartitionedGraph()));
  Plan& plan = run->plan;
  const std::vector<bool> stored = plan.partition.unknown_shape_graphs;
  plan.partition.unknown_shape_graphs.clear();
  EXPECT_EQ(UnknownShapeGraphs(plan), stored);
  EXPECT_TRUE(IsUnknownShapeGraph(plan, kRootGraph));
}

}  // namespace
}  // namespace npuplan::partition
