#include "npuplan/stream/all_reduce_parallel_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::PassHarness;
using ::npuplan::stream::testing::StreamOf;

constexpr char kAllReduce[] = R"json({"nodes": [
    {"name": "x", "type": "Relu"},
    {"name": "ar", "type": "HcomAllReduce", "inputs": ["x"], "attrs": {"fusion": 1}},
    {"name": "y", "type": "Relu", "inputs": ["ar"]},
    {"name": "z", "type": "Relu", "inputs": ["y"]}]})json";

TEST(AllReduceParallelPassTest, MovesSuccessorsOfFusedAllReduceToNewStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kAllReduce, {{"ge.hcomParallel", "1"}}));
  EXPECT_EQ(StreamOf(plan, "ar"), 0);
  EXPECT_EQ(StreamOf(plan, "x"), 1);
  EXPECT_EQ(StreamOf(plan, "y"), 2);
  EXPECT_EQ(StreamOf(plan, "z"), 2);
}

TEST(AllReduceParallelPassTest, WithoutHcomParallelSerialChainCollapses) {
  // The ineffective-multi-stream move then pulls ar onto the AI-core stream.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kAllReduce));
  EXPECT_EQ(plan.streams.logical, 1);
}

TEST(AllReduceParallelPassTest, NotChangedWithoutFusionAttr) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "ar", "type": "HcomAllReduce"},
    {"name": "y", "type": "Relu", "inputs": ["ar"]}]})json", {{"ge.hcomParallel", "true"}}));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<AllReduceParallelPass>());
  EXPECT_FALSE(changed);
}

TEST(AllReduceParallelPassTest, StopsAtDifferentLabel) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "ar", "type": "HcomAllReduce", "attrs": {"fusion": 2}},
    {"name": "y", "type": "Relu", "inputs": ["ar"], "attrs": {"_stream_label": "other"}}]})json",
                                                          {{"ge.hcomParallel", "true"}}));
  h->mutable_node("y").stream_id = 4;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<AllReduceParallelPass>());
  EXPECT_FALSE(changed);
  EXPECT_EQ(h->node("y").stream_id, 4);
}

}  // namespace
}  // namespace npuplan::stream
