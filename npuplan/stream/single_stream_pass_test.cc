#include "npuplan/stream/single_stream_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::StreamOf;
using ::npuplan::testing::StatusIs;

constexpr char kParallel[] = R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "a", "type": "Relu", "inputs": ["x"]},
    {"name": "h", "type": "HcomAllReduce", "inputs": ["x"]},
    {"name": "v", "type": "Op", "engine": "VectorEngine", "inputs": ["x"]},
    {"name": "out", "type": "NetOutput", "inputs": ["a", "h", "v"]}]})json";

TEST(SingleStreamPassTest, PutsEveryNodeOnOneStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kParallel, {{"ge.enableSingleStream", "true"}}));
  EXPECT_EQ(plan.streams.logical, 1);
  EXPECT_EQ(plan.streams.mode, "single");
  for (const char* n : {"a", "h", "v", "out"}) EXPECT_EQ(StreamOf(plan, n), 0) << n;
  EXPECT_EQ(StreamOf(plan, "x"), -1);  // skipped engine, no producer
}

TEST(SingleStreamPassTest, MultiStreamGivesSeveralStreams) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kParallel));
  EXPECT_EQ(plan.streams.logical, 3);
}

TEST(SingleStreamPassTest, RejectsStreamLabelWithE10055) {
  EXPECT_THAT(CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu", "attrs": {"_stream_label": "L"}}]})json",
                             {{"ge.enableSingleStream", "true"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "E10055"));
  EXPECT_THAT(CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu", "attrs": {"_user_stream_label": "U"}}]})json",
                             {{"ge.enableSingleStream", "true"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "conflicts with stream label 'U'"));
}

TEST(SingleStreamPassTest, ChecksAutoMultistreamConflictFirst) {
  const std::string msg =
      "E10056: Cannot configure both parameters ge.autoMultistreamParallelMode and ge.enableSingleStream "
      "simultaneously.";
  EXPECT_THAT(CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu", "attrs": {"_stream_label": "L"}}]})json",
                             {{"ge.enableSingleStream", "true"}, {"ge.autoMultistreamParallelMode", "LoadBalance:4"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, msg));
  EXPECT_THAT(CompileStreams(R"json({"attrs": {"ge.autoMultistreamParallelMode": "cv"},
                                     "nodes": [{"name": "a", "type": "Relu"}]})json",
                             {{"ge.enableSingleStream", "true"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, msg));
}

TEST(SingleStreamPassTest, SubgraphUsesParentStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({
    "nodes": [{"name": "a", "type": "Relu"},
              {"name": "call", "type": "PartitionedCall", "inputs": ["a"], "subgraphs": ["sub"]}],
    "subgraphs": [{"name": "sub", "parent": "call", "nodes": [
      {"name": "d", "type": "Data", "attrs": {"_parent_node_index": 0}},
      {"name": "b", "type": "Relu", "inputs": ["d"]},
      {"name": "h", "type": "HcomAllReduce", "inputs": ["d"]}]}]})json", {{"ge.enableSingleStream", "true"}}));
  EXPECT_EQ(plan.streams.logical, 1);
  EXPECT_EQ(StreamOf(plan, "b"), 0);
  EXPECT_EQ(StreamOf(plan, "h"), 0);
}

}  // namespace
}  // namespace npuplan::stream
