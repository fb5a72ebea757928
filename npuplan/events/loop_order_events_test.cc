#include "npuplan/events/loop_order_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
using ::testing::HasSubstr;

// x → OWNER(cond: c_less → co on 0; body: b_relu on 0 → b_ar on 1 → bo on
// 0) → y. A Loop
// (ONNX) has the body only. `body_tail` adds nodes at the end of the body,
// `more` subgraphs after it.
Model LoopGraph(std::string_view owner, std::string_view body_tail = "",
                std::string_view more = "") {
  const bool onnx = owner == "Loop";
  std::string text = R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "w", "type": "OWNER", "inputs": ["x:0"], "subgraphs": [SUBGRAPHS], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["w:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [COND
      {"name": "body", "parent": "w", "nodes": [
        {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "b_relu", "type": "Relu", "inputs": ["bd:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
        {"name": "b_ar", "type": "Add", "inputs": ["b_relu:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},TAIL
        {"name": "bo", "type": "NetOutput", "inputs": ["b_ar:0"], "attrs": {"_test_stream": 0}}]}MORE]})json";
  auto put = [&](std::string_view key, std::string_view value) {
    text.replace(text.find(key), key.size(), value);
  };
  put("OWNER", owner);
  put("SUBGRAPHS", onnx ? R"("body")" : R"("cond", "body")");
  put("COND", onnx ? "" : R"json(
      {"name": "cond", "parent": "w", "nodes": [
        {"name": "cd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "c_less", "type": "Less", "inputs": ["cd:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "co", "type": "NetOutput", "inputs": ["c_less:0"], "attrs": {"_test_stream": 0}}]},)json");
  put("TAIL", body_tail);
  put("MORE", more);
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

std::vector<std::string> LoopEvents(const Plan& plan, SyncReason reason) {
  std::vector<std::string> out;
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason != reason) continue;
    EXPECT_EQ(e.kind, SyncKind::kEvent);
    out.push_back(StrCat(plan.model.node(e.send).name, "->", plan.model.node(e.recv).name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Nothing in one pass orders the next iteration's c_less (stream 0) after
// this one's b_t (stream 1, the body's last task there, feeding nothing):
// only the loop-next barrier does, b_t → the tail gate of stream 0 (the hub:
// its task ends the body). In a Loop the body is the only run, so the hub's
// gate also releases stream 1's gate. Every mode keeps them (nothing implies
// them), the verifier refuses the plan without them, and a wait recorded
// after it in the order (the backward event a wait-reset device would block
// on in the first iteration) is refused too.
TEST(LoopOrderEventsTest, TheNextIterationWaitsForEveryStreamOfTheLastRun) {
  struct Case {
    std::string_view owner, mode;
    std::vector<std::string> next;
  };
  const std::string_view tail = R"json(
        {"name": "b_t", "type": "Add", "inputs": ["b_ar:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},)json";
  for (const Case& c :
       {Case{"While", "exact", {"b_t->w_LoopTail_0"}}, Case{"While", "ge", {"b_t->w_LoopTail_0"}},
        Case{"Loop", "exact", {"b_t->w_LoopTail_0", "w_LoopTail_0->w_LoopTail_1"}},
        Case{"StatelessWhile", "none", {"b_t->w_LoopTail_0"}}}) {
    SCOPED_TRACE(StrCat(c.owner, " ", c.mode));
    Plan plan = PlanFromModel(LoopGraph(c.owner, tail));
    RunResult r;
    ASSERT_THAT(RunEventsPasses(plan, &r, {{"npuplan.eventOptimization", std::string(c.mode)}}),
                IsOk());
    EXPECT_EQ(LoopEvents(plan, SyncReason::kLoopNext), c.next);
    ASSERT_FALSE(r.log.WithKeyword("LoopOrderEvent").empty());
    EXPECT_THAT(r.log.WithKeyword("LoopOrderEvent")[0]->ToLine(), HasSubstr("loop=w kind="));
    EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
    // The tail gates end the body on their streams.
    const Model& m = plan.model;
    const NodeId gate = m.FindNode("w_LoopTail_0");
    ASSERT_TRUE(gate.valid());
    EXPECT_EQ(m.graph(m.node(gate).graph).name, "body");
    const AttrValue* side = FindAttr(m.node(gate).attrs, "loop_gate");
    ASSERT_NE(side, nullptr);
    EXPECT_TRUE(*side == AttrValue("tail"));

    Plan cut = plan;
    std::erase_if(cut.events.events,
                  [](const SyncEvent& e) { return e.reason == SyncReason::kLoopNext; });
    EXPECT_THAT(verify::VerifyLoopOrder(cut),
                ::npuplan::testing::StatusIs(absl::StatusCode::kInternal,
                                             "verifier[loop-order]: loop 'w': nothing orders"));

    // The old shape: b_t → the next iteration's first task, waited before it is recorded.
    Plan backward = plan;
    for (SyncEvent& e : backward.events.events) {
      if (e.reason == SyncReason::kLoopNext && m.node(e.send).name == "b_t") {
        e.recv = m.FindNode(c.owner == "Loop" ? "b_relu" : "c_less");
      }
    }
    EXPECT_THAT(verify::VerifyPlan(backward),
                ::npuplan::testing::StatusIs(absl::StatusCode::kInternal,
                                             "runs backwards in execution order"));
  }
}

// A wait after its stream's last task (at a tail gate) is not ordered
// before the next iteration by the barrier: b_relu → the tail gate of
// stream 1 would be recorded again in the next iteration while stream 1 may
// not have waited yet (both only follow the hub's gate): refused. The
// barrier's own events pass the same rule.
TEST(LoopOrderEventsTest, AWaitAfterTheLastTaskMustComeBeforeTheNextRecord) {
  Plan plan = PlanFromModel(LoopGraph("Loop", R"json(
        {"name": "b_t", "type": "Add", "inputs": ["b_ar:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},)json"));
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r, {{"npuplan.eventOptimization", "none"}}), IsOk());
  ASSERT_THAT(verify::VerifyLoopOrder(plan), IsOk());
  const NodeId gate = plan.model.FindNode("w_LoopTail_1");
  ASSERT_TRUE(gate.valid());
  SyncEvent e;
  e.id = static_cast<int32_t>(plan.events.event_count);
  e.send = plan.model.FindNode("b_relu");
  e.recv = gate;
  e.reason = SyncReason::kDataEdge;
  plan.events.events.push_back(e);
  EXPECT_THAT(verify::VerifyLoopOrder(plan),
              ::npuplan::testing::StatusIs(
                  absl::StatusCode::kInternal,
                  "nothing orders its wait before its record in the next iteration"));
}

// cond → body inside one iteration: the fork co → b_ar is implied by
// the data-edge event b_relu → b_ar, so exact drops it; without
// optimisation it stays, and the verifier refuses the plan when no event
// orders the body's stream 1 after the cond.
TEST(LoopOrderEventsTest, TheBodyWaitsForTheCondOnEveryStream) {
  Plan plan = PlanFromModel(LoopGraph("While"));
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r, {{"npuplan.eventOptimization", "none"}}), IsOk());
  EXPECT_EQ(LoopEvents(plan, SyncReason::kLoopFork), std::vector<std::string>{"co->b_ar"});
  Plan exact = PlanFromModel(LoopGraph("While"));
  ASSERT_THAT(RunEventsPasses(exact, &r), IsOk());
  EXPECT_TRUE(LoopEvents(exact, SyncReason::kLoopFork).empty());

  // b_ar reads the body's Data only (not b_relu): nothing else orders it after the cond.
  Plan loose = PlanFromModel(LoopGraph("While"));
  loose.model.node(loose.model.FindNode("b_ar")).inputs[0].node = loose.model.FindNode("bd");
  ASSERT_THAT(RunEventsPasses(loose, &r), IsOk());
  EXPECT_EQ(LoopEvents(loose, SyncReason::kLoopFork), std::vector<std::string>{"co->b_ar"});
  std::erase_if(loose.events.events,
                [](const SyncEvent& e) { return e.reason == SyncReason::kLoopFork; });
  EXPECT_THAT(verify::VerifyLoopOrder(loose),
              ::npuplan::testing::StatusIs(absl::StatusCode::kInternal,
                                           "the runs of one iteration may overlap"));
}

// The last task on stream 1 may be in either branch of an If: each branch's
// last task there is ordered before the tail gate of stream 0, so the next
// iteration is ordered whichever branch ran; the verifier wants each. An
// event recorded in a branch would not be recorded when the other runs, so
// it leaves the If at the If's exit gate on stream 1 (loop_gates.h), which
// follows both branches' tasks there: one event covers both.
TEST(LoopOrderEventsTest, EachBranchOrdersTheNextIteration) {
  std::string branches;
  for (const char* b : {"then", "else"}) {
    branches += StrCat(
        R"json(, {"name": ")json", b, R"json(", "parent": "b_if", "nodes": [
        {"name": ")json",
        b,
        R"json(_t", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]})json");
  }
  Model m = LoopGraph("While", R"json(
        {"name": "b_if", "type": "If", "inputs": ["b_ar:0"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},)json",
                      branches);
  Plan plan = PlanFromModel(std::move(m));
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r), IsOk());
  EXPECT_EQ(LoopEvents(plan, SyncReason::kLoopNext),
            (std::vector<std::string>{"b_if_BranchExit_1->w_LoopTail_0"}));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  // Recorded by else_t, as one pass over the plan would have it, the event
  // leaves then_t unordered (and crosses the branch boundary).
  for (SyncEvent& e : plan.events.events) {
    if (plan.model.node(e.send).name == "b_if_BranchExit_1") e.send = plan.model.FindNode("else_t");
  }
  EXPECT_THAT(verify::VerifyLoopBoundaries(plan),
              ::npuplan::testing::StatusIs(absl::StatusCode::kInternal,
                                           "recorded inside a branch of 'b_if'"));
  std::erase_if(plan.events.events, [&](const SyncEvent& e) {
    return e.reason == SyncReason::kLoopNext && plan.model.node(e.send).name == "else_t";
  });
  EXPECT_THAT(verify::VerifyLoopOrder(plan),
              ::npuplan::testing::StatusIs(absl::StatusCode::kInternal, "nothing orders 'then_t'"));
  // Without optimisation each branch's last task sends its own.
  Plan none = PlanFromModel(LoopGraph("While", R"json(
        {"name": "b_if", "type": "If", "inputs": ["b_ar:0"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},)json",
                                      branches));
  ASSERT_THAT(RunEventsPasses(none, &r, {{"npuplan.eventOptimization", "none"}}), IsOk());
  EXPECT_EQ(LoopEvents(none, SyncReason::kLoopNext),
            (std::vector<std::string>{"b_ar->w_LoopTail_0", "b_if_BranchExit_1->w_LoopTail_0"}));
  EXPECT_THAT(verify::VerifyPlan(none), IsOk());
}

// A loop on one stream is ordered by its queue: no event.
TEST(LoopOrderEventsTest, ALoopOnOneStreamGetsNoEvent) {
  Model m = LoopGraph("While");
  m.node(m.FindNode("b_ar")).attrs["_test_stream"] = int64_t{0};
  Plan plan = PlanFromModel(std::move(m));
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r), IsOk());
  EXPECT_TRUE(r.log.WithKeyword("LoopOrderEvent").empty());
  EXPECT_TRUE(plan.events.events.empty());
}

}  // namespace
}  // namespace npuplan
