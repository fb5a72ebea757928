#include "npuplan/events/host_join_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "npuplan/events/events_test_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunEventsPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// x → While w (cond: c_less → co; body: b_mul → b_relu → bo, and b_mul →
// b_ar on stream 1, which nothing reads: TAIL may add a reader) → y, on
// GE's dynamic path (the whole graph dynamic, dynamic multi-stream), so the
// host runs w: it synchronizes stream 0 after each run, and nothing but an
// event orders b_ar before that.
// `ar_last`: b_ar after bo in the body's order (as a topological sort may
// put it).
Plan HostLoopPlan(std::string_view tail = "", bool ar_last = false) {
  std::string text = R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "w", "type": "While", "inputs": ["x:0"], "subgraphs": ["cond", "body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["w:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [
      {"name": "cond", "parent": "w", "nodes": [
        {"name": "cd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "c_less", "type": "Less", "inputs": ["cd:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "co", "type": "NetOutput", "inputs": ["c_less:0"], "attrs": {"_test_stream": 0}}]},
      {"name": "body", "parent": "w", "nodes": [
        {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "b_mul", "type": "Mul", "inputs": ["bd:0", "bd:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
        {"name": "b_ar", "type": "Add", "inputs": ["b_mul:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
        {"name": "b_relu", "type": "Relu", "inputs": ["b_mul:0"TAIL], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
        {"name": "bo", "type": "NetOutput", "inputs": ["b_relu:0"], "attrs": {"_test_stream": 0}}]}]})json";
  text.replace(text.find("TAIL"), 4, tail);
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (ar_last) {
    const NodeId ar = m->FindNode("b_ar");
    std::vector<NodeId>& body = m->graph(m->node(ar).graph).nodes;
    std::rotate(std::find(body.begin(), body.end(), ar),
                std::find(body.begin(), body.end(), ar) + 1, body.end());
    RenumberTopoIds(*m);
  }
  Plan plan = PlanFromModel(*std::move(m));
  plan.streams.mode = StreamMode::kDynamicMulti;
  plan.partition.ran = true;
  plan.partition.decision = PartitionDecision::kWholeDynamic;
  return plan;
}

std::vector<std::string> JoinEvents(const Plan& plan) {
  std::vector<std::string> out;
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason == SyncReason::kLoopJoin)
      out.push_back(StrCat(plan.model.node(e.send).name, "->", plan.model.node(e.recv).name));
  }
  return out;
}

TEST(HostJoinEventsTest, AStreamNothingJoinsEndsEachRunOnTheOwnersStream) {
  Plan plan = HostLoopPlan();
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r), IsOk());
  EXPECT_THAT(JoinEvents(plan), ElementsAre("b_ar->bo"));
  std::vector<std::string> lines;
  for (const Remark* rm : r.log.WithKeyword("HostJoinEvent")) lines.push_back(rm->ToLine());
  EXPECT_THAT(lines, ElementsAre("[stream-activation] HostJoinEvent loop=w from=b_ar to=bo"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  // Without it the verifier names the task the next run may overlap.
  std::erase_if(plan.events.events,
                [](const SyncEvent& e) { return e.reason == SyncReason::kLoopJoin; });
  const absl::Status s = verify::VerifyLoopOrder(plan);
  EXPECT_THAT(s.message(), HasSubstr("verifier[loop-order]: loop 'w' (run by the host): 'b_ar' on "
                                     "stream 1, the last task of run 'body' there, is not ordered "
                                     "before 'bo' on stream 0, where the host synchronizes"));
}

// Ordered after the body's NetOutput, b_ar has nothing on stream 0 after it
// in the run: a tail gate at the end of the body ends it there.
TEST(HostJoinEventsTest, ATaskAfterTheRunsEndOnTheOwnersStreamJoinsAtATailGate) {
  Plan plan = HostLoopPlan("", /*ar_last=*/true);
  ASSERT_EQ(plan.model.graph(plan.model.node(plan.model.FindNode("bo")).graph).nodes.back(),
            plan.model.FindNode("b_ar"));
  ASSERT_THAT(RunEventsPasses(plan, nullptr), IsOk());
  EXPECT_THAT(JoinEvents(plan), ElementsAre("b_ar->w_LoopTail_0"));
  const Node& gate = plan.model.node(plan.model.FindNode("w_LoopTail_0"));
  EXPECT_EQ(plan.model.graph(gate.graph).name, "body");
  EXPECT_EQ(plan.model.graph(gate.graph).nodes.back(), plan.model.FindNode("w_LoopTail_0"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

// GE's edge events already end b_ar before the body's end: no event is
// added, so the table is GE's.
TEST(HostJoinEventsTest, AJoinedStreamGetsNone) {
  Plan plan = HostLoopPlan(R"(, "b_ar:0")");
  ASSERT_THAT(RunEventsPasses(plan, nullptr), IsOk());
  EXPECT_THAT(JoinEvents(plan), ::testing::IsEmpty());
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

// GE's event counts stay GE's elsewhere; here the event is needed, in every
// mode (docs/events.md "Loop order").
TEST(HostJoinEventsTest, GeModeJoinsToo) {
  Plan plan = HostLoopPlan();
  ASSERT_THAT(RunEventsPasses(plan, nullptr, {{"npuplan.eventOptimization", "ge"}}), IsOk());
  EXPECT_THAT(JoinEvents(plan), ElementsAre("b_ar->bo"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

// A static loop (not the dynamic path) is ordered by loop-order events
// instead.
TEST(HostJoinEventsTest, AStaticLoopGetsNone) {
  Plan plan = HostLoopPlan();
  plan.streams.mode = StreamMode::kMulti;
  plan.partition = {};
  ASSERT_THAT(RunEventsPasses(plan, nullptr), IsOk());
  EXPECT_THAT(JoinEvents(plan), ::testing::IsEmpty());
}

}  // namespace
}  // namespace npuplan
