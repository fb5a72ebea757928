#include "npuplan/stream/refresh_continuous_streams.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/ir/verifier.h"
#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::ParseStreamTestGraph;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

TEST(RefreshContinuousStreamsTest, CompactsIdsInAscendingOrderOverAllGraphs) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({
    "nodes": [{"name": "a", "type": "Relu"}, {"name": "b", "type": "Relu"},
              {"name": "call", "type": "PartitionedCall", "subgraphs": ["sub"]}],
    "subgraphs": [{"name": "sub", "parent": "call", "nodes": [{"name": "c", "type": "Relu"}]}]})json"));
  m.node(m.FindNode("a")).stream_id = 5;
  m.node(m.FindNode("b")).stream_id = 2;
  m.node(m.FindNode("call")).stream_id = -1;
  m.node(m.FindNode("c")).stream_id = 9;
  EXPECT_THAT(VerifyStreamIdsContinuous(m), StatusIs(absl::StatusCode::kInternal, "not continuous"));
  DecisionLog log(true);
  EXPECT_EQ(RefreshContinuousStreams::Run(m, 10, &log), 3);
  EXPECT_EQ(m.node(m.FindNode("b")).stream_id, 0);
  EXPECT_EQ(m.node(m.FindNode("a")).stream_id, 1);
  EXPECT_EQ(m.node(m.FindNode("c")).stream_id, 2);
  EXPECT_EQ(m.node(m.FindNode("call")).stream_id, -1);
  EXPECT_THAT(VerifyStreamIdsContinuous(m), IsOk());
  EXPECT_EQ(log.WithKeyword("StreamsRenumbered").size(), 1u);
}

}  // namespace
}  // namespace npuplan::stream
