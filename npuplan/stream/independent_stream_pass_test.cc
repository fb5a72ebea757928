#include "npuplan/stream/independent_stream_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/assign_by_label_pass.h"
#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::PassHarness;

// GE UT test_independent_switch_label.
TEST(IndependentStreamPassTest, IndependentEngineOverridesInnerLabels) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_stream_label": "label1"}},
    {"name": "h1", "type": "HcomAllReduce", "attrs": {"_stream_label": "label1"}},
    {"name": "b", "type": "Relu", "attrs": {"_stream_label": "label2"}},
    {"name": "h2", "type": "HcomAllReduce", "attrs": {"_stream_label": "label2"}},
    {"name": "h3", "type": "HcomAllGather", "attrs": {"_stream_label": "label2"}}]})json"));
  ASSERT_TRUE(h->Run<AssignByLabelPass>().ok());
  ASSERT_TRUE(h->Run<IndependentStreamPass>().ok());
  EXPECT_EQ(h->SubgraphStream("a"), 0);
  EXPECT_EQ(h->SubgraphStream("b"), 1);
  EXPECT_EQ(h->SubgraphStream("h1"), 2);
  EXPECT_EQ(h->SubgraphStream("h2"), 3);
  EXPECT_EQ(h->SubgraphStream("h3"), 3);  // same (engine, label)
}

// GE UT test_user_stream_label_over_independent.
TEST(IndependentStreamPassTest, UserLabelBeatsIndependence) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_user_stream_label": "U"}},
    {"name": "h1", "type": "HcomAllReduce", "inputs": ["a"], "attrs": {"_user_stream_label": "U"}},
    {"name": "h2", "type": "HcomAllReduce"}]})json"));
  ASSERT_TRUE(h->Run<AssignByLabelPass>().ok());
  ASSERT_TRUE(h->Run<IndependentStreamPass>().ok());
  EXPECT_EQ(h->SubgraphStream("a"), 0);
  EXPECT_EQ(h->SubgraphStream("h1"), 0);
  EXPECT_EQ(h->SubgraphStream("h2"), 1);
}

TEST(IndependentStreamPassTest, NotChangedWithoutIndependentEngine) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [{"name": "a", "type": "Relu"}]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<IndependentStreamPass>());
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace npuplan::stream
