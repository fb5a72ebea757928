#include "npuplan/stream/logical_stream_assignment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::ParseStreamTestGraph;
using ::npuplan::stream::testing::StreamOf;
using ::npuplan::testing::IsOk;

TEST(LogicalStreamAssignmentTest, FirstBlockOfFunctionSubgraphTakesParentStream) {
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({
    "nodes": [{"name": "a", "type": "Relu"},
              {"name": "call", "type": "PartitionedCall", "inputs": ["a"], "subgraphs": ["sub"]}],
    "subgraphs": [{"name": "sub", "parent": "call", "nodes": [
      {"name": "d", "type": "Data", "attrs": {"_parent_node_index": 0}},
      {"name": "r", "type": "Relu", "inputs": ["d"]},
      {"name": "o", "type": "NetOutput", "inputs": ["r"]}]}]})json", {}, &log));
  EXPECT_EQ(StreamOf(plan, "call"), 0);
  EXPECT_EQ(StreamOf(plan, "r"), 0);
  EXPECT_EQ(StreamOf(plan, "o"), 0);
  EXPECT_EQ(plan.streams.logical, 1);
  EXPECT_EQ(log.WithKeyword("ParentStreamReused").size(), 1u);
}

TEST(LogicalStreamAssignmentTest, UnknownShapeGraphsGetOneStreamAndKnownSubgraphsTheStaticChain) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({
    "nodes": [{"name": "x", "type": "Data"},
              {"name": "cu", "type": "PartitionedCall", "inputs": ["x"], "subgraphs": ["g_sub_0_unknow"]},
              {"name": "ck", "type": "PartitionedCall", "inputs": ["cu"], "subgraphs": ["g_sub_1_know"]}],
    "subgraphs": [
      {"name": "g_sub_0_unknow", "parent": "cu", "nodes": [
        {"name": "u1", "type": "Relu"}, {"name": "u2", "type": "HcomAllReduce", "inputs": ["u1"]}]},
      {"name": "g_sub_1_know", "parent": "ck", "nodes": [
        {"name": "k1", "type": "Relu"}, {"name": "k2", "type": "HcomAllReduce"}]}]})json"));
  Plan plan;
  plan.model = std::move(m);
  plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  plan.partition.ran = true;
  plan.partition.decision = PartitionDecision::kPartitioned;
  plan.partition.subgraphs = {{"g_sub_0_unknow", SubgraphKind::kUnknown, "cu", {}, {}},
                              {"g_sub_1_know", SubgraphKind::kKnown, "ck", {}, {}}};
  EXPECT_TRUE(stream::IsUnknownShapeGraph(plan, kRootGraph));
  CompileOptions options;
  DecisionLog log(true);
  Statistics stats;
  PassContext ctx{options, log, stats};
  LogicalStreamAssignment pass;
  ASSERT_THAT(pass.Run(plan, ctx), IsOk());
  for (const char* n : {"x", "cu", "ck", "u1", "u2"}) EXPECT_EQ(StreamOf(plan, n), 0) << n;
  EXPECT_EQ(StreamOf(plan, "k2"), 1);  // independent first
  EXPECT_EQ(StreamOf(plan, "k1"), 2);
  EXPECT_EQ(plan.streams.logical, 3);
  EXPECT_EQ(log.WithKeyword("UnknownShapeSingleStream").size(), 2u);
}

// Random graphs: labels, HCCL, AICPU, parallel groups, control edges and
// function subgraphs; the result must pass the verifier (run after the pass by
// CompileStreams, with the frozen-graph check) and be deterministic.
std::string RandomGraph(uint32_t seed) {
  std::mt19937 rng(seed);
  const char* types[] = {"Relu", "Relu", "MatMul", "HcomAllReduce", "TopK", "Const", "LabelSet", "VOp"};
  auto make_nodes = [&](const std::string& prefix, int n, bool sub) {
    nlohmann::json nodes = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
      std::string t = types[rng() % 8];
      nlohmann::json node = {{"name", prefix + std::to_string(i)}, {"type", t == "VOp" ? "Op" : t}};
      if (t == "VOp") node["engine"] = "VectorEngine";
      nlohmann::json ins = nlohmann::json::array(), ctrl = nlohmann::json::array();
      for (int k = 0; k < 2 && i > 0 && t != "Const"; ++k) {
        if (rng() % 3) ins.push_back(prefix + std::to_string(rng() % i));
      }
      if (i > 0 && rng() % 6 == 0) ctrl.push_back(prefix + std::to_string(rng() % i));
      node["inputs"] = ins;
      node["control_inputs"] = ctrl;
      nlohmann::json attrs = nlohmann::json::object();
      if (rng() % 9 == 0) attrs["_stream_label"] = StrCat("L", rng() % 2);
      if (rng() % 13 == 0) attrs["_user_stream_label"] = "U";
      if (rng() % 11 == 0) attrs["_parallel_group"] = rng() % 2 ? "g" : "-1";
      if (rng() % 17 == 0) attrs["NewStreamId"] = static_cast<int>(rng() % 3);
      if (t == "HcomAllReduce" && rng() % 2) attrs["fusion"] = 1;
      if (t == "LabelSet") attrs["_rts_label_node"] = true;
      if (rng() % 10 == 0) {
        attrs["_attached_stream_info_list"] = nlohmann::json::array({{{"name", "s"}, {"reuse_key", std::to_string(rng() % 2)}}});
      }
      if (sub && i == 0) {
        node = {{"name", prefix + "0"}, {"type", "Data"}, {"attrs", {{"_parent_node_index", 0}}}};
      } else {
        node["attrs"] = attrs;
      }
      nodes.push_back(node);
    }
    return nodes;
  };
  nlohmann::json root = make_nodes("n", 40, false);
  root.push_back({{"name", "call"}, {"type", "PartitionedCall"}, {"inputs", {"n5"}}, {"subgraphs", {"body"}}});
  root.push_back({{"name", "after"}, {"type", "Relu"}, {"inputs", {"call"}}});
  nlohmann::json g = {{"nodes", root},
                      {"subgraphs", {{{"name", "body"}, {"parent", "call"}, {"nodes", make_nodes("b", 15, true)}}}}};
  return g.dump();
}

TEST(LogicalStreamAssignmentTest, RandomGraphsVerifyAndAreDeterministic) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    const std::string graph = RandomGraph(seed);
    for (const auto& opts : std::vector<std::map<std::string, std::string>>{
             {}, {{"ge.hcomParallel", "1"}, {"ge.streamMaxParallelNum", "AIcoreEngine:3,DNN_VM_AICPU:2"}},
             {{"ge.exec.memoryOptimizationPolicy", "MemoryPriority"}}}) {
      auto first = CompileStreams(graph, opts);
      ASSERT_THAT(first, IsOk()) << "seed " << seed;
      auto second = CompileStreams(graph, opts);
      ASSERT_THAT(second, IsOk());
      for (size_t i = 0; i < first->model.num_nodes(); ++i) {
        ASSERT_EQ(first->model.nodes()[i].stream_id, second->model.nodes()[i].stream_id) << "seed " << seed;
        ASSERT_EQ(first->model.nodes()[i].attached_stream_ids, second->model.nodes()[i].attached_stream_ids);
      }
      EXPECT_THAT(verify::VerifyPlan(*first), IsOk());
    }
  }
}

TEST(LogicalStreamAssignmentTest, KeepsTheGraphFrozen) {
  LogicalStreamAssignment pass;
  EXPECT_TRUE(pass.preserves_structure());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(RandomGraph(3)));
  const uint64_t before = StructuralFingerprint(m);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(RandomGraph(3)));
  EXPECT_EQ(StructuralFingerprint(plan.model), before);
}

}  // namespace
}  // namespace npuplan
