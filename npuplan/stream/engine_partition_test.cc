#include "npuplan/stream/engine_partition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::ParseStreamTestGraph;
using ::testing::ElementsAre;

std::vector<std::string> Names(const Model& m, const EngineSubgraph& sg) {
  std::vector<std::string> out;
  for (NodeId n : sg.nodes) out.push_back(m.node(n).name);
  return out;
}

TEST(EnginePartitionTest, MergesChainOfOneEngineAndKeepsDataApart) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "a", "type": "Relu", "inputs": ["x"]},
    {"name": "b", "type": "Relu", "inputs": ["a"]},
    {"name": "v", "type": "Gelu", "engine": "VectorEngine", "inputs": ["b"]},
    {"name": "out", "type": "NetOutput", "inputs": ["v"]}]})json"));
  EnginePartition p = PartitionByEngine(m, kRootGraph);
  ASSERT_EQ(p.subgraphs.size(), 4u);
  EXPECT_THAT(Names(m, p.subgraphs[0]), ElementsAre("x"));
  EXPECT_THAT(Names(m, p.subgraphs[1]), ElementsAre("a", "b"));
  EXPECT_THAT(Names(m, p.subgraphs[2]), ElementsAre("v"));
  EXPECT_THAT(Names(m, p.subgraphs[3]), ElementsAre("out"));
  EXPECT_EQ(p.subgraphs[1].engine, "AIcoreEngine");
  EXPECT_THAT(p.subgraphs[1].producers, ElementsAre(0));
  EXPECT_THAT(p.subgraphs[1].consumers, ElementsAre(2));
  EXPECT_THAT(p.subgraphs[3].producers, ElementsAre(2));
}

TEST(EnginePartitionTest, RefusesMergeThatWouldCreateACycle) {
  // a → v → c and a → c: merging a and c would put v on a cycle.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "v", "type": "Gelu", "engine": "VectorEngine", "inputs": ["a"]},
    {"name": "c", "type": "Add", "inputs": ["a", "v"]}]})json"));
  EnginePartition p = PartitionByEngine(m, kRootGraph);
  ASSERT_EQ(p.subgraphs.size(), 3u);
  EXPECT_THAT(p.subgraphs[2].producers, ElementsAre(0, 1));
}

TEST(EnginePartitionTest, SplitsByStreamLabelAndMergesEqualUserLabelsAcrossEngines) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "b", "type": "Relu", "inputs": ["a"], "attrs": {"_stream_label": "L"}},
    {"name": "c", "type": "Relu", "inputs": ["b"], "attrs": {"_user_stream_label": "U"}},
    {"name": "d", "type": "Gelu", "engine": "VectorEngine", "inputs": ["c"], "attrs": {"_user_stream_label": "U"}}]})json"));
  EnginePartition p = PartitionByEngine(m, kRootGraph);
  ASSERT_EQ(p.subgraphs.size(), 3u);
  EXPECT_EQ(p.subgraphs[1].stream_label, "L");
  EXPECT_THAT(Names(m, p.subgraphs[2]), ElementsAre("c", "d"));
  EXPECT_EQ(p.subgraphs[2].stream_label, "U");
  EXPECT_EQ(p.subgraphs[2].user_stream_label, "U");
}

TEST(EnginePartitionTest, CombinesUserAndInnerLabelWithInnerParallel) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_user_stream_label": "U", "_stream_label": "in",
                                             "_enable_inner_parallel": true}},
    {"name": "x", "type": "Data", "attrs": {"_user_stream_label": "U"}}]})json"));
  EXPECT_EQ(EffectiveStreamLabel(::npuplan::testing::NodeNamed(m, "a")), "U_in");
}

// TransUserStreamLabel runs before the user label of a Data-like input is
// cleared: the Data node keeps the label as its stream label, not as a user
// label.
TEST(EnginePartitionTest, DataLikeInputKeepsItsUserLabelAsStreamLabel) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "x", "type": "Data", "attrs": {"_user_stream_label": "U"}},
    {"name": "a", "type": "Relu", "inputs": ["x"]}]})json"));
  EXPECT_EQ(EffectiveStreamLabel(::npuplan::testing::NodeNamed(m, "x")), "U");
  EnginePartition p = PartitionByEngine(m, kRootGraph);
  ASSERT_EQ(p.subgraphs.size(), 2u);
  EXPECT_EQ(p.subgraphs[0].stream_label, "U");
  EXPECT_EQ(p.subgraphs[0].user_stream_label, "");
}

TEST(EnginePartitionTest, ControlEdgesLinkSubgraphs) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "h", "type": "HcomAllReduce", "control_inputs": ["a"]}]})json"));
  EnginePartition p = PartitionByEngine(m, kRootGraph);
  ASSERT_EQ(p.subgraphs.size(), 2u);
  EXPECT_THAT(p.subgraphs[1].producers, ElementsAre(0));
}

// More than 16 distinct labels switch the partition's string interning from a
// linear scan to a hash map: labels must still split and name subgraphs.
TEST(EnginePartitionTest, SplitsByLabelWithManyDistinctLabels) {
  nlohmann::json nodes = nlohmann::json::array();
  for (int i = 0; i < 40; ++i) {
    nlohmann::json node = {{"name", StrCat("n", i)},
                           {"type", "Relu"},
                           {"attrs", {{"_stream_label", StrCat("L", i / 2)}}}};
    if (i > 0) node["inputs"] = {StrCat("n", i - 1)};
    nodes.push_back(node);
  }
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(nlohmann::json{{"nodes", nodes}}.dump()));
  EnginePartition p = PartitionByEngine(m, kRootGraph);
  ASSERT_EQ(p.subgraphs.size(), 20u);
  for (int s = 0; s < 20; ++s) {
    EXPECT_EQ(p.subgraphs[s].stream_label, StrCat("L", s));
    EXPECT_THAT(Names(m, p.subgraphs[s]), ElementsAre(StrCat("n", 2 * s), StrCat("n", 2 * s + 1)));
  }
}

// Subgraph ranges and strings point into the partition's own storage, which
// a move keeps.
TEST(EnginePartitionTest, RangesAndStringsSurviveAMove) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_stream_label": "L"}},
    {"name": "v", "type": "Gelu", "engine": "VectorEngine", "inputs": ["a"]}]})json"));
  EnginePartition moved;
  {
    EnginePartition p = PartitionByEngine(m, kRootGraph);
    moved = std::move(p);
  }
  ASSERT_EQ(moved.subgraphs.size(), 2u);
  EXPECT_EQ(moved.subgraphs[0].stream_label, "L");
  EXPECT_EQ(moved.subgraphs[1].engine, "VectorEngine");
  EXPECT_THAT(Names(m, moved.subgraphs[1]), ElementsAre("v"));
  EXPECT_THAT(moved.subgraphs[1].producers, ElementsAre(0));
  EXPECT_EQ(StrCat(moved.subgraphs[1].name()), StrCat(m.graph(kRootGraph).name, "_1_VectorEngine"));
}

// Random DAGs: every node in exactly one subgraph, subgraph graph acyclic and
// numbered topologically, members of one subgraph share engine and label.
// Issue 19's scale trap: one node with n consumers. Each consumer's
// second-path test must cost its own in-list, not the hub's out-list (n per
// consumer, n^2 in all); the layered case asks about long paths that the
// forest certificate answers. Counted list reads, not time.
TEST(EnginePartitionTest, SecondPathTestsReadLinearlyManyEntries) {
  for (const int n : {1000, 20000}) {
    nlohmann::json nodes = nlohmann::json::array();
    nodes.push_back({{"name", "x"}, {"type", "Data"}});
    nodes.push_back({{"name", "hub"}, {"type", "Relu"}, {"inputs", {"x"}}});
    nlohmann::json outs = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
      const std::string c = StrCat("c", i);
      // Every other consumer also reads the previous one (a second path from
      // the hub), on another engine every third (merges refused and tried).
      nlohmann::json ins = {"hub"};
      if (i > 0 && i % 2 == 0) ins.push_back(StrCat("c", i - 1));
      nodes.push_back({{"name", c},
                       {"type", "Relu"},
                       {"inputs", ins},
                       {"engine", i % 3 == 0 ? "VectorEngine" : "AIcoreEngine"}});
      outs.push_back(c);
    }
    nodes.push_back({{"name", "out"}, {"type", "NetOutput"}, {"inputs", outs}});
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m,
                                 ParseStreamTestGraph(nlohmann::json{{"nodes", nodes}}.dump()));
    EnginePartition p = PartitionByEngine(m, kRootGraph);
    EXPECT_LE(p.second_path_reads, 8 * static_cast<int64_t>(n)) << "n = " << n;
  }
}

TEST(EnginePartitionTest, RandomDagsGiveAcyclicTopologicallyNumberedSubgraphs) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    nlohmann::json nodes = nlohmann::json::array();
    const int n = 60;
    const char* engines[] = {"AIcoreEngine", "VectorEngine", "DNN_VM_AICPU", "DNN_HCCL"};
    for (int i = 0; i < n; ++i) {
      nlohmann::json node = {
          {"name", StrCat("n", i)}, {"type", "Op"}, {"engine", engines[rng() % 4]}};
      nlohmann::json ins = nlohmann::json::array();
      for (int k = 0; k < 3 && i > 0; ++k) {
        if (rng() % 2) ins.push_back(StrCat("n", rng() % i));
      }
      node["inputs"] = ins;
      if (rng() % 7 == 0) node["attrs"] = {{"_stream_label", StrCat("L", rng() % 2)}};
      nodes.push_back(node);
    }
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(nlohmann::json{{"nodes", nodes}}.dump()));
    EnginePartition p = PartitionByEngine(m, kRootGraph);
    size_t total = 0;
    for (const EngineSubgraph& sg : p.subgraphs) {
      total += sg.nodes.size();
      for (NodeId id : sg.nodes) {
        EXPECT_EQ(m.node(id).engine, sg.engine);
        EXPECT_EQ(EffectiveStreamLabel(m.node(id)), sg.stream_label);
        EXPECT_EQ(p.subgraph_of[m.node(id).topo_id], sg.index);
      }
      for (int32_t pr : sg.producers) EXPECT_LT(pr, sg.index) << "seed " << seed;
    }
    EXPECT_EQ(total, m.num_nodes());
  }
}

// PartitionByEngine's subgraphs as sorted lists of topological indices, sorted
// (the shape ReferenceClusters returns).
std::vector<std::vector<int32_t>> PartitionClusters(const Model& m) {
  EnginePartition p = PartitionByEngine(m, kRootGraph);
  std::vector<std::vector<int32_t>> got;
  for (const EngineSubgraph& sg : p.subgraphs) {
    std::vector<int32_t> vs;
    for (NodeId id : sg.nodes) vs.push_back(static_cast<int32_t>(m.node(id).topo_id));
    std::sort(vs.begin(), vs.end());
    got.push_back(vs);
  }
  std::sort(got.begin(), got.end());
  return got;
}

// GE's MarkClusters written plainly (clusters as node sets, out-degrees and
// second paths recomputed from scratch by search): the subgraphs the fast
// version forms, as sets of topo indices in subgraph order.
std::vector<std::vector<int32_t>> ReferenceClusters(const Model& m) {
  const std::vector<NodeId>& order = m.graph(kRootGraph).nodes;
  const int n = static_cast<int>(order.size());
  std::vector<std::vector<int32_t>> preds(n), succs(n);
  for (int i = 0; i < n; ++i) {
    const Node& node = m.node(order[i]);
    for (const OutputRef& in : node.inputs) preds[i].push_back(static_cast<int32_t>(m.node(in.node).topo_id));
    for (NodeId c : node.control_inputs) preds[i].push_back(static_cast<int32_t>(m.node(c).topo_id));
    for (int32_t p : preds[i]) succs[p].push_back(i);
  }
  std::vector<int32_t> cluster(n);
  for (int i = 0; i < n; ++i) cluster[i] = i;  // a cluster is named by its smallest member
  auto successors = [&](int32_t c) {
    std::set<int32_t> out;
    for (int v = 0; v < n; ++v) {
      if (cluster[v] != c) continue;
      for (int32_t t : succs[v]) {
        if (cluster[t] != c) out.insert(cluster[t]);
      }
    }
    return out;
  };
  auto second_path = [&](int32_t from, int32_t to) {
    std::set<int32_t> seen;
    std::vector<int32_t> stack;
    for (int32_t y : successors(from)) {
      if (y != to) stack.push_back(y);
    }
    while (!stack.empty()) {
      const int32_t x = stack.back();
      stack.pop_back();
      if (x == to) return true;
      if (!seen.insert(x).second) continue;
      for (int32_t y : successors(x)) stack.push_back(y);
    }
    return false;
  };
  auto key = [&](int32_t c) {
    const Node& node = m.node(order[c]);
    return std::make_tuple(IsInputDataNode(node), node.engine, EffectiveStreamLabel(node),
                           IsInputDataNode(node) ? std::string() : GetStringAttr(node.attrs, kAttrUserStreamLabel).value_or(""));
  };
  auto mergeable = [&](int32_t a, int32_t b) {
    const auto ka = key(a), kb = key(b);
    if (std::get<0>(ka) || std::get<0>(kb)) return false;
    if (!std::get<3>(ka).empty() && std::get<3>(ka) == std::get<3>(kb)) return true;
    return std::get<1>(ka) == std::get<1>(kb) && std::get<2>(ka) == std::get<2>(kb);
  };
  for (int i = 0; i < n; ++i) {
    std::set<int32_t> parents;
    for (int32_t p : preds[i]) parents.insert(cluster[p]);
    std::vector<std::pair<size_t, int32_t>> by_degree;
    for (int32_t p : parents) by_degree.emplace_back(successors(p).size(), p);
    std::sort(by_degree.begin(), by_degree.end());
    for (const auto& [deg, p0] : by_degree) {
      const int32_t p = cluster[p0], self = cluster[i];
      if (p == self || !mergeable(p, self) || second_path(p, self)) continue;
      const int32_t keep = std::min(p, self), gone = std::max(p, self);
      for (int v = 0; v < n; ++v) {
        if (cluster[v] == gone) cluster[v] = keep;
      }
    }
  }
  std::map<int32_t, std::vector<int32_t>> members;
  for (int v = 0; v < n; ++v) members[cluster[v]].push_back(v);
  std::vector<std::vector<int32_t>> out;
  for (auto& [c, vs] : members) out.push_back(vs);
  std::sort(out.begin(), out.end());
  return out;
}

// Random graphs with hubs (wide fan-out and fan-in), Data nodes, labels and
// control edges: the same clusters as the plain MarkClusters.
TEST(EnginePartitionTest, RandomGraphsGiveTheClustersOfPlainMarkClusters) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    nlohmann::json nodes = nlohmann::json::array();
    const int n = 10 + static_cast<int>(rng() % 50);
    const int hubs = 1 + static_cast<int>(rng() % 3);
    const char* engines[] = {"AIcoreEngine", "VectorEngine", "DNN_VM_AICPU"};
    for (int i = 0; i < n; ++i) {
      const bool data = i < 2 || rng() % 15 == 0;
      nlohmann::json node = {{"name", StrCat("n", i)},
                             {"type", data ? "Data" : "Op"},
                             {"engine", engines[rng() % (seed % 2 == 0 ? 2 : 3)]}};
      nlohmann::json ins = nlohmann::json::array(), ctrl = nlohmann::json::array();
      if (!data) {
        const int fan_in = i > 0 && rng() % 10 == 0 ? 8 : 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < fan_in; ++k) {
          const int from = rng() % 3 == 0 ? static_cast<int>(rng() % std::min(i, hubs + 2)) : static_cast<int>(rng() % i);
          (rng() % 6 == 0 ? ctrl : ins).push_back(StrCat("n", from));
        }
      }
      node["inputs"] = ins;
      node["control_inputs"] = ctrl;
      if (rng() % 9 == 0) node["attrs"] = {{"_stream_label", StrCat("L", rng() % 2)}};
      if (rng() % 11 == 0) node["attrs"] = {{"_user_stream_label", "U"}};
      nodes.push_back(node);
    }
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(nlohmann::json{{"nodes", nodes}}.dump()));
    EXPECT_EQ(PartitionClusters(m), ReferenceClusters(m)) << "seed " << seed;
    EXPECT_EQ(OutDegreeBoundFailuresForTesting(m, kRootGraph), 0) << "seed " << seed;
  }
}

// `gen --random-dag` in small: 150–299 nodes, mostly local inputs, one in
// eight a long skip to any earlier node, a node of another engine every so
// often; with `hubs`, one node in 25 has 12 inputs.
nlohmann::json RandomSkipDagNodes(std::mt19937& rng, bool hubs) {
  nlohmann::json nodes = nlohmann::json::array();
  const int n = 150 + static_cast<int>(rng() % 150);
  const int other_every = 5 + static_cast<int>(rng() % 30);
  for (int i = 0; i < n; ++i) {
    const bool other = i % other_every == other_every - 1;
    nlohmann::json node = {{"name", StrCat("n", i)},
                           {"type", i == 0 ? "Data" : "Op"},
                           {"engine", other ? "DNN_HCCL" : "AIcoreEngine"}};
    nlohmann::json ins = nlohmann::json::array();
    const int fan_in =
        i == 0 ? 0 : (hubs && rng() % 25 == 0 ? 12 : 1 + static_cast<int>(rng() % 3));
    for (int k = 0; k < fan_in; ++k) {
      const int back = rng() % 8 == 0 ? 1 + static_cast<int>(rng() % i)
                                      : 1 + static_cast<int>(rng() % std::min(i, 16));
      ins.push_back(StrCat("n", i - back));
    }
    node["inputs"] = ins;
    nodes.push_back(node);
  }
  return nodes;
}

// The skip DAGs, where most second paths run through a long skip: big
// clusters, sparse landmarks, out-degrees ordered by their bounds, and nodes
// with more parents than the bounds are checked for. The same clusters as
// the plain MarkClusters.
TEST(EnginePartitionTest, RandomSkipDagsGiveTheClustersOfPlainMarkClusters) {
  for (uint32_t seed = 1; seed <= 16; ++seed) {
    std::mt19937 rng(seed);
    const nlohmann::json nodes = RandomSkipDagNodes(rng, /*hubs=*/true);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m,
                                 ParseStreamTestGraph(nlohmann::json{{"nodes", nodes}}.dump()));
    EXPECT_EQ(PartitionClusters(m), ReferenceClusters(m)) << "seed " << seed;
    EXPECT_EQ(OutDegreeBoundFailuresForTesting(m, kRootGraph), 0) << "seed " << seed;
  }
}

// The skip DAGs with their nodes listed in reverse in the file: node ids
// then differ from topo indices (the partition reads the producers' topo ids
// instead of taking their ids), and the clusters are still the plain
// MarkClusters'.
TEST(EnginePartitionTest, ReversedFileOrderGivesTheClustersOfPlainMarkClusters) {
  for (uint32_t seed = 1; seed <= 16; ++seed) {
    std::mt19937 rng(seed);
    nlohmann::json nodes = RandomSkipDagNodes(rng, /*hubs=*/false);
    std::reverse(nodes.begin(), nodes.end());
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m,
                                 ParseStreamTestGraph(nlohmann::json{{"nodes", nodes}}.dump()));
    ASSERT_NE(m.root().nodes.front().value, 0) << "seed " << seed;  // ids are not topo indices
    EXPECT_EQ(PartitionClusters(m), ReferenceClusters(m)) << "seed " << seed;
  }
}

// Without user labels (merge classes are (engine, label) alone), several
// engines and labels, Data inputs, hubs, and nodes with up to 12 inputs
// (past the parents whose out-degree bounds are compared pairwise): the
// same clusters as the plain MarkClusters. Exercises the out-degrees kept
// exact through merges of a node into one input and lowered through the
// others.
TEST(EnginePartitionTest, RandomUnlabelledDagsGiveTheClustersOfPlainMarkClusters) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    nlohmann::json nodes = nlohmann::json::array();
    const int n = 20 + static_cast<int>(rng() % 120);
    const int engines_used = 1 + static_cast<int>(rng() % 3);
    const char* engines[] = {"AIcoreEngine", "VectorEngine", "DNN_HCCL"};
    for (int i = 0; i < n; ++i) {
      const bool data = i == 0 || rng() % 40 == 0;
      nlohmann::json node = {{"name", StrCat("n", i)},
                             {"type", data ? "Data" : "Op"},
                             {"engine", engines[rng() % engines_used]}};
      nlohmann::json ins = nlohmann::json::array(), ctrl = nlohmann::json::array();
      if (!data) {
        const int fan_in =
            rng() % 12 == 0 ? 1 + static_cast<int>(rng() % 12) : 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < fan_in; ++k) {
          const int back = rng() % 6 == 0 ? 1 + static_cast<int>(rng() % i)
                                          : 1 + static_cast<int>(rng() % std::min(i, 8));
          (rng() % 8 == 0 ? ctrl : ins).push_back(StrCat("n", i - back));
        }
      }
      node["inputs"] = ins;
      node["control_inputs"] = ctrl;
      if (rng() % 13 == 0) node["attrs"] = {{"_stream_label", StrCat("L", rng() % 2)}};
      nodes.push_back(node);
    }
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m,
                                 ParseStreamTestGraph(nlohmann::json{{"nodes", nodes}}.dump()));
    EXPECT_EQ(PartitionClusters(m), ReferenceClusters(m)) << "seed " << seed;
    // attr_nodes: the topo indices of exactly the nodes with attributes.
    std::vector<int32_t> with_attrs;
    for (size_t k = 0; k < m.root().nodes.size(); ++k) {
      if (!m.node(m.root().nodes[k]).attrs.empty()) with_attrs.push_back(static_cast<int32_t>(k));
    }
    EXPECT_EQ(PartitionByEngine(m, kRootGraph).attr_nodes, with_attrs) << "seed " << seed;
    EXPECT_EQ(OutDegreeBoundFailuresForTesting(m, kRootGraph), 0) << "seed " << seed;
  }
}

// GraphEdges (topo indices) hold the same edges, in the same order, as the
// model-wide Adjacency: per node its data inputs then control inputs, and its
// data consumers before its control consumers. The successors are the ones
// PartitionByEngine built (on its second thread), checked against a rebuild.
TEST(EnginePartitionTest, EdgesMatchTheModelAdjacencyInTopoIndices) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    nlohmann::json nodes = nlohmann::json::array();
    const int n = 40;
    for (int i = 0; i < n; ++i) {
      nlohmann::json node = {{"name", StrCat("n", i)}, {"type", "Op"}};
      nlohmann::json ins = nlohmann::json::array(), ctrl = nlohmann::json::array();
      for (int k = 0; k < 3 && i > 0; ++k) {
        if (rng() % 2) ins.push_back(StrCat("n", rng() % i));
        if (rng() % 4 == 0) ctrl.push_back(StrCat("n", rng() % i));
      }
      node["inputs"] = ins;
      node["control_inputs"] = ctrl;
      nodes.push_back(node);
    }
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(nlohmann::json{{"nodes", nodes}}.dump()));
    GraphEdges edges;
    const EnginePartition threaded =
        PartitionByEngine(m, kRootGraph, &edges, /*second_thread_from_nodes=*/0);
    EXPECT_EQ(threaded.subgraph_of, PartitionByEngine(m, kRootGraph).subgraph_of)
        << "seed " << seed;
    GraphEdges rebuilt;
    rebuilt.pred_first = edges.pred_first;
    rebuilt.preds = edges.preds;
    rebuilt.pred_is_control = edges.pred_is_control;
    rebuilt.BuildSuccessors();
    EXPECT_EQ(edges.succ_first, rebuilt.succ_first) << "seed " << seed;
    EXPECT_EQ(edges.succs, rebuilt.succs) << "seed " << seed;
    EXPECT_EQ(edges.succ_is_control, rebuilt.succ_is_control) << "seed " << seed;
    const Adjacency adj(m);
    const std::vector<NodeId>& order = m.graph(kRootGraph).nodes;
    ASSERT_EQ(edges.num_nodes(), static_cast<int32_t>(order.size()));
    for (int32_t i = 0; i < edges.num_nodes(); ++i) {
      const Node& node = m.node(order[i]);
      std::vector<int32_t> want_preds, want_succs, got_preds, got_succs;
      std::vector<uint8_t> want_ctrl, got_ctrl;
      for (const OutputRef& in : node.inputs) want_preds.push_back(static_cast<int32_t>(m.node(in.node).topo_id));
      for (NodeId c : node.control_inputs) want_preds.push_back(static_cast<int32_t>(m.node(c).topo_id));
      for (size_t e = adj.begin(order[i]); e < adj.end(order[i]); ++e) {
        want_succs.push_back(static_cast<int32_t>(m.node(adj.succ[e]).topo_id));
        want_ctrl.push_back(adj.is_control[e]);
      }
      for (int32_t p : edges.Preds(i)) got_preds.push_back(p);
      for (int32_t e = edges.succ_first[i]; e < edges.succ_first[i + 1]; ++e) {
        got_succs.push_back(edges.succs[e]);
        got_ctrl.push_back(edges.succ_is_control[e]);
      }
      EXPECT_EQ(got_preds, want_preds) << "seed " << seed << " node " << node.name;
      EXPECT_EQ(got_succs, want_succs) << "seed " << seed << " node " << node.name;
      EXPECT_EQ(got_ctrl, want_ctrl) << "seed " << seed << " node " << node.name;
    }
  }
}

TEST(EnginePartitionTest, EdgesOfAnEmptyGraphAreEmpty) {
  Model m;
  GraphEdges edges;
  EnginePartition p = PartitionByEngine(m, kRootGraph, &edges);
  EXPECT_TRUE(p.subgraphs.empty());
  EXPECT_EQ(edges.num_nodes(), 0);
  EXPECT_EQ(edges.succ_first.size(), 1u);
  EXPECT_TRUE(edges.succs.empty());
}

}  // namespace
}  // namespace npuplan::stream
