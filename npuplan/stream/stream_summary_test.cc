#include "npuplan/stream/stream_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::stream::testing::CompileStreams;
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
  EXPECT_THAT(StreamSummaryToText(s), HasSubstr("stream 0: 1 nodes, physical 1, hccl followed 0, user label 'U', attached [2]"));
  EXPECT_THAT(StreamSummaryToJson(s), HasSubstr("\"user_stream_labels\""));
}

TEST(StreamSummaryTest, CountsPhysicalStreamsFromTheSplitMap) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu"}]})json"));
  plan.streams.split_to_logical = {{0, 0}, {1, 0}};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamAllocationSummary s, GetStreamAllocationSummary(plan));
  EXPECT_THAT(s.physical_stream_nums, ElementsAre(2));
}

TEST(StreamSummaryTest, FailsBeforeLogicalStreams) {
  Plan plan;
  EXPECT_THAT(GetStreamAllocationSummary(plan), StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace npuplan
