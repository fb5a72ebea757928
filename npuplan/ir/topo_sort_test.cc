#include "npuplan/ir/topo_sort.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;
using ::npuplan::testing::NodeOrder;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;

// a → b → d, a → c → d, listed so that the file order is not topological.
constexpr char kDiamond[] = R"json({"nodes": [
  {"name": "d", "type": "Add", "inputs": ["b:0", "c:0"], "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Relu", "inputs": ["a:0"], "outputs": [{"shape": [1]}]},
  {"name": "e", "type": "Relu", "inputs": ["b:0"], "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "Relu", "inputs": ["a:0"], "outputs": [{"shape": [1]}]},
  {"name": "a", "type": "Data", "outputs": [{"shape": [1]}]}]})json";

Model Parse(const std::string& text, const std::string& mode) {
  nlohmann::json j = nlohmann::json::parse(text);
  j["format"] = kGraphFormat;
  j["options"]["ge.topoSortingMode"] = mode;
  auto m = GraphFromJson(j, "<test>");
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(m).value();
}

TEST(TopoSortTest, BfsVisitsSuccessorsInReadyOrder) {
  Model m = Parse(kDiamond, "0");
  EXPECT_THAT(NodeOrder(m), ElementsAre("a", "b", "c", "e", "d"));
  EXPECT_THAT(VerifyStructure(m), IsOk());
}

TEST(TopoSortTest, DfsFollowsTheFirstReadySuccessorDeep) {
  Model m = Parse(kDiamond, "1");
  EXPECT_THAT(NodeOrder(m), ElementsAre("a", "b", "e", "c", "d"));
  EXPECT_THAT(VerifyStructure(m), IsOk());
}

TEST(TopoSortTest, ReverseDfsEmitsInputsBeforeEachSink) {
  Model m = Parse(kDiamond, "2");
  EXPECT_THAT(NodeOrder(m), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_THAT(VerifyStructure(m), IsOk());
}

TEST(TopoSortTest, StableModeKeepsAnAlreadyTopologicalOrder) {
  Model m = Parse(R"json({"nodes": [
    {"name": "a", "type": "Data", "outputs": [{"shape": [1]}]},
    {"name": "z", "type": "Data", "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "inputs": ["a:0", "z:0"]}]})json", "3");
  EXPECT_THAT(NodeOrder(m), ElementsAre("a", "z", "b"));
}

TEST(TopoSortTest, TopoIdsAreContinuousPerGraph) {
  Model m = Parse(kDiamond, "0");
  for (size_t i = 0; i < m.root().nodes.size(); ++i) EXPECT_EQ(m.node(m.root().nodes[i]).topo_id, (int64_t)i);
}

TEST(TopoSortTest, NamesTheNodesOfACycle) {
  Model m;
  auto relu = [](const char* name) {
    Node n;
    n.name = name;
    n.type = "Relu";
    return n;
  };
  Node a = relu("a");
  a.outputs.push_back({});
  Node b = relu("b");
  b.outputs.push_back({});
  Node c = relu("c");
  NodeId ia = m.AddNode(kRootGraph, a), ib = m.AddNode(kRootGraph, b), ic = m.AddNode(kRootGraph, c);
  m.node(ib).inputs.push_back({ia, 0});
  m.node(ia).inputs.push_back({ib, 0});
  m.node(ic).inputs.push_back({ia, 0});
  for (auto mode : {TopoSortMode::kBfs, TopoSortMode::kDfs, TopoSortMode::kRdfs}) {
    absl::Status s = TopologicalSort(m, mode);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, "cycle"));
    EXPECT_THAT(std::string(s.message()), ::testing::AnyOf(::testing::HasSubstr("a -> b -> a"),
                                                           ::testing::HasSubstr("b -> a -> b")));
  }
}

// Property: on random DAGs every mode yields an order the verifier accepts.
TEST(TopoSortTest, EveryModeSortsRandomDags) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    Model m;
    int n = 1 + rng() % 60;
    std::vector<NodeId> ids;
    for (int i = 0; i < n; ++i) {
      Node node;
      node.name = StrCat("n", i);
      node.type = "Relu";
      node.outputs.push_back({});
      ids.push_back(m.AddNode(kRootGraph, node));
    }
    for (int i = 1; i < n; ++i) {
      int k = rng() % 3;
      for (int e = 0; e < k; ++e) {
        int p = rng() % i;
        if (rng() % 2) m.node(ids[i]).inputs.push_back({ids[p], 0});
        else m.node(ids[i]).control_inputs.push_back(ids[p]);
      }
    }
    std::shuffle(m.root().nodes.begin(), m.root().nodes.end(), rng);
    for (auto mode : {TopoSortMode::kBfs, TopoSortMode::kDfs, TopoSortMode::kRdfs, TopoSortMode::kStableRdfs}) {
      ASSERT_THAT(TopologicalSort(m, mode), IsOk());
      ASSERT_THAT(VerifyStructure(m), IsOk());
    }
  }
}

}  // namespace
}  // namespace npuplan
