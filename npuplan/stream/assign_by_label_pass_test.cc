#include "npuplan/stream/assign_by_label_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::PassHarness;
using ::npuplan::stream::testing::StreamOf;

TEST(AssignByLabelPassTest, SharesOneStreamPerLabelAcrossEngines) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_stream_label": "L1"}},
    {"name": "b", "type": "TopK", "attrs": {"_stream_label": "L2"}},
    {"name": "c", "type": "Op", "engine": "VectorEngine", "attrs": {"_stream_label": "L1"}},
    {"name": "d", "type": "Relu"}]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<AssignByLabelPass>());
  EXPECT_TRUE(changed);
  EXPECT_EQ(h->SubgraphStream("a"), 0);
  EXPECT_EQ(h->SubgraphStream("b"), 1);
  EXPECT_EQ(h->SubgraphStream("c"), 0);
  EXPECT_EQ(h->SubgraphStream("d"), -1);
  EXPECT_EQ(h->ctx->next_stream, 2);
}

TEST(AssignByLabelPassTest, ReportsNotChangedWithoutLabels) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [{"name": "a", "type": "Relu"}]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<AssignByLabelPass>());
  EXPECT_FALSE(changed);
}

// GE system test: data → trans1(U) → relu → trans2(U) → output.
TEST(AssignByLabelPassTest, UserLabelSharesStreamAroundUnlabelledNode) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "data", "type": "Data"},
    {"name": "trans1", "type": "TransData", "inputs": ["data"], "attrs": {"_user_stream_label": "U"}},
    {"name": "relu", "type": "Relu", "inputs": ["trans1"]},
    {"name": "trans2", "type": "TransData", "inputs": ["relu"], "attrs": {"_user_stream_label": "U"}},
    {"name": "output", "type": "NetOutput", "inputs": ["trans2"]}]})json"));
  EXPECT_EQ(StreamOf(plan, "trans1"), StreamOf(plan, "trans2"));
  EXPECT_NE(StreamOf(plan, "relu"), StreamOf(plan, "trans1"));
  EXPECT_EQ(plan.streams.streams[StreamOf(plan, "trans1")].user_label, "U");
}

// GE's TransUserStreamLabel copies `_user_stream_label` into `_stream_label`
// before the engine partitioner clears the user label of Data-like inputs, so
// a labelled Data node joins its label's stream (ge-reference §2.7).
TEST(AssignByLabelPassTest, UserLabelledDataJoinsItsLabelStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "data", "type": "Data", "attrs": {"_user_stream_label": "U"}},
    {"name": "relu", "type": "Relu", "inputs": ["data"]},
    {"name": "trans", "type": "TransData", "inputs": ["relu"], "attrs": {"_user_stream_label": "U"}},
    {"name": "output", "type": "NetOutput", "inputs": ["trans"]}]})json"));
  EXPECT_NE(StreamOf(plan, "data"), -1);
  EXPECT_EQ(StreamOf(plan, "data"), StreamOf(plan, "trans"));
  EXPECT_NE(StreamOf(plan, "relu"), StreamOf(plan, "trans"));
}

TEST(AssignByLabelPassTest, LabelsAreNotSharedAcrossGraphs) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({
    "nodes": [{"name": "a", "type": "Relu", "attrs": {"_stream_label": "L"}},
              {"name": "call", "type": "PartitionedCall", "inputs": ["a"], "subgraphs": ["sub"]}],
    "subgraphs": [{"name": "sub", "parent": "call", "nodes": [
      {"name": "d", "type": "Data", "attrs": {"_parent_node_index": 0}},
      {"name": "b", "type": "Relu", "inputs": ["d"], "attrs": {"_stream_label": "L"}}]}]})json"));
  EXPECT_NE(StreamOf(plan, "a"), StreamOf(plan, "b"));
}

}  // namespace
}  // namespace npuplan::stream
