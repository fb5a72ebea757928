#include "npuplan/ir/verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/ir/topo_sort.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

constexpr char kGraph[] = R"json({"nodes": [
  {"name": "a", "type": "Data", "outputs": [{"shape": [1]}]},
  {"name": "f", "type": "If", "inputs": ["a:0"], "subgraphs": ["then"], "outputs": [{"shape": [1]}]},
  {"name": "o", "type": "NetOutput", "inputs": ["f:0"]}],
  "subgraphs": [{"name": "then", "parent": "f", "nodes": [
    {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1]}]},
    {"name": "t_out", "type": "NetOutput", "inputs": ["t_in:0"]}]}]})json";

TEST(VerifierTest, AcceptsAWellFormedModel) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  EXPECT_THAT(VerifyStructure(m), IsOk());
}

TEST(VerifierTest, RejectsBackwardEdge) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  std::swap(m.root().nodes[0], m.root().nodes[1]);
  RenumberTopoIds(m);
  EXPECT_THAT(VerifyStructure(m), StatusIs(absl::StatusCode::kInternal, "verifier[acyclic]"));
}

TEST(VerifierTest, RejectsTopoIdHole) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  m.node(m.FindNode("o")).topo_id = 7;
  EXPECT_THAT(VerifyStructure(m), StatusIs(absl::StatusCode::kInternal, "verifier[topo-ids]"));
}

TEST(VerifierTest, RejectsAnchorOutOfRange) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  m.node(m.FindNode("o")).inputs[0].index = 3;
  EXPECT_THAT(VerifyStructure(m), StatusIs(absl::StatusCode::kInternal, "verifier[edges]"));
}

TEST(VerifierTest, RejectsEdgeAcrossGraphs) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  m.node(m.FindNode("t_out")).inputs[0].node = m.FindNode("a");
  EXPECT_THAT(VerifyStructure(m), StatusIs(absl::StatusCode::kInternal, "another graph"));
}

TEST(VerifierTest, RejectsParentIndexOutOfRange) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  m.node(m.FindNode("t_in")).attrs["_parent_node_index"] = int64_t{4};
  EXPECT_THAT(VerifyStructure(m), StatusIs(absl::StatusCode::kInternal, "verifier[parent-index]"));
}

TEST(VerifierTest, RejectsSubgraphOwnedTwice) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  m.node(m.FindNode("o")).subgraphs.push_back(m.node(m.FindNode("f")).subgraphs[0]);
  EXPECT_THAT(VerifyStructure(m), StatusIs(absl::StatusCode::kInternal, "verifier[ownership]"));
}

TEST(VerifierTest, RejectsDuplicateNames) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  const_cast<Node&>(m.node(m.FindNode("o"))).name = "a";  // bypasses the index on purpose
  EXPECT_THAT(VerifyStructure(m), StatusIs(absl::StatusCode::kInternal, "duplicate node name 'a'"));
}

// The name index only speeds the check up: a name it does not know (a
// rename that bypassed it) is checked all the same.
TEST(VerifierTest, NameCheckDoesNotDependOnTheIndex) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  Node& o = const_cast<Node&>(m.node(m.FindNode("o")));
  o.name = "o2";  // unique, unknown to the index
  EXPECT_THAT(VerifyStructure(m), IsOk());
  o.name = "";
  EXPECT_THAT(VerifyStructure(m), StatusIs(absl::StatusCode::kInternal, "empty name"));
  o.name = "o";
  m.node(m.FindNode("a")).name = "o";  // the index still finds the old 'o' under "o"
  EXPECT_THAT(VerifyStructure(m), StatusIs(absl::StatusCode::kInternal, "duplicate node name 'o'"));
}

// The stage check itself (stage_checks.def runs it for logical-streams).
TEST(VerifierTest, StreamIdCheckFindsHoles) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kGraph));
  m.node(m.FindNode("a")).stream_id = 0;
  m.node(m.FindNode("f")).stream_id = 2;
  EXPECT_THAT(VerifyStreamIdsContinuous(m),
              StatusIs(absl::StatusCode::kInternal, "no node is on stream 1"));
  m.node(m.FindNode("f")).stream_id = 1;
  EXPECT_THAT(VerifyStreamIdsContinuous(m), IsOk());
}

}  // namespace
}  // namespace npuplan
