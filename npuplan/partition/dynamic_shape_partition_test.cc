#include "npuplan/partition/dynamic_shape_partition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/partition/op_types.h"
#include "npuplan/partition/partition_test_util.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::partition {
namespace {

using ::npuplan::partition::testing::GraphBuilder;
using ::npuplan::partition::testing::PartitionRun;
using ::npuplan::partition::testing::RunPartition;
using ::npuplan::testing::NodeNamed;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using nlohmann::json;

constexpr std::string_view kPass = "dynamic-shape-partition";

// x → k1 → k2 → k3 → k4 (a static chain of `n` nodes named <p>1..<p>n).
void Chain(GraphBuilder& b, const std::string& p, const std::string& from, int n) {
  std::string prev = from;
  for (int i = 1; i <= n; ++i) {
    b.Op(p + std::to_string(i), {prev});
    prev = p + std::to_string(i);
  }
}

// IsSpecialType's length filter keeps every listed type and nothing else.
TEST(DynamicShapePartitionTest, SpecialTypesAreExactlyTheListedOnes) {
  for (const char* t : {"PartitionedCall", "StatefulPartitionedCall", "Case", "If", "StatelessIf",
                        "While", "StatelessWhile", "StreamActive", "StreamSwitch", "StreamMerge",
                        "Enter", "RefEnter", "NextIteration", "RefNextIteration"}) {
    EXPECT_TRUE(IsSpecialType(t)) << t;
    EXPECT_FALSE(IsSpecialType(std::string(t) + "x")) << t;
    EXPECT_FALSE(IsSpecialType(std::string(t).substr(1))) << t;
  }
  for (const char* t : {"", "Add", "Relu", "MatMul", "Data", "NetOutput", "case", "IF",
                        "AVeryLongOperatorTypeNameBeyondThirtyTwoChars"})
    EXPECT_FALSE(IsSpecialType(t)) << t;
}

TEST(DynamicShapePartitionTest, KeepsStaticGraphWhole) {
  GraphBuilder b;
  b.Data("x").Op("a", {"x"}).Op("c", {"a"}).Output({"c"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kStatic);
  EXPECT_TRUE(run->plan.partition.subgraphs.empty());
  EXPECT_EQ(run->plan.model.num_graphs(), 1u);
  EXPECT_EQ(run->KindOf("a"), "root");
}

TEST(DynamicShapePartitionTest, MakesWholeGraphDynamicWhenLimitIsMinusOne) {
  GraphBuilder b;
  b.Data("x").Op("a", {"x"}).Output({"a"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json(), {{"ge.exec.static_model_ops_lower_limit", "-1"}}));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kWholeDynamic);
  EXPECT_EQ(run->plan.partition.reason, "ge.exec.static_model_ops_lower_limit=-1");
  EXPECT_EQ(*GetBoolAttr(run->plan.model.root().attrs, "_is_unknown_shape"), true);
  EXPECT_TRUE(run->plan.partition.subgraphs.empty());
}

TEST(DynamicShapePartitionTest, RejectsBadLowerLimitValues) {
  GraphBuilder b;
  b.Data("x").Unk("a", {"x"}).Output({"a"});
  EXPECT_THAT(RunPartition(b.Json(), {{"ge.exec.static_model_ops_lower_limit", ""}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "ge.exec.static_model_ops_lower_limit"));
  EXPECT_THAT(RunPartition(b.Json(), {{"ge.exec.static_model_ops_lower_limit", "four"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "ge.exec.static_model_ops_lower_limit"));
  EXPECT_THAT(RunPartition(b.Json(), {{"ge.exec.static_model_ops_lower_limit", "-2"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "must be >= -1"));
  EXPECT_THAT(RunPartition(b.Json(), {{"ge.exec.hostSchedulingMaxThreshold", "x"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "ge.exec.hostSchedulingMaxThreshold"));
  // The pass checks on its own too (when run without CompileOptions::Validate).
  CompileOptions o;
  o.Set("ge.exec.static_model_ops_lower_limit", "");
  EXPECT_THAT(ReadPartitionOptions(o), StatusIs(absl::StatusCode::kInvalidArgument, "must not be empty"));
}

TEST(DynamicShapePartitionTest, MakesWholeGraphDynamicWhenOnlyDataAndNetOutput) {
  GraphBuilder b;
  b.Data("x", {-1}).Output({"x"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kWholeDynamic);
  EXPECT_EQ(run->plan.partition.reason, "only Data/NetOutput nodes with an unknown tensor");
}

TEST(DynamicShapePartitionTest, HostSchedulingThresholdDecidesSmallStaticGraphs) {
  GraphBuilder b;
  b.Data("x").Op("a", {"x"}).Output({"a"});  // 3 nodes
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto dyn, RunPartition(b.Json(), {{"ge.exec.hostSchedulingMaxThreshold", "15"}}));
  EXPECT_EQ(dyn->plan.partition.decision, PartitionDecision::kWholeDynamic);
  EXPECT_THAT(dyn->plan.partition.reason, HasSubstr("host scheduling"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto stat, RunPartition(b.Json(), {{"ge.exec.hostSchedulingMaxThreshold", "0"}}));
  EXPECT_EQ(stat->plan.partition.decision, PartitionDecision::kStatic);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto boundary, RunPartition(b.Json(), {{"ge.exec.hostSchedulingMaxThreshold", "3"}}));
  EXPECT_EQ(boundary->plan.partition.decision, PartitionDecision::kStatic);  // 3 is not < 3
}

TEST(DynamicShapePartitionTest, SkipsGraphWithNoNeedAttribute) {
  GraphBuilder b;
  b.Data("x").Unk("a", {"x"}).Output({"a"}).GraphAttr("_no_need_dynamic_shape_partition", true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kSkipped);
  EXPECT_EQ(run->KindOf("a"), "root");
}

TEST(DynamicShapePartitionTest, SingleOpSceneIsWholeDynamicWithoutCutting) {
  GraphBuilder b;
  b.Data("x").Unk("a", {"x"}).Output({"a"}).GraphAttr("_single_op_scene", true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kWholeDynamic);
  EXPECT_THAT(run->plan.partition.reason, HasSubstr("single-op"));
  EXPECT_EQ(run->plan.model.num_graphs(), 1u);
}

// A no-tiling node feeding the NetOutput: the NetOutput is exempt from the
// no-tiling engine checks, so the graph stays static instead of being cut.
TEST(DynamicShapePartitionTest, NoTilingNodeFeedingTheNetOutputKeepsTheGraphStatic) {
  GraphBuilder b;
  b.Data("x").Node("a", "Add", {"x"}, {-1},
                   {{"_op_tiling_inline_engine", {"AIcoreEngine"}}, {"_op_export_shape_engine", {"AIcoreEngine"}},
                    {"_op_max_shape", "8"}}).Output({"a"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kStatic);
  EXPECT_EQ(GetBoolAttr(NodeNamed(run->plan.model, "a").attrs, "_op_no_tiling"), true);
}

// GE: when only Data/NetOutput run no-tiling (a bounded Data(-1) → NetOutput
// beside static work), the graph must still be partitioned. (A graph of
// nothing but Data and NetOutput takes GE's whole-dynamic shortcut first.)
TEST(DynamicShapePartitionTest, OnlyDataAndNetOutputNoTilingStillPartitions) {
  GraphBuilder b;
  b.Node("x", "Data", {}, {-1}, {{"_op_max_shape", "8"}}).Data("y").Op("r", {"y"}).Output({"x", "r"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kPartitioned);
  EXPECT_THAT(run->plan.partition.reason, HasSubstr("Data/NetOutput"));
}

// A no-tiling node that its subgraph then makes unknown ("subgraph contains
// unknown") keeps its no-tiling bit, which the whole-graph decision reads:
// the graph stays static. plan.partition lists the node only as unknown, so
// the partition cannot take its marks from there (it recomputes them).
TEST(DynamicShapePartitionTest, NoTilingCallWithAnUnknownSubgraphKeepsTheGraphStatic) {
  GraphBuilder b;
  b.Data("x").Node("pc", "PartitionedCall", {"x"}, {-1}).Output({"pc"});
  b.Subgraph("body", "pc").Node("bx", "Data", {}, {4}, {{"_parent_node_index", 0}});
  b.Node("h", "HostCpuOp", {"bx"}).Node("bo", "NetOutput", {"h"});
  b.Owns("pc", "body");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  const PartitionResult& p = run->plan.partition;
  EXPECT_EQ(p.unknown_nodes.at("pc"), "subgraph contains unknown");
  EXPECT_THAT(p.no_tiling_nodes, ElementsAre("out"));
  EXPECT_EQ(p.decision, PartitionDecision::kStatic);
  EXPECT_EQ(p.reason, "dynamic-shape nodes all run no-tiling; no (a)-(d) node");
  EXPECT_EQ(GetBoolAttr(NodeNamed(run->plan.model, "pc").attrs, "_op_no_tiling"), true);
}

TEST(DynamicShapePartitionTest, HostCpuNodeAloneDoesNotMakeTheGraphEnterTheFlow) {
  GraphBuilder b;
  b.Data("x").Node("h", "HostCpuOp", {"x"}).Output({"h"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kStatic);
}

TEST(DynamicShapePartitionTest, HostCpuNodeGoesDynamicInAPartitionedGraph) {
  GraphBuilder b;
  b.Data("x").Unk("d", {"x"});
  Chain(b, "k", "x", 4);
  b.Node("h", "HostCpuOp", {"k4"}).Output({"d", "h"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kPartitioned);
  EXPECT_EQ(run->KindOf("h"), "unknown");
  EXPECT_EQ(run->KindOf("k1"), "known");
  EXPECT_THAT(run->LogText(), HasSubstr("Mark node[h,HostCpuOp] attr[_is_unknown_shape] to 1. reason=\"HostCpu engine\""));
}

TEST(DynamicShapePartitionTest, KeepsDataNetOutputAndStageInRootAndPutsConstsInAnInputSubgraph) {
  GraphBuilder b;
  b.Data("x").Const("c1").Const("c2").Unk("d", {"x", "c1"});
  b.Node("stage", "PartitionedCall", {"d"}, {4}, {{"_stage_level", 1}});
  Chain(b, "k", "stage", 4);
  b.Node("k5", "Add", {"k4", "c2"}).Output({"k5"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->KindOf("x"), "root");
  EXPECT_EQ(run->KindOf("out"), "root");
  EXPECT_EQ(run->KindOf("stage"), "root");
  EXPECT_EQ(run->KindOf("c1"), "input");
  EXPECT_EQ(run->KindOf("c2"), "input");
  EXPECT_EQ(run->GraphOf("c1"), run->GraphOf("c2"));  // INPUT_NODE clusters merge
  EXPECT_EQ(run->KindOf("d"), "unknown");
  EXPECT_EQ(run->KindOf("k1"), "known");
  EXPECT_EQ(run->GraphOf("k1"), run->GraphOf("k5"));
  const auto& cc = run->plan.partition.cluster_counts;
  EXPECT_EQ(cc.at("data"), 1);
  EXPECT_EQ(cc.at("netoutput"), 1);
  EXPECT_EQ(cc.at("stage"), 1);
  EXPECT_EQ(cc.at("input"), 1);
  EXPECT_EQ(cc.at("unknown"), 1);
  EXPECT_EQ(cc.at("known"), 1);
  EXPECT_EQ(cc.at("all"), 6);
  EXPECT_THAT(run->LogText(),
              HasSubstr("ClusterSummary all=6 data=1 input=1 netoutput=1 stage=1 unknown=1 known=1"));
}

TEST(DynamicShapePartitionTest, NamesSubgraphsAfterTheRootAndKind) {
  GraphBuilder b("net");
  b.Data("x").Unk("d", {"x"});
  Chain(b, "k", "d", 4);
  b.Output({"k4"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  const auto& subs = run->plan.partition.subgraphs;
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0].name, "net_sub_0_unknow");
  EXPECT_EQ(subs[0].call_node, "PartitionedCall_0");
  EXPECT_THAT(subs[0].NodeNames(run->plan.model), ElementsAre("d"));
  EXPECT_THAT(subs[0].reasons, ElementsAre("force_unknown"));
  EXPECT_EQ(subs[1].name, "net_sub_1_know");
  EXPECT_THAT(subs[1].NodeNames(run->plan.model), ElementsAre("k1", "k2", "k3", "k4"));
  EXPECT_TRUE(subs[1].reasons.empty());
}

// Every node's name is indexed once, under its own id.
void ExpectEveryNameIndexed(const Model& m) {
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const NodeId id(static_cast<int32_t>(i));
    EXPECT_EQ(m.FindNode(m.node(id).name), id) << m.node(id).name;
  }
}

// A root node already named like a generated call / Data node: the new
// names step around it (the single-graph fast path checks names while
// clustering; a clash sends every new name through a lookup).
TEST(DynamicShapePartitionTest, GeneratedNamesAvoidExistingRootNodeNames) {
  GraphBuilder b("net");
  b.Data("x").Unk("PartitionedCall_0", {"x"}).Unk("net_sub_1_know_data_0", {"PartitionedCall_0"});
  Chain(b, "k", "PartitionedCall_0", 4);
  b.Output({"k4", "net_sub_1_know_data_0"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  const Model& m = run->plan.model;
  const auto& subs = run->plan.partition.subgraphs;
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0].call_node, "PartitionedCall_0_1");
  EXPECT_THAT(subs[0].NodeNames(m), ElementsAre("PartitionedCall_0", "net_sub_1_know_data_0"));
  EXPECT_EQ(subs[1].call_node, "PartitionedCall_1");
  const Graph& known = m.graph(m.FindGraph("net_sub_1_know"));
  EXPECT_EQ(m.node(known.nodes.front()).name, "net_sub_1_know_data_0_1");
  ExpectEveryNameIndexed(m);
}

// A graph without such names takes the fast path: the created nodes are
// indexed in one batch and are all found.
TEST(DynamicShapePartitionTest, IndexesEveryCreatedNodeName) {
  GraphBuilder b("net");
  b.Data("x").Unk("d", {"x"});
  Chain(b, "k", "d", 4);
  b.Output({"k4"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  const Model& m = run->plan.model;
  EXPECT_TRUE(m.FindNode("net_sub_1_know_data_0").valid());
  EXPECT_TRUE(m.FindNode("net_sub_0_unknow_netoutput").valid());
  ExpectEveryNameIndexed(m);
}

// d1 → k1 → k2 → d2 and d1 → d2: k1, k2 lie on a path between the two
// unknown clusters and are absorbed; k3 hangs off d1 and stays static.
TEST(DynamicShapePartitionTest, AbsorbsStaticNodesOnPathsBetweenUnknownClusters) {
  GraphBuilder b;
  b.Data("x").Unk("d1", {"x"}).Op("k1", {"d1"}).Op("k2", {"k1"}).Unk("d2", {"d1", "k2"});
  Chain(b, "s", "d1", 4);
  b.Output({"d2", "s4"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json(), {{"ge.exec.static_model_ops_lower_limit", "0"}}));
  EXPECT_EQ(run->KindOf("k1"), "unknown");
  EXPECT_EQ(run->KindOf("k2"), "unknown");
  EXPECT_EQ(run->GraphOf("k1"), run->GraphOf("d1"));
  EXPECT_EQ(run->KindOf("s1"), "known");
  EXPECT_THAT(run->LogText(), HasSubstr("Mark node[k1,Add] attr[_is_unknown_shape] to 1. reason=\"path absorption\" "
                                        "before=0 after=1"));
  EXPECT_THAT(run->LogText(), HasSubstr("PathAbsorbed into=d2 from=d1 clusters=2 known_nodes=2"));
  EXPECT_EQ(run->stats.Get(kPass, "path_absorbed_nodes"), 2);
}

// GE only absorbs paths from a direct UNKNOWN input: d1 → k(4 nodes) → d2
// without a d1 → d2 edge keeps the chain static (not widened).
TEST(DynamicShapePartitionTest, DoesNotAbsorbAStaticRegionBetweenNonAdjacentUnknownNodes) {
  GraphBuilder b;
  b.Data("x").Unk("d1", {"x"});
  Chain(b, "k", "d1", 4);
  b.Unk("d2", {"k4"}).Output({"d2"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->KindOf("k1"), "known");
  EXPECT_EQ(run->KindOf("d1"), "unknown");
  EXPECT_NE(run->GraphOf("d1"), run->GraphOf("d2"));
}

// a1..a4 → b1 and a4 → u → b1: merging {a} into {b} would leave the path
// through the unknown u outside: refused, two known subgraphs.
TEST(DynamicShapePartitionTest, RefusesKnownMergeWhenASecondPathExists) {
  GraphBuilder b;
  b.Data("x");
  Chain(b, "a", "x", 4);
  b.Node("u", "Add", {"a4"}, {4}, {{"_force_unknown_shape", true}});
  b.Op("b1", {"a4", "u"});
  Chain(b, "c", "b1", 3);
  b.Output({"c3"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->KindOf("a1"), "known");
  EXPECT_EQ(run->KindOf("b1"), "known");
  EXPECT_NE(run->GraphOf("a4"), run->GraphOf("b1"));
  EXPECT_EQ(run->GraphOf("b1"), run->GraphOf("c3"));
  EXPECT_EQ(run->KindOf("u"), "unknown");
  EXPECT_EQ(run->stats.Get(kPass, "known_merges_refused"), 1);
}

// P1g: a static cluster of 3 nodes is demoted (limit 4), one of 4 is not.
TEST(DynamicShapePartitionTest, DemotesKnownClustersBelowTheLimitOnly) {
  for (int n : {3, 4}) {
    GraphBuilder b;
    b.Data("x").Unk("d", {"x"});
    Chain(b, "k", "d", n);
    b.Output({StrCat("k", n)});
    NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
    if (n == 3) {
      EXPECT_EQ(run->KindOf("k1"), "unknown");
      EXPECT_EQ(run->GraphOf("k1"), run->GraphOf("d"));  // demoted, then merged with d
      EXPECT_THAT(run->LogText(), HasSubstr("ClusterDemoted cluster=k1 nodes=3 limit=4"));
      EXPECT_THAT(run->LogText(), HasSubstr("Mark node[k2,Add] attr[_is_unknown_shape] to 1. reason=\"small cluster "
                                            "demotion\" before=0 after=1"));
      EXPECT_EQ(run->stats.Get(kPass, "demoted_nodes"), 3);
    } else {
      EXPECT_EQ(run->KindOf("k1"), "known") << n;
      EXPECT_EQ(run->stats.Get(kPass, "demoted_clusters"), 0);
    }
  }
}

TEST(DynamicShapePartitionTest, HonoursTheLowerLimitOption) {
  GraphBuilder b;
  b.Data("x").Unk("d", {"x"});
  Chain(b, "k", "d", 4);
  b.Output({"k4"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json(), {{"ge.exec.static_model_ops_lower_limit", "5"}}));
  EXPECT_EQ(run->KindOf("k1"), "unknown");
}

TEST(DynamicShapePartitionTest, MergesControlFlowGroupWithThePathsBetweenMembers) {
  GraphBuilder b;
  b.Data("x").Unk("d", {"x"});
  b.Node("sw", "StreamSwitch", {"x"}, {4}, {{"_control_flow_group", 7}});
  Chain(b, "k", "sw", 4);
  b.Node("mg", "StreamMerge", {"k4"}, {4}, {{"_control_flow_group", 7}});
  b.Output({"d", "mg"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->GraphOf("sw"), run->GraphOf("mg"));
  EXPECT_EQ(run->GraphOf("sw"), run->GraphOf("k2"));
  EXPECT_THAT(run->LogText(), HasSubstr("ControlFlowGroupMerged group=7 members=2 nodes=6"));
}

// Group 1 = {a, c} (b → c lies outside), group 2 = {b, d} with b → {a, c} → d:
// merging b into d absorbs the group-1 cluster on the path; no cycle.
TEST(DynamicShapePartitionTest, AcceptsControlFlowGroupsWhosePathsCanBeAbsorbed) {
  GraphBuilder b;
  b.Data("x");
  b.Node("a", "Add", {"x"}, {4}, {{"_control_flow_group", 1}});
  b.Node("b", "Add", {"x"}, {4}, {{"_control_flow_group", 2}});
  b.Node("c", "Add", {"b"}, {4}, {{"_control_flow_group", 1}});
  b.Node("d", "Add", {"a"}, {4}, {{"_control_flow_group", 2}});
  b.Unk("e", {"c", "d"}).Output({"e"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->GraphOf("a"), run->GraphOf("b"));
  EXPECT_EQ(run->GraphOf("c"), run->GraphOf("d"));
}

// Group 1 = {a, d} (no path between them) merges first; group 2 = {b, c}
// then has c → {a, d} → b: b and c cannot share a cluster without a cycle.
TEST(DynamicShapePartitionTest, RejectsControlFlowGroupCycleNamingTheNodes) {
  GraphBuilder cyc;
  cyc.Data("x");
  cyc.Node("a", "Add", {"x"}, {4}, {{"_control_flow_group", 1}});
  cyc.Op("y1", {"x"});
  cyc.Node("b", "Add", {"a"}, {4}, {{"_control_flow_group", 2}});
  cyc.Op("y2", {"y1"});
  cyc.Node("c", "Add", {"y2"}, {4}, {{"_control_flow_group", 2}});
  cyc.Node("d", "Add", {"c"}, {4}, {{"_control_flow_group", 1}});
  cyc.Unk("e", {"b", "d"}).Output({"e"});
  EXPECT_THAT(RunPartition(cyc.Json()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "_control_flow_group 2: nodes 'b' and 'c' cannot be merged without a cycle"));
}

TEST(DynamicShapePartitionTest, RejectsMalformedControlFlowGroup) {
  GraphBuilder b;
  b.Data("x").Node("a", "Add", {"x"}, {-1}, {{"_control_flow_group", "one"}}).Output({"a"});
  EXPECT_THAT(RunPartition(b.Json()),
              StatusIs(absl::StatusCode::kInvalidArgument, "node 'a': attribute _control_flow_group must be an int"));
}

// merge-known-first: no path absorption, known merges first, limit 6.
TEST(DynamicShapePartitionTest, MergeKnownFirstKeepsAStaticRegionOnAPath) {
  GraphBuilder b;
  b.Data("x").Unk("d1", {"x"});
  Chain(b, "k", "d1", 6);
  b.Unk("d2", {"d1", "k6"}).Output({"d2"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto normal, RunPartition(b.Json()));
  EXPECT_EQ(normal->KindOf("k3"), "unknown");  // absorbed: on a path d1 → … → d2
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto kf, RunPartition(b.Json(), {{"npuplan.partition.mergeKnownFirst", "true"}}));
  EXPECT_EQ(kf->KindOf("k3"), "known");
  EXPECT_NE(kf->GraphOf("d1"), kf->GraphOf("d2"));
  // Its default limit is 6: a 5-node chain is demoted.
  GraphBuilder b5;
  b5.Data("x").Unk("d1", {"x"});
  Chain(b5, "k", "d1", 5);
  b5.Output({"k5"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto kf5, RunPartition(b5.Json(), {{"npuplan.partition.mergeKnownFirst", "true"}}));
  EXPECT_EQ(kf5->KindOf("k1"), "unknown");
}

// ge.topoSortingMode=3: runs of equal type in node order; a short static run
// between dynamic ones joins them.
TEST(DynamicShapePartitionTest, StableTopoModeMergesRunsInNodeOrder) {
  GraphBuilder b;
  b.Data("x").Unk("d1", {"x"}).Op("k1", {"x"}).Unk("d2", {"k1"});
  Chain(b, "s", "x", 4);
  b.Output({"d1", "d2", "s4"}).Option("ge.topoSortingMode", "3");  // the reader keeps this order
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->KindOf("k1"), "unknown");
  EXPECT_EQ(run->GraphOf("d1"), run->GraphOf("d2"));
  EXPECT_EQ(run->GraphOf("k1"), run->GraphOf("d2"));
  EXPECT_EQ(run->KindOf("s1"), "known");
  EXPECT_EQ(run->GraphOf("s1"), run->GraphOf("s4"));
}

// x → k1..k4 (known) → j (unknown, also reads d, control from k2);
// k4 → tail (known); u (unknown) ─ctrl→ tail.
TEST(DynamicShapePartitionTest, BuildsFramesThatPreserveDataAndControlEdges) {
  GraphBuilder b;
  b.Data("x").Unk("d", {"x"}).Unk("u", {"x"});
  Chain(b, "k", "x", 4);
  b.Node("j", "Add", {"d", "k4"}, {-1}, json::object(), {"k2"});
  b.Node("tail", "Add", {"k4"}, {4}, json::object(), {"u"});
  b.Output({"j", "tail", "u"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  const Model& m = run->plan.model;
  ASSERT_EQ(run->KindOf("j"), "unknown");
  ASSERT_EQ(run->KindOf("tail"), "known");
  ASSERT_EQ(run->GraphOf("tail"), run->GraphOf("k1"));
  const Node& j = m.node(m.FindNode("j"));
  // j's inputs: d (same subgraph) and a Data standing for k4.
  EXPECT_EQ(m.node(j.inputs[0].node).name, "d");
  const Node& data = m.node(j.inputs[1].node);
  EXPECT_EQ(data.type, "Data");
  const Graph& sg = m.graph(j.graph);
  const Node& call = m.node(sg.parent_node);
  EXPECT_EQ(call.type, "PartitionedCall");
  EXPECT_EQ(*GetBoolAttr(call.attrs, "_is_unknown_shape"), true);
  EXPECT_EQ(*GetBoolAttr(j.attrs, "_is_unknown_shape"), true);
  EXPECT_EQ(*GetBoolAttr(sg.attrs, "_memory_discontiguous_allocation"), true);
  int64_t pidx = *GetIntAttr(data.attrs, "_parent_node_index");
  const Node& producer = m.node(call.inputs[pidx].node);  // the known call
  EXPECT_EQ(producer.type, "PartitionedCall");
  EXPECT_EQ(*GetBoolAttr(producer.attrs, "_is_unknown_shape"), false);
  const Graph& known_sg = m.graph(producer.subgraphs[0]);
  const Node* netout = nullptr;
  for (NodeId id : known_sg.nodes) {
    if (m.node(id).type == "NetOutput") netout = &m.node(id);
  }
  ASSERT_NE(netout, nullptr);
  EXPECT_EQ(m.node(netout->inputs[call.inputs[pidx].index].node).name, "k4");
  EXPECT_EQ(netout->inputs.size(), producer.outputs.size());
  // k2 ─ctrl→ j now orders the two calls; u ─ctrl→ tail orders u's call first.
  EXPECT_THAT(call.control_inputs, ElementsAre(m.FindNode(producer.name)));
  const Node& ucall = m.node(m.graph(m.node(m.FindNode("u")).graph).parent_node);
  EXPECT_THAT(producer.control_inputs, ElementsAre(m.FindNode(ucall.name)));
  EXPECT_TRUE(j.control_inputs.empty());
  EXPECT_TRUE(m.node(m.FindNode("tail")).control_inputs.empty());
}

TEST(DynamicShapePartitionTest, DeduplicatesFrameInputsPerProducerAnchor) {
  GraphBuilder b;
  b.Data("x").Dyn("d1", {"x"}).Dyn("d2", {"x"}).Dyn("d3", {"d1", "d2", "x"}).Output({"d3"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  const Model& m = run->plan.model;
  ASSERT_EQ(run->plan.partition.subgraphs.size(), 1u);
  const Node& call = m.node(m.FindNode(run->plan.partition.subgraphs[0].call_node));
  ASSERT_EQ(call.inputs.size(), 1u);  // x once
  EXPECT_EQ(m.node(call.inputs[0].node).name, "x");
  EXPECT_EQ(call.outputs.size(), 1u);
  EXPECT_EQ(call.outputs[0].shape, std::vector<int64_t>({-1}));
  EXPECT_EQ(m.node(m.FindNode("out")).inputs[0].node, m.FindNode(call.name));
}

TEST(DynamicShapePartitionTest, InheritsCommonStreamLabelOnTheCallNode) {
  GraphBuilder b;
  b.Data("x").Unk("d", {"x"});
  b.Node("k1", "Add", {"d"}, {4}, {{"_stream_label", "s1"}}).Node("k2", "Add", {"k1"}, {4}, {{"_stream_label", "s1"}});
  b.Node("k3", "Add", {"k2"}, {4}, {{"_stream_label", "s1"}}).Node("k4", "Add", {"k3"}, {4}, {{"_stream_label", "s1"}});
  b.Output({"k4"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  const Model& m = run->plan.model;
  const Node& call = m.node(m.graph(m.node(m.FindNode("k1")).graph).parent_node);
  EXPECT_EQ(*GetStringAttr(call.attrs, "_stream_label"), "s1");
  const Node& dcall = m.node(m.graph(m.node(m.FindNode("d")).graph).parent_node);
  EXPECT_FALSE(HasAttr(dcall.attrs, "_stream_label"));
}

// P7: an If whose branch is dynamic is unknown; its branches move with it.
TEST(DynamicShapePartitionTest, PartitionsAroundNestedControlFlow) {
  GraphBuilder b;
  b.Data("x").Node("if", "If", {"x"});
  Chain(b, "k", "if", 4);
  b.Node("w", "While", {"k4"}).Output({"w"});
  b.Subgraph("then", "if").Node("tx", "Data", {}, {4}, {{"_parent_node_index", 0}}).Unk("td", {"tx"});
  b.Node("to", "NetOutput", {"td"});
  b.Subgraph("body", "w").Node("bx", "Data", {}, {4}, {{"_parent_node_index", 0}}).Op("bo1", {"bx"});
  b.Node("bo", "NetOutput", {"bo1"});
  b.Owns("if", "then").Owns("w", "body");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  const Model& m = run->plan.model;
  EXPECT_EQ(run->KindOf("if"), "unknown");
  EXPECT_EQ(run->KindOf("w"), "known");
  EXPECT_EQ(run->KindOf("k1"), "known");
  EXPECT_EQ(run->GraphOf("w"), run->GraphOf("k1"));
  // The branches are owned by the moved nodes and sit in their new graphs.
  GraphId then_g = m.FindGraph("then");
  EXPECT_EQ(m.graph(then_g).parent_graph, m.node(m.FindNode("if")).graph);
  EXPECT_EQ(run->plan.partition.unknown_nodes.at("if"), "subgraph contains unknown");
}

// GE's host-exec flag (ge.exec.placement=HOST): whole graph dynamic before
// anything else, even for a graph with no dynamic node.
TEST(DynamicShapePartitionTest, HostExecPlacementMakesWholeGraphDynamic) {
  GraphBuilder b;
  b.Data("x").Op("a", {"x"}).Output({"a"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json(), {{"ge.exec.placement", "HOST"}}));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kWholeDynamic);
  EXPECT_EQ(run->plan.partition.reason, "ge.exec.placement=HOST (host exec)");
  EXPECT_EQ(*GetBoolAttr(run->plan.model.root().attrs, "_is_unknown_shape"), true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto device, RunPartition(b.Json(), {{"ge.exec.placement", "DEVICE"}}));
  EXPECT_EQ(device->plan.partition.decision, PartitionDecision::kStatic);
  EXPECT_THAT(RunPartition(b.Json(), {{"ge.exec.placement", "host"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "option ge.exec.placement: invalid value 'host'"));
}

// GE CtrlEdgeTransfer: before a graph is cut, a Const inside a subgraph hands
// its incoming control edges to its consumers; nothing moves when no cut happens.
TEST(DynamicShapePartitionTest, TransfersConstControlEdgesInSubgraphsBeforeCutting) {
  auto build = [](bool dynamic) {
    GraphBuilder b;
    b.Data("x");
    if (dynamic) {
      b.Unk("d", {"x"});
    } else {
      b.Op("d", {"x"});
    }
    b.Node("if", "If", {"d"}).Output({"if"});
    b.Subgraph("then", "if").Node("tx", "Data", {}, {4}, {{"_parent_node_index", 0}}).Op("tp", {"tx"});
    b.Node("tc", "Const", {}, {4}, json::object(), {"tp"}).Op("tu", {"tx", "tc"}).Node("tv", "Identity", {}, {4}, json::object(), {"tc"});
    b.Node("to", "NetOutput", {"tu", "tv"});
    b.Owns("if", "then");
    return b.Json();
  };
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(build(true)));
  const Model& m = run->plan.model;
  auto ctrl_names = [&](std::string_view node) {
    std::vector<std::string> names;
    for (NodeId p : m.node(m.FindNode(node)).control_inputs) names.push_back(m.node(p).name);
    return names;
  };
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kPartitioned);
  EXPECT_TRUE(ctrl_names("tc").empty());
  EXPECT_THAT(ctrl_names("tu"), ElementsAre("tp"));
  EXPECT_THAT(ctrl_names("tv"), ElementsAre("tc", "tp"));  // its own edge from the Const stays
  EXPECT_EQ(run->stats.Get(kPass, "ctrl_edges_transferred"), 2);
  EXPECT_THAT(run->LogText(), HasSubstr("CtrlEdgeTransferred const=tc from=tp to=tu"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto stat, RunPartition(build(false)));
  EXPECT_EQ(stat->plan.partition.decision, PartitionDecision::kStatic);
  const Model& sm = stat->plan.model;
  ASSERT_EQ(sm.node(sm.FindNode("tc")).control_inputs.size(), 1u);
  EXPECT_TRUE(sm.node(sm.FindNode("tu")).control_inputs.empty());
}

// GE GetMultiBatchIndependCompileGraphs: with _enable_dynamic_batch, each
// branch of a Case with _insert_by_mbatch is partitioned like a root of its
// own; a branch without an (a)-(d) node stays whole. Without the flags the
// branches move with their owner uncut.
TEST(DynamicShapePartitionTest, PartitionsMultiBatchCaseBranchesAsCompileGraphs) {
  auto build = [](bool mbatch) {
    GraphBuilder b;
    if (mbatch) b.GraphAttr("_enable_dynamic_batch", true);
    b.Data("x").Node("case", "Case", {"x"}, {4}, mbatch ? json{{"_insert_by_mbatch", true}} : json::object());
    b.Output({"case"});
    b.Subgraph("b0", "case").Node("b0x", "Data", {}, {4}, {{"_parent_node_index", 0}}).Unk("b0d", {"b0x"});
    Chain(b, "b0k", "b0d", 4);
    b.Node("b0o", "NetOutput", {"b0k4"});
    b.Subgraph("b1", "case").Node("b1x", "Data", {}, {4}, {{"_parent_node_index", 0}}).Op("b1a", {"b1x"});
    b.Node("b1o", "NetOutput", {"b1a"});
    b.Owns("case", "b0").Owns("case", "b1");
    return b.Json();
  };
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(build(true)));
  const Model& m = run->plan.model;
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kPartitioned);
  EXPECT_THAT(run->plan.partition.reason, HasSubstr("1 multi-batch branch(es) partitioned"));
  EXPECT_EQ(run->KindOf("case"), "unknown");
  EXPECT_EQ(run->KindOf("b0d"), "unknown");
  EXPECT_EQ(run->KindOf("b0k1"), "known");
  EXPECT_EQ(run->GraphOf("b0d"), "b0_sub_0_unknow");
  EXPECT_EQ(run->GraphOf("b0k4"), "b0_sub_1_know");
  EXPECT_EQ(run->GraphOf("b0x"), "b0");  // DATA stays in the branch
  EXPECT_EQ(run->GraphOf("b1a"), "b1");
  EXPECT_EQ(*GetBoolAttr(m.graph(m.FindGraph("b0")).attrs, "_dynamic_shape_partitioned"), true);
  EXPECT_EQ(*GetBoolAttr(m.graph(m.FindGraph("b1")).attrs, "_dynamic_shape_partitioned"), false);
  // The branch's call nodes got names distinct from the root's.
  EXPECT_EQ(m.node(m.graph(m.FindGraph("b0_sub_0_unknow")).parent_node).name, "PartitionedCall_0_1");
  EXPECT_THAT(run->LogText(), HasSubstr("PartitionDecision graph=b1 decision=static"));
  EXPECT_THAT(run->LogText(), HasSubstr("PartitionDecision graph=b0 decision=partitioned"));
  EXPECT_EQ(run->stats.Get(kPass, "branch_decision_partitioned"), 1);
  EXPECT_EQ(run->plan.partition.cluster_counts.at("known"), 1);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto plain, RunPartition(build(false)));
  EXPECT_EQ(plain->GraphOf("b0d"), "b0");
  EXPECT_EQ(plain->GraphOf("b0k1"), "b0");
}

TEST(DynamicShapePartitionTest, RejectsMalformedMultiBatchAttribute) {
  GraphBuilder b;
  b.GraphAttr("_enable_dynamic_batch", true);
  b.Data("x").Unk("d", {"x"}).Node("case", "Case", {"d"}, {4}, {{"_insert_by_mbatch", "yes"}}).Output({"case"});
  EXPECT_THAT(RunPartition(b.Json()),
              StatusIs(absl::StatusCode::kInvalidArgument, "node 'case': attribute _insert_by_mbatch must be a bool"));
}

// GE DynamicDataFlowPartitionerPass: Stack ops sharing a _data_flow_handle
// that end up split between an unknown and a known cluster are all forced
// unknown and the graph is re-clustered; an unsplit group is left alone.
TEST(DynamicShapePartitionTest, ForcesSplitDataFlowGroupsUnknownAndReclusters) {
  auto build = [](bool split) {
    GraphBuilder b;
    b.Data("x").Unk("d", {"x"});
    b.Op("a1", {"x"}).Op("a2", {"a1"}).Node("pop", "StackPop", {"a2"}, {4}, {{"_data_flow_handle", 1}});
    b.Op("a3", {"pop"}).Op("a4", {"a3"});
    // split: the push reads the unknown node; else it ends the known chain.
    b.Node("push", "StackPush", {split ? "d" : "a4"}, {4}, {{"_data_flow_handle", 1}});
    b.Output({"a4", "push", "d"});
    return b.Json();
  };
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(build(true)));
  EXPECT_EQ(run->KindOf("push"), "unknown");
  EXPECT_EQ(run->KindOf("pop"), "unknown");
  EXPECT_EQ(run->KindOf("a1"), "unknown");  // what is left of the chain is below the limit
  const Model& m = run->plan.model;
  EXPECT_EQ(*GetBoolAttr(m.node(m.FindNode("pop")).attrs, "_force_unknown_shape"), true);
  EXPECT_EQ(run->stats.Get(kPass, "data_flow_forced_nodes"), 2);
  EXPECT_EQ(run->stats.Get(kPass, "data_flow_rounds"), 1);
  EXPECT_THAT(run->LogText(), HasSubstr("DataFlowForcedUnknown node=pop handle=1"));
  EXPECT_THAT(run->LogText(), HasSubstr("Mark node[pop,StackPop] attr[_is_unknown_shape] to 1. reason=\"data-flow handle\""));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto together, RunPartition(build(false)));
  EXPECT_EQ(together->KindOf("pop"), "known");
  EXPECT_EQ(together->stats.Get(kPass, "data_flow_forced_nodes"), 0);
  GraphBuilder bad;
  bad.Data("x").Unk("d", {"x"}).Node("pop", "StackPop", {"d"}, {4}, {{"_data_flow_handle", "h"}}).Output({"pop"});
  EXPECT_THAT(RunPartition(bad.Json()),
              StatusIs(absl::StatusCode::kInvalidArgument, "node 'pop': attribute _data_flow_handle must be an int"));
}

TEST(DynamicShapePartitionTest, FillsThePlanAndCountsStatistics) {
  GraphBuilder b;
  b.Data("x").Unk("d", {"x"});
  Chain(b, "k", "d", 4);
  b.Output({"k4"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
  EXPECT_EQ(run->plan.partition.decision, PartitionDecision::kPartitioned);
  EXPECT_TRUE(Has(run->plan.established, IrProperty::kPartitioned));
  EXPECT_EQ(run->stats.Get(kPass, "subgraphs_known"), 1);
  EXPECT_EQ(run->stats.Get(kPass, "subgraphs_unknown"), 1);
  EXPECT_EQ(run->stats.Get(kPass, "decision_partitioned"), 1);
  EXPECT_EQ(run->stats.Get(kPass, "known_merges"), 3);
  EXPECT_EQ(*GetBoolAttr(run->plan.model.root().attrs, "_dynamic_shape_partitioned"), true);
  EXPECT_THAT(run->LogText(), HasSubstr("PartitionDecision decision=partitioned"));
  EXPECT_THAT(run->LogText(), HasSubstr("Mark node[k1,Add] attr[_is_unknown_shape] to 0. reason=known before=0 after=0"));
  EXPECT_THAT(run->LogText(), HasSubstr("Mark node[d,Add] attr[_is_unknown_shape] to 1. reason=force_unknown "
                                        "before=1 after=1"));
}

TEST(DynamicShapePartitionTest, IsDeterministic) {
  GraphBuilder b;
  b.Data("x").Unk("d1", {"x"}).Const("c");
  Chain(b, "k", "d1", 4);
  b.Op("m1", {"x", "c"}).Op("m2", {"m1"}).Unk("d2", {"m2", "k4", "d1"});
  Chain(b, "t", "d2", 2);
  b.Node("h", "HostCpuOp", {"t2"}).Output({"h", "k2"});
  std::string first_graph, first_log;
  for (int i = 0; i < 20; ++i) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(auto run, RunPartition(b.Json()));
    std::string g = WriteGraphJson(run->plan.model);
    std::string l = run->log.ToJsonLines();
    if (i == 0) {
      first_graph = g;
      first_log = l;
    } else {
      ASSERT_EQ(g, first_graph);
      ASSERT_EQ(l, first_log);
    }
  }
}

}  // namespace
}  // namespace npuplan::partition
