#include "npuplan/plan/loop_order.h"

#include <gtest/gtest.h>

#include <string_view>

#include "npuplan/testing/graph_testing.h"

namespace npuplan {
namespace {

// x → w: While(cond: c; body: b, which holds p: If(then: t; else: e)) → y.
constexpr char kNested[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Add", "outputs": [{"shape": [1]}]},
  {"name": "w", "type": "While", "inputs": ["x:0"], "subgraphs": ["cond", "body"], "outputs": [{"shape": [1]}]},
  {"name": "y", "type": "Add", "inputs": ["w:0"], "outputs": [{"shape": [1]}]}],
  "subgraphs": [
    {"name": "cond", "parent": "w", "nodes": [
      {"name": "cd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "c", "type": "Less", "inputs": ["cd:0"], "outputs": [{"shape": [1], "dtype": "bool"}]},
      {"name": "co", "type": "NetOutput", "inputs": ["c:0"]}]},
    {"name": "body", "parent": "w", "nodes": [
      {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "b", "type": "Relu", "inputs": ["bd:0"], "outputs": [{"shape": [1]}]},
      {"name": "p", "type": "If", "inputs": ["b:0", "b:0"], "subgraphs": ["then", "else"], "outputs": [{"shape": [1]}]},
      {"name": "bo", "type": "NetOutput", "inputs": ["p:0"]}]},
    {"name": "then", "parent": "p", "nodes": [
      {"name": "td", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t", "type": "Relu", "inputs": ["td:0"], "outputs": [{"shape": [1]}]},
      {"name": "to", "type": "NetOutput", "inputs": ["t:0"]}]},
    {"name": "else", "parent": "p", "nodes": [
      {"name": "ed", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
      {"name": "e", "type": "Neg", "inputs": ["ed:0"], "outputs": [{"shape": [1]}]},
      {"name": "eo", "type": "NetOutput", "inputs": ["e:0"]}]}]})json";

class StaticLoopNestingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Model> m = testing::ParseVerifiedGraph(kNested);
    ASSERT_TRUE(m.ok()) << m.status();
    plan_.model = *std::move(m);
    plan_.EnsureNodeVectors();
  }
  NodeId Id(std::string_view name) const { return plan_.model.FindNode(name); }
  std::string Left(const StaticLoopNesting& n, std::string_view inside, std::string_view outside) {
    const NodeId owner = n.OutermostLoopLeft(Id(inside), Id(outside));
    return owner.valid() ? plan_.model.node(owner).name : "-";
  }
  Plan plan_;
};

// The loop's cond and body are one scope; with branches, each branch is one
// of its own, inside the loop's.
TEST_F(StaticLoopNestingTest, EachBranchIsAScopeInsideTheLoopsScope) {
  const StaticLoopNesting n(plan_, NestingScopes::kLoopsAndBranches);
  ASSERT_FALSE(n.empty());
  EXPECT_EQ(Left(n, "t", "x"), "w");  // from outside the loop: its gate first
  EXPECT_EQ(Left(n, "t", "b"), "p");  // from the body: the If's
  EXPECT_EQ(Left(n, "b", "t"), "-");  // out of the branch into the body: nothing left on b's side
  EXPECT_EQ(Left(n, "t", "e"), "p");  // the other branch is another scope
  EXPECT_EQ(Left(n, "t", "to"), "-");
  EXPECT_EQ(Left(n, "c", "b"), "-");  // cond and body: one loop
  EXPECT_EQ(Left(n, "y", "t"), "-");
}

// Loops only: the branches are no scopes, and a model without a loop has none.
TEST_F(StaticLoopNestingTest, LoopsOnlyIgnoresBranches) {
  const StaticLoopNesting n(plan_);
  EXPECT_EQ(Left(n, "t", "b"), "-");
  EXPECT_EQ(Left(n, "t", "e"), "-");
  EXPECT_EQ(Left(n, "t", "x"), "w");
  // The same If at the top level, without the loop.
  Plan flat;
  absl::StatusOr<Model> m = testing::ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "outputs": [{"shape": [1]}]},
    {"name": "p", "type": "If", "inputs": ["x:0", "x:0"], "subgraphs": ["then"], "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "then", "parent": "p", "nodes": [
      {"name": "td", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t", "type": "Relu", "inputs": ["td:0"], "outputs": [{"shape": [1]}]},
      {"name": "to", "type": "NetOutput", "inputs": ["t:0"]}]}]})json");
  ASSERT_TRUE(m.ok()) << m.status();
  flat.model = *std::move(m);
  flat.EnsureNodeVectors();
  EXPECT_TRUE(StaticLoopNesting(flat).empty());
  const StaticLoopNesting branches(flat, NestingScopes::kLoopsAndBranches);
  ASSERT_FALSE(branches.empty());
  EXPECT_EQ(
      flat.model
          .node(branches.OutermostLoopLeft(flat.model.FindNode("t"), flat.model.FindNode("x")))
          .name,
      "p");
}

}  // namespace
}  // namespace npuplan
