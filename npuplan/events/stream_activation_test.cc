#include "npuplan/events/stream_activation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::NodeNamed;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

Plan ParsePlan(const char* json) {
  auto m = ParseVerifiedGraph(json);
  EXPECT_TRUE(m.ok()) << m.status();
  return PlanFromModel(std::move(m).value());
}

auto AllPasses() {
  return Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse, PhysicalStreamSplit,
                StreamActivation, SyncNodeGeneration>();
}

std::vector<int64_t> ActiveList(const Plan& plan, const char* node) {
  const AttrValue* v = FindAttr(NodeNamed(plan.model, node).attrs, "active_stream_list");
  return v && v->is<AttrValue::IntList>() ? *v->as<AttrValue::IntList>() : std::vector<int64_t>{};
}

constexpr char kActivated[] = R"json({"nodes": [
  {"name": "x", "type": "Add", "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
  {"name": "p", "type": "Add", "inputs": ["x:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
  {"name": "act", "type": "StreamActive", "control_inputs": ["p"], "attrs": {"_test_stream": 0, "_active_label_list": ["L"]}},
  {"name": "r", "type": "Add", "inputs": ["x:0"], "control_inputs": ["act"], "attrs": {"_test_stream": 1, "_stream_label": "L"}, "outputs": [{"shape": [1]}]}]})json";

TEST(StreamActivationTest, ActivationImpliesTheEventInBothModes) {
  for (const char* mode : {"ge", "exact"}) {
    Plan plan = ParsePlan(kActivated);
    RunResult r;
    ASSERT_THAT(RunPasses(plan, AllPasses(), {{"npuplan.eventOptimization", mode}}, &r), IsOk()) << mode;
    ASSERT_EQ(plan.events.events.size(), 1u) << mode;
    EXPECT_EQ(plan.model.node(plan.events.events[0].send).name, "p");
    EXPECT_EQ(plan.model.node(plan.events.events[0].recv).name, "act");
    EXPECT_EQ(plan.events.counts["naive"], 2);
    EXPECT_EQ(ActiveList(plan, "act"), std::vector<int64_t>{1});
    auto removed = r.log.WithKeyword("EventRemoved");
    ASSERT_EQ(removed.size(), 1u);
    EXPECT_THAT(removed[0]->ToLine(), ::testing::HasSubstr(std::string(mode) == "ge" ? "ge-activation" : "transitive"));
  }
}

// Issue #19: the activation count is ceil(stream tasks / limit); a limit of
// 2^63-1 (the option has no upper bound) made `tasks + limit - 1` overflow.
TEST(StreamActivationTest, ALimitAsLargeAsInt64CountsOneActivation) {
  Plan plan = ParsePlan(kActivated);
  ASSERT_THAT(RunPasses(plan, AllPasses(), {{"npuplan.device.maxTasksPerStream", "9223372036854775807"}}), IsOk());
  EXPECT_EQ(plan.tasks[plan.model.FindNode("act").index()], 1);
  EXPECT_EQ(ActiveList(plan, "act"), std::vector<int64_t>{1});
}

TEST(StreamActivationTest, ActivationListsGainSplitStreams) {
  Model m;
  m.set_name("g");
  Node act;
  act.name = "act";
  act.type = "StreamActive";
  act.engine = "DNN_VM_RTS";
  act.attrs["_test_stream"] = int64_t{0};
  act.attrs["_active_label_list"] = AttrValue::StringList{"L"};
  NodeId prev = m.AddNode(kRootGraph, std::move(act));
  for (int i = 0; i < 400; ++i) {
    Node n;
    n.name = StrCat("n", i);
    n.type = "Add";
    n.engine = "AIcoreEngine";
    n.outputs.push_back(TensorDesc{{1}, "float32"});
    if (i == 0) n.control_inputs.push_back(prev); else n.inputs.push_back({prev, 0});
    n.attrs["_test_stream"] = int64_t{1};
    n.attrs["_stream_label"] = "L";
    n.attrs["_node_sqe_num"] = int64_t{3};
    prev = m.AddNode(kRootGraph, std::move(n));
  }
  RenumberTopoIds(m);
  Plan plan = PlanFromModel(std::move(m));
  ASSERT_THAT(RunPasses(plan, AllPasses()), IsOk());
  EXPECT_EQ(plan.streams.physical, 3);
  EXPECT_EQ(ActiveList(plan, "act"), (std::vector<int64_t>{1, 2}));
  // One activation task per future physical stream of stream 1 (1200 tasks → 2).
  EXPECT_EQ(plan.tasks[plan.model.FindNode("act").index()], 2);
}

TEST(StreamActivationTest, SubgraphFirstActiveActivatesItsGraphsOtherStreams) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "call", "type": "PartitionedCall", "subgraphs": ["body"], "attrs": {"_test_stream": 0}}],
    "subgraphs": [{"name": "body", "parent": "call", "nodes": [
      {"name": "first", "type": "StreamActive", "attrs": {"_test_stream": 1, "subgraph_first_active": true}},
      {"name": "u", "type": "Add", "control_inputs": ["first"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
      {"name": "v", "type": "Add", "control_inputs": ["first"], "attrs": {"_test_stream": 3}, "outputs": [{"shape": [1]}]}]}]})json");
  ASSERT_THAT(RunPasses(plan, AllPasses()), IsOk());
  EXPECT_EQ(ActiveList(plan, "first"), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(plan.events.events.empty());  // the activation orders first → u, v
}

// A stream the first-active node activates starts only when its graph runs:
// `after` (root, stream 2) would wait for the call on a device. Refused,
// naming the activator, the stream and the node outside.
TEST(StreamActivationTest, RejectsAFirstActiveStreamThatAlsoRunsANodeOutsideItsGraph) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "call", "type": "PartitionedCall", "subgraphs": ["body"], "attrs": {"_test_stream": 0}},
    {"name": "after", "type": "Add", "control_inputs": ["call"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "body", "parent": "call", "nodes": [
      {"name": "first", "type": "StreamActive", "attrs": {"_test_stream": 1, "subgraph_first_active": true}},
      {"name": "u", "type": "Add", "control_inputs": ["first"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]}]}]})json");
  const absl::Status s = RunPasses(plan, AllPasses());
  EXPECT_THAT(s,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "node 'first' (subgraph_first_active) activates stream 2, which also runs "
                       "'after' outside its graph 'body'"));
  // GE's own first-active StreamActive is an `_rts_label_node`: the message says so.
  EXPECT_THAT(s,
              StatusIs(absl::StatusCode::kInvalidArgument, "which runs it on the owner's stream"));
}

TEST(StreamActivationTest, SwitchLabelOnSeveralStreamsGetsItsOwnStreamActive) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "sw", "type": "StreamSwitch", "attrs": {"_test_stream": 0, "_active_label_list": ["L"]}},
    {"name": "y1", "type": "Add", "control_inputs": ["sw"], "attrs": {"_test_stream": 1, "_stream_label": "L"}, "outputs": [{"shape": [1]}]},
    {"name": "y2", "type": "Add", "control_inputs": ["sw"], "attrs": {"_test_stream": 2, "_stream_label": "L"}, "outputs": [{"shape": [1]}]}]})json");
  RunResult r;
  ASSERT_THAT(RunPasses(plan, AllPasses(), {}, &r), IsOk());
  const Node& active = NodeNamed(plan.model, "sw_StreamActive_0");
  EXPECT_EQ(active.type, "StreamActive");
  EXPECT_EQ(plan.physical_stream[plan.model.FindNode("sw_StreamActive_0").index()], 3);
  EXPECT_EQ(ActiveList(plan, "sw"), std::vector<int64_t>{3});
  EXPECT_EQ(ActiveList(plan, "sw_StreamActive_0"), (std::vector<int64_t>{1, 2}));
  EXPECT_THAT(NodeNamed(plan.model, "y1").control_inputs, ::testing::ElementsAre(plan.model.FindNode("sw_StreamActive_0")));
  EXPECT_EQ(plan.streams.physical, 4);
  EXPECT_EQ(r.log.WithKeyword("StreamActiveCreated").size(), 1u);
}

TEST(StreamActivationTest, RejectsANodeActivatingItsOwnStream) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "act", "type": "StreamActive", "attrs": {"_test_stream": 0, "_active_label_list": ["L"]}},
    {"name": "y", "type": "Add", "control_inputs": ["act"], "attrs": {"_test_stream": 0, "_stream_label": "L"}, "outputs": [{"shape": [1]}]}]})json");
  EXPECT_THAT(RunPasses(plan, AllPasses()),
              StatusIs(absl::StatusCode::kInvalidArgument, "'act' would activate its own stream 0"));
}

TEST(StreamActivationTest, LoopActiveActivatesTheRestAndLastNodesSignalTheSwitch) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "sw", "type": "StreamSwitch", "attrs": {"_test_stream": 0}},
    {"name": "loop", "type": "StreamActive", "control_inputs": ["sw"], "attrs": {"_test_stream": 0, "is_loop_active": true}},
    {"name": "a", "type": "Add", "control_inputs": ["loop"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "control_inputs": ["loop"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]}]})json");
  ASSERT_THAT(RunPasses(plan, AllPasses()), IsOk());
  EXPECT_EQ(ActiveList(plan, "loop"), (std::vector<int64_t>{1, 2}));
  int loop_events = 0;
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason != SyncReason::kLoop) continue;
    ++loop_events;
    EXPECT_EQ(plan.model.node(e.recv).name, "sw");
  }
  EXPECT_EQ(loop_events, 2);
}

// SplitStreamOpeningGraphs against the physical SyncView's per-stream slot
// lists, on random split plans with random attached streams (some with
// physical ids of their own) and split ids with and without slots.
TEST(StreamActivationTest, OpeningGraphsMatchTheFirstSlotOfEachSplitStream) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    Plan plan = events::testing::RandomPlan(seed, 30 + static_cast<int>(seed % 60), 2 + seed % 4);
    ASSERT_THAT(RunPasses(plan,
                          Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization,
                                 EventReuse, PhysicalStreamSplit>(),
                          {{"npuplan.device.maxTasksPerStream", "40"}}),
                IsOk())
        << "seed " << seed;
    const int64_t physical = plan.streams.physical;
    for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
      if (rng() % 5 != 0) continue;
      Node& node = plan.model.node(NodeId(static_cast<int32_t>(i)));
      node.attached_stream_ids = {static_cast<int64_t>(rng() % (physical + 2))};
      if (rng() % 2 == 0) {
        plan.streams.attached_physical[static_cast<int64_t>(i)] = {
            static_cast<int64_t>(rng() % (physical + 2))};
      }
    }
    for (int64_t p = 0; p < physical + 3; ++p) {
      if (rng() % 3 == 0) plan.streams.split_to_logical[p] = 0;
    }
    const SyncView view(plan, /*physical=*/true);
    std::map<int64_t, GraphId> want;
    for (const auto& [p, l] : plan.streams.split_to_logical) {
      if (p < view.num_streams() && !view.stream_slots(p).empty())
        want[p] = plan.model.node(view.node_of(view.stream_slots(p).front())).graph;
    }
    const std::vector<NodeId> order = plan.model.ExecutionOrder();
    EXPECT_EQ(events::SplitStreamOpeningGraphs(plan, order), want) << "seed " << seed;
  }
}

}  // namespace
}  // namespace npuplan
