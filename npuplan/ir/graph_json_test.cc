#include "npuplan/ir/graph_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "npuplan/ir/verifier.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;
using ::npuplan::testing::NodeNamed;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kWhileGraph[] = R"json({
  "format": "npuplan.graph/1", "name": "g",
  "attrs": {"ge.autoMultistreamParallelMode": "cv"},
  "options": {"ge.enableSingleStream": "false"},
  "engines": {"MyEngine": {"independent": true, "compute_cost": 3}},
  "nodes": [
    {"name": "x", "type": "Data", "outputs": [{"shape": [1, -1], "dtype": "float16"}]},
    {"name": "w", "type": "Const", "outputs": [{"shape": [4], "dtype": "float16"}],
     "attrs": {"value_list": [1.5, 2], "flags": [true, false], "tags": ["a", "b"],
               "_attached_stream_info_list": [{"name": "s0", "reuse_key": "k", "required": true}]}},
    {"name": "loop", "type": "While", "inputs": ["x:0", "w"], "subgraphs": ["cond", "body"],
     "outputs": [{"shape": [1, -1], "dtype": "float16"}]},
    {"name": "y", "type": "Custom", "engine": "MyEngine", "inputs": ["loop:0"], "control_inputs": ["w"],
     "outputs": [{"shape": [-2], "dtype": "float32"}]},
    {"name": "out", "type": "NetOutput", "inputs": ["y:0"]}
  ],
  "subgraphs": [
    {"name": "cond", "parent": "loop", "nodes": [
      {"name": "c_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1], "dtype": "bool"}]},
      {"name": "c_out", "type": "NetOutput", "inputs": ["c_in:0"]}]},
    {"name": "body", "parent": "loop", "attrs": {"depth": 1}, "nodes": [
      {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1], "dtype": "float16"}]},
      {"name": "b_relu", "type": "Relu", "inputs": ["b_in"], "outputs": [{"shape": [1], "dtype": "float16"}]},
      {"name": "b_out", "type": "NetOutput", "inputs": ["b_relu:0"]}]}
  ]})json";

TEST(GraphJsonTest, ReadsEveryFieldOfTheFormat) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseGraphJson(kWhileGraph, "g.json"));
  EXPECT_THAT(VerifyStructure(m), IsOk());
  EXPECT_EQ(m.name(), "g");
  EXPECT_EQ(m.num_graphs(), 3u);
  EXPECT_EQ(m.options.at("ge.enableSingleStream"), "false");
  EXPECT_EQ(GetStringAttr(m.root().attrs, "ge.autoMultistreamParallelMode"), "cv");
  const Node& w = NodeNamed(m, "w");
  EXPECT_EQ(w.engine, "DNN_VM_GE_LOCAL");  // from the op-type table
  EXPECT_TRUE(FindAttr(w.attrs, "value_list")->is<AttrValue::FloatList>());
  EXPECT_TRUE(FindAttr(w.attrs, "flags")->is<AttrValue::BoolList>());
  EXPECT_TRUE(FindAttr(w.attrs, "_attached_stream_info_list")->is<AttrValue::MapList>());
  const Node& loop = NodeNamed(m, "loop");
  ASSERT_EQ(loop.subgraphs.size(), 2u);
  EXPECT_EQ(m.graph(loop.subgraphs[1]).name, "body");
  EXPECT_EQ(m.graph(loop.subgraphs[1]).parent_node, m.FindNode("loop"));
  const Node& y = NodeNamed(m, "y");
  EXPECT_EQ(y.engine, "MyEngine");
  EXPECT_TRUE(m.engine_table.Find("MyEngine")->independent);
  EXPECT_EQ(m.engine_table.Find("MyEngine")->compute_cost, 3);
  EXPECT_THAT(y.outputs[0].shape, ElementsAre(-2));
  EXPECT_TRUE(y.outputs[0].IsDynamic());
  ASSERT_EQ(y.control_inputs.size(), 1u);
  EXPECT_EQ(m.node(y.control_inputs[0]).name, "w");
  EXPECT_EQ(NodeNamed(m, "b_relu").inputs[0].node, m.FindNode("b_in"));  // "b_in" means "b_in:0"
}

TEST(GraphJsonTest, RoundTripIsByteIdentical) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseGraphJson(kWhileGraph, "g.json"));
  std::string once = WriteGraphJson(m);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m2, ParseGraphJson(once, "once.json"));
  EXPECT_EQ(WriteGraphJson(m2), once);
}

TEST(GraphJsonTest, OwnedTextReadsTheSameModel) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model kept, ParseGraphJson(kWhileGraph, "g.json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model owned, ParseGraphJsonOwned(kWhileGraph, "g.json"));
  EXPECT_EQ(WriteGraphJson(owned), WriteGraphJson(kept));
}

// ReadGraphFile frees the text before the build: an error found there (an
// unknown reference) or in the sort (a cycle) still names the file, the JSON
// path and the nodes.
TEST(GraphJsonTest, ReadGraphFileNamesFileAndNodeAfterTheTextIsFreed) {
  const std::string path = ::testing::TempDir() + "/late_errors.json";
  auto read = [&](const std::string& nodes) {
    std::ofstream(path) << "{\"format\": \"npuplan.graph/1\", \"nodes\": [" << nodes << "]}";
    return ReadGraphFile(path);
  };
  EXPECT_THAT(read(R"({"name": "a", "type": "Data", "outputs": [{"shape": [1]}]},
                      {"name": "b", "type": "Relu", "inputs": ["a:0", "zz:0"]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + ": $.nodes[1].inputs[1]: unknown node 'zz'"));
  absl::StatusOr<Model> cycle =
      read(R"({"name": "a", "type": "Relu", "inputs": ["b:0"], "outputs": [{"shape": [1]}]},
              {"name": "b", "type": "Relu", "inputs": ["a:0"], "outputs": [{"shape": [1]}]})");
  EXPECT_THAT(cycle, StatusIs(absl::StatusCode::kInvalidArgument, path + ": graph "));
  EXPECT_THAT(cycle, StatusIs(absl::StatusCode::kInvalidArgument, "has a cycle: "));
  std::remove(path.c_str());
}

TEST(GraphJsonTest, ReadsFieldsInAnyOrder) {
  // Keys in the reverse of the written order: subgraphs before nodes, a
  // subgraph's name after its nodes, engines after the nodes that use them,
  // format last.
  constexpr char kShuffled[] = R"json({
    "subgraphs": [{"nodes": [{"type": "Data", "name": "b_in", "outputs": [{"dtype": "float16", "shape": [1]}],
                              "attrs": {"_parent_node_index": 0}},
                             {"inputs": ["b_in:0"], "type": "NetOutput", "name": "b_out"}],
                   "parent": "loop", "name": "body"}],
    "nodes": [{"type": "Data", "name": "x", "outputs": [{"shape": [1], "dtype": "float16"}]},
              {"subgraphs": ["body"], "inputs": ["x"], "type": "PartitionedCall", "name": "loop",
               "outputs": [{"shape": [1], "dtype": "float16"}]},
              {"engine": "Late", "inputs": ["loop:0"], "type": "Custom", "name": "y"}],
    "engines": {"Late": {"compute_cost": 1}},
    "name": "g", "format": "npuplan.graph/1"})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseGraphJson(kShuffled, "s.json"));
  EXPECT_THAT(VerifyStructure(m), IsOk());
  EXPECT_EQ(m.FindNode("x").index(), 0u);  // root nodes first, as in the written order
  EXPECT_EQ(m.FindNode("b_in").index(), 3u);
  EXPECT_EQ(m.graph(NodeNamed(m, "b_in").graph).name, "body");
  EXPECT_EQ(m.engine_table.Find("Late")->compute_cost, 1);
  std::string once = WriteGraphJson(m);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m2, ParseGraphJson(once, "once.json"));
  EXPECT_EQ(WriteGraphJson(m2), once);
}

// Attribute objects are collected and sorted once; repeats are still found
// where they occur, also past the first 16 keys.
TEST(GraphJsonTest, ReadsManyAttributesInAnyOrderAndFindsRepeats) {
  std::string attrs;
  for (int i = 40; i > 0; --i) attrs += StrCat(attrs.empty() ? "" : ", ", "\"k", i, "\": ", i);
  const std::string text = StrCat(R"({"format": "npuplan.graph/1", "nodes": [{"name": "a", "type": "Relu", "attrs": {)",
                                  attrs, "}}]}");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseGraphJson(text, "a.json"));
  const AttrMap& got = m.node(m.FindNode("a")).attrs;
  ASSERT_EQ(got.size(), 40u);
  EXPECT_EQ(GetIntAttr(got, "k7"), 7);
  EXPECT_EQ(std::string(got.begin()->first), "k1");  // sorted by key
  for (int repeat : {3, 39}) {  // past 16 keys: found through the set
    std::string bad = attrs;
    bad += StrCat(", \"k", repeat, "\": 0");
    auto r = ParseGraphJson(StrCat(R"({"format": "npuplan.graph/1", "nodes": [{"name": "a", "type": "Relu", "attrs": {)",
                                   bad, "}}]}"), "a.json");
    EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     StrCat("$.nodes[0].attrs: duplicate attribute 'k", repeat, "'")));
  }
  auto r = ParseGraphJson(R"({"format": "npuplan.graph/1", "nodes": [{"name": "a", "type": "Relu",
      "attrs": {"b": 1, "a": 2, "b": 3}}]})", "a.json");
  EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kInvalidArgument, "duplicate attribute 'b'"));
}

// A key twice inside a map attribute (or a list of maps, or an engine
// entry) is the documented "field given twice" error too: the DOM the value
// is captured into kept the last one silently. Equal keys of two sibling
// maps are no repeat.
TEST(GraphJsonTest, RejectsAKeyTwiceInsideAnAttributeValueOrEngineEntry) {
  auto graph = [](std::string_view attrs, std::string_view engines = "") {
    return StrCat(R"({"format": "npuplan.graph/1", )", engines,
                  R"("nodes": [{"name": "a", "type": "Relu", "attrs": {"m": )", attrs, "}}]}");
  };
  EXPECT_THAT(ParseGraphJson(graph(R"({"x": 1, "y": 2, "x": 3})"), "g.json").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "g.json: $.nodes[0].attrs.m: duplicate key 'x' inside the value"));
  EXPECT_THAT(ParseGraphJson(graph(R"([{"x": 1}, {"y": 2, "y": 2}])"), "g.json").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "duplicate key 'y' inside the value"));
  EXPECT_THAT(
      ParseGraphJson(
          graph("1",
                R"("engines": {"AIcoreEngine": {"independent": false, "independent": true}}, )"),
          "g.json")
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "$.engines.AIcoreEngine: duplicate key 'independent' inside the value"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      Model m, ParseGraphJson(graph(R"({"p": {"x": 1}, "q": {"x": 2}})"), "g.json"));
  EXPECT_TRUE(HasAttr(m.node(m.FindNode("a")).attrs, "m"));
  EXPECT_THAT(ParseGraphJson(graph(R"([{"x": 1}, {"x": 2}])"), "g.json").status(), IsOk());
}

TEST(GraphJsonTest, AcceptsNonNegativeCostsAndTaskCounts) {
  const char* text = R"({"format": "npuplan.graph/1", "nodes": [
      {"name": "a", "type": "Relu", "attrs": {"_cost": 0, "_node_sqe_num": 9223372036854775807}},
      {"name": "b", "type": "Relu", "attrs": {"_cost": 2.5, "_hccl_task_num": 0}}]})";
  EXPECT_THAT(ParseGraphJson(text, "g.json").status(), IsOk());
}

TEST(GraphJsonTest, ReadsAParsedDocumentLikeText) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model from_text, ParseGraphJson(kWhileGraph, "g.json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model from_dom, GraphFromJson(nlohmann::json::parse(kWhileGraph), "g.json"));
  EXPECT_EQ(WriteGraphJson(from_dom), WriteGraphJson(from_text));
  auto bad = GraphFromJson(nlohmann::json::parse(R"({"format": "npuplan.graph/1", "nodes": [{"name": "a"}]})"),
                           "p.json (graph)");
  EXPECT_THAT(bad.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     "p.json (graph): $.nodes[0] ('a'): missing field 'type'"));
}

TEST(GraphJsonTest, WrongFormatWinsOverEarlierFieldErrors) {
  // A plan given as a graph: "event_counts" comes first, but the format is what is wrong.
  auto r = ParseGraphJson(R"({"event_counts": {}, "format": "npuplan.plan/1", "graph": {}})", "p.json");
  EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                   "p.json: $.format: unsupported format \"npuplan.plan/1\""));
  // ... and invalid JSON wins over both.
  r = ParseGraphJson(R"({"event_counts": {}, "format": "npuplan.plan/1", "graph": )", "p.json");
  EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kInvalidArgument, "p.json: not valid JSON"));
}

#define G(body) "{\"format\": \"npuplan.graph/1\", \"nodes\": [" body "]}"
constexpr char kChain[] = G("{\"name\": \"a\", \"type\": \"Data\", \"outputs\": [{\"shape\": [1]}]},"
                            "{\"name\": \"b\", \"type\": \"Relu\", \"inputs\": [\"a\"], \"control_inputs\": [\"a\"],"
                            " \"outputs\": [{\"shape\": [1]}]},"
                            "{\"name\": \"c\", \"type\": \"Relu\", \"inputs\": [\"b:0\"],"
                            " \"attrs\": {\"l\": {\"a\": [1, 2], \"b\": [3]}, \"s\": \"abcdef\"}}");

// Nodes n0 … n<depth> where n<i> owns subgraph s<i+1>, which holds n<i+1>.
std::string NestedGraph(int depth) {
  std::string nodes, subs;
  for (int i = 0; i <= depth; ++i) {
    std::string node = StrCat("{\"name\": \"n", i, "\", \"type\": \"PartitionedCall\"",
                              i < depth ? StrCat(", \"subgraphs\": [\"s", i + 1, "\"]") : "", "}");
    if (i == 0) {
      nodes = node;
    } else {
      if (!subs.empty()) subs += ", ";
      subs += StrCat("{\"name\": \"s", i, "\", \"nodes\": [", node, "]}");
    }
  }
  return StrCat("{\"format\": \"npuplan.graph/1\", \"nodes\": [", nodes, "], \"subgraphs\": [", subs, "]}");
}

TEST(GraphJsonLimitsTest, AcceptsAGraphExactlyAtEveryLimit) {
  GraphReadOptions o;
  o.limits.max_nodes = 3;
  o.limits.max_edges = 3;
  o.limits.max_string_bytes = 15;  // "npuplan.graph/1"; every other string and key is shorter
  o.limits.max_attr_elements = 6;  // {"a": [1, 2], "b": [3]}: the map, two lists, three ints
  o.limits.max_depth = 2;          // lists in a map
  EXPECT_THAT(ParseGraphJson(kChain, "l.json", o).status(), IsOk());
  GraphReadOptions d;
  d.limits.max_depth = 3;
  EXPECT_THAT(ParseGraphJson(NestedGraph(3), "n.json", d).status(), IsOk());
}

TEST(GraphJsonLimitsTest, RejectsInputBeyondEachLimitNamingItsFlag) {
  struct Case {
    void (*set)(GraphReadLimits&);
    const char* message;
  };
  const Case cases[] = {
      {[](GraphReadLimits& l) { l.max_nodes = 2; },
       "l.json: $.nodes[2]: the graph has more nodes than allowed (limit 2; raise it with --max-nodes)"},
      {[](GraphReadLimits& l) { l.max_edges = 2; },
       "l.json: $.nodes[2].inputs[0]: the graph has more edges (data + control inputs) than allowed (limit 2; "
       "raise it with --max-edges)"},
      {[](GraphReadLimits& l) { l.max_string_bytes = 14; },
       "l.json: $.format: a string of 15 bytes is longer than allowed (limit 14; raise it with "
       "--max-string-bytes)"},
      {[](GraphReadLimits& l) { l.max_attr_elements = 5; },
       "l.json: $.nodes[2].attrs.l: an attribute value has more elements than allowed (limit 5; raise it with "
       "--max-attr-elements)"},
      {[](GraphReadLimits& l) { l.max_depth = 1; },
       "l.json: $.nodes[2].attrs.l: an attribute value nests lists/maps deeper than allowed (limit 1; raise it "
       "with --max-depth)"},
  };
  for (const Case& c : cases) {
    GraphReadOptions o;
    c.set(o.limits);
    EXPECT_THAT(ParseGraphJson(kChain, "l.json", o).status(), StatusIs(absl::StatusCode::kInvalidArgument, c.message));
  }
  GraphReadOptions d;
  d.limits.max_depth = 2;
  EXPECT_THAT(ParseGraphJson(NestedGraph(3), "n.json", d).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "n.json: $.subgraphs[2]: subgraph 's3' is nested 3 deep, deeper than allowed (limit 2; raise "
                       "it with --max-depth)"));
}

TEST(GraphJsonLimitsTest, DeeplyNestedJsonIsAnErrorNotACrash) {
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string head = "{\"format\": \"npuplan.graph/1\", \"nodes\": [{\"name\": \"a\", \"type\": \"Relu\", ";
  std::string text = StrCat(head, "\"attrs\": {\"x\": ", deep, "}}]}");
  EXPECT_THAT(ParseGraphJson(text, "d.json").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "--max-depth"));
  // Where the format ignores a value, its depth costs nothing and is accepted.
  text = StrCat(head, "\"stream\": ", deep, "}]}");
  EXPECT_THAT(ParseGraphJson(text, "d.json").status(), IsOk());
}
#undef G

struct BadCase {
  const char* name;
  const char* text;
  const char* message;
};

class GraphJsonBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(GraphJsonBadInputTest, RejectsWithClearMessage) {
  auto result = ParseGraphJson(GetParam().text, "bad.json");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("bad.json"));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(GetParam().message));
}

// The reader that frees the text after the first phase reports every error
// as the one that keeps it: the same code and message, file, path and node.
TEST_P(GraphJsonBadInputTest, OwnedTextGivesTheSameError) {
  auto kept = ParseGraphJson(GetParam().text, "bad.json");
  auto owned = ParseGraphJsonOwned(std::string(GetParam().text), "bad.json");
  ASSERT_FALSE(owned.ok());
  EXPECT_EQ(owned.status(), kept.status());
}

#define G(body) "{\"format\": \"npuplan.graph/1\", \"nodes\": [" body "]}"
INSTANTIATE_TEST_SUITE_P(
    Cases, GraphJsonBadInputTest,
    ::testing::Values(
        BadCase{"NotJson", "{\"format\": ", "not valid JSON"},
        BadCase{"NotObject", "[1]", "expected a JSON object"},
        BadCase{"NoFormat", "{\"nodes\": []}", "missing field 'format'"},
        BadCase{"WrongFormat", "{\"format\": \"npuplan.graph/2\"}", "unsupported format"},
        BadCase{"NodesNotArray", "{\"format\": \"npuplan.graph/1\", \"nodes\": 3}", "$.nodes: expected an array"},
        BadCase{"MissingName", G("{\"type\": \"Relu\"}"), "$.nodes[0]: missing field 'name'"},
        BadCase{"MissingType", G("{\"name\": \"a\"}"), "missing field 'type'"},
        BadCase{"NameNotString", G("{\"name\": 3, \"type\": \"Relu\"}"), "$.nodes[0].name"},
        BadCase{"Duplicate", G("{\"name\": \"a\", \"type\": \"Relu\"}, {\"name\": \"a\", \"type\": \"Relu\"}"),
                "duplicate node name 'a'"},
        BadCase{"UnknownInput", G("{\"name\": \"a\", \"type\": \"Relu\", \"inputs\": [\"zz:0\"]}"),
                "$.nodes[0].inputs[0]: unknown node 'zz'"},
        BadCase{"AnchorOutOfRange",
                G("{\"name\": \"a\", \"type\": \"Data\", \"outputs\": [{\"shape\": [1]}]},"
                  "{\"name\": \"b\", \"type\": \"Relu\", \"inputs\": [\"a:1\"]}"),
                "output anchor 1 of 'a' is out of range"},
        BadCase{"MalformedInput", G("{\"name\": \"a\", \"type\": \"Relu\", \"inputs\": [\"b:x\"]}"), "malformed input"},
        BadCase{"Cycle",
                G("{\"name\": \"a\", \"type\": \"Relu\", \"inputs\": [\"b:0\"], \"outputs\": [{\"shape\": [1]}]},"
                  "{\"name\": \"b\", \"type\": \"Relu\", \"inputs\": [\"a:0\"], \"outputs\": [{\"shape\": [1]}]}"),
                "cycle: "},
        BadCase{"SelfLoop", G("{\"name\": \"a\", \"type\": \"Relu\", \"control_inputs\": [\"a\"]}"),
                "cycle: a -> a"},
        BadCase{"UnknownEngine", G("{\"name\": \"a\", \"type\": \"Relu\", \"engine\": \"Nope\"}"),
                "unknown engine 'Nope'"},
        BadCase{"DimBelowMinus2", G("{\"name\": \"a\", \"type\": \"Relu\", \"outputs\": [{\"shape\": [1, -3]}]}"),
                "$.nodes[0].outputs[0].shape[1]: dim -3 is below -2"},
        BadCase{"DimOverflow",
                G("{\"name\": \"a\", \"type\": \"Relu\", \"outputs\": [{\"shape\": [4294967296, 4294967296]}]}"),
                "overflows"},
        BadCase{"UnknownDtype", G("{\"name\": \"a\", \"type\": \"Relu\", \"outputs\": [{\"shape\": [1], \"dtype\": \"f7\"}]}"),
                "unknown dtype 'f7'"},
        BadCase{"MissingSubgraph", G("{\"name\": \"a\", \"type\": \"If\", \"subgraphs\": [\"then\"]}"),
                "subgraph 'then' is not defined"},
        BadCase{"SubgraphOwnedTwice",
                "{\"format\": \"npuplan.graph/1\", \"nodes\": [{\"name\": \"a\", \"type\": \"If\", \"subgraphs\": "
                "[\"s\"]}, {\"name\": \"b\", \"type\": \"If\", \"subgraphs\": [\"s\"]}], \"subgraphs\": "
                "[{\"name\": \"s\", \"nodes\": []}]}",
                "owned twice"},
        BadCase{"ParentIndexOutOfRange",
                "{\"format\": \"npuplan.graph/1\", \"nodes\": [{\"name\": \"x\", \"type\": \"Data\", "
                "\"outputs\": [{\"shape\": [1]}]}, {\"name\": \"a\", \"type\": \"If\", \"inputs\": [\"x:0\"], "
                "\"subgraphs\": [\"s\"]}], \"subgraphs\": [{\"name\": \"s\", \"nodes\": [{\"name\": \"s_in\", "
                "\"type\": \"Data\", \"attrs\": {\"_parent_node_index\": 1}}]}]}",
                "$.subgraphs[0].nodes[0].attrs._parent_node_index: node 's_in' has _parent_node_index 1 but its "
                "parent 'a' has 1 inputs"},
        BadCase{"NegativeParentIndex",
                "{\"format\": \"npuplan.graph/1\", \"nodes\": [{\"name\": \"a\", \"type\": \"If\", "
                "\"subgraphs\": [\"s\"]}], \"subgraphs\": [{\"name\": \"s\", \"nodes\": [{\"name\": \"s_in\", "
                "\"type\": \"Data\", \"attrs\": {\"_parent_node_index\": -1}}]}]}",
                "has _parent_node_index -1"},
        BadCase{"OwnershipCycle",
                "{\"format\": \"npuplan.graph/1\", \"subgraphs\": [{\"name\": \"a\", \"nodes\": [{\"name\": "
                "\"na\", \"type\": \"If\", \"subgraphs\": [\"b\"]}]}, {\"name\": \"b\", \"nodes\": "
                "[{\"name\": \"nb\", \"type\": \"If\", \"subgraphs\": [\"a\"]}]}]}",
                "$.subgraphs[0]: subgraph 'a' is not reachable from the root graph (its owners form a cycle)"},
        BadCase{"OrphanSubgraph", "{\"format\": \"npuplan.graph/1\", \"subgraphs\": [{\"name\": \"s\"}]}",
                "not listed in any node"},
        BadCase{"WrongFieldType", G("{\"name\": \"a\", \"type\": \"Relu\", \"inputs\": \"x\"}"),
                "$.nodes[0].inputs: expected an array"},
        BadCase{"UnknownField", G("{\"name\": \"a\", \"type\": \"Relu\", \"colour\": 1}"), "unknown field 'colour'"},
        BadCase{"MixedAttrList", G("{\"name\": \"a\", \"type\": \"Relu\", \"attrs\": {\"l\": [1, \"x\"]}}"),
                "$.nodes[0].attrs.l: list attribute mixes element types"},
        BadCase{"DuplicateField", G("{\"name\": \"a\", \"type\": \"Relu\", \"type\": \"Abs\"}"),
                "$.nodes[0]: duplicate field 'type'"},
        BadCase{"DuplicateAttr", G("{\"name\": \"a\", \"type\": \"Relu\", \"attrs\": {\"k\": 1, \"k\": 2}}"),
                "$.nodes[0].attrs: duplicate attribute 'k'"},
        BadCase{"DimAboveInt64", G("{\"name\": \"a\", \"type\": \"Relu\", \"outputs\": [{\"shape\": [18446744073709551615]}]}"),
                "$.nodes[0].outputs[0].shape[0]: dim 18446744073709551615 is out of int64 range"},
        BadCase{"BadTopoMode", "{\"format\": \"npuplan.graph/1\", \"options\": {\"ge.topoSortingMode\": \"7\"}}",
                "ge.topoSortingMode"},
        // Issue #19: attributes later stages read as numbers are typed here
        // (a string was silently ignored, a negative cost clamped to 0).
        BadCase{"NegativeCost", G("{\"name\": \"a\", \"type\": \"Relu\", \"attrs\": {\"_cost\": -3}}"),
                "$.nodes[0].attrs._cost: node 'a': a cost must be >= 0, found -3"},
        BadCase{"NegativeFloatCost", G("{\"name\": \"a\", \"type\": \"Relu\", \"attrs\": {\"_cost\": -0.5}}"),
                "a cost must be >= 0, found -0.5"},
        BadCase{"StringCost", G("{\"name\": \"a\", \"type\": \"Relu\", \"attrs\": {\"_cost\": \"7\"}}"),
                "$.nodes[0].attrs._cost: expected a number >= 0, found a value of type string"},
        BadCase{"StringParentIndex",
                "{\"format\": \"npuplan.graph/1\", \"nodes\": [{\"name\": \"x\", \"type\": \"Data\", "
                "\"outputs\": [{\"shape\": [1]}]}, {\"name\": \"a\", \"type\": \"If\", \"inputs\": [\"x:0\"], "
                "\"subgraphs\": [\"s\"]}], \"subgraphs\": [{\"name\": \"s\", \"nodes\": [{\"name\": \"s_in\", "
                "\"type\": \"Data\", \"attrs\": {\"_parent_node_index\": \"0\"}}]}]}",
                "$.subgraphs[0].nodes[0].attrs._parent_node_index: expected an integer, found a value of type string"},
        BadCase{"StringTaskCount",
                G("{\"name\": \"a\", \"type\": \"Relu\", \"attrs\": {\"_node_sqe_num\": \"4\"}}"),
                "$.nodes[0].attrs._node_sqe_num: expected an integer"},
        BadCase{"NegativeTaskCount",
                G("{\"name\": \"a\", \"type\": \"Relu\", \"attrs\": {\"_hccl_attached_task_num\": -1}}"),
                "node 'a': attribute _hccl_attached_task_num is -1; a task count must be >= 0"},
        BadCase{"EngineCostBeyondInt64",
                "{\"format\": \"npuplan.graph/1\", \"engines\": {\"E\": {\"compute_cost\": 9223372036854775808}}}",
                "$.engines.E.compute_cost: expected an integer, found 9223372036854775808 (beyond int64)"},
        BadCase{"ByteOrderMark", "\xEF\xBB\xBF{\"format\": \"npuplan.graph/1\", \"nodes\": []}",
                "bad.json: starts with a UTF-8 byte order mark (BOM"},
        BadCase{"Utf16ByteOrderMark", "\xFF\xFE{", "starts with a UTF-16 byte order mark"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });
#undef G

}  // namespace
}  // namespace npuplan
