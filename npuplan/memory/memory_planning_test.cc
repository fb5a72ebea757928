#include "npuplan/memory/memory_planning.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/memory_verifier.h"
#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/tensor_lifetimes.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

Plan ParsePlan(const std::string& json) {
  auto m = ParseVerifiedGraph(json);
  EXPECT_TRUE(m.ok()) << m.status();
  return PlanFromModel(std::move(m).value());
}

const TensorPlacement& Placement(const Plan& plan, std::string_view node, int32_t out = 0) {
  NodeId id = plan.model.FindNode(node);
  for (const TensorPlacement& t : plan.memory.tensors) {
    if (t.node == id && t.output == out) return t;
  }
  ADD_FAILURE() << "no placement for " << node << ":" << out;
  static TensorPlacement none;
  return none;
}

// a(s0) → c(s0) and q(s1) → r(s1) → e(s1) → f(s1) → out; `e_deps` (", …"
// after r:0 in e's inputs) optionally orders e after c. BFS plan order puts
// e after c, so a:0 and e:0 are disjoint in index either way.
std::string TwoStreams(const std::string& e_deps) {
  return R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [256]}]},
    {"name": "c", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "q", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "r", "type": "Add", "inputs": ["q:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "e", "type": "Add", "inputs": ["r:0")json" + e_deps + R"json(], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [256]}]},
    {"name": "f", "type": "Add", "inputs": ["e:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["f:0", "c:0"]}]})json";
}

TEST(MemoryPlanningTest, ParallelStreamsWithoutDependencyGetDisjointMemory) {
  Plan plan = ParsePlan(TwoStreams(""));
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<MemoryPlanning>(), {}, &r), IsOk());
  const TensorPlacement& a = Placement(plan, "a");
  const TensorPlacement& e = Placement(plan, "e");
  EXPECT_EQ(a.size, 1024);
  EXPECT_TRUE(a.offset + a.size <= e.offset || e.offset + e.size <= a.offset);
  EXPECT_TRUE(Has(plan.established, IrProperty::kMemoryPlanned));
  EXPECT_THAT(memory::VerifyMemoryPlan(plan), IsOk());
  EXPECT_GE(r.stats.Get("memory-planning", "extra_conflicts"), 1);
}

TEST(MemoryPlanningTest, DependencyAcrossStreamsLetsBuffersShare) {
  Plan plan = ParsePlan(TwoStreams(R"json(, "c:0")json"));
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<MemoryPlanning>(), {}, &r), IsOk());
  EXPECT_EQ(Placement(plan, "a").offset, Placement(plan, "e").offset);
  EXPECT_EQ(plan.memory.peak, plan.memory.lower_bound);
  EXPECT_TRUE(plan.memory.optimal);
  bool found = false;
  for (const Remark* rm : r.log.WithKeyword("BufferReused")) {
    EXPECT_EQ(rm->pass, "memory-planning");
    std::map<std::string, std::string> f(rm->fields.begin(), rm->fields.end());
    if (f["buffer"] == "e:0") {
      found = true;
      EXPECT_EQ(f["reuses"], "a:0");
      EXPECT_EQ(f["cross_stream"], "true");
    }
  }
  EXPECT_TRUE(found);
  EXPECT_GE(r.stats.Get("memory-planning", "cross_stream_reuses"), 1);
  EXPECT_EQ(r.log.WithKeyword("MemoryPlanned").size(), 1u);
}

TEST(MemoryPlanningTest, PlacesInputsConstantsAndWorkspacesInTheirRegions) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "in", "type": "Data", "outputs": [{"shape": [200]}]},
    {"name": "w", "type": "Const", "outputs": [{"shape": [100]}]},
    {"name": "w2", "type": "Const", "outputs": [{"shape": [10]}]},
    {"name": "x", "type": "MatMul", "inputs": ["in:0", "w:0"], "attrs": {"_test_stream": 0, "_workspace_bytes": 4096}, "outputs": [{"shape": [8]}]},
    {"name": "y", "type": "Add", "inputs": ["x:0", "w2:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [-1]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["y:0"]}]})json");
  ASSERT_THAT(RunPasses(plan, Passes<MemoryPlanning>()), IsOk());
  EXPECT_EQ(Placement(plan, "in").region, MemoryRegion::kInput);
  EXPECT_EQ(Placement(plan, "w").region, MemoryRegion::kConstant);
  EXPECT_EQ(Placement(plan, "w").offset, 0);
  EXPECT_EQ(Placement(plan, "w2").offset, 512);
  EXPECT_EQ(Placement(plan, "x", -1).region, MemoryRegion::kWorkspace);
  EXPECT_EQ(Placement(plan, "x", -1).size, 4096);
  EXPECT_EQ(plan.memory.region_bytes.at("constant"), 1024);
  EXPECT_EQ(plan.memory.region_bytes.at("input"), 1024);
  EXPECT_EQ(plan.memory.region_bytes.at("activation"), plan.memory.peak);
  EXPECT_EQ(plan.memory.peak, 4096 + 512);
  EXPECT_THAT(plan.memory.dynamic_tensors, ::testing::ElementsAre("y:0"));
}

// Issue #19: the constant region's size is a sum of input tensor sizes; two
// constants of 2^62 bytes used to wrap the region's end to a negative offset.
TEST(MemoryPlanningTest, RejectsARegionLargerThanInt64) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "w1", "type": "Const", "outputs": [{"shape": [1152921504606846976], "dtype": "int32"}]},
    {"name": "w2", "type": "Const", "outputs": [{"shape": [1152921504606846976], "dtype": "int32"}]},
    {"name": "x", "type": "Add", "inputs": ["w1:0", "w2:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [8]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["x:0"]}]})json");
  EXPECT_THAT(RunPasses(plan, Passes<MemoryPlanning>()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "tensor 'w2:0' (4611686018427387904 bytes) makes region 'constant' larger than int64"));
}

TEST(MemoryPlanningTest, PlanSurvivesJsonRoundTripAndVerifies) {
  Plan plan = ParsePlan(TwoStreams(R"json(, "c:0")json"));
  ASSERT_THAT(RunPasses(plan, Passes<MemoryPlanning>()), IsOk());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan back, ParsePlanJson(WritePlanJson(plan), "test"));
  EXPECT_EQ(back.memory.tensors.size(), plan.memory.tensors.size());
  EXPECT_EQ(back.memory.tensors[0].buffer, plan.memory.tensors[0].buffer);
  EXPECT_THAT(verify::VerifyPlan(back), IsOk());
  EXPECT_EQ(WritePlanJson(back), WritePlanJson(plan));
}

// A While body b1 → b2 → b3 → b4 → NetOutput; b3 and b4 on `late_stream`.
std::string LoopBody(int late_stream) {
  const std::string late = std::to_string(late_stream);
  return R"json({"nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [256]}]},
    {"name": "w", "type": "While", "inputs": ["x:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [256]}]},
    {"name": "o", "type": "Add", "inputs": ["w:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["o:0"]}],
    "subgraphs": [{"name": "body", "parent": "w", "nodes": [
      {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 1}, "outputs": [{"shape": [256]}]},
      {"name": "b1", "type": "Add", "inputs": ["b_in:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [256]}]},
      {"name": "b2", "type": "Add", "inputs": ["b1:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [256]}]},
      {"name": "b3", "type": "Add", "inputs": ["b2:0"], "attrs": {"_test_stream": )json" + late + R"json(}, "outputs": [{"shape": [256]}]},
      {"name": "b4", "type": "Add", "inputs": ["b3:0"], "attrs": {"_test_stream": )json" + late + R"json(}, "outputs": [{"shape": [256]}]},
      {"name": "b_out", "type": "NetOutput", "inputs": ["b4:0"], "attrs": {"_test_stream": 1}}]}]})json";
}

TEST(MemoryPlanningTest, ReusesWithinOneLoopIterationOnOneStream) {
  Plan plan = ParsePlan(LoopBody(1));
  ASSERT_THAT(RunPasses(plan, Passes<MemoryPlanning>()), IsOk());
  // b1:0 dies at b2, b3:0 is born at b3: same stream, one iteration apart
  // at most by stream order, so they share.
  EXPECT_EQ(Placement(plan, "b1").offset, Placement(plan, "b3").offset);
  EXPECT_EQ(Placement(plan, "b1").last_use, Placement(plan, "b2").first_use + 1);
  EXPECT_THAT(memory::VerifyMemoryPlan(plan), IsOk());
  // The loop-carried value (into the body's NetOutput) still spans the loop.
  EXPECT_EQ(Placement(plan, "b4").first_use, Placement(plan, "w").first_use);
}

TEST(MemoryPlanningTest, NeverReusesAcrossStreamsInsideALoop) {
  Plan plan = ParsePlan(LoopBody(2));
  auto lt = memory::ComputeTensorLifetimes(plan.model, 512);
  ASSERT_THAT(lt.status(), IsOk());
  memory::StreamAwareReuse reuse(plan.model, *lt);
  const int b1 = lt->buffer_of.at({plan.model.FindNode("b1"), 0});
  const int b3 = lt->buffer_of.at({plan.model.FindNode("b3"), 0});
  EXPECT_EQ(lt->buffers[b1].iteration_loop, plan.model.FindNode("w").value);
  EXPECT_EQ(lt->buffers[b3].iteration_loop, plan.model.FindNode("w").value);
  // Ordered within one iteration (b1 → b2 → b3), but b3 of iteration i may
  // still run on stream 2 while b1 of iteration i+1 writes on stream 1.
  EXPECT_FALSE(reuse.MayShare(b1, b3));
  ASSERT_THAT(RunPasses(plan, Passes<MemoryPlanning>()), IsOk());
  EXPECT_NE(Placement(plan, "b1").offset, Placement(plan, "b3").offset);
  EXPECT_THAT(memory::VerifyMemoryPlan(plan), IsOk());
}

// Regression (property test seed 105): x:0 spans the loop (its alias b_in is
// read in the body) and may share with o:0, because the loop's end orders
// every body node before o. Events add a Send after b1 and the loop's tail
// gate as the last nodes of stream 1, which order nothing after them;
// counted as uses of x:0, the final memory verifier rejected the sharing.
TEST(MemoryPlanningTest, SendAndRecvNodesInALoopKeepItsSharingValid) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [256]}]},
    {"name": "w", "type": "While", "inputs": ["x:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "Add", "inputs": ["w:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [256]}]},
    {"name": "p", "type": "Add", "inputs": ["o:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["p:0"], "attrs": {"_test_stream": 0}}],
    "subgraphs": [{"name": "body", "parent": "w", "nodes": [
      {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 1}, "outputs": [{"shape": [256]}]},
      {"name": "b1", "type": "Relu", "inputs": ["b_in:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "b2", "type": "Relu", "inputs": ["b1:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
      {"name": "b_out", "type": "NetOutput", "inputs": ["b2:0"], "attrs": {"_test_stream": 2}}]}]})json");
  ASSERT_THAT(RunPasses(plan,
                        Passes<MemoryPlanning, TaskCountAssignment, SyncEventInsertion, SyncEventOptimization,
                               EventReuse, PhysicalStreamSplit, StreamActivation, SyncNodeGeneration>(),
                        {{"npuplan.memory.searchSteps", "0"}}),
              IsOk());
  // The test means something only if a Send and a gate end stream 1 inside
  // the body and x:0 / o:0 share.
  std::vector<std::string> s1;
  for (NodeId id : plan.model.graph(plan.model.node(plan.model.FindNode("w")).subgraphs[0]).nodes) {
    if (plan.model.node(id).stream_id == 1) s1.push_back(plan.model.node(id).type);
  }
  EXPECT_THAT(s1, ::testing::Contains("Send"));
  ASSERT_FALSE(s1.empty());
  EXPECT_EQ(s1.back(), "LoopGate");
  EXPECT_EQ(Placement(plan, "x").offset, Placement(plan, "o").offset);
  EXPECT_THAT(memory::VerifyMemoryPlan(plan), IsOk());
}

TEST(MemoryPlanningTest, RejectsBadOptions) {
  Plan plan = ParsePlan(TwoStreams(""));
  EXPECT_THAT(RunPasses(plan, Passes<MemoryPlanning>(), {{"npuplan.memory.timeLimit", "-1"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "npuplan.memory.timeLimit"));
  EXPECT_THAT(RunPasses(plan, Passes<MemoryPlanning>(), {{"npuplan.memory.searchSteps", "-5"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "npuplan.memory.searchSteps"));
  EXPECT_THAT(RunPasses(plan, Passes<MemoryPlanning>(), {{"npuplan.memory.searchSteps", "many"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "npuplan.memory.searchSteps"));
  EXPECT_THAT(RunPasses(plan, Passes<MemoryPlanning>(), {{"npuplan.memory.alignment", "0"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "npuplan.memory.alignment"));
}

TEST(MemoryPlanningTest, RequiresLogicalStreams) {
  auto m = ParseVerifiedGraph(R"json({"nodes": [{"name": "a", "type": "Add", "outputs": [{"shape": [1]}]}]})json");
  ASSERT_THAT(m.status(), IsOk());
  Plan plan;
  plan.model = std::move(m).value();
  EXPECT_THAT(RunPasses(plan, Passes<MemoryPlanning>()), StatusIs(absl::StatusCode::kFailedPrecondition));
}

// Random sizes for the outputs of a random plan (deterministic in the seed).
void RandomizeSizes(Plan& plan, uint32_t seed) {
  std::mt19937 rng(seed);
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    Node& n = plan.model.node(NodeId(static_cast<int32_t>(i)));
    for (TensorDesc& t : n.outputs) t.shape = {static_cast<int64_t>(1 + rng() % 4096)};
    if (rng() % 8 == 0) n.attrs["_workspace_bytes"] = static_cast<int64_t>(rng() % 5000);
  }
}

// Two conflicting pool tensors (not provably ordered) put at one offset.
bool CorruptOnePair(Plan& plan) {
  auto lt = memory::ComputeTensorLifetimes(plan.model, plan.memory.alignment);
  if (!lt.ok()) return false;
  memory::StreamAwareReuse reuse(plan.model, *lt);
  for (size_t a = 0; a < lt->buffers.size(); ++a) {
    for (size_t b = a + 1; b < lt->buffers.size(); ++b) {
      const auto& x = lt->buffers[a];
      const auto& y = lt->buffers[b];
      if (!x.planned_in_pool() || !y.planned_in_pool() || x.size == 0 || y.size == 0) continue;
      if (reuse.MayShare(static_cast<int>(a), static_cast<int>(b))) continue;
      int64_t target = -1;
      for (const TensorPlacement& t : plan.memory.tensors) {
        if (t.buffer == x.name) target = t.offset;
      }
      for (TensorPlacement& t : plan.memory.tensors) {
        if (t.buffer == y.name) t.offset = target;
      }
      return true;
    }
  }
  return false;
}

class MemoryPlanningPropertyTest : public ::testing::TestWithParam<int> {};

TEST_P(MemoryPlanningPropertyTest, VerifierAcceptsEveryPlanAndRejectsCorruption) {
  const uint32_t seed = static_cast<uint32_t>(GetParam());
  const int streams = 1 + GetParam() % 4;
  Plan plan = events::testing::RandomPlan(seed, 60 + GetParam() % 40, streams);
  RandomizeSizes(plan, seed);
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<MemoryPlanning>(), {{"npuplan.memory.searchSteps", "200000"}}, &r), IsOk());
  EXPECT_THAT(memory::VerifyMemoryPlan(plan), IsOk());
  EXPECT_GE(plan.memory.peak, plan.memory.lower_bound);
  EXPECT_GT(plan.memory.lower_bound, 0);
  Plan bad = plan;
  ASSERT_TRUE(CorruptOnePair(bad));
  EXPECT_THAT(memory::VerifyMemoryPlan(bad), StatusIs(absl::StatusCode::kInternal, "memory-overlap"));
  EXPECT_THAT(verify::VerifyPlan(bad), StatusIs(absl::StatusCode::kInternal, "memory-overlap"));
}

TEST_P(MemoryPlanningPropertyTest, PlanStaysValidThroughTheEventsStages) {
  const uint32_t seed = static_cast<uint32_t>(GetParam()) + 1000;
  Plan plan = events::testing::RandomPlan(seed, 50, 2 + GetParam() % 3);
  RandomizeSizes(plan, seed);
  // verify-each runs the memory verifier after every events pass, including
  // after Send/Recv nodes are added.
  ASSERT_THAT(RunPasses(plan,
                        Passes<MemoryPlanning, TaskCountAssignment, SyncEventInsertion, SyncEventOptimization,
                               EventReuse, PhysicalStreamSplit, StreamActivation, SyncNodeGeneration>(),
                        {{"npuplan.memory.searchSteps", "0"}}),
              IsOk());
  EXPECT_TRUE(Has(plan.established, IrProperty::kSyncNodes));
}

// The search budget is a step count: the same graph gives the same plan
// and decision log however loaded the machine is.
TEST_P(MemoryPlanningPropertyTest, StepBudgetIsDeterministic) {
  const uint32_t seed = static_cast<uint32_t>(GetParam()) + 2000;
  Plan first = events::testing::RandomPlan(seed, 120, 1 + GetParam() % 4);
  RandomizeSizes(first, seed);
  Plan second = first;
  RunResult a, b;
  const std::map<std::string, std::string> budget = {{"npuplan.memory.searchSteps", "300000"}};
  ASSERT_THAT(RunPasses(first, Passes<MemoryPlanning>(), budget, &a), IsOk());
  ASSERT_THAT(RunPasses(second, Passes<MemoryPlanning>(), budget, &b), IsOk());
  EXPECT_EQ(WritePlanJson(first), WritePlanJson(second));
  EXPECT_EQ(a.log.ToJsonLines(), b.log.ToJsonLines());
}

INSTANTIATE_TEST_SUITE_P(RandomDags, MemoryPlanningPropertyTest, ::testing::Range(0, 24));

}  // namespace
}  // namespace npuplan
