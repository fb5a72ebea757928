#include "npuplan/stream/update_for_skipped_engine_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/assign_by_dependency_pass.h"
#include "npuplan/stream/node_stream_update_pass.h"
#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::PassHarness;

// A(s0) → Const(s1) → B(s0): the Const moves onto s0. The control edge A → B
// keeps A and B in separate subgraphs and makes A's same-engine consumer B
// block the Const's reuse of A's stream.
TEST(UpdateForSkippedEnginePassTest, MovesSandwichedConstOntoItsNeighboursStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "A", "type": "Relu"},
    {"name": "K", "type": "Const", "control_inputs": ["A"]},
    {"name": "B", "type": "Relu", "inputs": ["K"], "control_inputs": ["A"]}]})json"));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  ASSERT_TRUE(h->Run<NodeStreamUpdatePass>().ok());
  EXPECT_EQ(h->node("A").stream_id, 0);
  EXPECT_EQ(h->node("K").stream_id, 1);
  EXPECT_EQ(h->node("B").stream_id, 0);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<UpdateForSkippedEnginePass>());
  EXPECT_TRUE(changed);
  EXPECT_EQ(h->node("K").stream_id, 0);
  EXPECT_EQ(h->log.WithKeyword("SkippedEngineMoved").size(), 1u);
}

TEST(UpdateForSkippedEnginePassTest, NodeWithoutAssignedProducerLosesItsStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "w", "type": "Const"},
    {"name": "a", "type": "Conv2D", "inputs": ["x", "w"]},
    {"name": "b", "type": "Op", "engine": "VectorEngine", "inputs": ["x"]},
    {"name": "out", "type": "NetOutput", "inputs": ["a", "b"]}]})json"));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  ASSERT_TRUE(h->Run<NodeStreamUpdatePass>().ok());
  ASSERT_TRUE(h->Run<UpdateForSkippedEnginePass>().ok());
  EXPECT_EQ(h->node("x").stream_id, -1);
  EXPECT_EQ(h->node("w").stream_id, -1);
  EXPECT_NE(h->node("out").stream_id, -1);  // producers on two streams: stays
}

TEST(UpdateForSkippedEnginePassTest, LabelledSkippedNodeStays) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "w", "type": "Const", "attrs": {"_stream_label": "L"}}]})json"));
  h->mutable_node("w").stream_id = 3;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<UpdateForSkippedEnginePass>());
  EXPECT_FALSE(changed);
  EXPECT_EQ(h->node("w").stream_id, 3);
}

}  // namespace
}  // namespace npuplan::stream
