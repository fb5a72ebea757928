#include "npuplan/ir/in_place_writes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::NodeNamed;
using ::npuplan::testing::ParseVerifiedGraph;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

NodeId Id(const Model& m, std::string_view name) { return m.FindNode(name); }

// "name" or "name*" (writes) per touch of buffer b.
std::vector<std::string> Touches(const Model& m, const InPlaceBuffers& b, size_t i) {
  std::vector<std::string> out;
  for (const InPlaceTouch& t : b.touches(i))
    out.push_back(m.node(t.node).name + (t.writes ? "*" : ""));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<std::string, std::string>> Pairs(const Model& m, const InPlaceBuffers& b) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [x, y, buffer] : RequiredPaths(b, [&m](NodeId n) { return m.node(n).topo_id; }))
    out.emplace_back(m.node(x).name, m.node(y).name);
  return out;
}

// x → r (reads), x → w (AssignAdd writes x in place), w's output read by u.
constexpr char kAssign[] = R"json({"name": "g", "nodes": [
  {"name": "in", "type": "Data", "outputs": [{"shape": [4]}]},
  {"name": "x", "type": "Relu", "inputs": ["in"], "outputs": [{"shape": [4]}]},
  {"name": "r", "type": "Relu", "inputs": ["x"], "outputs": [{"shape": [4]}]},
  {"name": "w", "type": "AssignAdd", "inputs": ["x", "in"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]},
  {"name": "u", "type": "Relu", "inputs": ["w"], "outputs": [{"shape": [4]}]},
  {"name": "out", "type": "NetOutput", "inputs": ["r", "u"]}]})json";

TEST(InPlaceWritesTest, ARefOutputJoinsItsInputAndEveryToucherIsListed) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(kAssign));
  const InPlaceBuffers b = InPlaceBuffers::Of(m);
  ASSERT_EQ(b.size(), 1u);
  // x makes the buffer, w writes it in place; r and u read it; the graph's
  // Data and NetOutput only forward.
  EXPECT_THAT(Touches(m, b, 0), ElementsAre("r", "u", "w*", "x*"));
  EXPECT_THAT(b.written_inputs(Id(m, "w")), ElementsAre(0));
  EXPECT_TRUE(b.written_inputs(Id(m, "r")).empty());
  // Topological order x, r, w, u: the writes x and w chain through r; u
  // follows w.
  EXPECT_THAT(Pairs(m, b), ElementsAre(std::pair<std::string, std::string>("x", "r"),
                                       std::pair<std::string, std::string>("r", "w"),
                                       std::pair<std::string, std::string>("w", "u")));
}

TEST(InPlaceWritesTest, NoRefOutputNoBuffer) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "r", "type": "Relu", "inputs": ["x"], "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["r"]}]})json"));
  EXPECT_EQ(InPlaceBuffers::Of(m).size(), 0u);
}

TEST(InPlaceWritesTest, MalformedRefIndexIsLeftToMemoryPlanning) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "w", "type": "Assign", "inputs": ["x"], "attrs": {"_ref_input_index": 3}, "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["w"]}]})json"));
  EXPECT_EQ(InPlaceBuffers::Of(m).size(), 0u);
  EXPECT_THAT(RefInputIndices(NodeNamed(m, "w")),
              ::npuplan::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                           "node 'w': _ref_input_index 3 names no data input"));
}

// A While whose body writes its loop value in place and returns it: the
// owner writes its input 0 in place, and its output 0 is that memory, so a
// reader of the output touches x's buffer too.
TEST(InPlaceWritesTest, AnOwnerWritesWhatItsSubgraphWritesAndReturnsItsMemory) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "r", "type": "Relu", "inputs": ["x"], "outputs": [{"shape": [4]}]},
    {"name": "loop", "type": "While", "inputs": ["x"], "subgraphs": ["cond", "body"], "outputs": [{"shape": [4]}]},
    {"name": "after", "type": "Relu", "inputs": ["loop"], "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["r", "after"]}],
  "subgraphs": [
    {"name": "cond", "parent": "loop", "nodes": [
      {"name": "c_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "c", "type": "Less", "inputs": ["c_in"], "outputs": [{"shape": [], "dtype": "bool"}]},
      {"name": "c_out", "type": "NetOutput", "inputs": ["c"]}]},
    {"name": "body", "parent": "loop", "nodes": [
      {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "peek", "type": "Relu", "inputs": ["b_in"], "outputs": [{"shape": [4]}]},
      {"name": "inc", "type": "AssignAdd", "inputs": ["b_in", "peek"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "b_out", "type": "NetOutput", "inputs": ["inc"]}]}]})json"));
  const InPlaceBuffers b = InPlaceBuffers::Of(m);
  EXPECT_THAT(b.written_inputs(Id(m, "loop")), ElementsAre(0));
  std::set<std::vector<std::string>> all;
  for (size_t i = 0; i < b.size(); ++i) all.insert(Touches(m, b, i));
  // Inside the body: peek reads what inc overwrites, and b_out returns it.
  // Outside: r reads x while the loop writes it; `after` reads the loop's
  // output, x's memory.
  // The cond graph reads x too: its end covers that read.
  EXPECT_THAT(all, ElementsAre(ElementsAre("after", "loop*", "r", "x*"),
                               ElementsAre("b_out", "inc*", "peek"), ElementsAre("c", "c_out")));
}

TEST(InPlaceWritesTest, PathFinderFollowsDataAndControlEdgesForwardOnly) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "a", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "b", "type": "Relu", "inputs": ["a"], "outputs": [{"shape": [4]}]},
    {"name": "c", "type": "Relu", "control_inputs": ["b"], "outputs": [{"shape": [4]}]},
    {"name": "d", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["c", "d"]}]})json"));
  PathFinder p(m);
  EXPECT_TRUE(p.Reaches(Id(m, "a"), Id(m, "c")));
  EXPECT_FALSE(p.Reaches(Id(m, "c"), Id(m, "a")));
  EXPECT_FALSE(p.Reaches(Id(m, "d"), Id(m, "c")));
  EXPECT_TRUE(p.Reaches(Id(m, "d"), Id(m, "out")));
  EXPECT_TRUE(p.Reaches(Id(m, "b"), Id(m, "b")));
}

// Every node's ancestors (inclusive), by a plain search per node.
std::vector<std::vector<bool>> Closure(const Model& m) {
  std::vector<std::vector<bool>> anc(m.num_nodes(), std::vector<bool>(m.num_nodes(), false));
  for (size_t v = 0; v < m.num_nodes(); ++v) {
    std::vector<size_t> stack = {v};
    anc[v][v] = true;
    while (!stack.empty()) {
      const Node& n = m.node(NodeId(static_cast<int32_t>(stack.back())));
      stack.pop_back();
      std::vector<NodeId> preds = n.control_inputs;
      for (const OutputRef& in : n.inputs) preds.push_back(in.node);
      for (NodeId u : preds) {
        if (!anc[v][u.index()]) {
          anc[v][u.index()] = true;
          stack.push_back(u.index());
        }
      }
    }
  }
  return anc;
}

// PathFinder against a plain closure, queries in a random order (its marks
// serve runs of queries into one node), and after edges the caller adds.
TEST(InPlaceWritesTest, PathFinderAgreesWithTheClosureAcrossQueriesAndAddedEdges) {
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    std::mt19937 rng(seed);
    const int n = 3 + static_cast<int>(rng() % 10);
    std::string nodes;
    for (int i = 0; i < n; ++i) {
      std::string inputs;
      for (int k = 0; i > 0 && k < static_cast<int>(rng() % 3); ++k)
        inputs += StrCat(k ? ", " : "", "\"n", rng() % static_cast<uint32_t>(i), "\"");
      nodes += StrCat(R"({"name": "n)", i, R"(", "type": "Relu", "inputs": [)", inputs,
                      R"(], "outputs": [{"shape": [4]}]},)");
    }
    nodes += R"({"name": "out", "type": "NetOutput", "inputs": []})";
    NPUPLAN_ASSERT_OK_AND_ASSIGN(
        Model m, ParseVerifiedGraph(StrCat(R"({"name": "g", "nodes": [)", nodes, "]}")));
    PathFinder paths(m);
    for (int round = 0; round < 3; ++round) {
      const std::vector<std::vector<bool>> anc = Closure(m);
      std::vector<std::pair<size_t, size_t>> queries;
      for (size_t a = 0; a < m.num_nodes(); ++a) {
        for (size_t b = 0; b < m.num_nodes(); ++b) queries.emplace_back(a, b);
      }
      // Runs of one target in increasing source order, as RequiredPaths lists them, then
      // random queries.
      std::sort(queries.begin(), queries.end(), [&](const auto& x, const auto& y) {
        return std::pair(x.second, m.nodes()[x.first].topo_id) <
               std::pair(y.second, m.nodes()[y.first].topo_id);
      });
      std::vector<std::pair<size_t, size_t>> shuffled = queries;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      queries.insert(queries.end(), shuffled.begin(), shuffled.end());
      for (const auto& [a, b] : queries) {
        const NodeId x(static_cast<int32_t>(a)), y(static_cast<int32_t>(b));
        ASSERT_EQ(paths.Reaches(x, y), anc[b][a]) << "seed " << seed << " round " << round << ": "
                                                  << m.node(x).name << " -> " << m.node(y).name;
      }
      // A forward edge the caller adds after asking for it, then queries into the same node.
      const size_t to = 1 + rng() % (m.num_nodes() - 1);
      const NodeId target = m.root().nodes[to];
      const NodeId source = m.root().nodes[rng() % to];
      if (!paths.Reaches(source, target)) {
        m.node(target).control_inputs.push_back(source);
        paths.AddedEdge(source, target);
        const std::vector<std::vector<bool>> after = Closure(m);
        for (size_t a = 0; a < m.num_nodes(); ++a) {
          const NodeId x(static_cast<int32_t>(a));
          ASSERT_EQ(paths.Reaches(x, target), after[target.index()][a]) << "seed " << seed;
        }
      }
    }
  }
}

// The transitivity argument of RequiredPaths, brute force: on random DAGs
// with random ref outputs and control edges, paths for all the pairs (under
// the topological order and under a shuffled one) hold exactly when every
// write of every buffer is comparable with every other touch of it and every
// touch reaches the NetOutput when that touches it.
TEST(InPlaceWritesTest, RequiredPathsHoldExactlyWhenEveryWriteIsOrdered) {
  int checked = 0, ordered = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    const int n = 4 + pick(8);
    std::string nodes;
    for (int i = 0; i < n; ++i) {
      std::string inputs, control;
      const int fanin = i == 0 ? 0 : 1 + pick(2);
      for (int k = 0; k < fanin; ++k) inputs += StrCat(k ? ", " : "", "\"n", pick(i), "\"");
      if (i > 0 && pick(3) == 0) control = StrCat("\"n", pick(i), "\"");
      const bool ref = fanin > 0 && pick(3) == 0;
      nodes += StrCat(R"({"name": "n)", i, R"(", "type": ")", ref ? "AssignAdd" : "Relu",
                      R"(", "inputs": [)", inputs, R"(], "control_inputs": [)", control, "]",
                      ref ? R"(, "attrs": {"_ref_input_index": 0})" : "",
                      R"(, "outputs": [{"shape": [4]}]},)");
    }
    // The NetOutput returns some of the nodes: an in-place write must reach it.
    nodes += R"({"name": "out", "type": "NetOutput", "inputs": ["n0")";
    for (int i = 1; i < n; ++i) {
      if (pick(2) == 0) nodes += StrCat(", \"n", i, "\"");
    }
    nodes += "]}";
    NPUPLAN_ASSERT_OK_AND_ASSIGN(
        Model m, ParseVerifiedGraph(StrCat(R"({"name": "g", "nodes": [)", nodes, "]}")));
    const InPlaceBuffers b = InPlaceBuffers::Of(m);
    PathFinder paths(m);
    bool all_comparable = true;
    for (size_t i = 0; i < b.size(); ++i) {
      for (const InPlaceTouch& w : b.touches(i)) {
        for (const InPlaceTouch& t : b.touches(i)) {
          if (t.node == w.node || w.end) continue;
          if (t.end ? !paths.Reaches(w.node, t.node)
                    : w.writes && !paths.Reaches(w.node, t.node) && !paths.Reaches(t.node, w.node))
            all_comparable = false;
        }
      }
    }
    std::vector<int64_t> shuffled(m.num_nodes());
    std::iota(shuffled.begin(), shuffled.end(), 0);
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (int order = 0; order < 2; ++order) {
      bool all_paths = true;
      auto rank = [&](NodeId v) { return order == 0 ? m.node(v).topo_id : shuffled[v.index()]; };
      for (const auto& [x, y, buffer] : RequiredPaths(b, rank)) {
        if (m.node(y).type != "NetOutput") EXPECT_LT(rank(x), rank(y));
        all_paths = all_paths && paths.Reaches(x, y);
      }
      if (order == 0) {
        EXPECT_EQ(all_paths, all_comparable) << "seed " << seed;
      } else if (all_paths) {
        EXPECT_TRUE(all_comparable) << "seed " << seed << " (shuffled order)";
      }
    }
    checked += b.size() > 0;
    ordered += b.size() > 0 && all_comparable;
  }
  // Both outcomes occur, so the equivalence is tested both ways.
  EXPECT_GT(ordered, 10);
  EXPECT_GT(checked - ordered, 10);
}

}  // namespace
}  // namespace npuplan
