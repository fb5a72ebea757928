#include "npuplan/sim/control_flow.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

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

// Eight sibling Ifs, each with a then and an else branch.
std::string EightIfs() {
  std::string nodes =
      R"json({"name": "x", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]})json";
  std::string subgraphs;
  for (int i = 0; i < 8; ++i) {
    const std::string p = StrCat("p", i);
    nodes +=
        StrCat(R"json(, {"name": ")json", p,
               R"json(", "type": "If", "inputs": ["x", "x"], "subgraphs": [")json", p,
               R"json(_then", ")json", p,
               R"json(_else"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]})json");
    for (const char* b : {"then", "else"}) {
      subgraphs += StrCat(
          subgraphs.empty() ? "" : ", ", R"json({"name": ")json", p, "_", b,
          R"json(", "parent": ")json", p, R"json(", "nodes": [{"name": ")json", p, "_", b,
          R"json(_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]}, {"name": ")json",
          p, "_", b, R"json(_op", "type": "Relu", "inputs": [")json", p, "_", b,
          R"json(_in"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]}, {"name": ")json",
          p, "_", b, R"json(_out", "type": "NetOutput", "inputs": [")json", p, "_", b,
          R"json(_op"]}]})json");
    }
  }
  return StrCat(R"json({"name": "g", "nodes": [)json", nodes, R"json(], "subgraphs": [)json",
                subgraphs, "]}");
}

TEST(ControlFlowTest, DrawnBranchesMixAndRepeatForOneSeed) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(EightIfs()));
  ControlFlowOptions o;
  o.branch = ControlFlowOptions::kDrawnBranch;
  std::set<std::vector<int32_t>> seen;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    o.branch_seed = seed;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ControlFlow cf,
                                 ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ControlFlow again,
                                 ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)));
    ASSERT_EQ(cf.branches.size(), 8u);
    std::vector<int32_t> chosen;
    for (const BranchChoice& c : cf.branches) chosen.push_back(c.chosen);
    for (size_t i = 0; i < chosen.size(); ++i) EXPECT_EQ(again.branches[i].chosen, chosen[i]);
    seen.insert(chosen);
    EXPECT_THAT(DescribeControlFlow(plan, cf)[0],
                HasSubstr(StrCat("(drawn from --branch-seed ", seed, ")")));
  }
  // Seeds draw different mixes, and some mix has both branches.
  EXPECT_GT(seen.size(), 1u);
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](const std::vector<int32_t>& c) {
    return std::count(c.begin(), c.end(), 0) > 0 && std::count(c.begin(), c.end(), 1) > 0;
  }));
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

// The loop-carried producers of `consumer`'s dependencies, by name.
std::vector<std::string> CarriedProducers(const Plan& plan,
                                          const std::vector<std::vector<Dependency>>& deps,
                                          std::string_view consumer) {
  std::vector<std::string> out;
  for (const Dependency& d : deps[plan.model.FindNode(consumer).index()]) {
    if (d.loop_carried) out.push_back(plan.model.node(d.producer).name);
  }
  return out;
}

// An ONNX Loop as the ONNX importer builds it, with optional input `absent`
// ("m", "cond", "both" or "" for none) left out of the Loop's inputs:
// m, cond, x → Loop l (z captured) → y; body inputs (b_iter, b_cond, b_v),
// outputs (b_less: the condition, b2: v_0, b_scan: a scan output).
//   b_iter → b_i;  b_cond → b_c;  b_cap (z) → b_k
//   b_v → b1 (s1) → b2 (s0) → b_less;  b1 → b_scan
std::string OnnxLoopGraph(std::string_view absent) {
  const bool no_m = absent == "m" || absent == "both",
             no_cond = absent == "cond" || absent == "both";
  std::string inputs, absent_list;
  int64_t next = 0;
  auto formal = [&](bool present, const char* producer, int64_t onnx_position) {
    if (!present) {
      absent_list += StrCat(absent_list.empty() ? "" : ", ", onnx_position);
      return std::string(R"("_onnx_absent_parent_input": true)");
    }
    inputs += StrCat(inputs.empty() ? "" : ", ", "\"", producer, "\"");
    return StrCat("\"_parent_node_index\": ", next++);
  };
  const std::string iter_attrs = formal(!no_m, "m", 0);
  const std::string cond_attrs = formal(!no_cond, "cond", 1);
  const std::string v_attrs = formal(true, "x", 2);
  const std::string cap_attrs = formal(true, "z", 3) + R"(, "_onnx_implicit_input": true)";
  const std::string loop_attrs =
      absent_list.empty() ? "" : StrCat(R"(, "_onnx_absent_inputs": [)", absent_list, "]");
  return StrCat(R"json({"name": "g", "nodes": [
  {"name": "m", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "cond", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "x", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "z", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "l", "type": "Loop", "inputs": [)json",
                inputs,
                R"json(], "subgraphs": ["body"], "attrs": {"_cost": 0, "_test_stream": 0)json",
                loop_attrs, R"json(}, "outputs": [{"shape": [4]}, {"shape": [3, 4]}]},
  {"name": "y", "type": "Relu", "inputs": ["l"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "body", "parent": "l", "nodes": [
   {"name": "b_iter", "type": "Data", "attrs": {)json",
                iter_attrs, R"json(}, "outputs": [{"shape": [1]}]},
   {"name": "b_cond", "type": "Data", "attrs": {)json",
                cond_attrs, R"json(}, "outputs": [{"shape": [1]}]},
   {"name": "b_v", "type": "Data", "attrs": {)json",
                v_attrs, R"json(}, "outputs": [{"shape": [4]}]},
   {"name": "b_cap", "type": "Data", "attrs": {)json",
                cap_attrs, R"json(}, "outputs": [{"shape": [4]}]},
   {"name": "b_i", "type": "Relu", "inputs": ["b_iter"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
   {"name": "b_c", "type": "Relu", "inputs": ["b_cond"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
   {"name": "b_k", "type": "Relu", "inputs": ["b_cap"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "b1", "type": "Relu", "inputs": ["b_v"], "attrs": {"_cost": 2, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "b2", "type": "Relu", "inputs": ["b1"], "attrs": {"_cost": 3, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "b_less", "type": "Less", "inputs": ["b2"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
   {"name": "b_scan", "type": "Relu", "inputs": ["b1"], "attrs": {"_cost": 1, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "b_out", "type": "NetOutput", "inputs": ["b_less", "b2", "b_scan"], "attrs": {"_parent_output_index": [-1, 0, 1]}}]}]})json");
}

absl::StatusOr<std::vector<std::vector<Dependency>>> LoopDependencies(const Plan& plan) {
  ControlFlowOptions o;
  o.loop_iterations = 3;
  NPUPLAN_ASSIGN_OR_RETURN(ControlFlow cf, ResolveControlFlow(plan, o, NodeWork(plan, {}, 0)));
  return BuildDependencies(plan, &cf);
}

// ONNX numbering: body input 1 + j is fed by body output j (the condition,
// then v_0 …); body input 0, the iteration number, by none.
TEST(ControlFlowTest, OnnxLoopBodyReadsTheConditionAndCarriedValuesOfTheIterationBefore) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(OnnxLoopGraph("")));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto deps, LoopDependencies(plan));
  EXPECT_THAT(CarriedProducers(plan, deps, "b1"), ElementsAre("b2"));
  EXPECT_THAT(CarriedProducers(plan, deps, "b_c"), ElementsAre("b_less"));
  EXPECT_THAT(CarriedProducers(plan, deps, "b_i"), ElementsAre());
  // A captured outer value is the same in every iteration: not the scan
  // output that a While's numbering (variable 1) would pick.
  EXPECT_THAT(CarriedProducers(plan, deps, "b_k"), ElementsAre());
  // b1 still reads x in the first iteration.
  const Dependency& first = deps[plan.model.FindNode("b1").index()][0];
  EXPECT_EQ(first.producer, plan.model.FindNode("x"));
  EXPECT_FALSE(first.loop_carried);
}

// Absent optional inputs are left out of the Loop's inputs, so the body's
// _parent_node_index counts present inputs only; _onnx_absent_inputs puts
// the ONNX positions back. With M and cond both absent the two body inputs
// cannot be told apart: the condition gets no dependency (none invented).
TEST(ControlFlowTest, OnnxLoopWithAbsentInputsMapsCompactedIndices) {
  for (std::string_view absent : {"m", "cond", "both"}) {
    SCOPED_TRACE(absent);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(OnnxLoopGraph(absent)));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(auto deps, LoopDependencies(plan));
    EXPECT_THAT(CarriedProducers(plan, deps, "b1"), ElementsAre("b2"));
    EXPECT_THAT(CarriedProducers(plan, deps, "b_i"), ElementsAre());
    EXPECT_THAT(CarriedProducers(plan, deps, "b_k"), ElementsAre());
    if (absent == "both") {
      EXPECT_THAT(CarriedProducers(plan, deps, "b_c"), ElementsAre());
    } else {
      EXPECT_THAT(CarriedProducers(plan, deps, "b_c"), ElementsAre("b_less"));
    }
  }
}

TEST(ControlFlowTest, OnnxLoopAttributesOutOfRangeCarryNothing) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(OnnxLoopGraph("m")));
  // Set after the graph verifier, which would reject them.
  plan.model.node(plan.model.FindNode("b_v")).attrs["_parent_node_index"] = int64_t{1} << 62;
  plan.model.node(plan.model.FindNode("b_cond")).attrs["_parent_node_index"] = int64_t{-1};
  plan.model.node(plan.model.FindNode("l")).attrs["_onnx_absent_inputs"] =
      AttrValue::IntList{-7, int64_t{1} << 62, 0, 0};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto deps, LoopDependencies(plan));
  EXPECT_THAT(CarriedProducers(plan, deps, "b1"), ElementsAre());
  EXPECT_THAT(CarriedProducers(plan, deps, "b_c"), ElementsAre());
}

// GE's For (start, limit, delta, x_0): body Data 3 reads body output 0 of the
// iteration before, as GE's ForPass maps it; Data 0 (the counter) reads none.
TEST(ControlFlowTest, ForBodyReadsItsInputsOfTheIterationBefore) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
  {"name": "s", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "x", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "f", "type": "For", "inputs": ["s", "s", "s", "x"], "subgraphs": ["body"],
   "attrs": {"_cost": 0, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "body", "parent": "f", "nodes": [
   {"name": "b_i", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
   {"name": "b_v", "type": "Data", "attrs": {"_parent_node_index": 3}, "outputs": [{"shape": [4]}]},
   {"name": "b_count", "type": "Relu", "inputs": ["b_i"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [1]}]},
   {"name": "b1", "type": "Relu", "inputs": ["b_v"], "attrs": {"_cost": 2, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "b2", "type": "Relu", "inputs": ["b1"], "attrs": {"_cost": 3, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "b_out", "type": "NetOutput", "inputs": ["b2"]}]}]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto deps, LoopDependencies(plan));
  EXPECT_THAT(CarriedProducers(plan, deps, "b1"), ElementsAre("b2"));
  EXPECT_THAT(CarriedProducers(plan, deps, "b_count"), ElementsAre());
}

}  // namespace
}  // namespace npuplan::sim
