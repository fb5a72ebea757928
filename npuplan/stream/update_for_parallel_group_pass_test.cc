#include "npuplan/stream/update_for_parallel_group_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::StreamOf;

TEST(UpdateForParallelGroupPassTest, GivesEachGroupANewStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "d", "type": "Relu"},
    {"name": "a", "type": "Relu", "attrs": {"_parallel_group": "g1"}},
    {"name": "b", "type": "Relu", "attrs": {"_parallel_group": "g1"}},
    {"name": "c", "type": "Relu", "attrs": {"_parallel_group": "g2"}},
    {"name": "u", "type": "Relu", "attrs": {"_parallel_group": "g2", "_user_stream_label": "U"}}]})json"));
  EXPECT_EQ(StreamOf(plan, "d"), 1);  // AIcore block after the label stream of u
  EXPECT_EQ(StreamOf(plan, "a"), 2);
  EXPECT_EQ(StreamOf(plan, "b"), 2);
  EXPECT_EQ(StreamOf(plan, "c"), 3);
  EXPECT_EQ(StreamOf(plan, "u"), 0);  // a user label wins over the group
}

TEST(UpdateForParallelGroupPassTest, HcomGroupMinusOneAdoptsInputStream) {
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "x", "type": "Relu"},
    {"name": "h", "type": "HcomAllReduce", "inputs": ["x"], "attrs": {"_parallel_group": "-1"}},
    {"name": "y", "type": "Relu"}]})json", {}, &log));
  EXPECT_EQ(StreamOf(plan, "h"), StreamOf(plan, "x"));
  EXPECT_EQ(log.WithKeyword("HcomAdoptsInputStream").size(), 1u);
}

// GE's UpdateForParallelGroupPass checks no node type for group "-1": a
// compute node with one data input adopts its producer's stream as an HCCL
// node does (ge-reference §2.3).
TEST(UpdateForParallelGroupPassTest, AnyNodeOfGroupMinusOneAdoptsInputStream) {
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "x", "type": "Relu"},
    {"name": "v", "type": "Op", "engine": "VectorEngine", "inputs": ["x"], "attrs": {"_parallel_group": "-1"}},
    {"name": "y", "type": "Relu"}]})json", {}, &log));
  EXPECT_EQ(StreamOf(plan, "v"), StreamOf(plan, "x"));
  EXPECT_EQ(plan.streams.logical, 1);
  EXPECT_EQ(log.WithKeyword("HcomAdoptsInputStream").size(), 1u);
  EXPECT_TRUE(log.WithKeyword("ParallelGroupStream").empty());
}

// With two data inputs there is no single producer: group "-1" is an ordinary
// group name and gets a new stream.
TEST(UpdateForParallelGroupPassTest, GroupMinusOneWithTwoInputsGetsANewStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "x", "type": "Relu"},
    {"name": "v", "type": "Op", "engine": "VectorEngine", "inputs": ["x", "x"], "attrs": {"_parallel_group": "-1"}}]})json"));
  EXPECT_NE(StreamOf(plan, "v"), StreamOf(plan, "x"));
}

TEST(UpdateForParallelGroupPassTest, GroupsAreKeyedPerOriginalStream) {
  // g on two different streams: two new streams.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_parallel_group": "g"}},
    {"name": "v", "type": "Op", "engine": "VectorEngine", "attrs": {"_parallel_group": "g"}}]})json"));
  EXPECT_NE(StreamOf(plan, "a"), StreamOf(plan, "v"));
  EXPECT_EQ(plan.streams.logical, 2);
}

}  // namespace
}  // namespace npuplan::stream
