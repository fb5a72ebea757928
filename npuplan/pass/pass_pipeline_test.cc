#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/pass/pass.h"

#include "npuplan/ir/topo_sort.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

constexpr char kChain[] = R"json({"nodes": [
  {"name": "a", "type": "Data", "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Relu", "inputs": ["a:0"], "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "NetOutput", "inputs": ["b:0"]}]})json";

// Puts every node on stream `stream_` and logs one decision per node.
class AssignAll : public Pass {
 public:
  explicit AssignAll(int64_t stream) : stream_(stream) {}
  std::string_view name() const override { return "assign-all"; }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kLogicalStreams); }
  bool preserves_structure() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override {
    for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
      Node& n = plan.model.node(NodeId(static_cast<int32_t>(i)));
      n.stream_id = stream_;
      ctx.log.Record(name(), "StreamAssigned", "", Field("node", n.name), Field("stream", stream_));
      ctx.stats.Add(name(), "nodes");
    }
    plan.streams.logical = stream_ + 1;  // what a logical-streams pass records
    return true;
  }

 private:
  int64_t stream_;
};

// Adds a control edge although it claims to preserve structure.
class SneakyRewire : public Pass {
 public:
  std::string_view name() const override { return "sneaky-rewire"; }
  bool preserves_structure() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext&) override {
    plan.model.node(plan.model.FindNode("c")).control_inputs.push_back(plan.model.FindNode("a"));
    return true;
  }
};

// Swaps two independent nodes of the root's order (still topological).
class Reorder : public Pass {
 public:
  explicit Reorder(bool declared) : declared_(declared) {}
  std::string_view name() const override { return "reorder"; }
  bool preserves_structure() const override { return true; }
  bool may_reorder() const override { return declared_; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext&) override {
    Graph& root = plan.model.root();
    for (size_t i = 0; i + 1 < root.nodes.size(); ++i) {
      const Node& next = plan.model.node(root.nodes[i + 1]);
      bool depends = false;
      for (const OutputRef& in : next.inputs) depends = depends || in.node == root.nodes[i];
      for (NodeId c : next.control_inputs) depends = depends || c == root.nodes[i];
      if (depends) continue;
      std::swap(root.nodes[i], root.nodes[i + 1]);
      RenumberTopoIds(plan.model);
      return true;
    }
    return false;
  }

 private:
  bool declared_;
};

class NeedsEvents : public Pass {
 public:
  std::string_view name() const override { return "needs-events"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kSyncEvents); }
  absl::StatusOr<bool> Run(Plan&, PassContext&) override { return false; }
};

class Fails : public Pass {
 public:
  std::string_view name() const override { return "fails"; }
  absl::StatusOr<bool> Run(Plan&, PassContext&) override {
    return absl::InvalidArgumentError("node 'b': rule X violated");
  }
};

class PassPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = ParseVerifiedGraph(kChain);
    ASSERT_TRUE(m.ok());
    plan_.model = std::move(m).value();
    plan_.established = static_cast<IrProperties>(IrProperty::kTopoSorted);  // as Compile starts
    plan_.EnsureNodeVectors();
  }
  Plan plan_;
  CompileOptions options_;
  DecisionLog log_{/*keep=*/true};
  Statistics stats_;
};

TEST_F(PassPipelineTest, RunsNestedPipelinesAndRecordsProperties) {
  PassPipeline outer("outer");
  auto& inner = outer.AddPass<PassPipeline>("inner");
  inner.AddPass<AssignAll>(0);
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.verify_each = true;
  auto changed = outer.Run(plan_, ctx);
  ASSERT_THAT(changed, IsOk());
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(Has(plan_.established, IrProperty::kLogicalStreams));
  EXPECT_EQ(log_.WithKeyword("StreamAssigned").size(), 3u);
  EXPECT_EQ(log_.remarks()[0].ToLine(), "[assign-all] StreamAssigned node=a stream=0");
  EXPECT_EQ(stats_.Get("assign-all", "nodes"), 3);
  EXPECT_EQ(outer.Describe(), "inner(assign-all)");
}

TEST_F(PassPipelineTest, VerifyEachCatchesABrokenStageFact) {
  PassPipeline p("p");
  p.AddPass<AssignAll>(2);  // streams 0 and 1 unused: a hole
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.verify_each = true;
  EXPECT_THAT(p.Run(plan_, ctx), StatusIs(absl::StatusCode::kInternal, "(after pass 'assign-all')"));
}

TEST_F(PassPipelineTest, FrozenGraphViolationIsReported) {
  PassPipeline p("p");
  p.AddPass<SneakyRewire>();
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.verify_each = true;
  EXPECT_THAT(p.Run(plan_, ctx), StatusIs(absl::StatusCode::kInternal, "verifier[frozen-graph]"));
}

TEST_F(PassPipelineTest, ReorderingIsAllowedOnlyWhereDeclared) {
  auto m = ParseVerifiedGraph(R"json({"nodes": [
    {"name": "a", "type": "Data", "outputs": [{"shape": [1]}]},
    {"name": "d", "type": "Data", "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "inputs": ["a:0", "d:0"], "outputs": [{"shape": [1]}]}]})json");
  ASSERT_TRUE(m.ok());
  plan_.model = std::move(m).value();
  plan_.EnsureNodeVectors();
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.verify_each = true;
  {
    PassPipeline p("p");
    p.AddPass<Reorder>(/*declared=*/false);
    EXPECT_THAT(p.Run(plan_, ctx), StatusIs(absl::StatusCode::kInternal, "verifier[frozen-order]: pass 'reorder'"));
  }
  const uint64_t structure = StructuralFingerprint(plan_.model), order = OrderFingerprint(plan_.model);
  PassPipeline p("p");
  p.AddPass<Reorder>(/*declared=*/true);
  EXPECT_THAT(p.Run(plan_, ctx), IsOk());
  EXPECT_EQ(StructuralFingerprint(plan_.model), structure);  // the structure fingerprint ignores the order
  EXPECT_NE(OrderFingerprint(plan_.model), order);
}

TEST_F(PassPipelineTest, MissingRequiredStageIsAFailedPrecondition) {
  PassPipeline p("p");
  p.AddPass<NeedsEvents>();
  PassContext ctx{options_, log_, stats_};
  EXPECT_THAT(p.Run(plan_, ctx), StatusIs(absl::StatusCode::kFailedPrecondition, "sync-events"));
}

TEST_F(PassPipelineTest, ErrorsNameThePass) {
  PassPipeline p("p");
  p.AddPass<Fails>();
  PassContext ctx{options_, log_, stats_};
  EXPECT_THAT(p.Run(plan_, ctx),
              StatusIs(absl::StatusCode::kInvalidArgument, "node 'b': rule X violated (after pass 'fails')"));
}

TEST_F(PassPipelineTest, AfterPassHookSeesEveryLeafPass) {
  PassPipeline p("p");
  p.AddPass<AssignAll>(0);
  p.AddPass<AssignAll>(0);
  std::vector<std::string> seen;
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.after_pass = [&](int seq, std::string_view name, const Plan&) {
    seen.push_back(std::to_string(seq) + ":" + std::string(name));
    return absl::OkStatus();
  };
  ASSERT_THAT(p.Run(plan_, ctx), IsOk());
  EXPECT_THAT(seen, ::testing::ElementsAre("1:assign-all", "2:assign-all"));
}

TEST(DecisionLogTest, JsonLinesCarryKeywordAndFields) {
  DecisionLog log(true);
  log.Record("dynamic-shape-partition", "MarkNode", "Mark node[a,Relu] attr[_is_unknown_shape] to 1.",
             Field("reason", std::string("dynamic shape")));
  EXPECT_EQ(log.remarks()[0].ToLine(),
            "[dynamic-shape-partition] MarkNode Mark node[a,Relu] attr[_is_unknown_shape] to 1. "
            "reason=\"dynamic shape\"");
  EXPECT_EQ(log.ToJsonLines(),
            "{\"pass\":\"dynamic-shape-partition\",\"keyword\":\"MarkNode\",\"text\":\"Mark "
            "node[a,Relu] attr[_is_unknown_shape] to 1.\",\"fields\":{\"reason\":\"dynamic shape\"}}\n");
}

TEST(DecisionLogTest, DisabledLogRecordsNothing) {
  DecisionLog log;
  log.Record("p", "K", "", Field("x", 1));
  EXPECT_TRUE(log.remarks().empty());
}

}  // namespace
}  // namespace npuplan
