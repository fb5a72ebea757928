#include "npuplan/verify/plan_complete.h"

#include <gtest/gtest.h>

#include "npuplan/events/events_test_util.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

Plan TwoStreams(int64_t b_stream) {
  auto m =
      ParseVerifiedGraph(R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": )json" +
                         std::to_string(b_stream) + R"json(}, "outputs": [{"shape": [1]}]}]})json");
  EXPECT_TRUE(m.ok()) << m.status();
  return PlanFromModel(std::move(m).value());
}

// The issue's plan: two streams, a cross-stream data edge, no events. It
// claims no sync stage, so VerifyPlan (the stages it claims) passes; the
// complete check names the stage it lacks.
TEST(PlanCompleteTest, ACrossStreamEdgeWithoutEventsNamesTheMissingStage) {
  Plan plan = TwoStreams(1);
  ASSERT_THAT(verify::VerifyPlan(plan), IsOk());
  EXPECT_THAT(verify::VerifyPlanComplete(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "stage 'sync-events' is missing: data-edge dependency 'a'"));
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk());
  EXPECT_THAT(verify::VerifyPlanComplete(plan), IsOk());
}

// A loop body on two streams, stopped after insertion: its events order
// one pass, and the stage that orders the iterations (active-streams, which
// adds the loop-order events) is missing.
TEST(PlanCompleteTest, ALoopAcrossStreamsWithoutLoopOrderNamesTheMissingStage) {
  auto m = ParseVerifiedGraph(R"json({"nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "w", "type": "Loop", "inputs": ["x:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "body", "parent": "w", "nodes": [
      {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "b1", "type": "Add", "inputs": ["bd:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "bo", "type": "NetOutput", "inputs": ["b1:0"], "attrs": {"_test_stream": 0}}]}]})json");
  ASSERT_TRUE(m.ok()) << m.status();
  Plan plan = PlanFromModel(std::move(m).value());
  ASSERT_THAT(
      RunPasses(plan, Passes<TaskCountAssignment, SyncEventInsertion, PhysicalStreamSplit>()),
      IsOk());
  ASSERT_THAT(verify::VerifyPlan(plan), IsOk());
  EXPECT_THAT(verify::VerifyPlanComplete(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "stage 'active-streams' is missing: loop 'w': nothing orders"));
  ASSERT_THAT(RunPasses(plan, Passes<StreamActivation>()), IsOk());
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  EXPECT_THAT(verify::VerifyPlanComplete(plan), IsOk());
}

TEST(PlanCompleteTest, OneStreamNeedsNoEvents) {
  Plan plan = TwoStreams(0);
  ASSERT_THAT(verify::VerifyPlan(plan), IsOk());
  EXPECT_THAT(verify::VerifyPlanComplete(plan), IsOk());
}

}  // namespace
}  // namespace npuplan
