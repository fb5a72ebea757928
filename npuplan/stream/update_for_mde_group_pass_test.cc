#include "npuplan/stream/update_for_mde_group_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::PassHarness;
using ::npuplan::stream::testing::StreamOf;

constexpr char kMde[] = R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"NewStreamId": 1}},
    {"name": "b", "type": "Relu", "inputs": ["a"], "attrs": {"NewStreamId": 2}},
    {"name": "c", "type": "Relu", "inputs": ["b"], "attrs": {"NewStreamId": 1}},
    {"name": "d", "type": "Relu", "inputs": ["c"], "attrs": {"NewStreamId": 3, "_parallel_group": "g"}}]})json";

TEST(UpdateForMdeGroupPassTest, BurnsOneIdPerDistinctNewStreamIdPerStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(kMde));
  ASSERT_TRUE(h->Run<UpdateForMdeGroupPass>().ok());
  EXPECT_EQ(h->node("a").stream_id, 0);
  EXPECT_EQ(h->node("b").stream_id, 1);
  EXPECT_EQ(h->node("c").stream_id, 0);
  EXPECT_EQ(h->node("d").stream_id, -1);  // parallel group: not an MDE node
  EXPECT_EQ(h->ctx->next_stream, 2);
}

TEST(UpdateForMdeGroupPassTest, NodeStreamUpdateOverwritesAndRefreshCompacts) {
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kMde, {}, &log));
  // a, b, c share the subgraph stream (block after the 2 burned ids), d its
  // parallel-group stream; the burned ids leave no hole.
  EXPECT_EQ(StreamOf(plan, "a"), 0);
  EXPECT_EQ(StreamOf(plan, "b"), 0);
  EXPECT_EQ(StreamOf(plan, "c"), 0);
  EXPECT_EQ(StreamOf(plan, "d"), 1);
  EXPECT_EQ(plan.streams.logical, 2);
  EXPECT_EQ(log.WithKeyword("MdeStreamId").size(), 3u);
}

}  // namespace
}  // namespace npuplan::stream
