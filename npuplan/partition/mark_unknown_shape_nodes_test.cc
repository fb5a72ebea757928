#include "npuplan/partition/mark_unknown_shape_nodes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "npuplan/partition/partition_test_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::partition {
namespace {

using ::npuplan::partition::testing::GraphBuilder;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using nlohmann::json;

absl::StatusOr<MarkResult> Mark(const GraphBuilder& b, const std::map<std::string, std::string>& opts = {},
                                Model* out = nullptr) {
  NPUPLAN_ASSIGN_OR_RETURN(Model m, ParseGraphJson(b.Json(), "<test>"));
  CompileOptions o = CompileOptions::FromModel(m, opts, false);
  auto r = ComputeUnknownShapeMarks(m, o);
  if (out) *out = std::move(m);
  return r;
}

std::string ReasonOf(const Model& m, const MarkResult& r, std::string_view name) {
  return std::string(ReasonText(r.reason[m.FindNode(name).index()]));
}

// Rule (a) on random graphs: nodes with up to 9 outputs (past the per-node
// bit summary), inputs naming any output index (some past the producer's
// outputs), graph order shuffled (producers read after their consumers):
// the marks equal a direct check of the tensors.
TEST(MarkUnknownShapeNodesTest, DynamicShapeRuleMatchesADirectCheckOnRandomGraphs) {
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    Model m;
    const int n = 1 + static_cast<int>(rng() % 120);
    std::vector<std::vector<bool>> dynamic(n);
    for (int i = 0; i < n; ++i) {
      Node node;
      node.name = "n" + std::to_string(i);
      node.type = "Relu";
      node.engine = "AIcoreEngine";
      const int outs = static_cast<int>(rng() % 10);
      for (int k = 0; k < outs; ++k) {
        const bool dyn = rng() % 9 == 0;
        dynamic[i].push_back(dyn);
        node.outputs.push_back(TensorDesc{{dyn ? int64_t{-1} : int64_t{4}}, "float16"});
      }
      m.AddNode(kRootGraph, std::move(node));
    }
    for (int i = 0; i < n; ++i) {
      for (int e = static_cast<int>(rng() % 4); e > 0; --e) {
        m.node(NodeId(i)).inputs.push_back(
            OutputRef{NodeId(static_cast<int32_t>(rng() % n)), static_cast<int32_t>(rng() % 10)});
      }
    }
    std::shuffle(m.root().nodes.begin(), m.root().nodes.end(), rng);
    CompileOptions o = CompileOptions::FromModel(m, {}, false);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, ComputeUnknownShapeMarks(m, o));
    for (int i = 0; i < n; ++i) {
      bool want = false;
      for (bool d : dynamic[i]) want |= d;
      for (const OutputRef& in : m.node(NodeId(i)).inputs) {
        const auto& d = dynamic[in.node.index()];
        want |= in.index >= 0 && static_cast<size_t>(in.index) < d.size() && d[in.index];
      }
      EXPECT_EQ(r.reason[i], want ? MarkReason::kDynamicShape : MarkReason::kKnown)
          << "round " << round << " node " << i;
    }
  }
}

TEST(MarkUnknownShapeNodesTest, MarksNodeWithDynamicOutput) {
  GraphBuilder b;
  b.Data("x").Dyn("a", {"x"}).Op("b", {"x"}).Output({"a", "b"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "a"), "dynamic shape");
  EXPECT_EQ(ReasonOf(m, r, "b"), "known");
  EXPECT_EQ(ReasonOf(m, r, "x"), "known");
  EXPECT_EQ(r.trigger_count, 2);  // a, and the NetOutput reading a's -1 tensor
}

TEST(MarkUnknownShapeNodesTest, MarksConsumerOfDynamicTensorAndUnknownRank) {
  GraphBuilder b;
  b.Data("x", {-2}).Op("a", {"x"}).Output({"a"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "x"), "dynamic shape");
  EXPECT_EQ(ReasonOf(m, r, "a"), "dynamic shape");  // its input has rank -2
}

TEST(MarkUnknownShapeNodesTest, MarksForceUnknownAndIsUnknownShape) {
  GraphBuilder b;
  b.Data("x").Node("a", "Add", {"x"}, {4}, {{"_force_unknown_shape", true}});
  b.Node("c", "Add", {"a"}, {4}, {{"_is_unknown_shape", true}}).Output({"c"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "a"), "force_unknown");
  EXPECT_EQ(ReasonOf(m, r, "c"), "force_unknown");
}

TEST(MarkUnknownShapeNodesTest, MarksHostCpuEngineWithoutEnteringTheFlow) {
  GraphBuilder b;
  b.Data("x").Node("h", "HostCpuOp", {"x"}).Output({"h"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "h"), "HostCpu engine");
  EXPECT_EQ(r.trigger_count, 0);
}

TEST(MarkUnknownShapeNodesTest, MarksTilingDependOpWithNonConstTilingInput) {
  GraphBuilder b;
  b.Data("x").Const("k").Node("t1", "Reshape2", {"x", "x"}, {4}, {{"_tiling_depend_inputs", {1}}});
  b.Node("t2", "Reshape2", {"x", "k"}, {4}, {{"_tiling_depend_inputs", {1}}});
  b.Node("t3", "Foo", {"x"}, {4}, {{"_dynamic_tiling_depend_op", true}}).Output({"t1", "t2", "t3"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "t1"), "tiling depend not sinkable");
  EXPECT_EQ(ReasonOf(m, r, "t2"), "known");  // tiling input is a Const
  EXPECT_EQ(ReasonOf(m, r, "t3"), "tiling depend not sinkable");
}

TEST(MarkUnknownShapeNodesTest, KeepsTilingDependOpStaticWhenTilingSinks) {
  GraphBuilder b;
  b.Data("x").Node("t1", "Reshape2", {"x", "x"}, {4}, {{"_tiling_depend_inputs", {1}}}).Output({"t1"});
  Model m;
  // Both the option and the device capability are needed.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult only_option, Mark(b, {{"ge.tiling_schedule_optimize", "1"}}, &m));
  EXPECT_EQ(ReasonOf(m, only_option, "t1"), "tiling depend not sinkable");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      MarkResult sink, Mark(b, {{"ge.tiling_schedule_optimize", "1"}, {"npuplan.device.tilingSink", "true"}}, &m));
  EXPECT_EQ(ReasonOf(m, sink, "t1"), "known");
}

TEST(MarkUnknownShapeNodesTest, MarksAddrRefreshFalse) {
  GraphBuilder b;
  b.Data("x").Node("a", "Add", {"x"}, {4}, {{"_is_support_addr_refresh", false}});
  b.Node("c", "Add", {"a"}, {4}, {{"_is_support_addr_refresh", true}}).Output({"c"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "a"), "_is_support_addr_refresh=false");
  EXPECT_EQ(ReasonOf(m, r, "c"), "known");
}

TEST(MarkUnknownShapeNodesTest, MarksOwnerOfUnknownSubgraphThroughTwoLevels) {
  GraphBuilder b;
  b.Data("x").Node("w", "While", {"x"}).Output({"w"});
  b.Subgraph("body", "w").Node("bx", "Data", {}, {4}, {{"_parent_node_index", 0}});
  b.Node("inner_if", "If", {"bx"}).Node("bo", "NetOutput", {"inner_if"});
  b.Subgraph("then", "inner_if").Node("tx", "Data", {}, {4}, {{"_parent_node_index", 0}});
  b.Dyn("td", {"tx"}).Node("to", "NetOutput", {"td"});
  b.Owns("w", "body").Owns("inner_if", "then");
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "td"), "dynamic shape");
  EXPECT_EQ(ReasonOf(m, r, "inner_if"), "subgraph contains unknown");
  EXPECT_EQ(ReasonOf(m, r, "w"), "subgraph contains unknown");
}

TEST(MarkUnknownShapeNodesTest, PullsConstInputsOfUnknownNodesIn) {
  GraphBuilder b;
  b.Data("x").Const("k1").Const("k2").Dyn("a", {"x", "k1"}).Op("c", {"x", "k2"}).Output({"a", "c"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "k1"), "const input of unknown");
  EXPECT_EQ(ReasonOf(m, r, "k2"), "known");
}

json NoTilingAttrs() {
  return {{"_op_tiling_inline_engine", {"AIcoreEngine"}},
          {"_op_export_shape_engine", {"AIcoreEngine"}},
          {"_op_max_shape", "8"}};
}

TEST(MarkUnknownShapeNodesTest, KeepsNoTilingNodeStaticWhenNothingElseIsDynamic) {
  GraphBuilder b;
  b.Data("x").Node("a", "Add", {"x"}, {-1}, NoTilingAttrs()).Output({"x"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "a"), "known");
  EXPECT_TRUE(r.no_tiling[m.FindNode("a").index()]);
  EXPECT_EQ(r.trigger_count, 0);
  GraphBuilder b2;  // without the engine lists it cannot run no-tiling
  b2.Data("x").Node("c", "Add", {"x"}, {-1}, {{"_op_max_shape", "8"}}).Output({"x"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r2, Mark(b2, {}, &m));
  EXPECT_EQ(ReasonOf(m, r2, "c"), "dynamic shape");
}

// GE's IsNodeSupportNoTiling skips the engine checks for Data and NetOutput:
// a NetOutput reading a no-tiling node's dynamic tensor does not become a
// dynamic node, so it neither reverts its producer's no-tiling nor makes the
// graph enter the partition flow (ge-reference §7).
TEST(MarkUnknownShapeNodesTest, NetOutputIsExemptFromTheNoTilingEngineChecks) {
  GraphBuilder b;
  b.Data("x").Node("a", "Add", {"x"}, {-1}, NoTilingAttrs()).Output({"a"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "out"), "known");
  EXPECT_EQ(ReasonOf(m, r, "a"), "known");
  EXPECT_TRUE(r.no_tiling[m.FindNode("a").index()]);
  EXPECT_TRUE(r.no_tiling[m.FindNode("out").index()]);
  EXPECT_EQ(r.trigger_count, 0);
  EXPECT_EQ(r.no_tiling_op_count, 1);  // a; the NetOutput does not count (GE has_no_tiling_)
}

// Data is exempt from the engine checks too, but keeps the shape-bound check
// on its dynamic output.
TEST(MarkUnknownShapeNodesTest, DataIsExemptFromTheEngineChecksButNeedsABound) {
  GraphBuilder bounded;
  bounded.Node("x", "Data", {}, {-1}, {{"_op_max_shape", "8"}}).Output({"x"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(bounded, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "x"), "known");
  EXPECT_TRUE(r.no_tiling[m.FindNode("x").index()]);
  EXPECT_EQ(r.no_tiling_op_count, 0);
  GraphBuilder unbounded;
  unbounded.Data("x", {-1}).Output({"x"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r2, Mark(unbounded, {}, &m));
  EXPECT_EQ(ReasonOf(m, r2, "x"), "dynamic shape");
}

TEST(MarkUnknownShapeNodesTest, RevertsNoTilingWhenAnUnknownNodeCoexists) {
  GraphBuilder b;
  b.Data("x").Node("a", "Add", {"x"}, {-1}, NoTilingAttrs());
  b.Node("f", "Add", {"x"}, {4}, {{"_force_unknown_shape", true}}).Output({"a", "f"});
  Model m;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MarkResult r, Mark(b, {}, &m));
  EXPECT_EQ(ReasonOf(m, r, "a"), "dynamic shape (no-tiling reverted)");
  EXPECT_EQ(r.no_tiling_count, 0);
}

TEST(MarkUnknownShapeNodesTest, RejectsMalformedAttributesNamingTheNode) {
  GraphBuilder b1;
  b1.Data("x").Node("a", "Add", {"x"}, {4}, {{"_force_unknown_shape", "yes"}});
  EXPECT_THAT(Mark(b1), StatusIs(absl::StatusCode::kInvalidArgument, "node 'a' (Add): attribute _force_unknown_shape"));
  GraphBuilder b2;
  b2.Data("x").Node("t", "Foo", {"x"}, {4}, {{"_tiling_depend_inputs", {3}}});
  EXPECT_THAT(Mark(b2), StatusIs(absl::StatusCode::kInvalidArgument, "names input 3 but the node has 1 data inputs"));
  GraphBuilder b3;
  b3.Data("x").Node("s", "Foo", {"x"}, {-1}, {{"_shape_range", {1, 2, 3}}});
  EXPECT_THAT(Mark(b3), StatusIs(absl::StatusCode::kInvalidArgument, "_shape_range"));
}

TEST(MarkUnknownShapeNodesTest, PassRecordsReasonsInThePlanAndCountsRules) {
  GraphBuilder b;
  b.Data("x").Dyn("a", {"x"}).Node("h", "HostCpuOp", {"x"}).Output({"a", "h"});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseGraphJson(b.Json(), "<test>"));
  Plan plan;
  plan.model = std::move(m);
  plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  CompileOptions o;
  DecisionLog log(true);
  Statistics stats;
  PassContext ctx{o, log, stats};
  MarkUnknownShapeNodes pass;
  ASSERT_THAT(pass.Run(plan, ctx), IsOk());
  EXPECT_EQ(plan.partition.unknown_nodes.at("a"), "dynamic shape");
  EXPECT_EQ(plan.partition.unknown_nodes.at("h"), "HostCpu engine");
  EXPECT_EQ(stats.Get("mark-unknown-shape-nodes", "rule_dynamic_shape"), 2);  // a and out
  EXPECT_EQ(stats.Get("mark-unknown-shape-nodes", "rule_host_cpu"), 1);
  ASSERT_EQ(log.WithKeyword("UnknownShapeNode").size(), 3u);
  EXPECT_EQ(log.WithKeyword("UnknownShapeNode")[0]->ToLine(),
            "[mark-unknown-shape-nodes] UnknownShapeNode node=a type=Add reason=\"dynamic shape\"");
}

}  // namespace
}  // namespace npuplan::partition
