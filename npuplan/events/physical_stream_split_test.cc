#include "npuplan/events/physical_stream_split.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// A chain n0 → n1 → … on `streams` streams (node i on stream i % streams),
// each node with `_node_sqe_num` = sqe; nodes in [label_from, label_to) carry
// `_continuous_stream_label` "L".
Plan Chain(int n, int64_t sqe, int streams = 1, int label_from = -1, int label_to = -1, bool attached = false) {
  Model model;
  model.set_name("g");
  NodeId prev;
  for (int i = 0; i < n; ++i) {
    Node node;
    node.name = StrCat("n", i);
    node.type = "Add";
    node.engine = "AIcoreEngine";
    node.outputs.push_back(TensorDesc{{1}, "float32"});
    if (prev.valid()) node.inputs.push_back({prev, 0});
    node.attrs["_node_sqe_num"] = sqe;
    node.attrs["_test_stream"] = int64_t{i % streams};
    if (i >= label_from && i < label_to) node.attrs["_continuous_stream_label"] = "L";
    if (attached) node.attrs["_test_attached"] = AttrValue::IntList{streams};
    prev = model.AddNode(kRootGraph, std::move(node));
  }
  RenumberTopoIds(model);
  return PlanFromModel(std::move(model));
}

absl::Status Compile(Plan& plan, std::map<std::string, std::string> options = {}, RunResult* r = nullptr) {
  return RunPasses(plan,
                   Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse,
                          PhysicalStreamSplit>(),
                   options, r);
}

int64_t Phys(const Plan& p, int i) { return p.physical_stream[p.model.FindNode(StrCat("n", i)).index()]; }

// A subgraph node whose previous node on its logical stream is the
// subgraph's owner does not open a physical stream: the split event's Send
// would follow the owner in the owner's graph — after the whole subgraph in
// execution order — and run backwards (GE's lowered subgraphs start with a
// LabelSet, which may not open a stream either). The next node opens it.
// Found by the full property test (seed 136: a split event into a While cond).
TEST(PhysicalStreamSplitTest, SubgraphNodeAfterItsOwnerDoesNotOpenAStream) {
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "PartitionedCall", "inputs": ["a:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "Add", "inputs": ["f:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 1}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "body", "parent": "f", "nodes": [
      {"name": "d", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "b1", "type": "Add", "inputs": ["d:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1]}]},
      {"name": "b2", "type": "Add", "inputs": ["b1:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1]}]},
      {"name": "out", "type": "NetOutput", "inputs": ["b2:0"], "attrs": {"_test_stream": 0}}]}]})json");
  ASSERT_TRUE(m.ok()) << m.status();
  Plan plan = PlanFromModel(std::move(m).value());
  // Limit 27 + 5: a (3) fits, f owns a subgraph, b1 (6) overflows but follows its owner f, b2 opens.
  ASSERT_THAT(RunPasses(plan,
                        Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse,
                               PhysicalStreamSplit, SyncNodeGeneration>(),
                        {{"npuplan.device.maxTasksPerStream", "32"}}),
              IsOk());
  auto phys = [&](const char* n) { return plan.physical_stream[plan.model.FindNode(n).index()]; };
  EXPECT_EQ(phys("b1"), phys("a"));
  EXPECT_NE(phys("b2"), phys("a"));
  ASSERT_EQ(plan.events.events.size(), 1u);
  const SyncEvent& e = plan.events.events[0];
  EXPECT_EQ(e.reason, SyncReason::kSplit);
  EXPECT_EQ(plan.model.node(e.send).name, "b1");
  EXPECT_EQ(plan.model.node(e.recv).name, "b2");
}

// x → While(cond: c1; body: b1 → b2 → b3) → y → z on one stream (or an
// If/Case with those two branches), 3 tasks per node (limit 27 + 9: three
// nodes fit).
Model LoopOnOneStream(std::string_view owner_type) {
  std::string text = R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1]}]},
    {"name": "w", "type": "OWNER", "inputs": ["x:0"], "subgraphs": ["cond", "body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["w:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1]}]},
    {"name": "z", "type": "Add", "inputs": ["y:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [
      {"name": "cond", "parent": "w", "nodes": [
        {"name": "cd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "c1", "type": "Less", "inputs": ["cd:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "co", "type": "NetOutput", "inputs": ["c1:0"], "attrs": {"_test_stream": 0}}]},
      {"name": "body", "parent": "w", "nodes": [
        {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "b1", "type": "Add", "inputs": ["bd:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1]}]},
        {"name": "b2", "type": "Add", "inputs": ["b1:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1]}]},
        {"name": "b3", "type": "Add", "inputs": ["b2:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 3}, "outputs": [{"shape": [1]}]},
        {"name": "bo", "type": "NetOutput", "inputs": ["b3:0"], "attrs": {"_test_stream": 0}}]}]})json";
  text.replace(text.find("OWNER"), 5, owner_type);
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

// A physical stream opening inside a loop body or branch, or right after
// one, would order one run only: the next iteration's cond on the old stream
// would not wait for this one's body on the new, a split event recorded in
// every iteration would be waited once, and a stream opened in one branch
// carries on after the owner ordered behind that branch only (property seeds
// 205, 232, 537, 1303: races when the other branch ran). So the stream
// overflows inside the subgraphs, and after a branch the first node after
// the owner's last slot does not open either; the next one does. A static
// loop may be left whole: the stream opens right after it, and
// stream-activation moves the split event to a loop exit gate (recorded once
// per loop run). A PartitionedCall (always runs once) splits inside its
// subgraph as before.
TEST(PhysicalStreamSplitTest, NoStreamOpensInsideALoopOrBranchOrRightAfterABranch) {
  for (std::string_view type : {"While", "Loop", "If", "Case"}) {
    SCOPED_TRACE(type);
    const bool loop = type == "While" || type == "Loop";
    Plan plan = PlanFromModel(LoopOnOneStream(type));
    RunResult r;
    ASSERT_THAT(RunPasses(plan,
                          Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization,
                                 EventReuse, PhysicalStreamSplit, SyncNodeGeneration>(),
                          {{"npuplan.device.maxTasksPerStream", "36"}}, &r),
                IsOk());
    auto phys = [&](const char* n) { return plan.physical_stream[plan.model.FindNode(n).index()]; };
    for (const char* n : {"w", "c1", "b1", "b2", "b3"}) EXPECT_EQ(phys(n), phys("x")) << n;
    EXPECT_EQ(phys("y") != phys("x"), loop);
    EXPECT_NE(phys("z"), phys("x"));
    ASSERT_EQ(r.log.WithKeyword("StreamSplit").size(), 1u);
    EXPECT_THAT(r.log.WithKeyword("StreamSplit")[0]->ToLine(),
                ::testing::HasSubstr(loop ? "at=y " : "at=z "));
    if (!loop) {  // with a loop the split event still crosses: stream-activation gates it
      EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
    }
  }
  for (std::string_view type : {"While", "Loop"}) {  // the whole pipeline gates the split event
    SCOPED_TRACE(type);
    Plan plan = PlanFromModel(LoopOnOneStream(type));
    RunResult r;
    ASSERT_THAT(RunEventsPasses(plan, &r, {{"npuplan.device.maxTasksPerStream", "36"}}), IsOk());
    const SyncEvent* split = nullptr;
    for (const SyncEvent& e : plan.events.events)
      split = e.reason == SyncReason::kSplit ? &e : split;
    ASSERT_NE(split, nullptr);
    EXPECT_EQ(plan.model.node(split->send).name, "w_LoopExit_0");
    EXPECT_EQ(plan.model.node(split->recv).name, "y");
    EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  }
  Plan call = PlanFromModel(LoopOnOneStream("PartitionedCall"));
  ASSERT_THAT(Compile(call, {{"npuplan.device.maxTasksPerStream", "36"}}), IsOk());
  EXPECT_NE(call.physical_stream[call.model.FindNode("b3").index()],
            call.physical_stream[call.model.FindNode("x").index()]);
}

// An attached stream never opens across a loop's boundary: loop gates are
// main-stream nodes, so the split event would stay recorded once and waited
// every iteration. Its split waits for the node after the loop's next node,
// as before (3 attached tasks per node, limit 27 + 9).
TEST(PhysicalStreamSplitTest, AnAttachedStreamDoesNotOpenAcrossALoop) {
  constexpr char kText[] = R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0, "_test_attached": [1], "_node_sqe_num": 1, "_hccl_attached_task_num": 3}, "outputs": [{"shape": [1]}]},
    {"name": "w", "type": "While", "inputs": ["x:0"], "subgraphs": ["cond", "body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["w:0"], "attrs": {"_test_stream": 0, "_test_attached": [1], "_node_sqe_num": 1, "_hccl_attached_task_num": 3}, "outputs": [{"shape": [1]}]},
    {"name": "z", "type": "Add", "inputs": ["y:0"], "attrs": {"_test_stream": 0, "_test_attached": [1], "_node_sqe_num": 1, "_hccl_attached_task_num": 3}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [
      {"name": "cond", "parent": "w", "nodes": [
        {"name": "cd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "c1", "type": "Less", "inputs": ["cd:0"], "attrs": {"_test_stream": 0, "_test_attached": [1], "_node_sqe_num": 1, "_hccl_attached_task_num": 3}, "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "co", "type": "NetOutput", "inputs": ["c1:0"], "attrs": {"_test_stream": 0}}]},
      {"name": "body", "parent": "w", "nodes": [
        {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "b1", "type": "Add", "inputs": ["bd:0"], "attrs": {"_test_stream": 0, "_test_attached": [1], "_node_sqe_num": 1, "_hccl_attached_task_num": 3}, "outputs": [{"shape": [1]}]},
        {"name": "b2", "type": "Add", "inputs": ["b1:0"], "attrs": {"_test_stream": 0, "_test_attached": [1], "_node_sqe_num": 1, "_hccl_attached_task_num": 3}, "outputs": [{"shape": [1]}]},
        {"name": "bo", "type": "NetOutput", "inputs": ["b2:0"], "attrs": {"_test_stream": 0}}]}]})json";
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(kText);
  ASSERT_TRUE(m.ok()) << m.status();
  Plan plan = PlanFromModel(*std::move(m));
  RunResult r;
  ASSERT_THAT(RunEventsPasses(plan, &r, {{"npuplan.device.maxTasksPerStream", "36"}}), IsOk());
  std::vector<std::string> at;
  for (const Remark* split : r.log.WithKeyword("StreamSplit")) at.push_back(split->ToLine());
  // The main stream (with the attached events' tasks) opens right after the
  // loop; the attached stream one node later.
  ASSERT_EQ(at.size(), 2u);
  EXPECT_THAT(at[0], ::testing::HasSubstr("logical=0 physical=2 at=y "));
  EXPECT_THAT(at[1], ::testing::HasSubstr("logical=1 physical=3 at=z "));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

// The verifier refuses a split inside a loop or branch (a plan the split did
// not write: the body moved to a stream of its own).
TEST(PhysicalStreamSplitTest, VerifierRefusesAStreamOpeningInsideALoopOrBranch) {
  for (std::string_view type : {"While", "If"}) {
    SCOPED_TRACE(type);
    Plan plan = PlanFromModel(LoopOnOneStream(type));
    ASSERT_THAT(Compile(plan, {{"npuplan.device.maxTasksPerStream", "36"}}), IsOk());
    ASSERT_THAT(verify::VerifyPhysicalStreams(plan), IsOk());
    const int64_t fresh = plan.streams.physical;
    for (const char* n : {"b1", "b2", "b3", "bo"})
      plan.physical_stream[plan.model.FindNode(n).index()] = fresh;
    plan.streams.split_to_logical[fresh] = 0;
    plan.streams.physical = fresh + 1;
    EXPECT_THAT(verify::VerifyPhysicalStreams(plan),
                StatusIs(absl::StatusCode::kInternal,
                         "logical stream 0 moves from physical stream 0 at node 'co' to " +
                             std::to_string(fresh) +
                             " at node 'b1': a physical stream may not open "
                             "inside a loop body or If/Case branch"));
  }
}

TEST(PhysicalStreamSplitTest, Keeps332NodesOfThreeTasksOnOneStream) {
  Plan plan = Chain(332, 3);
  ASSERT_THAT(Compile(plan), IsOk());
  EXPECT_EQ(plan.streams.physical, 1);
  EXPECT_TRUE(plan.events.events.empty());
}

TEST(PhysicalStreamSplitTest, Node333OfThreeTasksOpensANewStream) {
  Plan plan = Chain(333, 3);
  RunResult r;
  ASSERT_THAT(Compile(plan, {}, &r), IsOk());
  EXPECT_EQ(plan.streams.physical, 2);
  EXPECT_EQ(Phys(plan, 331), 0);
  EXPECT_EQ(Phys(plan, 332), 1);
  EXPECT_EQ(plan.streams.split_to_logical, (std::map<int64_t, int64_t>{{1, 0}}));
  ASSERT_EQ(plan.events.events.size(), 1u);
  EXPECT_EQ(plan.model.node(plan.events.events[0].send).name, "n331");
  EXPECT_EQ(plan.model.node(plan.events.events[0].recv).name, "n332");
  EXPECT_EQ(plan.events.events[0].reason, SyncReason::kSplit);
  ASSERT_EQ(r.log.WithKeyword("StreamSplit").size(), 1u);
  EXPECT_EQ(r.log.WithKeyword("StreamSplit")[0]->ToLine(),
            "[physical-stream-split] StreamSplit logical=0 physical=1 at=n332 tasks=3 moved=0");
}

// GE's dynamic path ends at GenTask: a dynamic-mode plan is never split,
// however deep its streams (issue 5 item 2).
TEST(PhysicalStreamSplitTest, DynamicShapeStreamsAreNotSplit) {
  for (StreamMode mode : {StreamMode::kDynamicSingle, StreamMode::kDynamicMulti}) {
    Plan plan = Chain(500, 5);
    plan.partition.ran = true;
    plan.partition.decision = PartitionDecision::kWholeDynamic;
    plan.streams.mode = mode;
    RunResult r;
    ASSERT_THAT(Compile(plan, {}, &r), IsOk()) << StreamModeName(mode);
    EXPECT_EQ(plan.streams.physical, 1) << StreamModeName(mode);
    EXPECT_EQ(Phys(plan, 499), 0) << StreamModeName(mode);
    EXPECT_TRUE(plan.streams.split_to_logical.empty()) << StreamModeName(mode);
    EXPECT_TRUE(plan.streams.huge.empty()) << StreamModeName(mode);
    EXPECT_EQ(plan.streams.task_limit, 0) << StreamModeName(mode);
    ASSERT_EQ(r.log.WithKeyword("SplitDisabled").size(), 1u) << StreamModeName(mode);
    EXPECT_EQ(r.log.WithKeyword("SplitDisabled")[0]->ToLine(),
              "[physical-stream-split] SplitDisabled reason=dynamic-shape")
        << StreamModeName(mode);
  }
  // The same chain with static streams splits (2500 tasks > 1024).
  Plan fixed = Chain(500, 5);
  ASSERT_THAT(Compile(fixed), IsOk());
  EXPECT_EQ(fixed.streams.physical, 3);
}

TEST(PhysicalStreamSplitTest, FiveTasksGive199NodesPerStream) {
  Plan plan = Chain(500, 5);
  ASSERT_THAT(Compile(plan), IsOk());
  EXPECT_EQ(Phys(plan, 198), 0);
  EXPECT_EQ(Phys(plan, 199), 1);
  EXPECT_EQ(Phys(plan, 397), 1);
  EXPECT_EQ(Phys(plan, 398), 2);
  EXPECT_EQ(plan.streams.physical, 3);
}

TEST(PhysicalStreamSplitTest, ContinuousLabelRunMovesTogether) {
  Plan plan = Chain(340, 3, 1, 328, 336);
  ASSERT_THAT(Compile(plan), IsOk());
  EXPECT_EQ(Phys(plan, 327), 0);
  for (int i = 328; i < 336; ++i) EXPECT_EQ(Phys(plan, i), 1) << i;
  ASSERT_EQ(plan.events.events.size(), 1u);
  EXPECT_EQ(plan.model.node(plan.events.events[0].send).name, "n327");
  EXPECT_EQ(plan.model.node(plan.events.events[0].recv).name, "n328");
}

TEST(PhysicalStreamSplitTest, UnlimitedDepthDisablesTheSplit) {
  Plan plan = Chain(1000, 3);
  ASSERT_THAT(Compile(plan, {{"npuplan.device.unlimitedStreamDepth", "true"}}), IsOk());
  EXPECT_EQ(plan.streams.physical, 1);
  EXPECT_EQ(plan.streams.task_limit, 0);
}

TEST(PhysicalStreamSplitTest, SingleStreamModeUsesAHugeStream) {
  Plan plan = Chain(1000, 3);
  ASSERT_THAT(Compile(plan, {{"ge.enableSingleStream", "true"}}), IsOk());
  EXPECT_EQ(plan.streams.physical, 1);
  EXPECT_EQ(plan.streams.huge, std::vector<int64_t>{0});
  Plan big = Chain(3000, 3);
  ASSERT_THAT(Compile(big, {{"ge.enableSingleStream", "true"}}), IsOk());
  EXPECT_EQ(big.streams.physical, 2);  // 2721 nodes fit in 8192 tasks
  EXPECT_EQ(Phys(big, 2721), 1);
}

TEST(PhysicalStreamSplitTest, EventWaitsCountTowardsTheLimit) {
  // Two streams alternating: every node waits for its predecessor (2 tasks
  // per wait) and records for its successor (1 task).
  Plan plan = Chain(600, 1, 2);  // 300 nodes × 4 tasks per stream
  ASSERT_THAT(Compile(plan), IsOk());
  EXPECT_GT(plan.streams.physical, 2);
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

TEST(PhysicalStreamSplitTest, AttachedStreamsSplitToo) {
  Plan plan = Chain(700, 1, 1, -1, -1, /*attached=*/true);
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    plan.model.node(NodeId(static_cast<int32_t>(i))).attrs["_hccl_attached_task_num"] = int64_t{2};
  }
  ASSERT_THAT(Compile(plan), IsOk());
  // Attached stream 1: 2 tasks per node → 498 nodes per physical stream.
  const int64_t n498 = plan.model.FindNode("n498").value;
  ASSERT_TRUE(plan.streams.attached_physical.count(n498));
  EXPECT_EQ(plan.streams.attached_physical.at(n498), std::vector<int64_t>{2});
  EXPECT_FALSE(plan.streams.attached_physical.count(plan.model.FindNode("n497").value));
  EXPECT_EQ(plan.streams.split_to_logical.at(2), 1);
}

// Regression (npuplan gen --layers 64): the old piece holds 997 tasks (+27 =
// 1024, allowed) and then the split's own Send node; GE adds the split
// Send/Recv after NeedSplitNewStream has counted, inside the 27 reserved, so
// the verifier must not count them once they are nodes.
TEST(PhysicalStreamSplitTest, SplitSendAndRecvNodesLiveInTheReserve) {
  Plan plan = Chain(998, 1);
  ASSERT_THAT(RunPasses(plan,
                        Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse,
                               PhysicalStreamSplit, SyncNodeGeneration>()),
              IsOk());
  EXPECT_EQ(plan.streams.physical, 2);
  EXPECT_EQ(Phys(plan, 996), 0);
  EXPECT_EQ(Phys(plan, 997), 1);
  EXPECT_THAT(verify::VerifyPhysicalStreams(plan), IsOk());
  // One more task before the split point is a real overflow and still caught.
  plan.tasks[plan.model.FindNode("n5").index()] += 1;
  EXPECT_THAT(verify::VerifyPhysicalStreams(plan),
              StatusIs(absl::StatusCode::kInternal, "should have been split"));
}

// Regression (property test, limit 28-32): with materialised events the
// verifier counted each Send/Recv node as a task of its own and said the
// stream "should have been split" at a Send node; the split counts event tasks
// on the node that records / waits (Send/Recv nodes do not exist yet), so the
// verifier folds them into that node.
TEST(PhysicalStreamSplitTest, VerifierFoldsSendAndRecvNodesIntoTheirOwner) {
  for (int64_t limit : {28, 29, 32}) {
    SCOPED_TRACE(limit);
    Plan plan = Chain(12, 1, 2);  // every node waits for its predecessor and records for its successor
    ASSERT_THAT(RunPasses(plan,
                          Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse,
                                 PhysicalStreamSplit, SyncNodeGeneration>(),
                          {{"npuplan.device.maxTasksPerStream", StrCat(limit)}}),
                IsOk());
    EXPECT_GT(plan.streams.physical, 2);
    EXPECT_THAT(verify::VerifyPhysicalStreams(plan), IsOk());
    // Still caught: all pieces of logical stream 0 back on one physical stream.
    for (size_t i = 0; i < plan.physical_stream.size(); ++i) {
      auto it = plan.streams.split_to_logical.find(plan.physical_stream[i]);
      if (it != plan.streams.split_to_logical.end() && it->second == 0) plan.physical_stream[i] = 0;
    }
    EXPECT_THAT(verify::VerifyPhysicalStreams(plan),
                StatusIs(absl::StatusCode::kInternal, "should have been split"));
  }
}

// Regression (npuplan gen --nodes 100000 … --dynamic-prob 0.2, property seed
// 449): p sends the subgraph-entry event of q (to `mask`, an input-less node
// of q's subgraph on another stream); p's Send follows p's subgraph in
// execution order, as p's output is ready only there. When the subgraph's nodes on the caller's stream split it,
// the Send sat on the caller's first piece after nodes of a later piece
// ("split-order dependency … is not ordered"). It now runs on the piece
// current after the subgraph, where the split also counts its record task.
TEST(PhysicalStreamSplitTest, SubgraphOwnersSendRunsOnTheCurrentPiece) {
  std::string sub;
  for (int i = 0; i < 8; ++i) {
    sub += StrCat(R"({"name": "s)", i, R"(", "type": "Add", "inputs": [")", i == 0 ? "d:0" : StrCat("s", i - 1, ":0"),
                  R"("], "attrs": {"_test_stream": 0, "_node_sqe_num": 1}, "outputs": [{"shape": [1]}]},)");
  }
  auto model = testing::ParseVerifiedGraph(StrCat(R"({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0, "_node_sqe_num": 1}, "outputs": [{"shape": [1]}]},
    {"name": "p", "type": "PartitionedCall", "inputs": ["a:0"], "subgraphs": ["sub"], "attrs": {"_test_stream": 0, "_node_sqe_num": 1}, "outputs": [{"shape": [1]}]},
    {"name": "q", "type": "PartitionedCall", "inputs": ["p:0"], "subgraphs": ["sub2"], "attrs": {"_test_stream": 1, "_node_sqe_num": 1}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "sub", "parent": "p", "nodes": [
      {"name": "d", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 0, "_node_sqe_num": 0}, "outputs": [{"shape": [1]}]},)",
                                                  sub, R"(
      {"name": "o", "type": "NetOutput", "inputs": ["s7:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 0}}]},
    {"name": "sub2", "parent": "q", "nodes": [
      {"name": "d2", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 1, "_node_sqe_num": 0}, "outputs": [{"shape": [1]}]},
      {"name": "mask", "type": "DropOutGenMask", "attrs": {"_test_stream": 2, "_node_sqe_num": 1}, "outputs": [{"shape": [1]}]},
      {"name": "o2", "type": "NetOutput", "inputs": ["d2:0", "mask:0"], "attrs": {"_test_stream": 1, "_node_sqe_num": 0}}]}]})"));
  ASSERT_THAT(model.status(), IsOk());
  Plan plan = events::testing::PlanFromModel(std::move(model).value());
  ASSERT_THAT(RunPasses(plan,
                        Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse,
                               PhysicalStreamSplit, SyncNodeGeneration>(),
                        {{"npuplan.device.maxTasksPerStream", "30"}}),
              IsOk());
  const Model& m = plan.model;
  auto phys = [&](std::string_view n) { return plan.physical_stream[m.FindNode(n).index()]; };
  ASSERT_GT(plan.streams.physical, 3);
  EXPECT_EQ(phys("p"), 0);
  EXPECT_GT(phys("s7"), 1);  // the subgraph ends on a later piece of stream 0
  NodeId send;
  for (NodeId id : m.root().nodes) {
    if (m.node(id).type == "Send" && m.node(id).control_inputs == std::vector<NodeId>{m.FindNode("p")}) send = id;
  }
  ASSERT_TRUE(send.valid());
  EXPECT_EQ(plan.physical_stream[send.index()], phys("s7"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

TEST(PhysicalStreamSplitTest, VerifierRejectsAnOverfullStream) {
  Plan plan = Chain(400, 3);
  ASSERT_THAT(Compile(plan), IsOk());
  for (size_t i = 0; i < plan.physical_stream.size(); ++i) plan.physical_stream[i] = 0;
  plan.streams.split_to_logical.clear();
  EXPECT_THAT(verify::VerifyPhysicalStreams(plan),
              StatusIs(absl::StatusCode::kInternal, "should have been split"));
}

// Issue #19: task counts are input values (`_node_sqe_num`); their sums on a
// stream are checked. Two nodes of 2^62 tasks on one stream used to wrap to a
// negative count that never reached the limit.
TEST(PhysicalStreamSplitTest, RejectsTaskCountsThatOverflowAStream) {
  Plan plan = Chain(2, int64_t{1} << 62);
  const absl::Status s = Compile(plan);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, "node 'n1'"));
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("the task count of stream 0 overflows int64"));
}

TEST(PhysicalStreamSplitTest, LargeTaskCountsOnSeparateStreamsCompile) {
  Plan plan = Chain(2, int64_t{1} << 62, /*streams=*/2);
  ASSERT_THAT(Compile(plan), IsOk());
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
}

// The verifier forms the same sums from the plan's `tasks`: a plan claiming
// 2^62 tasks per node must not verify by wrapping around.
TEST(PhysicalStreamSplitTest, VerifierRejectsTaskCountsThatOverflow) {
  Plan plan = Chain(3, 1);
  ASSERT_THAT(Compile(plan), IsOk());
  ASSERT_THAT(verify::VerifyPhysicalStreams(plan), IsOk());
  // The first two nodes: their sum wraps to -2^63, which never exceeds the limit.
  for (int i : {0, 1}) plan.tasks[plan.model.FindNode(StrCat("n", i)).index()] = int64_t{1} << 62;
  EXPECT_THAT(verify::VerifyPhysicalStreams(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "the task count up to node 'n1' (4611686018427387904 tasks) "
                       "overflows int64"));
}

// A node's own count plus its event's Send task is the first sum the split
// forms: a count of 2^63 - 1 on a node that records an event must fail there,
// naming the node, not wrap.
TEST(PhysicalStreamSplitTest, RejectsATaskCountThatOverflowsWithItsEventTasks) {
  Plan plan = Chain(2, INT64_MAX, /*streams=*/2);
  const absl::Status s = Compile(plan);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, "node 'n0'"));
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("its task count with the event's Send overflows int64"));
}

// The verifier adds each node's event tasks (its Send) to its count: a count
// that fits alone but not with its Send and the reserve is an overflow too.
TEST(PhysicalStreamSplitTest, VerifierRejectsATaskCountThatOverflowsWithItsEventTasks) {
  Plan plan = Chain(2, 1, /*streams=*/2);
  ASSERT_THAT(Compile(plan), IsOk());
  ASSERT_THAT(verify::VerifyPhysicalStreams(plan), IsOk());
  ASSERT_FALSE(plan.events.events.empty());
  plan.tasks[plan.model.FindNode("n0").index()] = INT64_MAX - events::kReservedTasks;
  EXPECT_THAT(
      verify::VerifyPhysicalStreams(plan),
      StatusIs(absl::StatusCode::kInternal, "physical stream 0: the task count up to node 'n0'"));
}

}  // namespace
}  // namespace npuplan
