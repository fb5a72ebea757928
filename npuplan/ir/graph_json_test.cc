#include "npuplan/ir/graph_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/ir/verifier.h"
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
        BadCase{"OrphanSubgraph", "{\"format\": \"npuplan.graph/1\", \"subgraphs\": [{\"name\": \"s\"}]}",
                "not listed in any node"},
        BadCase{"WrongFieldType", G("{\"name\": \"a\", \"type\": \"Relu\", \"inputs\": \"x\"}"),
                "$.nodes[0].inputs: expected an array"},
        BadCase{"UnknownField", G("{\"name\": \"a\", \"type\": \"Relu\", \"colour\": 1}"), "unknown field 'colour'"},
        BadCase{"MixedAttrList", G("{\"name\": \"a\", \"type\": \"Relu\", \"attrs\": {\"l\": [1, \"x\"]}}"),
                "$.nodes[0].attrs.l: list attribute mixes element types"},
        BadCase{"BadTopoMode", "{\"format\": \"npuplan.graph/1\", \"options\": {\"ge.topoSortingMode\": \"7\"}}",
                "ge.topoSortingMode"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });
#undef G

}  // namespace
}  // namespace npuplan
