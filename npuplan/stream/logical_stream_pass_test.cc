// The logical-stream sub-passes as registered passes: the chain runs through
// a PassPipeline, so the pipeline's after-each checks follow every sub-pass
// on every graph.
#include "npuplan/stream/logical_stream_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npuplan/stream/node_stream_update_pass.h"
#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {

using ::npuplan::stream::testing::ParseStreamTestGraph;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// A root with a PartitionedCall whose body is a second known-shape graph.
constexpr char kTwoGraphs[] = R"json({"nodes": [
  {"name": "x", "type": "Data"},
  {"name": "a", "type": "Relu", "inputs": ["x"]},
  {"name": "call", "type": "PartitionedCall", "inputs": ["a"], "subgraphs": ["body"]}],
  "subgraphs": [{"name": "body", "parent": "call", "nodes": [
    {"name": "b0", "type": "Data", "attrs": {"_parent_node_index": 0}},
    {"name": "b1", "type": "Relu", "inputs": ["b0"]}]}]})json";

// Renames a node: a change of structure no logical-stream pass may make.
class RenameTestPass final : public LogicalStreamPass {
 public:
  std::string_view name() const override { return "rename-test-pass"; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override {
    ctx.model.node(ctx.model.graph(graph.graph).nodes.back()).name += "_renamed";
    return true;
  }
};

class FailTestPass final : public LogicalStreamPass {
 public:
  std::string_view name() const override { return "fail-test-pass"; }
  absl::StatusOr<bool> Run(GraphState&, AssignContext&) override {
    return absl::InvalidArgumentError("no stream fits");
  }
};

struct Harness {
  Plan plan;
  CompileOptions options;
  DecisionLog log;
  Statistics stats;
  PassContext ctx{options, log, stats};

  explicit Harness(bool verify_each) {
    plan.model = ParseStreamTestGraph(kTwoGraphs).value();
    plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
    plan.EnsureNodeVectors();
    ctx.instrumentation.verify_each = verify_each;
  }
  absl::Status Run(std::vector<std::unique_ptr<LogicalStreamChainPass>> chain) {
    PassPipeline p("test");
    p.AddPass(std::make_unique<LogicalStreamAssignment>(std::move(chain)));
    return p.Run(plan, ctx).status();
  }
};

std::vector<std::unique_ptr<LogicalStreamChainPass>> Chain(
    std::vector<std::unique_ptr<LogicalStreamPass>> passes) {
  std::vector<std::unique_ptr<LogicalStreamChainPass>> chain;
  for (auto& p : passes) chain.push_back(std::make_unique<LogicalStreamChainPass>(std::move(p)));
  return chain;
}

TEST(LogicalStreamChainPassTest, TheRegisteredChainsAreGEsInOrder) {
  std::vector<std::string> multi, single;
  const auto multi_chain = DefaultChain(false), single_chain = DefaultChain(true);
  for (const auto& p : multi_chain->passes()) multi.emplace_back(p->name());
  for (const auto& p : single_chain->passes()) single.emplace_back(p->name());
  EXPECT_THAT(multi, ElementsAre("update-for-mde-group-pass", "assign-by-label-pass",
                                 "independent-stream-pass", "assign-by-dependency-pass",
                                 "node-stream-update-pass", "update-for-parallel-group-pass",
                                 "all-reduce-parallel-pass", "update-for-skipped-engine-pass",
                                 "optimize-ineffective-multi-stream-pass"));
  EXPECT_THAT(single, ElementsAre("single-stream-pass", "node-stream-update-pass",
                                  "update-for-skipped-engine-pass"));
  for (std::string_view name : ChainPassNames()) {
    auto pass = MakeChainPass(name);
    ASSERT_NE(pass, nullptr);
    EXPECT_EQ(pass->name(), name);
  }
  EXPECT_EQ(MakeChainPass("memory-planning"), nullptr);
}

TEST(LogicalStreamChainPassTest, OutsideTheDriverItIsAFailedPrecondition) {
  Harness h(/*verify_each=*/false);
  LogicalStreamChainPass pass(std::make_unique<NodeStreamUpdatePass>());
  EXPECT_THAT(pass.Run(h.plan, h.ctx),
              StatusIs(absl::StatusCode::kFailedPrecondition, "inside logical-stream-assignment"));
}

TEST(LogicalStreamChainPassTest, EverySubPassOnEveryGraphReachesTheAfterPassHook) {
  Harness h(/*verify_each=*/true);
  std::vector<std::string> seen;
  h.ctx.instrumentation.after_pass = [&](int seq, std::string_view pass, const Plan&) {
    seen.push_back(std::to_string(seq) + " " + std::string(pass));
    return absl::OkStatus();
  };
  PassPipeline p("test");
  p.AddPass<LogicalStreamAssignment>(h.options);
  ASSERT_THAT(p.Run(h.plan, h.ctx), IsOk());
  std::vector<std::string> want;
  int seq = 0;
  const auto chain = DefaultChain(false);
  for (int graph = 0; graph < 2; ++graph) {
    for (const auto& pass : chain->passes())
      want.push_back(std::to_string(++seq) + " " + std::string(pass->name()));
  }
  want.push_back(std::to_string(++seq) + " logical-stream-assignment");
  EXPECT_THAT(seen, ElementsAreArray(want));
}

TEST(LogicalStreamChainPassTest, VerifyEachCatchesASubPassThatChangesTheGraph) {
  std::vector<std::unique_ptr<LogicalStreamPass>> passes;
  passes.push_back(std::make_unique<RenameTestPass>());
  Harness h(/*verify_each=*/true);
  EXPECT_THAT(
      h.Run(Chain(std::move(passes))),
      StatusIs(absl::StatusCode::kInternal, "verifier[frozen-graph]: pass 'rename-test-pass'"));
}

TEST(LogicalStreamChainPassTest, ASubPassErrorNamesThePassAndTheGraph) {
  std::vector<std::unique_ptr<LogicalStreamPass>> passes;
  passes.push_back(std::make_unique<FailTestPass>());
  Harness h(/*verify_each=*/false);
  absl::Status s = h.Run(Chain(std::move(passes)));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          "[fail-test-pass] no stream fits (graph 'graph') (after pass "
                          "'logical-stream-assignment')"));
}

}  // namespace
}  // namespace npuplan::stream
