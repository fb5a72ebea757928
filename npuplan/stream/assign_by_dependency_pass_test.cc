#include "npuplan/stream/assign_by_dependency_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/assign_by_label_pass.h"
#include "npuplan/stream/independent_stream_pass.h"
#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::PassHarness;

// GE UT test_vector_engine_assign_stream: engine blocks are laid out in byte
// order of the engine names, "VectorEngine" < "aicore".
TEST(AssignByDependencyPassTest, LaysOutEngineBlocksInEngineNameOrder) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({
    "engines": {"aicore": {"compute_cost": 1}},
    "nodes": [{"name": "a", "type": "Op", "engine": "aicore"},
              {"name": "v", "type": "Op", "engine": "VectorEngine"}]})json"));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("a"), 1);
  EXPECT_EQ(h->SubgraphStream("v"), 0);
}

TEST(AssignByDependencyPassTest, DataGetsOwnBlockAndNetOutputAttaches) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "c", "type": "Conv2D", "inputs": ["x"]},
    {"name": "out", "type": "NetOutput", "inputs": ["c"]}]})json"));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("c"), 0);    // "AIcoreEngine" block first
  EXPECT_EQ(h->SubgraphStream("x"), 1);    // "DNN_VM_GE_LOCAL" block
  EXPECT_EQ(h->SubgraphStream("out"), 0);  // GE_LOCAL attaches to its producer
  EXPECT_EQ(h->ctx->next_stream, 2);
}

TEST(AssignByDependencyPassTest, LabelledProducerIsNeverReused) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_stream_label": "L"}},
    {"name": "b", "type": "Relu", "inputs": ["a"]}]})json"));
  ASSERT_TRUE(h->Run<AssignByLabelPass>().ok());
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("a"), 0);
  EXPECT_EQ(h->SubgraphStream("b"), 1);
}

TEST(AssignByDependencyPassTest, IndependentProducerIsNeverReused) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "h", "type": "HcomAllReduce"},
    {"name": "c", "type": "DropOutGenMask", "inputs": ["h"]}]})json"));
  ASSERT_TRUE(h->Run<IndependentStreamPass>().ok());
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("h"), 0);
  EXPECT_EQ(h->SubgraphStream("c"), 1);  // AICPU attaches, but not to HCCL
}

// P(Vector) feeds s1 (AICPU, attaching) and s2 (Vector, kept apart from P by
// the path P → s1 → s2). The same-engine sibling s2 blocks s1's reuse of P,
// unless ge.exec.memoryOptimizationPolicy=MemoryPriority.
constexpr char kSibling[] = R"json({"nodes": [
    {"name": "p", "type": "Op", "engine": "VectorEngine"},
    {"name": "s1", "type": "Op", "engine": "DNN_VM_AICPU", "inputs": ["p"]},
    {"name": "s2", "type": "Op", "engine": "VectorEngine", "inputs": ["p", "s1"]}]})json";

TEST(AssignByDependencyPassTest, SameEngineSiblingBlocksReuse) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(kSibling));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("s1"), 0);  // "DNN_VM_AICPU" block
  EXPECT_EQ(h->SubgraphStream("p"), 1);   // "VectorEngine" block
  EXPECT_EQ(h->SubgraphStream("s2"), 1);  // reuses p (same engine)
}

TEST(AssignByDependencyPassTest, MemoryPriorityLiftsSiblingRule) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(kSibling, {{"ge.exec.memoryOptimizationPolicy", "MemoryPriority"}}));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("p"), 0);
  EXPECT_EQ(h->SubgraphStream("s1"), 0);
  EXPECT_EQ(h->SubgraphStream("s2"), 0);
}

// a(AIcore) → c(AICPU, attaches to a) → d(AIcore): d may reuse c because c
// borrowed its stream from d's engine (rule 6). With two AIcore streams
// allowed, d would otherwise get the second one.
TEST(AssignByDependencyPassTest, ReusesStreamBorrowedFromMyEngine) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "a", "type": "Relu"},
    {"name": "c", "type": "TopK", "inputs": ["a"]},
    {"name": "d", "type": "Relu", "inputs": ["c"]}]})json", {{"ge.streamMaxParallelNum", "AIcoreEngine:2"}}));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("a"), 0);
  EXPECT_EQ(h->SubgraphStream("c"), 0);
  EXPECT_EQ(h->SubgraphStream("d"), 0);
  EXPECT_EQ(h->gs.subgraphs[h->SubgraphIndex("d")].reused_subgraph, h->SubgraphIndex("a"));
  EXPECT_EQ(h->ctx->next_stream, 1);
}

TEST(AssignByDependencyPassTest, WrapsAroundMaxParallelNum) {
  constexpr char kThree[] = R"json({"nodes": [
    {"name": "x1", "type": "Relu"}, {"name": "x2", "type": "Relu"}, {"name": "x3", "type": "Relu"}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto two, PassHarness::Create(kThree, {{"ge.streamMaxParallelNum", "AIcoreEngine:2"}}));
  ASSERT_TRUE(two->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(two->SubgraphStream("x1"), 0);
  EXPECT_EQ(two->SubgraphStream("x2"), 1);
  EXPECT_EQ(two->SubgraphStream("x3"), 0);
  EXPECT_EQ(two->ctx->next_stream, 2);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto one, PassHarness::Create(kThree));
  ASSERT_TRUE(one->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(one->SubgraphStream("x2"), 0);  // default: one stream per engine
  EXPECT_EQ(one->ctx->next_stream, 1);
}

TEST(AssignByDependencyPassTest, PicksLowestComputeCostProducer) {
  // v (Vector, cost 2) and a (AIcore, cost 1) both feed an AICPU node.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "v", "type": "Op", "engine": "VectorEngine"},
    {"name": "a", "type": "Relu"},
    {"name": "c", "type": "TopK", "inputs": ["v", "a"]}]})json"));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("c"), h->SubgraphStream("a"));
  EXPECT_NE(h->SubgraphStream("c"), h->SubgraphStream("v"));
}

// GE's GetTopPrioritySubgraph starts from the first candidate (best cost 10)
// and takes a later one only at a strictly lower cost: a lone reusable
// producer of cost 10 (HOST_CPU) is reused, not skipped (ge-reference §2.1).
TEST(AssignByDependencyPassTest, ReusesALoneCost10Producer) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "hc", "type": "HostCpuOp"},
    {"name": "c", "type": "TopK", "inputs": ["hc"]}]})json"));
  ASSERT_EQ(h->gs.SubgraphOf(h->node("hc")).conf->compute_cost, 10);
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("c"), h->SubgraphStream("hc"));
  EXPECT_EQ(h->ctx->next_stream, 1);
  ASSERT_EQ(h->log.WithKeyword("StreamReused").size(), 1u);
}

// Of two reusable producers the cheaper one still wins over a first one of
// cost 10.
TEST(AssignByDependencyPassTest, LaterCheaperProducerBeatsFirstCost10One) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "hc", "type": "HostCpuOp"},
    {"name": "a", "type": "Relu"},
    {"name": "c", "type": "TopK", "inputs": ["hc", "a"]}]})json"));
  ASSERT_LT(h->SubgraphIndex("hc"), h->SubgraphIndex("a"));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("c"), h->SubgraphStream("a"));
  EXPECT_NE(h->SubgraphStream("c"), h->SubgraphStream("hc"));
}

TEST(AssignByDependencyPassTest, ForceAttachOverridesSiblingRule) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(R"json({"nodes": [
    {"name": "p", "type": "Op", "engine": "VectorEngine"},
    {"name": "s1", "type": "Relu", "inputs": ["p"], "attrs": {"_force_attach_stream": true}},
    {"name": "s2", "type": "Op", "engine": "VectorEngine", "inputs": ["p", "s1"]}]})json"));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  EXPECT_EQ(h->SubgraphStream("s1"), h->SubgraphStream("p"));
}

TEST(AssignByDependencyPassTest, LogsReuseWithRule) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto h, PassHarness::Create(kSibling));
  ASSERT_TRUE(h->Run<AssignByDependencyPass>().ok());
  auto reused = h->log.WithKeyword("StreamReused");
  ASSERT_EQ(reused.size(), 1u);
  EXPECT_EQ(reused[0]->pass, "assign-by-dependency-pass");
  EXPECT_THAT(reused[0]->ToLine(), ::testing::HasSubstr("rule=same-engine"));
  EXPECT_EQ(h->log.WithKeyword("EngineBlock").size(), 2u);
}

}  // namespace
}  // namespace npuplan::stream
