#include "npuplan/stream/stream_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::StreamOf;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(StreamSummaryTest, ListsStreamsLabelsAttachedIdsAndNodes) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_user_stream_label": "U",
      "_attached_stream_info_list": [{"name": "s", "reuse_key": "k"}]}},
    {"name": "b", "type": "Op", "engine": "VectorEngine"}]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamAllocationSummary s, GetStreamAllocationSummary(plan));
  ASSERT_EQ(s.logical_streams.size(), 2u);
  EXPECT_EQ(s.logical_streams[0].user_stream_label, "U");
  EXPECT_THAT(s.logical_streams[0].nodes, ElementsAre("a"));
  EXPECT_THAT(s.logical_streams[0].attached_stream_ids, ElementsAre(2));
  EXPECT_THAT(s.logical_streams[1].nodes, ElementsAre("b"));
  EXPECT_THAT(s.user_stream_labels, ElementsAre("U", ""));
  EXPECT_THAT(s.physical_stream_nums, ElementsAre(1, 1));
  EXPECT_THAT(s.attached_stream_ids, ElementsAre(2));
  EXPECT_FALSE(s.assigned_by_stream_pass);
  EXPECT_THAT(
      StreamSummaryToText(s),
      HasSubstr("stream 0: 1 nodes, physical 1, hccl followed 0, user label 'U', attached [2]"));
  EXPECT_THAT(StreamSummaryToJson(s), HasSubstr("\"user_stream_labels\""));
}

TEST(StreamSummaryTest, CountsPhysicalStreamsFromTheSplitMap) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      Plan plan, CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu"}]})json"));
  plan.streams.split_to_logical = {{0, 0}, {1, 0}};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamAllocationSummary s, GetStreamAllocationSummary(plan));
  EXPECT_THAT(s.physical_stream_nums, ElementsAre(2));
}

// The split pass lists only the extra pieces: stream 0 keeps id 0 and gains 1 and 2.
TEST(StreamSummaryTest, CountsTheLogicalStreamsOwnPieceBesideItsSplitPieces) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      Plan plan, CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu"}]})json"));
  plan.streams.split_to_logical = {{1, 0}, {2, 0}};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamAllocationSummary s, GetStreamAllocationSummary(plan));
  EXPECT_THAT(s.physical_stream_nums, ElementsAre(3));
  EXPECT_THAT(StreamSummaryToText(s), HasSubstr("physical streams: 3"));
}

// GE: per physical stream the smallest `used_stream_num` (> 0) of its nodes;
// a logical stream sums its physical streams.
TEST(StreamSummaryTest, CountsHcclFollowedStreamsAsTheMinimumPerPhysicalStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "h1", "type": "HcomAllReduce", "engine": "DNN_HCCL", "attrs": {"used_stream_num": 3}},
    {"name": "h2", "type": "HcomAllReduce", "engine": "DNN_HCCL", "inputs": ["h1"], "attrs": {"used_stream_num": 2}},
    {"name": "h3", "type": "HcomAllReduce", "engine": "DNN_HCCL", "attrs": {"_stream_label": "X", "used_stream_num": 4}},
    {"name": "a", "type": "Relu", "inputs": ["h2"], "attrs": {"used_stream_num": 0}}]})json"));
  const int64_t s1 = StreamOf(plan, "h1"), s3 = StreamOf(plan, "h3"), sa = StreamOf(plan, "a");
  ASSERT_EQ(StreamOf(plan, "h2"), s1);
  ASSERT_NE(s1, s3);
  ASSERT_NE(sa, s1);
  ASSERT_NE(sa, s3);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamAllocationSummary s, GetStreamAllocationSummary(plan));
  EXPECT_EQ(s.logical_streams[s1].hccl_followed_stream_num, 2);
  EXPECT_EQ(s.logical_streams[s3].hccl_followed_stream_num, 4);
  EXPECT_EQ(s.logical_streams[sa].hccl_followed_stream_num, 0);
  EXPECT_EQ(s.hccl_followed_stream_nums[s1], 2);
  // The plan's streams carry the same counts.
  EXPECT_EQ(plan.streams.streams[s1].hccl_followed_count, 2);
  EXPECT_EQ(plan.streams.streams[s3].hccl_followed_count, 4);

  // The physical split moves h2 to its own physical stream: 3 + 2.
  plan.physical_stream.assign(plan.model.num_nodes(), -1);
  const int64_t extra = plan.streams.logical;
  plan.physical_stream[plan.model.FindNode("h2").index()] = extra;
  plan.streams.split_to_logical = {{extra, s1}};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamAllocationSummary split, GetStreamAllocationSummary(plan));
  EXPECT_EQ(split.logical_streams[s1].hccl_followed_stream_num, 5);
  EXPECT_EQ(split.logical_streams[s3].hccl_followed_stream_num, 4);
}

TEST(StreamSummaryTest, FailsBeforeLogicalStreams) {
  Plan plan;
  EXPECT_THAT(GetStreamAllocationSummary(plan), StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace npuplan
