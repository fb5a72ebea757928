#include "npuplan/ir/verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

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
  // A stream only an attached task uses is no hole (the Send/Recv nodes of
  // another attached stream may sit above it, as main-stream nodes); an
  // attached id above every main one adds no hole either.
  m.node(m.FindNode("f")).stream_id = 2;
  m.node(m.FindNode("a")).attached_stream_ids = {1, 4};
  EXPECT_THAT(VerifyStreamIdsContinuous(m), IsOk());
}

// VerifyStructure's combined pass against the checks one by one on random
// models, well-formed or with one or two random defects: the same verdict
// and, on failure, the same message.
TEST(VerifierTest, CombinedPassMatchesCheckByCheckOnRandomModels) {
  std::mt19937 rng(22);
  auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  int failures = 0;
  for (int round = 0; round < 3000; ++round) {
    Model m;
    const size_t n = 2 + pick(12);
    std::vector<NodeId> ids;
    for (size_t i = 0; i < n; ++i) {
      Node node;
      node.name = "n" + std::to_string(i);
      node.type = "Op";
      node.outputs.resize(1 + pick(2));
      for (size_t k = 0; k < 3 && !ids.empty(); ++k) {
        if (pick(2) == 0) node.inputs.push_back({ids[pick(ids.size())], 0});
      }
      if (!ids.empty() && pick(3) == 0) node.control_inputs.push_back(ids[pick(ids.size())]);
      ids.push_back(m.AddNode(kRootGraph, std::move(node)));
    }
    std::vector<NodeId> sub_ids;
    if (pick(2) == 0) {
      const GraphId g = m.AddSubgraph(ids[pick(n)], "sub");
      for (size_t i = 0; i < 3; ++i) {
        Node node;
        node.name = "s" + std::to_string(i);
        node.outputs.resize(1);
        if (!sub_ids.empty()) node.inputs.push_back({sub_ids.back(), 0});
        sub_ids.push_back(m.AddNode(g, std::move(node)));
      }
    }
    RenumberTopoIds(m);
    const size_t defects = pick(3);
    for (size_t d = 0; d < defects; ++d) {
      Node& x = m.node(ids[pick(n)]);
      const NodeId other = ids[pick(n)];
      switch (pick(10)) {
        case 0:
          x.name = m.node(other).name;
          break;
        case 1:
          x.name.clear();
          break;
        case 2:
          x.inputs.push_back({other, static_cast<int32_t>(pick(4)) - 1});
          break;
        case 3:
          x.control_inputs.push_back(other);
          break;
        case 4:
          x.topo_id = static_cast<int64_t>(pick(n + 2));
          break;
        case 5:
          std::swap(m.root().nodes[pick(n)], m.root().nodes[pick(n)]);
          break;
        case 6:
          m.root().nodes.push_back(other);
          break;
        case 7:
          x.inputs.push_back({NodeId(static_cast<int32_t>(pick(n + 6))), 0});
          break;
        case 8:
          if (!sub_ids.empty()) x.inputs.push_back({sub_ids[pick(sub_ids.size())], 0});
          break;
        case 9:
          if (!sub_ids.empty()) m.node(sub_ids[pick(sub_ids.size())]).topo_id = 0;
          break;
      }
    }
    const absl::Status combined = VerifyStructure(m);
    const absl::Status one_by_one = VerifyStructureCheckByCheck(m);
    ASSERT_EQ(combined.ok(), one_by_one.ok()) << one_by_one;
    ASSERT_EQ(combined.message(), one_by_one.message());
    failures += combined.ok() ? 0 : 1;
  }
  // The defects reach the failure paths, and the well-formed rounds pass.
  EXPECT_GT(failures, 500);
  EXPECT_LT(failures, 2900);
}

// Many nodes (several hash-sort rounds) and one duplicate pair anywhere.
TEST(VerifierTest, CombinedPassFindsOneDuplicateNameAmongMany) {
  std::mt19937 rng(5);
  for (int round = 0; round < 4; ++round) {
    Model m;
    const size_t n = 20000;
    std::vector<NodeId> ids;
    for (size_t i = 0; i < n; ++i) {
      Node node;
      node.name = "node_" + std::to_string(i * 7919 % 100003);
      ids.push_back(m.AddNode(kRootGraph, std::move(node)));
    }
    RenumberTopoIds(m);
    EXPECT_THAT(VerifyStructure(m), IsOk());
    const size_t a = rng() % n, b = (a + 1 + rng() % (n - 1)) % n;
    m.node(ids[a]).name = m.node(ids[b]).name;
    const absl::Status s = VerifyStructure(m);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal, "duplicate node name"));
    EXPECT_EQ(s.message(), VerifyStructureCheckByCheck(m).message());
  }
}

}  // namespace
}  // namespace npuplan
