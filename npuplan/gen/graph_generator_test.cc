#include "npuplan/gen/graph_generator.h"

#include <gtest/gtest.h>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;

int CountEngine(const Model& m, std::string_view engine) {
  int n = 0;
  for (const Node& node : m.nodes()) n += node.engine == engine;
  return n;
}

TEST(GraphGeneratorTest, TransformerMixesEnginesAndVerifies) {
  GeneratorOptions o;
  o.layers = 6;
  o.if_every = 3;
  o.while_every = 2;
  o.stream_label_prob = 0.5;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, GenerateTransformer(o));
  EXPECT_THAT(VerifyStructure(m), IsOk());
  EXPECT_GT(CountEngine(m, "AIcoreEngine"), 0);
  EXPECT_GT(CountEngine(m, "VectorEngine"), 0);
  EXPECT_GT(CountEngine(m, "DNN_VM_AICPU"), 0);
  EXPECT_EQ(CountEngine(m, "DNN_HCCL"), 6);
  EXPECT_EQ(m.num_graphs(), 1u + 2 * 2 + 3 * 2);  // 2 Ifs, 3 Whiles, two subgraphs each
}

TEST(GraphGeneratorTest, SameSeedSameBytes) {
  GeneratorOptions o;
  o.layers = 5;
  o.dynamic_prob = 0.5;
  o.control_edge_prob = 0.5;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model a, GenerateTransformer(o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model b, GenerateTransformer(o));
  EXPECT_EQ(WriteGraphJson(a), WriteGraphJson(b));
  o.seed = 2;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model c, GenerateTransformer(o));
  EXPECT_NE(WriteGraphJson(a), WriteGraphJson(c));
}

TEST(GraphGeneratorTest, TargetNodesIsApproximatelyMet) {
  GeneratorOptions o;
  o.target_nodes = 10000;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, GenerateTransformer(o));
  EXPECT_GT(m.num_nodes(), 8000u);
  EXPECT_LT(m.num_nodes(), 12000u);
}

TEST(GraphGeneratorTest, DynamicInputMarksUnknownDims) {
  GeneratorOptions o;
  o.dynamic_input = true;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, GenerateTransformer(o));
  EXPECT_TRUE(m.node(m.FindNode("input")).outputs[0].IsDynamic());
}

TEST(GraphGeneratorTest, RandomDagIsTopological) {
  Model m = GenerateRandomDag(5000, 3, 9, 50);
  EXPECT_EQ(m.num_nodes(), 5000u);
  EXPECT_THAT(VerifyStructure(m), IsOk());
}

TEST(GraphGeneratorTest, FanOutFeedsEveryConsumerFromOneNode) {
  Model m = GenerateFanOut(7);
  EXPECT_EQ(m.num_nodes(), 10u);  // input, hub, 7 consumers, output
  EXPECT_THAT(VerifyStructure(m), IsOk());
  const Node& out = m.node(m.FindNode("output"));
  EXPECT_EQ(out.inputs.size(), 7u);
  for (const OutputRef& in : out.inputs) {
    EXPECT_EQ(m.node(m.node(in.node).inputs.at(0).node).name, "hub");
  }
  EXPECT_EQ(CountEngine(m, "VectorEngine"), 3);
}

TEST(GraphGeneratorTest, NestedIfsNestOneLevelPerIf) {
  Model m = GenerateNestedIf(3);
  EXPECT_THAT(VerifyStructure(m), IsOk());
  EXPECT_EQ(m.num_graphs(), 7u);  // the root, then and else per If
  int depth = 0;
  for (GraphId g = m.graph(m.node(m.FindNode("d3_relu")).graph).parent_graph; g.valid();
       g = m.graph(g).parent_graph) {
    ++depth;
  }
  EXPECT_EQ(depth, 3);
}

}  // namespace
}  // namespace npuplan
