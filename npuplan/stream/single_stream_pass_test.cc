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
  EXPECT_EQ(plan.streams.mode, StreamMode::kSingle);
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

// GE's ge.optionNameMap: E10055 and E10056 name the options by the caller's
// names (GetReadableName), e.g. ATC's flags (issue 20, item 9).
TEST(SingleStreamPassTest, ConflictErrorsUseTheOptionNameMap) {
  const std::string map = R"({"ge.enableSingleStream": "--enable_single_stream",
                              "ge.autoMultistreamParallelMode": "--multi_stream_parallel_mode"})";
  EXPECT_THAT(CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu"}]})json",
                             {{"ge.enableSingleStream", "true"},
                              {"ge.autoMultistreamParallelMode", "LoadBalance:4"},
                              {"ge.optionNameMap", map}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "E10056: Cannot configure both parameters --multi_stream_parallel_mode and "
                       "--enable_single_stream simultaneously."));
  EXPECT_THAT(CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu", "attrs": {"_stream_label": "L"}}]})json",
                             {{"ge.enableSingleStream", "true"}, {"ge.optionNameMap", map}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "E10055: --enable_single_stream=true conflicts with stream label 'L'"));
}

// A Data node's user label reaches single-stream mode as a stream label
// (TransUserStreamLabel) and conflicts like one.
TEST(SingleStreamPassTest, UserLabelledDataConflictsLikeALabel) {
  EXPECT_THAT(CompileStreams(R"json({"nodes": [
                  {"name": "x", "type": "Data", "attrs": {"_user_stream_label": "U"}},
                  {"name": "a", "type": "Relu", "inputs": ["x"]}]})json",
                             {{"ge.enableSingleStream", "true"}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "conflicts with stream label 'U' (_user_stream_label of node 'x'"));
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
