#include "npuplan/stream/optimize_ineffective_multi_stream_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::PassHarness;
using ::npuplan::stream::testing::StreamOf;

// GE ST AicoreHcclSerial: a lone HCCL node between consecutive AI-core nodes.
TEST(OptimizeIneffectiveMultiStreamPassTest, PullsSandwichedHcclOntoAicoreStream) {
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "h", "type": "HcomAllReduce", "inputs": ["a"]},
    {"name": "b", "type": "Relu", "inputs": ["h"]}]})json", {}, &log));
  EXPECT_EQ(plan.streams.logical, 1);
  EXPECT_EQ(StreamOf(plan, "h"), StreamOf(plan, "a"));
  ASSERT_EQ(log.WithKeyword("IneffectiveStreamMoved").size(), 1u);
  EXPECT_EQ(log.WithKeyword("IneffectiveStreamMoved")[0]->pass, "optimize-ineffective-multi-stream-pass");
}

// GE ST AicoreHcclParallel: c runs on the AI-core stream between a and b, so
// moving h would serialise it behind c.
TEST(OptimizeIneffectiveMultiStreamPassTest, KeepsHcclWhenAParallelBranchSitsBetween) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "h", "type": "HcomAllReduce", "inputs": ["a"]},
    {"name": "c", "type": "Relu", "inputs": ["a"]},
    {"name": "b", "type": "Add", "inputs": ["h", "c"]}]})json"));
  EXPECT_EQ(plan.streams.logical, 2);
  EXPECT_NE(StreamOf(plan, "h"), StreamOf(plan, "a"));
}

// GE UT StreamLabelAndHcclSerial_AssignDiffStream.
TEST(OptimizeIneffectiveMultiStreamPassTest, NeverMovesOntoLabelledStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_user_stream_label": "U"}},
    {"name": "h", "type": "HcomAllReduce", "inputs": ["a"]},
    {"name": "b", "type": "Relu", "inputs": ["h"], "attrs": {"_user_stream_label": "U"}}]})json"));
  EXPECT_EQ(plan.streams.logical, 2);
  EXPECT_NE(StreamOf(plan, "h"), StreamOf(plan, "a"));
}

TEST(OptimizeIneffectiveMultiStreamPassTest, NeedsBothProducerAndConsumerOnTheStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "h", "type": "HcomAllReduce", "inputs": ["a"]}]})json"));
  h->mutable_node("a").stream_id = 0;
  h->mutable_node("h").stream_id = 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<OptimizeIneffectiveMultiStreamPass>());
  EXPECT_FALSE(changed);
}

TEST(OptimizeIneffectiveMultiStreamPassTest, LastQualifyingStreamWins) {
  // n sits between a0→b0 on stream 0 and a1→b1 on stream 1: both qualify,
  // the loop does not stop, so n ends on stream 1.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a0", "type": "Relu"}, {"name": "a1", "type": "Relu"},
    {"name": "n", "type": "HcomAllReduce", "inputs": ["a0", "a1"]},
    {"name": "b0", "type": "Relu", "inputs": ["n"]}, {"name": "b1", "type": "Relu", "inputs": ["n"]}]})json"));
  for (const char* x : {"a0", "b0"}) h->mutable_node(x).stream_id = 0;
  for (const char* x : {"a1", "b1"}) h->mutable_node(x).stream_id = 1;
  h->mutable_node("n").stream_id = 2;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<OptimizeIneffectiveMultiStreamPass>());
  EXPECT_TRUE(changed);
  EXPECT_EQ(h->node("n").stream_id, 1);
}

TEST(OptimizeIneffectiveMultiStreamPassTest, ExemptsParallelGroupAndNewStreamIdNodes) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "n", "type": "HcomAllReduce", "inputs": ["a"], "attrs": {"_parallel_group": "g"}},
    {"name": "b", "type": "Relu", "inputs": ["n"]}]})json"));
  h->mutable_node("a").stream_id = 0;
  h->mutable_node("b").stream_id = 0;
  h->mutable_node("n").stream_id = 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(bool changed, h->Run<OptimizeIneffectiveMultiStreamPass>());
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace npuplan::stream
