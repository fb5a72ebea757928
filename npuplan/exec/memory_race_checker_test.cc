#include "npuplan/exec/memory_race_checker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "npuplan/compiler/compiler.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/exec/plan_executor.h"
#include "npuplan/memory/memory_planning.h"
#include "npuplan/runtime/cpu_device.h"
#include "npuplan/sim/cost_model.h"
#include "npuplan/sim/sim_testing.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/memory_verifier.h"
#include "npuplan/verify/verify.h"

namespace npuplan::exec {
namespace {

using ::npuplan::sim::testing::AddEvent;
using ::npuplan::sim::testing::PlanFromGraph;
using ::npuplan::testing::IsOk;
using ::testing::HasSubstr;

// a → b on s0, c → e on s1 (the control edge puts c after b in the execution
// order): the program orders the two streams only by the events.
constexpr char kTwoChains[] = R"json({"name": "two", "nodes": [
  {"name": "a", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "b", "type": "Relu", "inputs": ["a"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "control_inputs": ["b"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "e", "type": "Relu", "inputs": ["c"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "out", "type": "NetOutput", "inputs": ["b", "e"]}
]})json";

// Places each named output 0 at the given offset (512 bytes each).
void Place(Plan& plan, const std::vector<std::pair<std::string, int64_t>>& at) {
  plan.memory.planned = true;
  plan.memory.alignment = 512;
  for (const auto& [name, offset] : at) {
    TensorPlacement tp;
    tp.node = plan.model.FindNode(name);
    tp.output = 0;
    tp.offset = offset;
    tp.size = 512;
    tp.buffer = name + ":0";
    tp.stream = plan.model.node(tp.node).stream_id;
    plan.memory.tensors.push_back(tp);
  }
}

absl::StatusOr<MemoryRaceReport> CheckDefault(const Plan& plan) {
  NPUPLAN_ASSIGN_OR_RETURN(sim::PlanProgram program, sim::BuildPlanProgram(plan));
  return MemoryRaceChecker::Check(plan, program);
}

// The check of the run where every If/Case takes `branch`.
absl::StatusOr<MemoryRaceReport> CheckBranch(const Plan& plan, int32_t branch) {
  sim::ControlFlowOptions cf;
  cf.branch = branch;
  NPUPLAN_ASSIGN_OR_RETURN(sim::ControlFlow flow,
                           sim::ResolveControlFlow(plan, cf, sim::NodeWork(plan, {}, 1.0)));
  NPUPLAN_ASSIGN_OR_RETURN(sim::PlanProgram program, sim::BuildPlanProgram(plan, flow));
  return MemoryRaceChecker::Check(plan, program);
}

// A graph (streams from `_test_stream`) through memory planning and every
// events pass, each verified after it runs.
absl::StatusOr<Plan> PlanThroughEvents(const std::string& graph) {
  NPUPLAN_ASSIGN_OR_RETURN(Model model, npuplan::testing::ParseVerifiedGraph(graph));
  Plan plan = events::testing::PlanFromModel(std::move(model));
  events::testing::RunResult result;
  NPUPLAN_RETURN_IF_ERROR(
      events::testing::RunPasses(plan, events::testing::Passes<MemoryPlanning>(), {}, &result));
  NPUPLAN_RETURN_IF_ERROR(events::testing::RunEventsPasses(plan, &result));
  return plan;
}

TEST(MemoryRaceCheckerTest, BuffersOnTwoUnorderedStreamsMayNotShareBytes) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kTwoChains));
  Place(plan, {{"a", 0}, {"b", 512}, {"c", 0}, {"e", 1024}});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport r, CheckDefault(plan));
  EXPECT_EQ(r.races, 1u);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_THAT(r.messages[0],
              HasSubstr("memory race: 'a:0' at [0, 512) and 'c:0' at [0, 512) overlap"));
  EXPECT_THAT(r.messages[0], HasSubstr("is not ordered before"));
}

TEST(MemoryRaceCheckerTest, AnEventAfterTheLastReadOrdersThem) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kTwoChains));
  Place(plan, {{"a", 0}, {"b", 512}, {"c", 0}, {"e", 1024}});
  AddEvent(plan, "b", "c", 0);  // b reads a:0 last
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport r, CheckDefault(plan));
  EXPECT_EQ(r.races, 0u) << (r.messages.empty() ? "" : r.messages[0]);
  EXPECT_EQ(r.instances, 4u);
  // Stream 1 starts after everything on stream 0: one lane holds both.
  EXPECT_EQ(r.lanes, 1u);
  // An event from the writer only: b may still read a:0 while c writes c:0.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan early, PlanFromGraph(kTwoChains));
  Place(early, {{"a", 0}, {"b", 512}, {"c", 0}, {"e", 1024}});
  AddEvent(early, "a", "c", 0);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport r2, CheckDefault(early));
  EXPECT_EQ(r2.races, 1u);
  EXPECT_EQ(r2.lanes, 2u);  // c does not know that b finished
  ASSERT_FALSE(r2.messages.empty());
  EXPECT_THAT(r2.messages[0], HasSubstr("'b' on stream 0 is not ordered before 'c' on stream 1"));
}

// A task that touches no pool memory takes no place in the clocks: a stream
// that opens with one (a Send, a gate) and then waits for another stream's
// last task continues that stream's lane.
TEST(MemoryRaceCheckerTest, TasksThatTouchNoMemoryOpenNoLane) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "lanes", "nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "b", "type": "Relu", "inputs": ["a"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "g", "type": "Gate", "control_inputs": ["b"], "attrs": {"_test_stream": 1}},
    {"name": "c", "type": "Relu", "control_inputs": ["g"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
    {"name": "e", "type": "Relu", "inputs": ["c"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["e"]}
  ]})json"));
  Place(plan, {{"a", 0}, {"b", 512}, {"c", 0}, {"e", 1024}});
  AddEvent(plan, "b", "c", 0);  // after g: stream 1 opens with a task that waits for nothing
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport r, CheckDefault(plan));
  EXPECT_EQ(r.races, 0u) << (r.messages.empty() ? "" : r.messages[0]);
  EXPECT_EQ(r.lanes, 1u);
}

TEST(MemoryRaceCheckerTest, AnOutputOverItsOwnInputIsARace) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kTwoChains));
  Place(plan, {{"a", 0}, {"b", 0}, {"c", 512}, {"e", 1024}});  // b reads a:0, writes b:0 over it
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport r, CheckDefault(plan));
  EXPECT_EQ(r.races, 1u);
  // Same stream, disjoint in time: a:0's last reader b runs before e writes.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan reuse, PlanFromGraph(kTwoChains));
  Place(reuse, {{"a", 0}, {"b", 512}, {"c", 1024}, {"e", 1536}});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport ok, CheckDefault(reuse));
  EXPECT_EQ(ok.races, 0u);
}

// Beyond its budget the check does not run, and says why.
TEST(MemoryRaceCheckerTest, ABudgetTooSmallSkipsTheCheckAndSaysSo) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kTwoChains));
  Place(plan, {{"a", 0}, {"b", 512}, {"c", 0}, {"e", 1024}});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(sim::PlanProgram program, sim::BuildPlanProgram(plan));
  // 4 task runs x 2 lanes of clock reads.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport small, MemoryRaceChecker::Check(plan, program, 7));
  EXPECT_EQ(small.skipped, "4 task runs x 2 lanes of clock reads pass 7 (its budget)");
  EXPECT_EQ(small.races, 0u);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport enough, MemoryRaceChecker::Check(plan, program, 8));
  EXPECT_TRUE(enough.skipped.empty());
  EXPECT_EQ(enough.races, 1u);
}

// Only the branch that runs touches memory: buffers of the two branches may
// share bytes, and the check of each run sees one of them.
TEST(MemoryRaceCheckerTest, BuffersOfTwoBranchesNeverMeet) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "br", "nodes": [
    {"name": "p", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "x", "type": "If", "inputs": ["p"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["x"]}],
    "subgraphs": [
    {"name": "then", "parent": "x", "nodes": [
      {"name": "t1", "type": "Relu", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
      {"name": "t2", "type": "Relu", "inputs": ["t1"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t2"], "attrs": {"_test_stream": 2}}]},
    {"name": "else", "parent": "x", "nodes": [
      {"name": "e1", "type": "Relu", "attrs": {"_test_stream": 2}, "outputs": [{"shape": [4]}]},
      {"name": "e2", "type": "Relu", "inputs": ["e1"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [4]}]},
      {"name": "e_out", "type": "NetOutput", "inputs": ["e2"], "attrs": {"_test_stream": 2}}]}]})json"));
  Place(plan, {{"p", 0}, {"t1", 512}, {"e1", 512}, {"x", 1024}});
  for (int32_t branch : {0, 1}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport r, CheckBranch(plan, branch));
    EXPECT_EQ(r.races, 0u) << "branch " << branch;
    EXPECT_EQ(r.instances, 3u) << "branch " << branch;  // p:0, one branch's first output, x:0
  }
}

// The executor reports the races of its program with every run, and the
// compiler's plans have none.
TEST(MemoryRaceCheckerTest, TheExecutorReportsRacesAndCompiledPlansHaveNone) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan bad, PlanFromGraph(kTwoChains));
  Place(bad, {{"a", 0}, {"b", 512}, {"c", 0}, {"e", 1024}});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto ex, PlanExecutor::Create(bad));
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, ex->Run(device));
  EXPECT_EQ(r.memory_race_count, 1u);
  ASSERT_EQ(r.memory_races.size(), 1u);
  EXPECT_THAT(r.messages, ::testing::Contains(r.memory_races[0]));
  ExecOptions off;
  off.check_memory = false;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto unchecked, PlanExecutor::Create(bad, off));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r2, unchecked->Run(device));
  EXPECT_EQ(r2.memory_race_count, 0u);

  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model,
                               npuplan::testing::ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "in", "type": "Data", "outputs": [{"shape": [4]}]},
    {"name": "a", "type": "Relu", "inputs": ["in"], "outputs": [{"shape": [4]}]},
    {"name": "b", "type": "Relu", "inputs": ["a"], "outputs": [{"shape": [4]}]},
    {"name": "c", "type": "Relu", "inputs": ["in"], "outputs": [{"shape": [4]}]},
    {"name": "e", "type": "Relu", "inputs": ["c"], "outputs": [{"shape": [4]}]},
    {"name": "f", "type": "Add", "inputs": ["b", "e"], "outputs": [{"shape": [4]}]},
    {"name": "g", "type": "Relu", "inputs": ["f"], "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["g"]}]})json"));
  CompileConfig config;
  config.read_environment = false;
  config.option_overrides["ge.autoMultistreamParallelMode"] = "LoadBalance:2";
  DecisionLog log(false);
  Statistics stats;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Compile(std::move(model), config, log, stats));
  ASSERT_TRUE(plan.memory.planned);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport ok, CheckDefault(plan));
  EXPECT_EQ(ok.races, 0u);
  EXPECT_GT(ok.instances, 0u);
}

// A run takes one branch (docs/memory.md): seen as one execution holding
// both branches, memory planning's happens-before ordered xr before e1
// through the then branch (xr → t1 on stream 1 → t2 → stream 2's queue →
// e1) and gave e1:0 x:0's bytes; when else ran, nothing ordered xr (still
// reading x:0) before e1 wrote, though every verifier passed (RunPasses
// verifies after each pass). Each branch now runs race-free.
TEST(MemoryRaceCheckerTest, ABranchNotTakenOrdersNothingForMemory) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanThroughEvents(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [256]}]},
    {"name": "xr", "type": "Add", "inputs": ["x"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "p", "type": "If", "inputs": ["a", "a"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["p", "xr"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["y"], "attrs": {"_test_stream": 0}}],
    "subgraphs": [
    {"name": "then", "parent": "p", "nodes": [
      {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t1", "type": "Add", "inputs": ["t_in"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t2", "type": "Add", "inputs": ["t1"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t2"], "attrs": {"_test_stream": 2}}]},
    {"name": "else", "parent": "p", "nodes": [
      {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
      {"name": "e1", "type": "Add", "inputs": ["e_in"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [256]}]},
      {"name": "e2", "type": "Add", "inputs": ["e1"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
      {"name": "e_out", "type": "NetOutput", "inputs": ["e2"], "attrs": {"_test_stream": 2}}]}]})json"));
  for (int32_t branch : {0, 1}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport r, CheckBranch(plan, branch));
    EXPECT_EQ(r.races, 0u) << "branch " << branch << ": "
                           << (r.messages.empty() ? "" : r.messages[0]);
  }
}

// A ref output (`_ref_input_index`) writes its input's buffer in place. The
// reader r on stream 1 and the writer w on stream 0 both read x; when nothing
// orders r before w, w may overwrite what r has not read yet. The race
// check's hazard rule names it (the verifier's [in-place-writes] row refuses
// such a plan too, and compile orders the two: the next test).
TEST(MemoryRaceCheckerTest, ARefWriteNotOrderedAfterAnotherReaderIsAHazard) {
  constexpr char kGraph[] = R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [128]}]},
    {"name": "r", "type": "Add", "inputs": ["x"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [128]}]},
    {"name": "w", "type": "AssignAdd", "inputs": ["x"], "attrs": {"_test_stream": 0, "_ref_input_index": 0}, "outputs": [{"shape": [128]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["r", "w"], "attrs": {"_test_stream": 0}}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kGraph));
  Place(plan, {{"x", 0}, {"r", 512}});
  AddEvent(plan, "x", "r", 0);  // the data edge
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport rep, CheckDefault(plan));
  EXPECT_EQ(rep.races, 0u);  // one buffer: no two share bytes
  EXPECT_EQ(rep.hazards, 1u);
  ASSERT_EQ(rep.messages.size(), 1u);
  EXPECT_THAT(rep.messages[0], HasSubstr("memory hazard: 'x:0'"));
  EXPECT_THAT(rep.messages[0], HasSubstr("'r' on stream 1"));
  EXPECT_THAT(rep.messages[0], HasSubstr("'w' on stream 0"));
  // With an event after r's read, before w's write: no hazard.
  AddEvent(plan, "r", "w", 0);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport ok, CheckDefault(plan));
  EXPECT_EQ(ok.problems(), 0u) << (ok.messages.empty() ? "" : ok.messages[0]);
}

// The default compile, verified after every pass.
absl::StatusOr<Plan> CompileVerifiedEachPass(Model model, DecisionLog& log) {
  CompileConfig config;
  config.read_environment = false;
  config.verify_each = true;
  Statistics stats;
  return Compile(std::move(model), config, log, stats);
}

// compile orders a ref write after another reader of its input that the
// graph leaves unordered (in-place-write-ordering): the plan verifies and no
// run of it has a hazard, on whichever streams the two land.
TEST(MemoryRaceCheckerTest, CompileOrdersARefWriteWithTheOtherReadersOfItsInput) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model,
                               npuplan::testing::ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "in", "type": "Data", "outputs": [{"shape": [128]}]},
    {"name": "x", "type": "Add", "inputs": ["in", "in"], "outputs": [{"shape": [128]}]},
    {"name": "r", "type": "Relu", "inputs": ["x"], "attrs": {"_user_stream_label": "side"}, "outputs": [{"shape": [128]}]},
    {"name": "w", "type": "AssignAdd", "inputs": ["x", "in"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [128]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["r", "w"]}]})json"));
  DecisionLog log(/*keep=*/true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileVerifiedEachPass(std::move(model), log));
  const Node& r = plan.model.node(plan.model.FindNode("r"));
  const Node& w = plan.model.node(plan.model.FindNode("w"));
  EXPECT_NE(r.stream_id, w.stream_id);  // an event must order them
  ASSERT_EQ(log.WithKeyword("InPlaceOrder").size(), 1u);
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport rep, CheckDefault(plan));
  EXPECT_EQ(rep.problems(), 0u) << (rep.messages.empty() ? "" : rep.messages[0]);
}

// A write before an If (a control edge) to memory a branch reads: the
// branch's node reading the Data waits for that input's producer and for the
// If's control inputs (an owner-control event from w), so no run of either
// branch has a hazard (a plan whose branch waited for x only had one in the
// then run).
TEST(MemoryRaceCheckerTest, ABranchReadsWhatAWriteBeforeTheIfLeft) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model,
                               npuplan::testing::ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "in", "type": "Data", "outputs": [{"shape": [128]}]},
    {"name": "pred", "type": "Data", "outputs": [{"shape": [], "dtype": "bool"}]},
    {"name": "x", "type": "Add", "inputs": ["in", "in"], "outputs": [{"shape": [128]}]},
    {"name": "w", "type": "AssignAdd", "inputs": ["x", "in"], "attrs": {"_ref_input_index": 0, "_user_stream_label": "wr"}, "outputs": [{"shape": [128]}]},
    {"name": "p", "type": "If", "inputs": ["pred", "x"], "control_inputs": ["w"], "subgraphs": ["then", "else"], "outputs": [{"shape": [128]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["p", "w"]}],
   "subgraphs": [
    {"name": "then", "parent": "p", "nodes": [
      {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [128]}]},
      {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_user_stream_label": "br"}, "outputs": [{"shape": [128]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t1"]}]},
    {"name": "else", "parent": "p", "nodes": [
      {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [128]}]},
      {"name": "e1", "type": "Relu", "inputs": ["e_in"], "outputs": [{"shape": [128]}]},
      {"name": "e_out", "type": "NetOutput", "inputs": ["e1"]}]}]})json"));
  DecisionLog log(/*keep=*/true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileVerifiedEachPass(std::move(model), log));
  // w is a control input of p: that orders every node of both branches
  // (ir/owner_control_inputs.h), so the pass has nothing to add.
  EXPECT_THAT(log.WithKeyword("InPlaceOrder"), ::testing::IsEmpty());
  const Node& p = plan.model.node(plan.model.FindNode("p"));
  EXPECT_EQ(plan.model.node(p.inputs[1].node).name, "x");
  for (int32_t branch : {0, 1}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryRaceReport rep, CheckBranch(plan, branch));
    EXPECT_EQ(rep.problems(), 0u) << "branch " << branch << ": "
                                  << (rep.messages.empty() ? "" : rep.messages[0]);
  }
}

}  // namespace
}  // namespace npuplan::exec
