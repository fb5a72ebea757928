#include "npuplan/events/sync_node_generation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

template <typename T>
T GetAttr(const Model& m, std::string_view node, std::string_view attr) {
  const AttrValue* v = FindAttr(m.node(m.FindNode(node)).attrs, attr);
  return v != nullptr && v->is<T>() ? *v->as<T>() : T{};
}

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RandomPlan;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::NodeOrder;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

constexpr char kTwoStreams[] = R"json({"name": "g", "nodes": [
  {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "Add", "inputs": ["a:0", "b:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}]})json";

Plan ParsePlan(const char* json) {
  auto m = ParseVerifiedGraph(json);
  EXPECT_TRUE(m.ok()) << m.status();
  return PlanFromModel(std::move(m).value());
}

auto AllPasses() {
  return Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse, PhysicalStreamSplit,
                SyncNodeGeneration>();
}

TEST(SyncNodeGenerationTest, PlacesSendAfterSenderAndRecvBeforeReceiver) {
  Plan plan = ParsePlan(kTwoStreams);
  ASSERT_THAT(RunPasses(plan, AllPasses()), IsOk());
  EXPECT_THAT(NodeOrder(plan.model),
              ::testing::ElementsAre("a", "g_Send_0", "g_Recv_0", "b", "g_Send_1", "g_Recv_1", "c"));
  const Node& send = ::npuplan::testing::NodeNamed(plan.model, "g_Send_0");
  EXPECT_EQ(send.type, "Send");
  EXPECT_EQ(GetIntAttr(send.attrs, "event_id"), 0);
  EXPECT_EQ(send.stream_id, 0);
  EXPECT_EQ(plan.physical_stream[plan.model.FindNode("g_Recv_0").index()], 1);
  EXPECT_EQ(plan.tasks[plan.model.FindNode("g_Recv_0").index()], 2);
  const Node& b = ::npuplan::testing::NodeNamed(plan.model, "b");
  EXPECT_THAT(b.control_inputs, ::testing::Contains(plan.model.FindNode("g_Recv_0")));
  EXPECT_EQ(::npuplan::testing::NodeNamed(plan.model, "c").topo_id, 6);
}

TEST(SyncNodeGenerationTest, NotifyModeGeneratesNotifyNodes) {
  Plan plan = ParsePlan(kTwoStreams);
  ASSERT_THAT(RunPasses(plan, AllPasses(), {{"ge.event", "notify"}}), IsOk());
  const Node& send = ::npuplan::testing::NodeNamed(plan.model, "g_Send_Notify_0");
  EXPECT_EQ(send.type, "SendNotify");
  EXPECT_EQ(GetIntAttr(send.attrs, "notify_id"), 0);
  EXPECT_EQ(plan.events.notify_count, 2);
  EXPECT_EQ(plan.events.event_count, 0);
}

TEST(SyncNodeGenerationTest, VerifierNoticesAMissingRecvNode) {
  Plan plan = ParsePlan(kTwoStreams);
  ASSERT_THAT(RunPasses(plan, AllPasses()), IsOk());
  Node& b = plan.model.node(plan.model.FindNode("b"));
  b.control_inputs.clear();
  EXPECT_THAT(verify::VerifySyncNodes(plan),
              StatusIs(absl::StatusCode::kInternal, "has no Recv node"));
}

// Regression: an attached-stream event's Recv sits on the attached stream, so
// its control edge into the receiver orders the receiver's attached slot; the
// verifier used to read it as a main-stream dependency and reject the plan.
TEST(SyncNodeGenerationTest, AttachedStreamSyncNodesPassTheHappensBeforeCheck) {
  Plan plan = ParsePlan(R"json({"name": "labels", "nodes": [
    {"name": "p", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "mc2", "type": "MatmulAllReduce", "inputs": ["p:0"], "outputs": [{"shape": [1]}],
     "attrs": {"_test_stream": 1, "_test_attached": [2],
               "_attached_stream_info": {"_attached_stream_depend_value_list": [0]}}},
    {"name": "o", "type": "NetOutput", "inputs": ["mc2:0"], "attrs": {"_test_stream": 0}}]})json");
  ASSERT_THAT(RunPasses(plan, AllPasses()), IsOk());
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  // p → mc2@attached: the Recv is on attached stream 2 and feeds mc2 by a control edge.
  const Model& m = plan.model;
  int attached_recvs = 0, attached_sends = 0;
  for (const Node& n : m.nodes()) {
    if (n.type == "Recv" && n.stream_id == 2) {
      ++attached_recvs;
      EXPECT_THAT(::npuplan::testing::NodeNamed(m, "mc2").control_inputs, ::testing::Contains(m.FindNode(n.name)));
    }
    if (n.type == "Send" && n.stream_id == 2) {
      ++attached_sends;
      EXPECT_EQ(n.control_inputs, std::vector<NodeId>{m.FindNode("mc2")});
    }
  }
  EXPECT_EQ(attached_recvs, 1);  // p → mc2 (attached value)
  EXPECT_EQ(attached_sends, 1);  // mc2 (attached) → o (CoverAllStreamByNetoutput)
}

// The verifier still rejects an attached-stream event whose Recv is gone.
TEST(SyncNodeGenerationTest, VerifierNoticesAnUnorderedAttachedSlot) {
  Plan plan = ParsePlan(R"json({"name": "labels", "nodes": [
    {"name": "p", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "mc2", "type": "MatmulAllReduce", "inputs": ["p:0"], "outputs": [{"shape": [1]}],
     "attrs": {"_test_stream": 1, "_test_attached": [2],
               "_attached_stream_info": {"_attached_stream_depend_value_list": [0]}}},
    {"name": "o", "type": "NetOutput", "inputs": ["mc2:0"], "attrs": {"_test_stream": 0}}]})json");
  ASSERT_THAT(RunPasses(plan, AllPasses()), IsOk());
  plan.events.events.erase(std::remove_if(plan.events.events.begin(), plan.events.events.end(),
                                          [](const SyncEvent& e) { return e.recv_attached >= 0; }),
                           plan.events.events.end());
  Model& m = plan.model;
  Node& mc2 = m.node(m.FindNode("mc2"));
  std::erase_if(mc2.control_inputs, [&](NodeId c) { return m.node(c).stream_id == 2; });
  EXPECT_THAT(verify::VerifyHappensBefore(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "attached-value dependency 'p' on stream 0 -> 'mc2' (attached 0)"));
}

// Regression (Silero, dynamic multi-stream, eventOptimization=none): a
// subgraph's parent sends and receives events through its own Send/Recv
// nodes, whose control edges made them look like the parent's successors and
// inputs; the verifier demanded subgraph-end (NetOutput → parent's Send) and
// subgraph-entry (parent's Recv → subgraph roots) orderings GE never inserts.
TEST(SyncNodeGenerationTest, ParentsOwnSyncNodesAreNotSubgraphBoundaryDependencies) {
  for (const char* mode : {"none", "ge", "exact"}) {
    Plan plan = ParsePlan(R"json({"name": "g", "nodes": [
      {"name": "x", "type": "Add", "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
      {"name": "f", "type": "PartitionedCall", "inputs": ["x:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
      {"name": "o", "type": "Add", "inputs": ["f:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]}],
      "subgraphs": [{"name": "body", "parent": "f", "nodes": [
        {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 1}, "outputs": [{"shape": [1]}]},
        {"name": "t_op", "type": "Add", "inputs": ["t_in:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
        {"name": "t_out", "type": "NetOutput", "inputs": ["t_op:0"], "attrs": {"_test_stream": 1}}]}]})json");
    ASSERT_THAT(RunPasses(plan, AllPasses(), {{"npuplan.eventOptimization", mode}}), IsOk()) << mode;
    EXPECT_THAT(verify::VerifyPlan(plan), IsOk()) << mode;
    const Model& m = plan.model;
    if (std::string_view(mode) == "none") {
      // f → o and x → f are events: f has a Send after it and a Recv before it.
      int f_sends = 0, f_recvs = 0;
      for (const Node& n : m.nodes()) {
        if (n.type == "Send" && n.control_inputs == std::vector<NodeId>{m.FindNode("f")}) ++f_sends;
      }
      for (NodeId c : m.node(m.FindNode("f")).control_inputs) f_recvs += m.node(c).type == "Recv";
      EXPECT_EQ(f_sends, 1);
      EXPECT_EQ(f_recvs, 1);
    }
    // The real boundary dependency is still checked: drop the subgraph-end
    // event t_out → o and its Recv's edge into o.
    Plan cut = plan;
    auto end = std::find_if(cut.events.events.begin(), cut.events.events.end(),
                            [](const SyncEvent& e) { return e.reason == SyncReason::kSubgraphEnd; });
    ASSERT_NE(end, cut.events.events.end()) << mode;
    const int64_t id = end->id;
    cut.events.events.erase(end);
    Model& cm = cut.model;
    std::erase_if(cm.node(cm.FindNode("o")).control_inputs, [&](NodeId c) {
      return cm.node(c).type == "Recv" && GetIntAttr(cm.node(c).attrs, "event_id") == id;
    });
    EXPECT_THAT(
        verify::VerifyHappensBefore(cut),
        StatusIs(absl::StatusCode::kInternal, "subgraph-end dependency 't_out' on stream 1 -> 'o'"))
        << mode;
  }
}

// Dynamic path (GE DynamicStreamAllocator::InsertEvents): no Send/Recv nodes,
// the ids go into `_send_event_ids` / `_recv_event_ids`, checked by the verifier.
TEST(SyncNodeGenerationTest, DynamicGraphsCarryEventIdsAsAttributes) {
  Plan plan = ParsePlan(kTwoStreams);
  plan.partition.ran = true;
  plan.partition.decision = PartitionDecision::kWholeDynamic;
  plan.streams.mode = StreamMode::kDynamicMulti;
  ASSERT_THAT(RunPasses(plan, AllPasses()), IsOk());
  EXPECT_THAT(NodeOrder(plan.model), ::testing::ElementsAre("a", "b", "c"));
  const Model& m = plan.model;
  // a and c share stream 0, so a→b (id 0) and b→c (id 1) are the events.
  EXPECT_EQ(GetAttr<AttrValue::IntList>(m, "a", "_send_event_ids"), (AttrValue::IntList{0}));
  EXPECT_EQ(GetAttr<AttrValue::IntList>(m, "b", "_recv_event_ids"), (AttrValue::IntList{0}));
  EXPECT_EQ(GetAttr<AttrValue::IntList>(m, "b", "_send_event_ids"), (AttrValue::IntList{1}));
  EXPECT_EQ(GetAttr<AttrValue::IntList>(m, "c", "_recv_event_ids"), (AttrValue::IntList{1}));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  // A wrong id list is caught.
  plan.model.node(plan.model.FindNode("c")).attrs["_recv_event_ids"] = AttrValue::IntList{0};
  EXPECT_THAT(verify::VerifySyncNodes(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "node 'c' has _recv_event_ids [0] but its dynamic-path events are [1]"));
  // So is a missing one.
  plan.model.node(plan.model.FindNode("c")).attrs.erase("_recv_event_ids");
  EXPECT_THAT(verify::VerifySyncNodes(plan),
              StatusIs(absl::StatusCode::kInternal, "has _recv_event_ids []"));
}

// Dynamic path with a subgraph owner: the owner carries the ids of the
// events it records at its completion (sent from its subgraph's NetOutput in
// the plan), no boundary events, and GE's counts in ge mode.
TEST(SyncNodeGenerationTest, DynamicOwnerCarriesTheEventsItRecordsAfterItsSubgraph) {
  constexpr char kOwner[] = R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "p", "type": "PartitionedCall", "inputs": ["x:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["p:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "z", "type": "Add", "inputs": ["p:0", "y:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "body", "parent": "p", "nodes": [
      {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
      {"name": "t", "type": "Add", "inputs": ["t_in:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t:0"], "attrs": {"_test_stream": 0}}]}]})json";
  for (const char* mode : {"none", "ge", "exact"}) {
    Plan plan = ParsePlan(kOwner);
    plan.partition.ran = true;
    plan.partition.decision = PartitionDecision::kWholeDynamic;
    plan.streams.mode = StreamMode::kDynamicMulti;
    ASSERT_THAT(RunPasses(plan, AllPasses(), {{"npuplan.eventOptimization", mode}}), IsOk()) << mode;
    EXPECT_THAT(verify::VerifyPlan(plan), IsOk()) << mode;
    // GE: edges x→p, t_in→t, t→t_out, p→y, p→z; p→z is dropped by the send
    // rule (first waiter on stream 1 is y) in ge and exact.
    EXPECT_EQ(plan.events.counts["naive"], 5) << mode;
    EXPECT_EQ(plan.events.counts["ge"], 4) << mode;
    EXPECT_EQ(plan.events.counts["exact"], 4) << mode;
    const Model& m = plan.model;
    EXPECT_THAT(NodeOrder(m), ::testing::ElementsAre("x", "p", "y", "z")) << mode;  // no Send/Recv nodes
    EXPECT_THAT(NodeOrder(m, m.FindNode("t").valid() ? m.node(m.FindNode("t")).graph : kRootGraph),
                ::testing::ElementsAre("t_in", "t", "t_out"))
        << mode;
    int64_t p_to_y = -1;
    for (const SyncEvent& e : plan.events.events) {
      if (m.node(e.recv).name == "y") p_to_y = e.id;
    }
    ASSERT_GE(p_to_y, 0) << mode;
    const AttrValue::IntList p_sends = GetAttr<AttrValue::IntList>(m, "p", "_send_event_ids");
    EXPECT_THAT(p_sends, ::testing::Contains(p_to_y)) << mode;
    EXPECT_FALSE(HasAttr(::npuplan::testing::NodeNamed(m, "t_out").attrs, "_send_event_ids")) << mode;
    // The attribute on the recording node instead is caught.
    Plan moved = plan;
    Model& mm = moved.model;
    mm.node(mm.FindNode("p")).attrs.erase("_send_event_ids");
    mm.node(mm.FindNode("t_out")).attrs["_send_event_ids"] = p_sends;
    EXPECT_THAT(verify::VerifySyncNodes(moved),
                StatusIs(absl::StatusCode::kInternal, "node 'p' has _send_event_ids []"))
        << mode;
    // The event table names the recorder: p, whose `_send_event_ids` carry
    // the id — not the NetOutput of one of its subgraphs (issue 20, item 11).
    for (const SyncEvent& e : plan.events.events) {
      if (e.id == p_to_y) {
        EXPECT_EQ(m.node(e.send).name, "p") << mode;
      }
    }
    EXPECT_THAT(verify::VerifyDynamicSenders(plan), IsOk()) << mode;
    Plan listed = plan;
    for (SyncEvent& e : listed.events.events) {
      if (e.id == p_to_y) e.send = listed.model.FindNode("t_out");
    }
    EXPECT_THAT(
        verify::VerifyDynamicSenders(listed),
        StatusIs(absl::StatusCode::kInternal,
                 "lists 't_out' as its sender, but that node's _send_event_ids do not carry it"))
        << mode;
  }
}

TEST(SyncNodeGenerationTest, RandomPlansStayVerifiedAndRoundTripThroughJson) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    Plan plan = RandomPlan(seed, 300, 4);
    for (size_t i = 0; i < plan.model.num_nodes(); ++i) plan.model.node(NodeId(static_cast<int32_t>(i))).attrs["_node_sqe_num"] = int64_t{20};
    ASSERT_THAT(RunPasses(plan, AllPasses()), IsOk());
    EXPECT_GT(plan.streams.physical, 4);  // ~75 nodes × ≥20 tasks per stream overflow 1024
    std::string text = WritePlanJson(plan);
    auto back = ParsePlanJson(text, "<plan>");
    ASSERT_THAT(back, IsOk());
    EXPECT_THAT(verify::VerifyPlan(*back), IsOk());
    EXPECT_EQ(WritePlanJson(*back), text);
  }
}

}  // namespace
}  // namespace npuplan
