#include "npuplan/events/loop_gates.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npuplan/events/events_test_util.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/plan/execution_semantics.h"
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
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// x (stream 0) → w: While(cond: c_less; body: b_relu, both on stream 1) → y
// (stream 0). The loop reads x every iteration and y reads the body's last
// value once.
constexpr char kLoopAcrossStreams[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "w", "type": "While", "inputs": ["x:0"], "subgraphs": ["cond", "body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "y", "type": "Add", "inputs": ["w:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
  "subgraphs": [
    {"name": "cond", "parent": "w", "nodes": [
      {"name": "cd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "c_less", "type": "Less", "inputs": ["cd:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1], "dtype": "bool"}]},
      {"name": "co", "type": "NetOutput", "inputs": ["c_less:0"], "attrs": {"_test_stream": 1}}]},
    {"name": "body", "parent": "w", "nodes": [
      {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "b_relu", "type": "Relu", "inputs": ["bd:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "bo", "type": "NetOutput", "inputs": ["b_relu:0"], "attrs": {"_test_stream": 1}}]}]})json";

// The events other than loop-order ones (loop_order_events_test.cc).
std::vector<std::string> EventEnds(const Plan& plan) {
  std::vector<std::string> out;
  for (const SyncEvent& e : plan.events.events)
    if (e.reason != SyncReason::kLoopNext && e.reason != SyncReason::kLoopFork)
      out.push_back(StrCat(plan.model.node(e.send).name, "->", plan.model.node(e.recv).name));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> NodeNames(const Model& m, GraphId g) {
  std::vector<std::string> out;
  for (NodeId id : m.graph(g).nodes) {
    if (!IsSyncNode(m.node(id))) out.push_back(m.node(id).name);
  }
  return out;
}

// The LoopGate decision lines without the pass prefix, sorted.
std::vector<std::string> GateLines(const RunResult& r) {
  std::vector<std::string> out;
  for (const auto* d : r.log.WithKeyword("LoopGate")) {
    const std::string line = d->ToLine();
    out.push_back(line.substr(line.find("loop=")));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Plan LoopPlan(std::string_view text = kLoopAcrossStreams) {
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return PlanFromModel(*std::move(m));
}

// x's record is waited at the gate before the loop on stream 1, once; the
// body's last value is recorded at the gate after it, once. Without the
// gates the verifier names the crossing.
TEST(LoopGatesTest, AnEventIntoOrOutOfALoopIsWaitedOrRecordedAtItsGate) {
  Plan plan = LoopPlan();
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r), IsOk());
  EXPECT_THAT(EventEnds(plan), ElementsAre("w_LoopExit_1->y", "x->w_LoopEntry_1"));
  EXPECT_THAT(NodeNames(plan.model, kRootGraph),
              ElementsAre("x", "w_LoopEntry_1", "w", "w_LoopExit_1", "y"));
  for (const char* name : {"w_LoopEntry_1", "w_LoopExit_1"}) {
    const NodeId g = plan.model.FindNode(name);
    ASSERT_TRUE(g.valid()) << name;
    EXPECT_TRUE(IsLoopGate(plan.model.node(g)));
    EXPECT_EQ(plan.physical_stream[g.index()], 1);
    EXPECT_EQ(plan.model.node(g).stream_id, 1);
    EXPECT_EQ(plan.tasks[g.index()], 0);
  }
  EXPECT_THAT(GateLines(r), ElementsAre("loop=w side=entry gate=w_LoopEntry_1 from=x to=c_less",
                                        "loop=w side=exit gate=w_LoopExit_1 from=bo to=y"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());

  // The plan before: x's event waited by c_less inside the loop.
  Plan crossing = plan;
  for (SyncEvent& e : crossing.events.events) {
    if (crossing.model.node(e.recv).name == "w_LoopEntry_1")
      e.recv = crossing.model.FindNode("c_less");
  }
  EXPECT_THAT(verify::VerifyLoopBoundaries(crossing),
              StatusIs(absl::StatusCode::kInternal,
                       "recorded once outside loop 'w' and waited in every iteration"));
  Plan leaving = plan;
  for (SyncEvent& e : leaving.events.events) {
    if (leaving.model.node(e.send).name == "w_LoopExit_1") e.send = leaving.model.FindNode("bo");
  }
  EXPECT_THAT(verify::VerifyLoopBoundaries(leaving),
              StatusIs(absl::StatusCode::kInternal,
                       "recorded in every iteration of loop 'w' and waited once after it"));
}

// Without optimisation x sends to c_less and to b_relu, and both NetOutputs to
// y: each pair now meets at one gate, one event, and the ids stay continuous.
TEST(LoopGatesTest, EventsThatMeetAtAGateBecomeOne) {
  Plan plan = LoopPlan();
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r, {{"npuplan.eventOptimization", "none"}}), IsOk());
  EXPECT_THAT(GateLines(r), ElementsAre("loop=w side=entry gate=w_LoopEntry_1 from=x to=b_relu",
                                        "loop=w side=entry gate=w_LoopEntry_1 from=x to=c_less",
                                        "loop=w side=exit gate=w_LoopExit_1 from=bo to=y",
                                        "loop=w side=exit gate=w_LoopExit_1 from=co to=y"));
  EXPECT_THAT(EventEnds(plan), ElementsAre("w_LoopExit_1->y", "x->w_LoopEntry_1"));
  int64_t events = 0, notifies = 0;
  EXPECT_TRUE(IdsContinuous(plan.events, &events, &notifies));
  EXPECT_EQ(plan.events.event_count, events);
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

// With the body on a stream of its own (2), x's event into the body needs no
// gate: x waits at the cond's gate, the cond runs first, and its loop-fork
// event orders the body after it. Without that fork the plan is refused.
TEST(LoopGatesTest, AnEventIntoTheBodyIsImpliedByTheCondsGateAndTheLoopFork) {
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(kLoopAcrossStreams);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const char* name : {"b_relu", "bo"})
    m->node(m->FindNode(name)).attrs["_test_stream"] = int64_t{2};
  Plan plan = PlanFromModel(*std::move(m));
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r), IsOk());
  EXPECT_THAT(GateLines(r),
              ::testing::Contains("loop=w side=implied gate=w_LoopEntry_1 from=x to=b_relu"));
  EXPECT_THAT(EventEnds(plan), ::testing::Contains("x->w_LoopEntry_1"));
  EXPECT_FALSE(plan.model.FindNode("w_LoopEntry_2").valid());
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  std::erase_if(plan.events.events,
                [](const SyncEvent& e) { return e.reason == SyncReason::kLoopFork; });
  EXPECT_THAT(verify::VerifyHappensBefore(plan), StatusIs(absl::StatusCode::kInternal, "'b_relu'"));
}

// x feeds the body of a loop inside a loop: it waits once before the outer
// loop (the outermost one it is not in); the inner body's value leaves the
// inner loop only, at its exit gate inside the outer body. A loop on one
// stream gets no gate.
TEST(LoopGatesTest, AnEventIntoNestedLoopsWaitsBeforeTheOutermostItIsNotIn) {
  constexpr char kNested[] = R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "w", "type": "Loop", "inputs": ["x:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["w:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [
      {"name": "body", "parent": "w", "nodes": [
        {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "v", "type": "Loop", "inputs": ["bd:0"], "subgraphs": ["inner"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
        {"name": "b_add", "type": "Add", "inputs": ["v:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
        {"name": "bo", "type": "NetOutput", "inputs": ["b_add:0"], "attrs": {"_test_stream": 0}}]},
      {"name": "inner", "parent": "v", "nodes": [
        {"name": "id", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "i_relu", "type": "Relu", "inputs": ["id:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
        {"name": "io", "type": "NetOutput", "inputs": ["i_relu:0"], "attrs": {"_test_stream": 1}}]}]})json";
  Plan plan = LoopPlan(kNested);
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r), IsOk());
  EXPECT_THAT(EventEnds(plan), ElementsAre("v_LoopExit_1->b_add", "x->w_LoopEntry_1"));
  EXPECT_THAT(NodeNames(plan.model, kRootGraph), ElementsAre("x", "w_LoopEntry_1", "w", "y"));
  EXPECT_THAT(
      NodeNames(plan.model, plan.model.FindGraph("body")),
      ElementsAre("bd", "v", "v_LoopExit_1", "b_add", "bo", "w_LoopTail_0", "w_LoopTail_1"));
  // The outer loop's loop-next barrier leaves the inner loop through its exit
  // gate too (io → the hub's tail gate; exact then drops it: b_add's event
  // from the same gate implies it), and the hub's tail gate releases stream
  // 1's: recorded and waited once per outer iteration.
  std::vector<std::string> next;
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason == SyncReason::kLoopNext)
      next.push_back(StrCat(plan.model.node(e.send).name, "->", plan.model.node(e.recv).name));
  }
  std::sort(next.begin(), next.end());
  EXPECT_THAT(next, ElementsAre("w_LoopTail_0->w_LoopTail_1"));
  EXPECT_THAT(GateLines(r),
              ::testing::Contains("loop=v side=exit gate=v_LoopExit_1 from=io to=w_LoopTail_0"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());

  // Waited at the inner loop's entry, the event still enters the outer loop.
  for (SyncEvent& e : plan.events.events) {
    if (plan.model.node(e.recv).name == "w_LoopEntry_1") e.recv = plan.model.FindNode("i_relu");
  }
  EXPECT_THAT(verify::VerifyLoopBoundaries(plan),
              StatusIs(absl::StatusCode::kInternal, "outside loop 'w'"));
}

// x (stream 0) → p: If(then: t_relu on stream 1; else: e_neg on stream 2) →
// y (stream 0). One branch runs: a wait inside the other would leave x's
// record pending, and a record inside it would never come.
constexpr char kIfAcrossStreams[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "Less", "inputs": ["x:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1], "dtype": "bool"}]},
  {"name": "p", "type": "If", "inputs": ["c:0", "x:0"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "y", "type": "Add", "inputs": ["p:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
  "subgraphs": [
    {"name": "then", "parent": "p", "nodes": [
      {"name": "td", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_relu", "type": "Relu", "inputs": ["td:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "to", "type": "NetOutput", "inputs": ["t_relu:0"], "attrs": {"_test_stream": 1}}]},
    {"name": "else", "parent": "p", "nodes": [
      {"name": "ed", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
      {"name": "e_neg", "type": "Neg", "inputs": ["ed:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
      {"name": "eo", "type": "NetOutput", "inputs": ["e_neg:0"], "attrs": {"_test_stream": 2}}]}]})json";

// Each branch's stream waits for x at a gate before p and records for y at a
// gate after p: both gates run whichever branch is taken. The branch's own
// slots follow (precede) its gates on the stream's queue. Without the gates
// the verifier names the crossing.
TEST(LoopGatesTest, AnEventIntoOrOutOfABranchIsWaitedOrRecordedAtTheOwnersGates) {
  Plan plan = LoopPlan(kIfAcrossStreams);
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r), IsOk());
  EXPECT_THAT(EventEnds(plan), ElementsAre("p_BranchExit_1->y", "p_BranchExit_2->y",
                                           "x->p_BranchEntry_1", "x->p_BranchEntry_2"));
  EXPECT_THAT(NodeNames(plan.model, kRootGraph),
              ElementsAre("x", "c", "p_BranchEntry_1", "p_BranchEntry_2", "p", "p_BranchExit_1",
                          "p_BranchExit_2", "y"));
  for (const char* name : {"p_BranchEntry_1", "p_BranchExit_2"}) {
    const NodeId g = plan.model.FindNode(name);
    ASSERT_TRUE(g.valid()) << name;
    EXPECT_TRUE(IsLoopGate(plan.model.node(g)));
    EXPECT_EQ(plan.tasks[g.index()], 0);
  }
  EXPECT_THAT(GateLines(r), ElementsAre("loop=p side=entry gate=p_BranchEntry_1 from=x to=t_relu",
                                        "loop=p side=entry gate=p_BranchEntry_2 from=x to=e_neg",
                                        "loop=p side=exit gate=p_BranchExit_1 from=to to=y",
                                        "loop=p side=exit gate=p_BranchExit_2 from=eo to=y"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());

  Plan into = plan;
  for (SyncEvent& e : into.events.events) {
    if (into.model.node(e.recv).name == "p_BranchEntry_2") e.recv = into.model.FindNode("e_neg");
  }
  EXPECT_THAT(verify::VerifyLoopBoundaries(into),
              StatusIs(absl::StatusCode::kInternal,
                       "recorded outside a branch of 'p' and waited inside it"));
  Plan out_of = plan;
  for (SyncEvent& e : out_of.events.events) {
    if (out_of.model.node(e.send).name == "p_BranchExit_1") e.send = out_of.model.FindNode("to");
  }
  EXPECT_THAT(verify::VerifyLoopBoundaries(out_of),
              StatusIs(absl::StatusCode::kInternal,
                       "recorded inside a branch of 'p' and waited outside it"));
}

// Both branches on one stream: x's two events meet at one entry gate, the
// two ends at one exit gate.
TEST(LoopGatesTest, BranchesOnOneStreamShareTheirGates) {
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(kIfAcrossStreams);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const char* name : {"e_neg", "eo"})
    m->node(m->FindNode(name)).attrs["_test_stream"] = int64_t{1};
  Plan plan = PlanFromModel(*std::move(m));
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r, {{"npuplan.eventOptimization", "none"}}), IsOk());
  EXPECT_THAT(EventEnds(plan), ElementsAre("p_BranchExit_1->y", "x->p_BranchEntry_1"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

// A branch stream that a node of the branch activates (GE's
// `subgraph_first_active`: t_go, stream 3, activates stream 1, where t_relu
// adds t_go's value and x) runs only when the branch does: a gate on it
// outside the branch would never run when the other branch is taken. Its
// ends go through gates on t_go's stream — a head gate into t_relu, a tail
// gate out of `to` — and p's gates sit on stream 3.
TEST(LoopGatesTest, AStreamTheBranchActivatesGetsNoGateOutsideTheBranch) {
  std::string text = kIfAcrossStreams;
  const std::string relu = R"({"name": "t_relu", "type": "Relu", "inputs": ["td:0"])";
  const size_t at = text.find(relu);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, relu.size(),
               R"({"name": "t_go", "type": "Relu", "inputs": ["td:0"], "attrs": {"_test_stream": )"
               R"(3, "subgraph_first_active": true}, "outputs": [{"shape": [1]}]},)"
               R"({"name": "t_relu", "type": "Add", "inputs": ["t_go:0", "td:0"])");
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(text);
  ASSERT_TRUE(m.ok()) << m.status();
  Plan plan = PlanFromModel(*std::move(m));
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r, {{"npuplan.eventOptimization", "none"}}), IsOk());
  for (const std::string& ends : EventEnds(plan)) {
    EXPECT_THAT(ends, ::testing::Not(HasSubstr("_1"))) << "a gate on stream 1";
  }
  EXPECT_THAT(EventEnds(plan),
              ::testing::IsSupersetOf({"x->p_BranchEntry_3", "p_BranchHead_3->t_relu",
                                       "to->p_BranchTail_3", "p_BranchExit_3->y"}));
  EXPECT_THAT(GateLines(r),
              ::testing::Contains(HasSubstr("side=head gate=p_BranchHead_3 from=x to=t_relu")));
  EXPECT_THAT(GateLines(r),
              ::testing::Contains(HasSubstr("side=tail gate=p_BranchTail_3 from=to to=y")));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

// The verifier refuses a task outside a branch on a stream that only a node
// inside a branch activates, naming the stream and the activator: the first
// in execution order, the Recv before p_BranchEntry_1.
TEST(LoopGatesTest, AGateOnAStreamOnlyABranchActivatesIsRefused) {
  Plan plan = LoopPlan(kIfAcrossStreams);
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r), IsOk());
  ASSERT_THAT(verify::VerifyLoopBoundaries(plan), IsOk());
  // e_neg (else, stream 2) now also activates stream 1, the then-branch's:
  // p's gates there (and their Send/Recv) would run only when else runs.
  plan.model.node(plan.model.FindNode("e_neg")).attrs["active_stream_list"] =
      std::vector<int64_t>{1};
  EXPECT_THAT(verify::VerifyLoopBoundaries(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "'g_Recv_2' on stream 1 runs only when a branch of 'p' runs ('e_neg' "
                       "activates the stream there) but is outside that branch"));
}

TEST(LoopGatesTest, ALoopOnTheProducersStreamGetsNoGate) {
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(kLoopAcrossStreams);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const char* name : {"c_less", "co", "b_relu", "bo"})
    m->node(m->FindNode(name)).attrs["_test_stream"] = int64_t{0};
  Plan plan = PlanFromModel(*std::move(m));
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r), IsOk());
  EXPECT_TRUE(r.log.WithKeyword("LoopGate").empty());
  EXPECT_TRUE(plan.events.events.empty());
}

}  // namespace
}  // namespace npuplan
