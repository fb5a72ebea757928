#include "npuplan/gen/graph_generator.h"

#include <gtest/gtest.h>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

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

// Six layers with Ifs and Whiles, changed by `add` (a pass over a generated
// model): `add` is run on two copies, which must end up byte-identical
// (same count, same graph). Returns what the first run returned.
template <typename Add>
int64_t AddedAlikeTwice(Model& m, Add add) {
  GeneratorOptions o;
  o.layers = 6;
  o.if_every = 2;
  o.while_every = 3;
  auto first = GenerateTransformer(o);
  auto again = GenerateTransformer(o);
  EXPECT_TRUE(first.ok() && again.ok());
  m = std::move(first).value();
  const int64_t n = add(m);
  EXPECT_EQ(add(*again), n);
  EXPECT_EQ(WriteGraphJson(m), WriteGraphJson(*again));
  return n;
}

TEST(GraphGeneratorTest, RefWritesMarkComputingNodesOnly) {
  Model m;
  const int64_t marked = AddedAlikeTwice(m, [](Model& g) { return AddRefWrites(g, 0.3, 5); });
  int64_t seen = 0;
  for (const Node& n : m.nodes()) {
    if (!HasAttr(n.attrs, "_ref_input_index")) continue;
    ++seen;
    EXPECT_FALSE(n.inputs.empty()) << n.name;
    EXPECT_TRUE(n.subgraphs.empty()) << n.name;
    EXPECT_NE(n.type, "Data") << n.name;
    EXPECT_NE(n.type, "NetOutput") << n.name;
  }
  EXPECT_EQ(seen, marked);
  EXPECT_GT(marked, 10);
  EXPECT_LT(marked, static_cast<int64_t>(m.num_nodes()) / 2);
  EXPECT_THAT(VerifyStructure(m), IsOk());
}

// Control edges into owners: deterministic, from an earlier node of the
// owner's graph (the order stays topological), never a duplicate input.
TEST(GraphGeneratorTest, OwnerControlsComeFromEarlierNodesOfTheOwnersGraph) {
  Model m;
  const int64_t added = AddedAlikeTwice(m, [](Model& g) { return AddOwnerControls(g, 1.0, 5); });
  int64_t owners = 0, seen = 0;
  for (const Node& n : m.nodes()) {
    if (n.subgraphs.empty()) continue;
    ++owners;
    for (NodeId c : n.control_inputs) {
      ++seen;
      EXPECT_EQ(m.node(c).graph, n.graph) << n.name;
      EXPECT_LT(m.node(c).topo_id, n.topo_id) << n.name;
      EXPECT_NE(m.node(c).type, "NetOutput") << n.name;
      for (const OutputRef& in : n.inputs) EXPECT_NE(in.node, c) << n.name;
    }
  }
  EXPECT_EQ(seen, added);
  EXPECT_EQ(added, owners);  // probability 1: every owner (each has an earlier node)
  EXPECT_GE(owners, 5);
  EXPECT_THAT(VerifyStructure(m), IsOk());
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

// Issue #19: what `gen` writes, `verify` accepts. Sizes are refused before
// anything is allocated: --hidden/--seq whose products overflow int64 (4 *
// hidden alone, or the [8, seq, 4*hidden] activation), node counts beyond the
// reader's default --max-nodes.
TEST(GraphGeneratorTest, RefusesShapesWhoseByteSizeOverflows) {
  for (auto [hidden, seq] : {std::pair<int64_t, int64_t>{int64_t{1} << 62, 1}, {int64_t{1} << 30, int64_t{1} << 30},
                             {1, int64_t{3037000500}}}) {
    GeneratorOptions o;
    o.layers = 1;
    o.hidden = hidden;
    o.seq = seq;
    EXPECT_THAT(GenerateTransformer(o), StatusIs(absl::StatusCode::kInvalidArgument, "byte size overflows int64"))
        << hidden << " " << seq;
  }
  GeneratorOptions ok;
  ok.layers = 1;
  ok.hidden = int64_t{1} << 20;  // [8, 512, 2^22] float16 = 2^35 bytes: fine
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, GenerateTransformer(ok));
  EXPECT_THAT(VerifyStructure(m), IsOk());
  for (const Node& n : m.nodes()) {
    for (const TensorDesc& t : n.outputs) EXPECT_TRUE(t.ByteSize().has_value()) << n.name;
  }
}

TEST(GraphGeneratorTest, RefusesNodeCountsBeyondTheReaderLimit) {
  GeneratorOptions o;
  o.target_nodes = 1000000000000000;  // 1e15
  EXPECT_THAT(GenerateTransformer(o), StatusIs(absl::StatusCode::kInvalidArgument, "--nodes 1000000000000000"));
  o.target_nodes = 0;
  o.layers = INT64_MAX;  // layers * nodes per layer overflows
  EXPECT_THAT(GenerateTransformer(o), StatusIs(absl::StatusCode::kInvalidArgument, "more than 2^63"));
  GraphReadLimits small;
  small.max_nodes = 100;
  o.layers = 4;  // 4 * 23 + 3 = 95 nodes
  EXPECT_THAT(CheckGeneratorSize(o, small), IsOk());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, GenerateTransformer(o));
  EXPECT_LE(m.num_nodes(), 95u);
  o.layers = 5;
  EXPECT_THAT(CheckGeneratorSize(o, small), StatusIs(absl::StatusCode::kInvalidArgument, "118 nodes"));
  o.if_every = 1;
  o.while_every = 1;
  o.layers = 2;  // 2 * 38 + 3
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m2, GenerateTransformer(o));
  EXPECT_LE(m2.num_nodes(), 79u);
}

TEST(GraphGeneratorTest, RandomDagSizesAreChecked) {
  EXPECT_THAT(CheckRandomDagSize(1000, 3), IsOk());
  EXPECT_THAT(CheckRandomDagSize(0, 3), StatusIs(absl::StatusCode::kInvalidArgument, "--nodes N >= 1"));
  EXPECT_THAT(CheckRandomDagSize(1000000000000000, 3), StatusIs(absl::StatusCode::kInvalidArgument, "--max-nodes"));
  EXPECT_THAT(CheckRandomDagSize(2, INT64_MAX), StatusIs(absl::StatusCode::kInvalidArgument, "--max-edges"));
  EXPECT_THAT(CheckRandomDagSize(INT64_MAX / 2, INT64_MAX),
              StatusIs(absl::StatusCode::kInvalidArgument, "--max-nodes"));
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
