#include "npuplan/events/sync_event_insertion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "npuplan/events/events_test_util.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/sync_verifier.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;
using Ev = std::tuple<std::string, std::string, std::string>;

Plan ParsePlan(const char* json) {
  auto m = ParseVerifiedGraph(json);
  EXPECT_TRUE(m.ok()) << m.status();
  return PlanFromModel(std::move(m).value());
}

std::vector<Ev> Events(const Plan& plan) {
  std::vector<Ev> out;
  for (const SyncEvent& e : plan.events.events) {
    out.emplace_back(plan.model.node(e.send).name + (e.send_attached >= 0 ? "@att" : ""),
                     plan.model.node(e.recv).name + (e.recv_attached >= 0 ? "@att" : ""), std::string(SyncReasonName(e.reason)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SyncEventInsertionTest, InsertsSubgraphEntryAndEndEvents) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "PartitionedCall", "inputs": ["x:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "Add", "inputs": ["f:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "body", "parent": "f", "nodes": [
      {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_op", "type": "Add", "inputs": ["t_in:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t_op:0"], "attrs": {"_test_stream": 1}}]}]})json");
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk());
  EXPECT_THAT(Events(plan), ::testing::ElementsAre(Ev("t_out", "o", "subgraph-end"), Ev("x", "t_in", "subgraph-entry")));
  // Without them the subgraph could start early or finish late.
  Plan cut = plan;
  cut.events.events.pop_back();
  events::RecountIds(cut.events);
  EXPECT_THAT(verify::VerifyHappensBefore(cut),
              StatusIs(absl::StatusCode::kInternal, "dependency"));
}

// GE's InsertSyncEvents does not descend into the subgraphs of an FFTS /
// FFTS+ owner (nor InsertEventsForSubgraph): the owner's FFTS task runs them,
// and the owner's own edge events stand for them (ge-reference §4.2).
TEST(SyncEventInsertionTest, DoesNotDescendIntoFftsSubgraphs) {
  for (const char* attr : {"_ffts_plus_sub_graph", "_ffts_sub_graph"}) {
    std::string json = R"json({"nodes": [
      {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
      {"name": "f", "type": "PartitionedCall", "inputs": ["x:0"], "subgraphs": ["body"],
       "attrs": {"_test_stream": 1, "ATTR": "body"}, "outputs": [{"shape": [1]}]},
      {"name": "o", "type": "Add", "inputs": ["f:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
      "subgraphs": [{"name": "body", "parent": "f", "nodes": [
        {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 2}, "outputs": [{"shape": [1]}]},
        {"name": "t_op", "type": "Add", "inputs": ["t_in:0"], "attrs": {"_test_stream": 3}, "outputs": [{"shape": [1]}]},
        {"name": "t_out", "type": "NetOutput", "inputs": ["t_op:0"], "attrs": {"_test_stream": 2}}]}]})json";
    json.replace(json.find("ATTR"), 4, attr);
    Plan plan = ParsePlan(json.c_str());
    ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk()) << attr;
    EXPECT_THAT(Events(plan), ::testing::ElementsAre(Ev("f", "o", "data-edge"), Ev("x", "f", "data-edge"))) << attr;
    EXPECT_THAT(verify::VerifyHappensBefore(plan), IsOk()) << attr;
  }
}

// Dynamic path (issue 5): an owner P on stream 0 whose subgraph runs on
// streams 0 and 1; r reads nothing from P.
constexpr char kDynamicOwner[] = R"json({"nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "p", "type": "PartitionedCall", "inputs": ["x:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["p:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "body", "parent": "p", "nodes": [
      {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
      {"name": "r", "type": "RandomUniform", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t", "type": "Add", "inputs": ["t_in:0", "r:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t:0"], "attrs": {"_test_stream": 0}}]}]})json";

TEST(SyncEventInsertionTest, DynamicPathHasOnlyEdgeEventsAndOwnersRecordAfterTheirSubgraphs) {
  Plan plan = ParsePlan(kDynamicOwner);
  plan.partition.ran = true;
  plan.partition.decision = PartitionDecision::kWholeDynamic;
  plan.streams.mode = StreamMode::kDynamicMulti;
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk());
  // GE's dynamic InsertEvents: one event per cross-stream edge, no
  // subgraph-entry (x → r) or subgraph-end (t_out → y) events; p → y names
  // p, which carries its id, as the sender (issue 20, item 11), and is
  // recorded where p completes, after its subgraph's NetOutput.
  EXPECT_THAT(Events(plan), ::testing::ElementsAre(Ev("p", "y", "data-edge"), Ev("t", "t_out", "data-edge"),
                                                   Ev("t_in", "t", "data-edge"), Ev("x", "p", "data-edge")));
  EXPECT_THAT(verify::VerifyHappensBefore(plan), IsOk());
  // Recorded inside the subgraph before its end, y could run before the
  // subgraph has produced p's output.
  Plan early = plan;
  for (SyncEvent& e : early.events.events) {
    if (early.model.node(e.recv).name == "y") e.send = early.model.FindNode("t_in");
  }
  EXPECT_THAT(
      verify::VerifyHappensBefore(early),
      StatusIs(absl::StatusCode::kInternal, "subgraph-end dependency 't_out' on stream 0 -> 'y'"));

  // The same graph with static streams keeps GE's static boundary events.
  Plan fixed = ParsePlan(kDynamicOwner);
  ASSERT_THAT(RunPasses(fixed, Passes<SyncEventInsertion>()), IsOk());
  EXPECT_THAT(Events(fixed), ::testing::ElementsAre(Ev("p", "y", "data-edge"), Ev("t", "t_out", "data-edge"),
                                                    Ev("t_in", "t", "data-edge"), Ev("t_out", "y", "subgraph-end"),
                                                    Ev("x", "p", "data-edge"), Ev("x", "t_in", "subgraph-entry")));
}

// Removes the event from `from` to `to` and renumbers the ids.
Plan WithoutEvent(const Plan& plan, const std::string& from, const std::string& to) {
  Plan cut = plan;
  auto& ev = cut.events.events;
  const size_t before = ev.size();
  ev.erase(std::remove_if(ev.begin(), ev.end(),
                          [&](const SyncEvent& e) {
                            return cut.model.node(e.send).name == from && cut.model.node(e.recv).name == to;
                          }),
           ev.end());
  EXPECT_EQ(ev.size() + 1, before) << from << " -> " << to;
  events::RecountIds(cut.events);
  return cut;
}

// A subgraph node reading the parent's input through a Data node without a
// stream waits for the producer of that input (GE's entry rule only reaches
// subgraph nodes with no inputs). Found by the full property test (seed 25:
// l1_then_ffn1 started before l1_ln2).
TEST(SyncEventInsertionTest, OrdersSubgraphNodesReadingParentInputsThroughDataWithoutStream) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "PartitionedCall", "inputs": ["x:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "Add", "inputs": ["f:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "body", "parent": "f", "nodes": [
      {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "t_same", "type": "Add", "inputs": ["t_in:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
      {"name": "t_op", "type": "Add", "inputs": ["t_in:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t_op:0"], "attrs": {"_test_stream": 1}}]}]})json");
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>(), {}, &r), IsOk());
  // t_same shares x's stream: no event.
  EXPECT_THAT(Events(plan),
              ::testing::ElementsAre(Ev("t_out", "o", "subgraph-end"), Ev("x", "t_op", "subgraph-input")));
  EXPECT_EQ(r.log.WithKeyword("EventInserted").back()->ToLine(),
            "[sync-event-insertion] EventInserted event=1 kind=event from=s0:x to=s1:t_op reason=subgraph-input");
  // The verifier finds the dependency itself, through the Data node.
  EXPECT_THAT(
      verify::VerifyHappensBefore(WithoutEvent(plan, "x", "t_op")),
      StatusIs(absl::StatusCode::kInternal,
               "subgraph-input dependency 'x' on stream 0 -> 't_op' on stream 1 is not ordered"));
}

// When the parent's input comes from a node that owns subgraphs, the reader
// also waits for their end nodes: the owner produces its outputs there (the
// subgraph-end rule reaches only the owner's direct successors). Found by the
// full property test (seed 72: l0_q started before a known subgraph's input
// NetOutput).
TEST(SyncEventInsertionTest, OrdersSubgraphInputsAfterTheProducingOwnersSubgraphEnd) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "f1", "type": "PartitionedCall", "inputs": ["x:0"], "subgraphs": ["b1"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "f2", "type": "PartitionedCall", "inputs": ["f1:0"], "subgraphs": ["b2"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "Add", "inputs": ["f2:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [
     {"name": "b1", "parent": "f1", "nodes": [
      {"name": "d1", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "a1", "type": "Add", "inputs": ["d1:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "out1", "type": "NetOutput", "inputs": ["a1:0"], "attrs": {"_test_stream": 1}}]},
     {"name": "b2", "parent": "f2", "nodes": [
      {"name": "d2", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "a2", "type": "Add", "inputs": ["d2:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
      {"name": "out2", "type": "NetOutput", "inputs": ["a2:0"], "attrs": {"_test_stream": 2}}]}]})json");
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk());
  EXPECT_THAT(Events(plan), ::testing::ElementsAre(Ev("f1", "a2", "subgraph-input"), Ev("out1", "a2", "subgraph-input"),
                                                   Ev("out1", "f2", "subgraph-end"), Ev("out2", "o", "subgraph-end"),
                                                   Ev("x", "a1", "subgraph-input")));
  EXPECT_THAT(
      verify::VerifyHappensBefore(WithoutEvent(plan, "out1", "a2")),
      StatusIs(absl::StatusCode::kInternal,
               "subgraph-input dependency 'out1' on stream 1 -> 'a2' on stream 2 is not ordered"));
  // No other path orders f1 (its task on stream 0) or out1 before a2: the exact optimisation keeps both.
  Plan opt = plan;
  ASSERT_THAT(RunPasses(opt, Passes<SyncEventOptimization>()), IsOk());
  EXPECT_EQ(Events(opt), Events(plan));
}

// A control edge into an owner orders the whole of its subgraphs
// (ir/owner_control_inputs.h): every source of the body waits for w — a Data
// passes it on to its readers, so does a Const without a stream, a source
// with a stream waits itself — and so does a source of a call nested in the
// body, whose own owner has no control input (g itself reads k: it waits too).
TEST(SyncEventInsertionTest, OrdersEverySubgraphSourceAfterItsOwnersControlInputs) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "w", "type": "Add", "attrs": {"_test_stream": 3}, "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "PartitionedCall", "inputs": ["x:0"], "control_inputs": ["w"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "Add", "inputs": ["f:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [
     {"name": "body", "parent": "f", "nodes": [
      {"name": "d", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "k", "type": "Const", "outputs": [{"shape": [1]}]},
      {"name": "a", "type": "Add", "inputs": ["d:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "b", "type": "Add", "inputs": ["k:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
      {"name": "g", "type": "PartitionedCall", "inputs": ["k:0"], "subgraphs": ["inner"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
      {"name": "out", "type": "NetOutput", "inputs": ["a:0", "b:0", "g:0"], "attrs": {"_test_stream": 0}}]},
     {"name": "inner", "parent": "g", "nodes": [
      {"name": "s", "type": "RandomUniform", "attrs": {"_test_stream": 4}, "outputs": [{"shape": [1]}]},
      {"name": "in_out", "type": "NetOutput", "inputs": ["s:0"], "attrs": {"_test_stream": 0}}]}]})json");
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>(), {}, &r), IsOk());
  EXPECT_THAT(Events(plan),
              ::testing::ElementsAre(Ev("a", "out", "data-edge"), Ev("b", "out", "data-edge"),
                                     Ev("s", "in_out", "data-edge"), Ev("w", "a", "owner-control"),
                                     Ev("w", "b", "owner-control"), Ev("w", "f", "control-edge"),
                                     Ev("w", "g", "owner-control"), Ev("w", "s", "owner-control"),
                                     Ev("x", "a", "subgraph-input")));
  EXPECT_EQ(r.stats.Get("sync-event-insertion", "events_inserted"), 9);
  // The verifier finds each dependency itself.
  // (w → g is implied: g follows f on stream 0, and f waits for w.)
  for (const char* to : {"a", "b", "s"}) {
    EXPECT_THAT(
        verify::VerifyHappensBefore(WithoutEvent(plan, "w", to)),
        StatusIs(absl::StatusCode::kInternal,
                 StrCat("owner-control dependency 'w' on stream 3 -> '", to, "' on stream ")));
  }
}

TEST(SyncEventInsertionTest, SkipsEnterUnlessItFeedsStreamActive) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "e", "type": "Enter", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "n", "type": "Add", "inputs": ["e:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "act", "type": "StreamActive", "inputs": ["e:0"], "attrs": {"_test_stream": 1}}]})json");
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk());
  EXPECT_THAT(Events(plan), ::testing::ElementsAre(Ev("e", "act", "data-edge")));
}

TEST(SyncEventInsertionTest, RejectsSuccessorWithoutStream) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "inputs": ["a:0"], "outputs": [{"shape": [1]}]}]})json");
  EXPECT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()),
              StatusIs(absl::StatusCode::kInvalidArgument, "node 'b' (successor of 'a' on stream 0) has no stream"));
}

TEST(SyncEventInsertionTest, SkipsEdgesIntoStreamsActivatedLaterOnTheSenderStream) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "act", "type": "StreamActive", "control_inputs": ["a"], "attrs": {"_test_stream": 0, "_active_label_list": ["L"]}},
    {"name": "y", "type": "Add", "inputs": ["a:0"], "control_inputs": ["act"], "attrs": {"_test_stream": 1, "_stream_label": "L"}, "outputs": [{"shape": [1]}]}]})json");
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>(), {}, &r), IsOk());
  EXPECT_TRUE(plan.events.events.empty());
  ASSERT_EQ(r.log.WithKeyword("EventSkipped").size(), 2u);
  EXPECT_EQ(r.log.WithKeyword("EventSkipped")[0]->ToLine(),
            "[sync-event-insertion] EventSkipped from=a to=y reason=activated-by:act");
}

TEST(SyncEventInsertionTest, OrdersAttachedStreamsByTheirValueDependencies) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "p", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "q", "type": "MatmulAllReduce", "inputs": ["p:0"], "outputs": [{"shape": [1]}],
     "attrs": {"_test_stream": 1, "_test_attached": [2],
               "_attached_stream_info": {"_attached_stream_depend_value_list": [0]}}},
    {"name": "o", "type": "NetOutput", "inputs": ["q:0"], "attrs": {"_test_stream": 0}}]})json");
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization>()), IsOk());
  EXPECT_THAT(Events(plan), ::testing::ElementsAre(Ev("p", "q", "data-edge"), Ev("p", "q@att", "attached"),
                                                   Ev("q", "o", "data-edge"), Ev("q@att", "o", "attached-end")));
  EXPECT_EQ(plan.events.event_count, 4);
}

// An attached task reading an If's output: the owner's slot runs before its
// branches, so an event from the owner alone (GE's attached rule) lets the
// attached task start before the branch that makes the value; each branch's
// end orders it, as it orders the main task (found by the property test once
// it drew attached streams: 'l1_res2' attached started before 'l1_then_out').
TEST(SyncEventInsertionTest, OrdersAnAttachedReaderOfAnIfAfterItsBranchEnds) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "c", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "i", "type": "If", "inputs": ["c:0"], "subgraphs": ["t", "e"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "q", "type": "MatmulAllReduce", "inputs": ["i:0"], "outputs": [{"shape": [1]}],
     "attrs": {"_test_stream": 0, "_test_attached": [2],
               "_attached_stream_info": {"_attached_stream_depend_value_list": [0]}}},
    {"name": "o", "type": "NetOutput", "inputs": ["q:0"], "attrs": {"_test_stream": 0}}],
    "subgraphs": [
     {"name": "t", "parent": "i", "nodes": [
      {"name": "t_a", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t_a:0"], "attrs": {"_test_stream": 1}}]},
     {"name": "e", "parent": "i", "nodes": [
      {"name": "e_a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
      {"name": "e_out", "type": "NetOutput", "inputs": ["e_a:0"], "attrs": {"_test_stream": 0}}]}]})json");
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk());
  const std::vector<Ev> events = Events(plan);
  EXPECT_THAT(events, ::testing::Contains(Ev("t_out", "q@att", "subgraph-end")));
  EXPECT_THAT(events, ::testing::Contains(Ev("e_out", "q@att", "subgraph-end")));
  EXPECT_THAT(events, ::testing::Contains(Ev("t_out", "q", "subgraph-end")));
  EXPECT_THAT(verify::VerifyHappensBefore(plan), IsOk());
  // The verifier finds the dependency itself.
  Plan cut = plan;
  std::erase_if(cut.events.events, [&](const SyncEvent& e) {
    return cut.model.node(e.send).name == "t_out" && e.recv_attached == 0;
  });
  events::RecountIds(cut.events);
  EXPECT_THAT(verify::VerifyHappensBefore(cut),
              StatusIs(absl::StatusCode::kInternal,
                       "subgraph-end dependency 't_out' on stream 1 -> 'q' (attached 0)"));
}

// GE's V2 entries name the value dependencies
// `_attached_resource_depend_value_list_int`; the entry that got the stream
// is the one marked `_attached_resource_is_valid` (a non-required entry
// before it gets none).
TEST(SyncEventInsertionTest, ReadsGeV2DependListOfTheValidEntry) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "p", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "r", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "q", "type": "MatmulAllReduce", "inputs": ["r:0", "p:0"], "outputs": [{"shape": [1]}],
     "attrs": {"_test_stream": 1, "_test_attached": [2], "_attached_stream_info_list": [
       {"_attached_resource_name": "opt", "_attached_resource_depend_value_list_int": [0]},
       {"_attached_resource_name": "s", "_attached_resource_depend_value_list_int": [1],
        "_attached_resource_required_flag": true, "_attached_resource_is_valid": true, "_attached_resource_id": 2}]}},
    {"name": "o", "type": "NetOutput", "inputs": ["q:0"], "attrs": {"_test_stream": 0}}]})json");
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization>()), IsOk());
  const std::vector<Ev> events = Events(plan);
  EXPECT_THAT(events, ::testing::Contains(Ev("p", "q@att", "attached")));
  EXPECT_THAT(events, ::testing::Not(::testing::Contains(Ev("r", "q@att", "attached"))));
}

TEST(SyncEventInsertionTest, GivesDataAndControlEdgeBetweenTheSameNodesOneEvent) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "inputs": ["a:0"], "control_inputs": ["a"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]})json");
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>(), {}, &r), IsOk());
  EXPECT_THAT(Events(plan), ::testing::ElementsAre(Ev("a", "b", "data-edge")));
  ASSERT_EQ(r.log.WithKeyword("EventInserted").size(), 1u);
  EXPECT_EQ(r.log.WithKeyword("EventInserted")[0]->ToLine(),
            "[sync-event-insertion] EventInserted event=0 kind=event from=s0:a to=s1:b reason=data-edge");
}

// GE's event order with many senders (the radix path of GeOrder): main before
// attached, then sender name (names sharing long prefixes, bytes above 0x7f,
// prefixes of each other), graph name, node index, then old id.
TEST(SyncEventInsertionTest, GeOrderWithManySendersSortsByNameThenOldId) {
  Model m;
  m.set_name("g");
  std::mt19937 rng(3);
  const int n = 6000;
  for (int i = 0; i < n; ++i) {
    Node node;
    switch (rng() % 4) {
      case 0: node.name = StrCat("n", i); break;
      case 1: node.name = StrCat("shared_long_prefix/", rng() % 100000, "_", i); break;
      case 2: node.name = StrCat("\xc3\xa9t", i); break;
      default: node.name = StrCat("sh", i); break;
    }
    node.type = "Add";
    m.AddNode(kRootGraph, std::move(node));
  }
  std::vector<events::GeOrderKey> keys;
  for (int j = 0; j < 3 * n; ++j) {
    keys.push_back({NodeId(static_cast<int32_t>(rng() % n)), rng() % 5 == 0, static_cast<int64_t>(rng() % 1000)});
  }
  std::vector<uint32_t> expected(keys.size());
  for (size_t j = 0; j < keys.size(); ++j) expected[j] = static_cast<uint32_t>(j);
  std::stable_sort(expected.begin(), expected.end(), [&](uint32_t x, uint32_t y) {
    const auto& a = keys[x];
    const auto& b = keys[y];
    return std::make_tuple(a.attached, m.node(a.send).name, a.send.value, a.id) <
           std::make_tuple(b.attached, m.node(b.send).name, b.send.value, b.id);
  });
  EXPECT_EQ(events::GeOrder(m, keys), expected);
}

// SortSendersByName's three paths — a few senders (std::sort), many with
// names of few distinct bytes (8-byte mixed-radix code keys: "n<i>" names,
// also cut to equal prefixes and suffixed), and many with arbitrary bytes
// (16-byte keys) — give std::sort's order on the names, also when the
// prefixes come from insertion's SyncView.
TEST(SyncEventInsertionTest, SortSendersByNameMatchesComparisonSortOnEveryPath) {
  for (int variant = 0; variant < 3; ++variant) {
    for (int n : {300, 9000}) {
      Model m;
      m.set_name("g");
      std::mt19937 rng(static_cast<uint32_t>(17 + variant * 7 + n));
      for (int i = 0; i < n; ++i) {
        Node node;
        switch (variant) {
          case 0: node.name = StrCat("n", rng() % (3 * n)); break;                      // short, few byte values
          case 1: node.name = StrCat("layer", rng() % 40, "/op_", rng() % (2 * n)); break;  // long equal prefixes
          default: {
            for (int c = 0; c < 9; ++c) node.name.push_back(static_cast<char>(1 + rng() % 255));  // any byte
            break;
          }
        }
        if (i % 3 == 0) node.name += StrCat("#", i);  // names that extend others
        node.type = "Add";
        if (m.FindNode(node.name).valid()) continue;
        m.AddNode(kRootGraph, std::move(node));
      }
      BigVector<int32_t> senders;
      for (size_t i = 0; i < m.num_nodes(); ++i) {
        if (rng() % 4 != 0) senders.push_back(static_cast<int32_t>(i));
      }
      std::shuffle(senders.begin(), senders.end(), rng);
      std::vector<int32_t> expected(senders.begin(), senders.end());
      std::sort(expected.begin(), expected.end(), [&](int32_t x, int32_t y) {
        const Node& a = m.node(NodeId(x));
        const Node& b = m.node(NodeId(y));
        return a.name < b.name;
      });
      BigVector<int32_t> from_view = senders;
      events::SortSendersByName(m, senders);
      EXPECT_EQ(std::vector<int32_t>(senders.begin(), senders.end()), expected) << "variant " << variant << " n " << n;
      // The same with the name prefixes insertion's view keeps (no Node reads for them).
      Plan plan;
      plan.model = m;
      events::SyncView view(plan, /*physical=*/false, /*stream_order=*/false, /*name_prefixes=*/true);
      const BigVector<uint64_t> prefixes = view.TakeNamePrefixes();
      ASSERT_EQ(prefixes.size(), m.num_nodes());
      events::SortSendersByName(m, from_view, prefixes);
      EXPECT_EQ(std::vector<int32_t>(from_view.begin(), from_view.end()), expected) << "variant " << variant << " n " << n;
    }
  }
}

// The usual case takes a one-pass edge walk; activation labels, dynamic-path
// owners and rule-4 errors take the general one. Both must give the same
// events, ids, log and errors: random plans with control edges, stream-less
// producers, Enter nodes and stream-less consumers (with and without
// `_thread_scope_id`), through both.
TEST(SyncEventInsertionTest, FastAndGeneralEdgeWalksAgree) {
  int compared = 0;
  int errors = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    const int n = 20 + static_cast<int>(seed * 37 % 900);
    const int k = 1 + static_cast<int>(seed % 7);
    Plan base = events::testing::RandomPlan(seed, n, k, /*max_inputs=*/1 + seed % 5, /*window=*/8 + seed % 64);
    std::mt19937 rng(seed * 7919);
    for (size_t i = 0; i < base.model.num_nodes(); ++i) {
      Node& node = base.model.node(NodeId(static_cast<int32_t>(i)));
      const uint32_t r = rng() % 100;
      if (r < 4) {
        node.stream_id = -1;  // a producer without a stream (rule 1), or a rule-4 consumer
        if (seed % 3 != 0) node.attrs["_thread_scope_id"] = int64_t{1};
      } else if (r < 7) {
        node.type = "Enter";  // rule 3
      }
    }
    base.EnsureNodeVectors();
    Plan fast = base;
    Plan general = base;
    RunResult fast_run;
    RunResult general_run;
    std::vector<std::unique_ptr<Pass>> a;
    a.push_back(std::make_unique<SyncEventInsertion>(true));
    std::vector<std::unique_ptr<Pass>> b;
    b.push_back(std::make_unique<SyncEventInsertion>(false));
    absl::Status fs = RunPasses(fast, std::move(a), {}, &fast_run);
    absl::Status gs = RunPasses(general, std::move(b), {}, &general_run);
    SCOPED_TRACE(StrCat("seed ", seed, " n ", n, " k ", k));
    ASSERT_EQ(fs, gs);
    if (!fs.ok()) {
      ++errors;
      continue;
    }
    ASSERT_EQ(fast.events.events.size(), general.events.events.size());
    for (size_t i = 0; i < fast.events.events.size(); ++i) {
      const SyncEvent& x = fast.events.events[i];
      const SyncEvent& y = general.events.events[i];
      ASSERT_EQ(std::make_tuple(x.id, x.send, x.recv, x.send_attached, x.recv_attached, x.kind, x.reason),
                std::make_tuple(y.id, y.send, y.recv, y.send_attached, y.recv_attached, y.kind, y.reason))
          << "event " << i;
    }
    EXPECT_EQ(fast.events.event_count, general.events.event_count);
    EXPECT_EQ(fast_run.log.ToJsonLines(), general_run.log.ToJsonLines());
    compared += !fast.events.events.empty();
  }
  EXPECT_GT(compared, 30);  // most plans have events to compare
  EXPECT_GT(errors, 0);     // and some take the rule-4 error
}

// ge.event=notify: a notify pairs its k-th wait with its k-th record, but an
// event into a loop body is recorded once and waited every iteration, one out
// of it the reverse. Those stay events (kind "event"); the rest are notifies.
TEST(SyncEventInsertionTest, NotifyModeKeepsEventsThatCrossALoopLevel) {
  auto m = ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "x2", "type": "Add", "inputs": ["x:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "w", "type": "While", "inputs": ["x:0"], "subgraphs": ["cond", "body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["w:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [
      {"name": "cond", "parent": "w", "nodes": [
        {"name": "cd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "c1", "type": "Less", "inputs": ["cd:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "co", "type": "NetOutput", "inputs": ["c1:0"], "attrs": {"_test_stream": 0}}]},
      {"name": "body", "parent": "w", "nodes": [
        {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "b1", "type": "Add", "inputs": ["bd:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
        {"name": "b2", "type": "Add", "inputs": ["b1:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
        {"name": "bo", "type": "NetOutput", "inputs": ["b2:0"], "attrs": {"_test_stream": 0}}]}]})json");
  ASSERT_TRUE(m.ok()) << m.status();
  for (bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "fast path asked for" : "general path");
    Plan plan = PlanFromModel(*m);
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<SyncEventInsertion>(fast));
    ASSERT_THAT(RunPasses(plan, std::move(passes), {{"ge.event", "notify"}}), IsOk());
    std::map<std::string, std::string> kind;  // "from->to" → kind
    for (const SyncEvent& e : plan.events.events)
      kind[StrCat(plan.model.node(e.send).name, "->", plan.model.node(e.recv).name)] =
          SyncKindName(e.kind);
    EXPECT_EQ(kind["x->x2"], "notify");   // same loop level (none)
    EXPECT_EQ(kind["b1->b2"], "notify");  // both inside the body
    EXPECT_EQ(kind["x->c1"], "event");    // into the loop (subgraph input)
    EXPECT_EQ(kind["bo->y"], "event");    // out of it (subgraph end)
    EXPECT_THAT(verify::VerifyHappensBefore(plan), IsOk());
  }
}

}  // namespace
}  // namespace npuplan
