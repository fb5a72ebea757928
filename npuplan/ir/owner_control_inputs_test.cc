#include "npuplan/ir/owner_control_inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::NodeNamed;
using ::npuplan::testing::ParseVerifiedGraph;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Names(const Model& m, std::span<const NodeId> ids) {
  std::vector<std::string> out;
  for (NodeId id : ids) out.push_back(m.node(id).name);
  return out;
}

GraphId GraphOf(const Model& m, std::string_view node) { return NodeNamed(m, node).graph; }

// f (control inputs c1, c2) → body: the body's sources run after c1 and c2;
// g in the body (control input c3) → inner: after c1, c2 and c3; h in the
// body (none) → h_body: after c1 and c2, the body's own set.
constexpr const char* kNested = R"json({"nodes": [
    {"name": "x", "type": "Add", "outputs": [{"shape": [1]}]},
    {"name": "c2", "type": "Relu", "outputs": [{"shape": [1]}]},
    {"name": "c1", "type": "Relu", "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "PartitionedCall", "inputs": ["x:0"], "control_inputs": ["c2", "c1"], "subgraphs": ["body"], "outputs": [{"shape": [1]}]},
    {"name": "plain", "type": "PartitionedCall", "inputs": ["x:0"], "subgraphs": ["plain_body"], "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "NetOutput", "inputs": ["f:0", "plain:0"]}],
    "subgraphs": [
     {"name": "body", "parent": "f", "nodes": [
      {"name": "d", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "c3", "type": "Relu", "inputs": ["d:0"], "outputs": [{"shape": [1]}]},
      {"name": "g", "type": "PartitionedCall", "inputs": ["d:0"], "control_inputs": ["c3"], "subgraphs": ["inner"], "outputs": [{"shape": [1]}]},
      {"name": "h", "type": "PartitionedCall", "inputs": ["d:0"], "subgraphs": ["h_body"], "outputs": [{"shape": [1]}]},
      {"name": "body_out", "type": "NetOutput", "inputs": ["g:0", "h:0"]}]},
     {"name": "inner", "parent": "g", "nodes": [
      {"name": "k", "type": "Const", "outputs": [{"shape": [1]}]},
      {"name": "inner_out", "type": "NetOutput", "inputs": ["k:0"]}]},
     {"name": "h_body", "parent": "h", "nodes": [
      {"name": "k2", "type": "Const", "outputs": [{"shape": [1]}]},
      {"name": "h_out", "type": "NetOutput", "inputs": ["k2:0"]}]},
     {"name": "plain_body", "parent": "plain", "nodes": [
      {"name": "pd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "p_out", "type": "NetOutput", "inputs": ["pd:0"]}]}]})json";

TEST(OwnerControlInputsTest, EnclosingOwnersControlInputsAddUp) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kNested));
  const OwnerControlInputs oc(m);
  ASSERT_TRUE(oc.any());
  EXPECT_THAT(oc.Of(kRootGraph), IsEmpty());
  // Ascending NodeIds: c2 was declared before c1.
  EXPECT_THAT(Names(m, oc.Of(GraphOf(m, "d"))), ElementsAre("c2", "c1"));
  EXPECT_THAT(Names(m, oc.Of(GraphOf(m, "k"))), ElementsAre("c2", "c1", "c3"));
  EXPECT_THAT(Names(m, oc.Of(GraphOf(m, "k2"))), ElementsAre("c2", "c1"));
  EXPECT_THAT(oc.Of(GraphOf(m, "pd")), IsEmpty());
}

TEST(OwnerControlInputsTest, NoControlInputIntoAnOwnerMeansNothingToRunAfter) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(R"json({"nodes": [
    {"name": "x", "type": "Add", "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Relu", "control_inputs": ["x"], "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "PartitionedCall", "inputs": ["x:0"], "subgraphs": ["body"], "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "NetOutput", "inputs": ["f:0", "y:0"]}],
    "subgraphs": [{"name": "body", "parent": "f", "nodes": [
      {"name": "d", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
      {"name": "b_out", "type": "NetOutput", "inputs": ["d:0"]}]}]})json"));
  const OwnerControlInputs oc(m);
  EXPECT_FALSE(oc.any());
  EXPECT_THAT(oc.Of(GraphOf(m, "d")), IsEmpty());
}

// An FFTS or thread-scope owner runs its subgraphs inside its own task: its
// control inputs order that task, and nothing below it needs more; a Send /
// Recv node carries the events' order, not the user's.
TEST(OwnerControlInputsTest, TaskOwnersAndSyncNodesAddNothing) {
  for (const char* attr : {"_ffts_plus_sub_graph", "_ffts_sub_graph", "_thread_scope_id"}) {
    std::string json = R"json({"nodes": [
      {"name": "x", "type": "Add", "outputs": [{"shape": [1]}]},
      {"name": "c", "type": "Relu", "outputs": [{"shape": [1]}]},
      {"name": "r", "type": "Recv", "outputs": []},
      {"name": "f", "type": "PartitionedCall", "inputs": ["x:0"], "control_inputs": ["c"], "subgraphs": ["body"], "attrs": {"ATTR": "body"}, "outputs": [{"shape": [1]}]},
      {"name": "q", "type": "PartitionedCall", "inputs": ["x:0"], "control_inputs": ["r"], "subgraphs": ["q_body"], "outputs": [{"shape": [1]}]},
      {"name": "o", "type": "NetOutput", "inputs": ["f:0", "q:0"]}],
      "subgraphs": [
       {"name": "body", "parent": "f", "nodes": [
        {"name": "d", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "c3", "type": "Relu", "inputs": ["d:0"], "outputs": [{"shape": [1]}]},
        {"name": "g", "type": "PartitionedCall", "inputs": ["d:0"], "control_inputs": ["c3"], "subgraphs": ["inner"], "outputs": [{"shape": [1]}]},
        {"name": "b_out", "type": "NetOutput", "inputs": ["g:0"]}]},
       {"name": "inner", "parent": "g", "nodes": [
        {"name": "k", "type": "Const", "outputs": [{"shape": [1]}]},
        {"name": "inner_out", "type": "NetOutput", "inputs": ["k:0"]}]},
       {"name": "q_body", "parent": "q", "nodes": [
        {"name": "qd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
        {"name": "q_out", "type": "NetOutput", "inputs": ["qd:0"]}]}]})json";
    json.replace(json.find("ATTR"), 4, attr);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(json));
    const OwnerControlInputs oc(m);
    EXPECT_FALSE(oc.any()) << attr;
    EXPECT_THAT(oc.Of(GraphOf(m, "k")), IsEmpty()) << attr;
    EXPECT_THAT(oc.Of(GraphOf(m, "qd")), IsEmpty()) << attr;
  }
}

TEST(OwnerControlInputsTest, ASourceHasNoInputButOrderOnlyOnes) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(R"json({"nodes": [
    {"name": "d", "type": "Data", "outputs": [{"shape": [1]}]},
    {"name": "k", "type": "Const", "outputs": [{"shape": [1]}]},
    {"name": "r", "type": "Recv", "outputs": []},
    {"name": "after_recv", "type": "RandomUniform", "control_inputs": ["r"], "outputs": [{"shape": [1]}]},
    {"name": "after_k", "type": "RandomUniform", "control_inputs": ["k"], "outputs": [{"shape": [1]}]},
    {"name": "reads", "type": "Relu", "inputs": ["d:0"], "outputs": [{"shape": [1]}]},
    {"name": "s", "type": "Send", "control_inputs": ["reads"], "outputs": []},
    {"name": "o", "type": "NetOutput", "inputs": ["k:0", "after_recv:0", "after_k:0", "reads:0"]}]})json"));
  auto source = [&](const char* name) { return IsGraphSource(m, NodeNamed(m, name)); };
  EXPECT_TRUE(source("d"));
  EXPECT_TRUE(source("k"));
  EXPECT_TRUE(source("after_recv"));
  EXPECT_FALSE(source("r"));  // order only: the events' own
  EXPECT_FALSE(source("after_k"));
  EXPECT_FALSE(source("reads"));
  EXPECT_FALSE(source("s"));
}

}  // namespace
}  // namespace npuplan
