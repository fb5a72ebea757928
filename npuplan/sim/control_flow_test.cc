#include "npuplan/sim/control_flow.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/sim/dependencies.h"
#include "npuplan/sim/sim_testing.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::sim {
namespace {

using ::npuplan::sim::testing::PlanFromGraph;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// x → If p {then: t_in → t1(10); else: e_in → e1(3) → e2(1)} → c
constexpr char kIfElse[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "subgraphs": ["then", "else"], "attrs": {"_cost": 0, "_test_stream": 0},
   "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "then", "parent": "p", "nodes": [
   {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 10, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "t_out", "type": "NetOutput", "inputs": ["t1"]}]},
  {"name": "else", "parent": "p", "nodes": [
   {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e1", "type": "Relu", "inputs": ["e_in"], "attrs": {"_cost": 3, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e2", "type": "Relu", "inputs": ["e1"], "attrs": {"_cost": 1, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e_out", "type": "NetOutput", "inputs": ["e2"]}]}]})json";

// x → While w {cond: c_in → cmp → c_out; body: b_in → b1(s1) → b2(s0) → b_out} → y
constexpr char kWhile[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "w", "type": "While", "inputs": ["x"], "subgraphs": ["cond", "body"], "attrs": {"_cost": 0, "_test_stream": 0},
   "outputs": [{"shape": [4]}]},
  {"name": "y", "type": "Relu", "inputs": ["w"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "cond", "parent": "w", "nodes": [
   {"name": "c_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
   {"name": "cmp", "type": "Less", "inputs": ["c_in"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
   {"name": "c_out", "type": "NetOutput", "inputs": ["cmp"]}]},
  {"name": "body", "parent": "w", "nodes": [
   {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
   {"name": "b1", "type": "Relu", "inputs": ["b_in"], "attrs": {"_cost": 2, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "b2", "type": "Relu", "inputs": ["b1"], "attrs": {"_cost": 3, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "b_out", "type": "NetOutput", "inputs": ["b2"]}]}]})json";

std::vector<std::string> Order(const Plan& plan, const ControlFlow& cf) {
  std::vector<std::string> out;
  for (const Instance& i : cf.order) out.push_back(StrCat(plan.model.node(i.node).name, i.run > 0 ? StrCat("#", i.run) : ""));
  return out;
}

int64_t Runs(const Plan& plan, const ControlFlow& cf, std::string_view name) {
  return cf.runs[plan.model.FindNode(name).index()];
}

TEST(ControlFlowTest, TakesTheBranchWithMoreWorkByDefault) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfElse));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ControlFlow cf, ResolveControlFlow(plan, {}, NodeWork(plan, {}, 0)));
  EXPECT_THAT(Order(plan, cf), ElementsAre("x", "p", "t_in", "t1", "t_out", "c"));
  EXPECT_EQ(Runs(plan, cf, "t1"), 1);
  EXPECT_EQ(Runs(plan, cf, "e1"), 0);
  ASSERT_EQ(cf.branches.size(), 1u);
  EXPECT_EQ(cf.branches[0].chosen, 0);
  EXPECT_THAT(cf.branches[0].work, ElementsAre(10.0, 4.0));
  const auto lines = DescribeControlFlow(plan, cf);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("1 If/Case ran one branch each (the longer branch, the worst case"));
  EXPECT_THAT(lines[1], HasSubstr("If 'p': runs then 'then', 10.000 us; not run: else 'else', 4.000 us"));
}

TEST(ControlFlowTest, LongerBranchCountsLaunchOverheads) {
  // With 10 us per launch the two-task else branch (3 + 1 + 20) outweighs then (10 + 10).
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfElse));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ControlFlow cf, ResolveControlFlow(plan, {}, NodeWork(plan, {}, 10)));
  EXPECT_EQ(cf.branches[0].chosen, 1);
  EXPECT_EQ(Runs(plan, cf, "e2"), 1);
  EXPECT_EQ(Runs(plan, cf, "t1"), 0);
}

TEST(ControlFlowTest, BranchOptionChoosesAndClampsToTheLastBranch) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfElse));
  ControlFlowOptions o;
  o.branch = 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ControlFlow cf, ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)));
  EXPECT_THAT(Order(plan, cf), ElementsAre("x", "p", "e_in", "e1", "e2", "e_out", "c"));
  EXPECT_FALSE(cf.branches[0].clamped);
  EXPECT_THAT(DescribeControlFlow(plan, cf)[0], HasSubstr("(--branch else)"));
  o.branch = 7;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(cf, ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)));
  EXPECT_EQ(cf.branches[0].chosen, 1);
  EXPECT_TRUE(cf.branches[0].clamped);
  o.branch = 0;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(cf, ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)));
  EXPECT_EQ(Runs(plan, cf, "e1"), 0);
}

TEST(ControlFlowTest, RepeatsLoopSubgraphsEveryIteration) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kWhile));
  ControlFlowOptions o;
  o.loop_iterations = 3;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ControlFlow cf, ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)));
  EXPECT_THAT(Order(plan, cf),
              ElementsAre("x", "w", "c_in", "cmp", "c_out", "b_in", "b1", "b2", "b_out", "c_in#1", "cmp#1",
                          "c_out#1", "b_in#1", "b1#1", "b2#1", "b_out#1", "c_in#2", "cmp#2", "c_out#2", "b_in#2",
                          "b1#2", "b2#2", "b_out#2", "y"));
  EXPECT_EQ(Runs(plan, cf, "b2"), 3);
  EXPECT_EQ(Runs(plan, cf, "w"), 1);
  EXPECT_EQ(cf.depth(plan.model.node(plan.model.FindNode("b1"))), 1u);
  ASSERT_EQ(cf.loops.size(), 1u);
  EXPECT_THAT(DescribeControlFlow(plan, cf)[0], HasSubstr("1 loop(s) ran their body 3 times (--loop-iterations 3)"));
}

TEST(ControlFlowTest, RejectsNoIterationsAndTooManyRuns) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kWhile));
  ControlFlowOptions o;
  o.loop_iterations = 0;
  EXPECT_THAT(ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "loop iterations must be >= 1"));
  o.loop_iterations = 1'000'000;
  o.max_runs = 100'000;
  EXPECT_THAT(ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "more than 100000 node instances"));
}

TEST(ControlFlowTest, ParsesTheBranchFlag) {
  EXPECT_EQ(*ParseBranchFlag("then"), 0);
  EXPECT_EQ(*ParseBranchFlag("else"), 1);
  EXPECT_EQ(*ParseBranchFlag("3"), 3);
  EXPECT_EQ(*ParseBranchFlag("longest"), ControlFlowOptions::kLongestBranch);
  EXPECT_THAT(ParseBranchFlag("-1").status(), StatusIs(absl::StatusCode::kInvalidArgument, "--branch"));
  EXPECT_THAT(ParseBranchFlag("maybe").status(), StatusIs(absl::StatusCode::kInvalidArgument, "not 'maybe'"));
}

TEST(ControlFlowTest, LoopBodyReadsThePreviousIterationsValue) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kWhile));
  ControlFlowOptions o;
  o.loop_iterations = 3;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ControlFlow cf, ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)));
  const auto deps = BuildDependencies(plan, &cf);
  const NodeId b1 = plan.model.FindNode("b1"), b2 = plan.model.FindNode("b2"), x = plan.model.FindNode("x");
  // b1 reads the loop variable: x in the first iteration, b2 of the iteration before after that.
  const auto& d = deps[b1.index()];
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].producer, x);
  EXPECT_EQ(d[0].via, plan.model.FindNode("b_in"));
  EXPECT_EQ(d[1].producer, b2);
  EXPECT_STREQ(d[1].kind, "loop-carried");
  EXPECT_EQ(RequiredRuns(cf, d[0], 1, 0, 2), 1);  // x runs once
  EXPECT_EQ(RequiredRuns(cf, d[1], 1, 1, 0), 0);  // first iteration: nothing carried
  EXPECT_EQ(RequiredRuns(cf, d[1], 1, 1, 1), 1);
  EXPECT_EQ(RequiredRuns(cf, d[1], 1, 1, 2), 2);
  // b2 needs b1 of its own iteration; y needs every iteration's b2.
  const auto& d2 = deps[b2.index()];
  ASSERT_EQ(d2.size(), 1u);
  EXPECT_EQ(RequiredRuns(cf, d2[0], 1, 1, 2), 3);
  const auto& dy = deps[plan.model.FindNode("y").index()];
  ASSERT_GE(dy.size(), 1u);
  for (const Dependency& dep : dy) {
    if (dep.producer == b2) {
      EXPECT_EQ(RequiredRuns(cf, dep, 0, 1, 0), 3);
    }
  }
}

}  // namespace
}  // namespace npuplan::sim
