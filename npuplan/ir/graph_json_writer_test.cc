// The graph writer reads producers' names from its own table (short names
// copied, long ones from their Nodes; graph_json_writer.cc). Against the
// reference — nlohmann's dump(1) of the written document, whose values must
// be the model's — on random models: attributes, control inputs, subgraphs
// (nested), empty and extreme shapes, names short and long (around the
// table's 15 bytes) and names that need escaping.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "npuplan/ir/graph_json.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/random_json_values.h"

namespace npuplan {
namespace {

using json = nlohmann::json;

struct RandomModel {
  Model model;
  std::vector<NodeId> all;
};

RandomModel MakeRandomModel(std::mt19937_64& rng, bool escapes) {
  auto piece = [&] { return npuplan::testing::RandomNamePiece(rng, escapes); };
  auto random_int = [&rng] { return npuplan::testing::RandomExtremeInt(rng); };
  RandomModel r;
  Model& m = r.model;
  m.set_name("g" + piece());
  std::vector<GraphId> graphs{GraphId(0)};
  const size_t n = 1 + rng() % 40;
  for (size_t i = 0; i < n; ++i) {
    const GraphId g = graphs[rng() % graphs.size()];
    Node node;
    node.name = StrCat("n", i, "_");
    for (size_t k = rng() % 4; k > 0; --k) node.name += piece();
    if (rng() % 3 == 0) node.name += std::string(rng() % 20, 'x');  // near and past 15 bytes
    node.type = rng() % 4 == 0 ? "Data" : StrCat("Op", piece());
    node.engine = rng() % 3 == 0 ? "" : StrCat("E", piece());
    if (rng() % 3 == 0) node.attrs[StrCat("a", piece())] = AttrValue(random_int());
    if (rng() % 5 == 0) node.attrs["s"] = AttrValue(StrCat("v", piece()));
    // Inputs and control inputs from earlier nodes of any graph (the writer
    // writes names; it does not check ownership).
    for (size_t k = r.all.empty() ? 0 : rng() % 4; k > 0; --k) {
      node.inputs.push_back({r.all[rng() % r.all.size()], static_cast<int32_t>(rng() % 3)});
    }
    for (size_t k = r.all.empty() ? 0 : rng() % 3 / 2; k > 0; --k) {
      node.control_inputs.push_back(r.all[rng() % r.all.size()]);
    }
    for (size_t k = rng() % 3; k > 0; --k) {
      TensorDesc t;
      t.dtype = rng() % 4 == 0 ? StrCat("d", piece()) : "float16";
      for (size_t d = rng() % 4; d > 0; --d) t.shape.push_back(random_int());
      node.outputs.push_back(std::move(t));
    }
    const NodeId id = m.AddNode(g, std::move(node));
    r.all.push_back(id);
    for (size_t k = rng() % 6 == 0 ? 1 + rng() % 2 : 0; k > 0; --k) {
      graphs.push_back(m.AddSubgraph(id, "sg" + std::to_string(graphs.size()) + piece()));
      if (rng() % 2 == 0) m.graph(graphs.back()).attrs["depth"] = AttrValue(int64_t{1});
    }
  }
  return r;
}

// The written document's nodes against the model's.
void ExpectNodes(const Model& m, const Graph& graph, const json& nodes) {
  ASSERT_EQ(nodes.size(), graph.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = m.node(graph.nodes[i]);
    const json& e = nodes[i];
    EXPECT_EQ(e.at("name"), n.name);
    EXPECT_EQ(e.at("type"), n.type);
    EXPECT_EQ(e.at("engine"), n.engine);
    EXPECT_EQ(e.contains("attrs"), !n.attrs.empty());
    std::vector<std::string> inputs, control, subgraphs;
    for (const OutputRef& in : n.inputs)
      inputs.push_back(m.node(in.node).name + ":" + std::to_string(in.index));
    for (NodeId c : n.control_inputs) control.push_back(m.node(c).name);
    for (GraphId g : n.subgraphs) subgraphs.push_back(m.graph(g).name);
    EXPECT_EQ(e.value("inputs", std::vector<std::string>{}), inputs);
    EXPECT_EQ(e.value("control_inputs", std::vector<std::string>{}), control);
    EXPECT_EQ(e.value("subgraphs", std::vector<std::string>{}), subgraphs);
    const json outputs = e.value("outputs", json::array());
    ASSERT_EQ(outputs.size(), n.outputs.size());
    for (size_t k = 0; k < outputs.size(); ++k) {
      EXPECT_EQ(outputs[k].at("dtype"), n.outputs[k].dtype);
      EXPECT_EQ(outputs[k].at("shape").get<std::vector<int64_t>>(), n.outputs[k].shape);
    }
  }
}

TEST(GraphJsonWriterTest, WritesRandomNodesAsNlohmannDumps) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const RandomModel r = MakeRandomModel(rng, trial % 2 == 1);
    const Model& m = r.model;
    const std::string written = WriteGraphJson(m);
    const json doc = json::parse(written);
    ASSERT_EQ(doc.dump(1) + "\n", written) << "trial " << trial;
    ExpectNodes(m, m.root(), doc.at("nodes"));
    const std::vector<GraphId> order = m.GraphsPreOrder();
    ASSERT_EQ(doc.value("subgraphs", json::array()).size(), order.size() - 1);
    for (size_t g = 1; g < order.size(); ++g) {
      const json& sg = doc.at("subgraphs")[g - 1];
      EXPECT_EQ(sg.at("name"), m.graph(order[g]).name);
      ExpectNodes(m, m.graph(order[g]), sg.at("nodes"));
    }
  }
}

}  // namespace
}  // namespace npuplan
