#include "npuplan/stream/node_stream_update_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/assign_by_dependency_pass.h"
#include "npuplan/stream/independent_stream_pass.h"
#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::PassHarness;
using ::npuplan::testing::StatusIs;

TEST(NodeStreamUpdatePassTest, CopiesSubgraphStreamsToNodes) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "b", "type": "Relu", "inputs": ["a"]},
    {"name": "hc", "type": "HcomAllReduce", "inputs": ["b"]},
    {"name": "lbl", "type": "LabelSet", "inputs": ["hc"], "attrs": {"_rts_label_node": true}}]})json"));
  ASSERT_TRUE(h->Run<IndependentStreamPass>().ok());
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  ASSERT_TRUE(h->Run<NodeStreamUpdatePass>().ok());
  EXPECT_EQ(h->node("hc").stream_id, 0);
  EXPECT_EQ(h->node("a").stream_id, 1);
  EXPECT_EQ(h->node("b").stream_id, 1);
  EXPECT_EQ(h->node("lbl").stream_id, 0);  // root graph: default stream 0
  EXPECT_EQ(h->log.WithKeyword("RtsLabelNodeOnDefault").size(), 1u);
}

TEST(NodeStreamUpdatePassTest, RtsLabelNodeGoesToParentStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "lbl", "type": "LabelSet", "inputs": ["a"], "attrs": {"_rts_label_node": true}}]})json"));
  h->gs.default_stream = 7;
  h->ctx->next_stream = 8;  // the parent graph used 0..7
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  ASSERT_TRUE(h->Run<NodeStreamUpdatePass>().ok());
  EXPECT_EQ(h->node("lbl").stream_id, 7);
}

TEST(NodeStreamUpdatePassTest, FailsOnUnassignedTaskSubgraph) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [{"name": "a", "type": "Relu"}]})json"));
  EXPECT_THAT(h->Run<NodeStreamUpdatePass>(), StatusIs(absl::StatusCode::kInternal, "has no stream"));
}

}  // namespace
}  // namespace npuplan::stream
