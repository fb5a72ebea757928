#include "npuplan/stream/dynamic_stream_allocator.h"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/sim/simulator.h"
#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::ParseStreamTestGraph;
using ::npuplan::stream::testing::StreamOf;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// Compiles `graph` as a whole-dynamic model (the root is unknown-shape).
absl::StatusOr<Plan> CompileDynamic(std::string_view graph, std::map<std::string, std::string> opts,
                                    DecisionLog* log = nullptr) {
  Plan plan;
  NPUPLAN_ASSIGN_OR_RETURN(plan.model, ParseStreamTestGraph(graph));
  plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  plan.partition.ran = true;
  plan.partition.decision = PartitionDecision::kWholeDynamic;
  plan.EnsureNodeVectors();
  CompileOptions options = CompileOptions::FromModel(plan.model, opts, false);
  DecisionLog local(true);
  Statistics stats;
  PassContext ctx{options, log ? *log : local, stats};
  ctx.instrumentation.verify_each = true;
  PassPipeline p("test");
  p.AddPass<LogicalStreamAssignment>();
  NPUPLAN_RETURN_IF_ERROR(p.Run(plan, ctx).status());
  return plan;
}

const std::map<std::string, std::string> kMulti = {{"ENABLE_DYNAMIC_SHAPE_MULTI_STREAM", "1"}};

constexpr char kEngines[] = R"json({"nodes": [
  {"name": "x", "type": "Data"},
  {"name": "dsa", "type": "MemcpyDsa", "inputs": ["x"]},
  {"name": "hc", "type": "HcomAllReduce", "inputs": ["dsa"]},
  {"name": "vec", "type": "Add", "engine": "VectorEngine", "inputs": ["hc"]},
  {"name": "mm", "type": "MatMul", "inputs": ["vec"]},
  {"name": "out", "type": "NetOutput", "inputs": ["mm"]}]})json";

TEST(DynamicStreamAllocatorTest, UsesOneStreamWithoutTheEnvironmentSwitch) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(kEngines, {}));
  for (const char* n : {"x", "dsa", "hc", "vec", "mm", "out"}) EXPECT_EQ(StreamOf(plan, n), 0) << n;
  EXPECT_EQ(plan.streams.logical, 1);
  EXPECT_EQ(plan.streams.mode, StreamMode::kDynamicSingle);
}

TEST(DynamicStreamAllocatorTest, AutoMultistreamOptionAloneNeverEnablesMultiStream) {
  for (const char* mode : {"cv", "LoadBalance:4", "MainStream:4", "CriticalPath:4"}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(kEngines, {{"ge.autoMultistreamParallelMode", mode}}));
    EXPECT_EQ(plan.streams.logical, 1) << mode;
  }
}

TEST(DynamicStreamAllocatorTest, GivesEachOwningEngineOneStreamInEnginePriorityOrder) {
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(kEngines, kMulti, &log));
  // AIcoreEngine (cost 1) first, then cost 2 by name: DNN_HCCL < DSAEngine < VectorEngine.
  EXPECT_EQ(StreamOf(plan, "mm"), 0);
  EXPECT_EQ(StreamOf(plan, "hc"), 1);
  EXPECT_EQ(StreamOf(plan, "dsa"), 2);
  EXPECT_EQ(StreamOf(plan, "vec"), 3);
  EXPECT_EQ(StreamOf(plan, "x"), 0);
  EXPECT_EQ(StreamOf(plan, "out"), 0);
  EXPECT_EQ(plan.streams.logical, 4);
  EXPECT_EQ(plan.streams.mode, StreamMode::kDynamicMulti);
  EXPECT_EQ(log.WithKeyword("DynamicStreamsRefreshed").size(), 1u);
}

TEST(DynamicStreamAllocatorTest, RejectsBadAcParallelEnable) {
  auto opts = kMulti;
  opts["ac_parallel_enable"] = "2";
  EXPECT_THAT(CompileDynamic(kEngines, opts).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "E10001: Value [2] for parameter [ac_parallel_enable]"));
}

constexpr char kAicpu[] = R"json({"nodes": [
  {"name": "x", "type": "Data"},
  {"name": "mm", "type": "MatMul", "inputs": ["x"]},
  {"name": "mask", "type": "DropOutGenMask", "inputs": ["mm"]},
  {"name": "mm2", "type": "MatMul", "inputs": ["mask"]},
  {"name": "topk", "type": "TopK", "inputs": ["mm2"]},
  {"name": "out", "type": "NetOutput", "inputs": ["topk"]}]})json";

TEST(DynamicStreamAllocatorTest, GivesIndependentAicpuNodesTheAicpuStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(kAicpu, kMulti));
  EXPECT_EQ(StreamOf(plan, "mm"), 0);
  EXPECT_EQ(StreamOf(plan, "mm2"), 0);
  EXPECT_EQ(StreamOf(plan, "mask"), 1);  // DropOutGenMask: own (AI CPU engine) stream
  EXPECT_EQ(StreamOf(plan, "topk"), 0);  // attach engine: reuses the AI core producer
}

TEST(DynamicStreamAllocatorTest, AicpuParallelGivesAicpuWithoutReusableProducerItsStream) {
  auto opts = kMulti;
  opts["ac_parallel_enable"] = "1";
  // {mm, mm3} has another AI core consumer (mm2), so mask cannot reuse it;
  // topk's only input is a no-task node without inputs.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "mm", "type": "MatMul", "inputs": ["x"]},
    {"name": "mask", "type": "Where", "inputs": ["mm"]},
    {"name": "mm3", "type": "MatMul", "inputs": ["mm"]},
    {"name": "c", "type": "Const"},
    {"name": "topk", "type": "TopK", "inputs": ["c"]},
    {"name": "mm2", "type": "MatMul", "inputs": ["mask", "mm3", "topk"]},
    {"name": "out", "type": "NetOutput", "inputs": ["mm2"]}]})json", opts));
  EXPECT_EQ(StreamOf(plan, "mm"), 0);
  EXPECT_EQ(StreamOf(plan, "mask"), 1);  // no reusable producer: the AI CPU stream
  EXPECT_EQ(StreamOf(plan, "topk"), 1);  // only a no-task input without inputs
  EXPECT_EQ(StreamOf(plan, "c"), 0);     // constant: forced main stream
}

TEST(DynamicStreamAllocatorTest, AicpuNeverReusesHcclAndTakesItsEngineStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "mm", "type": "MatMul", "inputs": ["x"]},
    {"name": "hc", "type": "HcomAllReduce", "inputs": ["mm"]},
    {"name": "topk", "type": "TopK", "inputs": ["hc"]},
    {"name": "out", "type": "NetOutput", "inputs": ["topk"]}]})json", kMulti));
  EXPECT_EQ(StreamOf(plan, "mm"), 0);
  EXPECT_EQ(StreamOf(plan, "hc"), 1);
  EXPECT_EQ(StreamOf(plan, "topk"), 2);  // AssignRemainSubgraphNeedAssignStream
}

TEST(DynamicStreamAllocatorTest, ReusesAConsumerWhenNoProducerQualifies) {
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(R"json({"nodes": [
    {"name": "topk", "type": "TopK"},
    {"name": "hc", "type": "HcomAllReduce"},
    {"name": "mm", "type": "MatMul", "inputs": ["topk", "hc"]},
    {"name": "out", "type": "NetOutput", "inputs": ["mm"]}]})json", kMulti, &log));
  EXPECT_EQ(StreamOf(plan, "topk"), StreamOf(plan, "mm"));
  EXPECT_EQ(log.WithKeyword("DynamicEngineStream").size(), 3u);
}

TEST(DynamicStreamAllocatorTest, ReusePassesOnThroughTheReusedSubgraph) {
  // dv (attach) reuses mm (AI core has the higher priority than HCCL); topk
  // reuses dv, whose owner is mm.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "mm", "type": "MatMul", "inputs": ["x"]},
    {"name": "hc", "type": "HcomAllReduce", "inputs": ["x"]},
    {"name": "dv", "type": "DecodeJpeg", "inputs": ["mm", "hc"]},
    {"name": "topk", "type": "TopK", "inputs": ["dv"]},
    {"name": "out", "type": "NetOutput", "inputs": ["topk"]}]})json", kMulti));
  EXPECT_EQ(StreamOf(plan, "dv"), StreamOf(plan, "mm"));
  EXPECT_EQ(StreamOf(plan, "topk"), StreamOf(plan, "mm"));
}

// GE's GetTopPrioritySubgraph keeps the first candidate unless a later one
// costs strictly less than the best so far, which starts at 10: with costs
// above 10 (an engine table can set them) the first producer wins.
TEST(DynamicStreamAllocatorTest, TopPriorityStartsFromTheFirstCandidate) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(R"json({
    "engines": {"AIcoreEngine": {"compute_cost": 12}, "VectorEngine": {"compute_cost": 11}},
    "nodes": [
    {"name": "x", "type": "Data"},
    {"name": "mm", "type": "MatMul", "inputs": ["x"]},
    {"name": "vec", "type": "Op", "engine": "VectorEngine", "inputs": ["x"]},
    {"name": "topk", "type": "TopK", "inputs": ["mm", "vec"]},
    {"name": "out", "type": "NetOutput", "inputs": ["topk"]}]})json", kMulti));
  ASSERT_NE(StreamOf(plan, "mm"), StreamOf(plan, "vec"));
  EXPECT_EQ(StreamOf(plan, "topk"), StreamOf(plan, "mm"));
}

TEST(DynamicStreamAllocatorTest, LabelsGetStreamsAcrossEnginesAfterTheEngineStreams) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "a", "type": "MatMul", "inputs": ["x"], "attrs": {"_stream_label": "L"}},
    {"name": "h", "type": "HcomAllReduce", "inputs": ["a"], "attrs": {"_stream_label": "L"}},
    {"name": "b", "type": "MatMul", "inputs": ["h"]},
    {"name": "c", "type": "Const", "attrs": {"_stream_label": "L"}},
    {"name": "out", "type": "NetOutput", "inputs": ["b", "c"]}]})json", kMulti));
  EXPECT_EQ(StreamOf(plan, "b"), 0);
  EXPECT_EQ(StreamOf(plan, "a"), 1);  // DNN_HCCL's stream lost every node: dropped
  EXPECT_EQ(StreamOf(plan, "h"), 1);
  EXPECT_EQ(StreamOf(plan, "c"), 0);  // constant: forced on 0 even with a label
  EXPECT_EQ(plan.streams.logical, 2);
}

TEST(DynamicStreamAllocatorTest, ForcesMainStreamTypesAndSubgraphOwners) {
  for (const char* t : {"Data", "RefData", "AippData", "Variable", "VariableV2", "Const", "Constant",
                        "ConstPlaceHolder", "NetOutput", "FileConstant"}) {
    Node n;
    n.type = t;
    EXPECT_TRUE(DynamicStreamAllocator::IsForcedMainStreamNode(n)) << t;
  }
  Node owner;
  owner.type = "If";
  owner.subgraphs.push_back(GraphId(1));
  EXPECT_TRUE(DynamicStreamAllocator::IsForcedMainStreamNode(owner));
  Node relu;
  relu.type = "Relu";
  EXPECT_FALSE(DynamicStreamAllocator::IsForcedMainStreamNode(relu));
}

constexpr char kWhile[] = R"json({"nodes": [
  {"name": "x", "type": "Data"},
  {"name": "hc", "type": "HcomAllReduce", "inputs": ["x"]},
  {"name": "loop", "type": "While", "inputs": ["hc"], "subgraphs": ["cond", "body"],
   "attrs": {"_is_unknown_shape": true}},
  {"name": "out", "type": "NetOutput", "inputs": ["loop"]}],
  "subgraphs": [
    {"name": "cond", "parent": "loop", "nodes": [
      {"name": "cd", "type": "Data", "attrs": {"_parent_node_index": 0}},
      {"name": "cm", "type": "MatMul", "inputs": ["cd"]},
      {"name": "cout", "type": "NetOutput", "inputs": ["cm"]}]},
    {"name": "body", "parent": "loop", "attrs": {}, "nodes": [
      {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}},
      {"name": "bh", "type": "HcomAllReduce", "inputs": ["bd"]},
      {"name": "bm", "type": "MatMul", "inputs": ["bh"]},
      {"name": "bout", "type": "NetOutput", "inputs": ["bm"]}]}]})json";

TEST(DynamicStreamAllocatorTest, SharesEngineStreamsAcrossUnknownSubgraphsAndForcesOwners) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(kWhile, kMulti));
  EXPECT_EQ(StreamOf(plan, "loop"), 0);
  EXPECT_EQ(StreamOf(plan, "hc"), StreamOf(plan, "bh"));
  EXPECT_EQ(StreamOf(plan, "cm"), 0);
  EXPECT_EQ(StreamOf(plan, "bm"), 0);
  EXPECT_EQ(StreamOf(plan, "bout"), 0);
  EXPECT_EQ(plan.streams.logical, 2);
}

TEST(DynamicStreamAllocatorTest, PutsTheNetOutputOfAWhileStaticBodyOnStreamZero) {
  std::string g = kWhile;
  g.replace(g.find("\"_is_unknown_shape\": true"), 25, "\"_is_unknown_shape\": false");
  for (const auto& opts : {std::map<std::string, std::string>{}, kMulti}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(g, opts));
    EXPECT_EQ(StreamOf(plan, "bout"), 0);
    EXPECT_GT(StreamOf(plan, "bm"), 0);  // static chain, ids after the dynamic ones
  }
}

TEST(DynamicStreamAllocatorTest, RunsDagModesOnlyUnderTheSwitchAndKeepsIdsContinuous) {
  constexpr char kWide[] = R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "a", "type": "MatMul", "inputs": ["x"], "attrs": {"_cost": 10}},
    {"name": "b", "type": "MatMul", "inputs": ["x"], "attrs": {"_cost": 10}},
    {"name": "c", "type": "MatMul", "inputs": ["x"], "attrs": {"_cost": 10}},
    {"name": "d", "type": "Add", "inputs": ["a", "b", "c"], "attrs": {"_cost": 1}},
    {"name": "out", "type": "NetOutput", "inputs": ["d"]}]})json";
  for (const char* mode : {"LoadBalance:3", "MainStream:3", "WeightedLoadBalance:3", "CriticalPath:3"}) {
    auto opts = kMulti;
    opts["ge.autoMultistreamParallelMode"] = mode;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(kWide, opts));
    EXPECT_GE(plan.streams.logical, 2) << mode;
    EXPECT_LE(plan.streams.logical, 3) << mode;
    EXPECT_EQ(StreamOf(plan, "x"), 0) << mode;
    EXPECT_EQ(StreamOf(plan, "out"), 0) << mode;
    EXPECT_EQ(plan.streams.auto_mode, mode);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan single, CompileDynamic(kWide, {{"ge.autoMultistreamParallelMode", mode}}));
    EXPECT_EQ(single.streams.logical, 1) << mode;
  }
}

// CriticalPath on dynamic graphs (issue 5 item 3): the forced nodes (Data,
// NetOutput, owners) end on the main stream, so the schedule pins them
// there and prices the events to and from them; a subgraph's short chain
// then stays on the main stream instead of paying two events.
TEST(DynamicStreamAllocatorTest, CriticalPathKeepsASubgraphChainOnTheMainStreamWhenEventsCostMore) {
  constexpr char kCall[] = R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "r", "type": "Relu", "inputs": ["x"], "attrs": {"_cost": 3}},
    {"name": "p", "type": "PartitionedCall", "inputs": ["r"], "subgraphs": ["body"]},
    {"name": "out", "type": "NetOutput", "inputs": ["p"]}],
    "subgraphs": [{"name": "body", "parent": "p", "nodes": [
      {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0}},
      {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 3}},
      {"name": "t2", "type": "Relu", "inputs": ["t1"], "attrs": {"_cost": 3}},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t2"]}]}]})json";
  auto opts = kMulti;
  opts["ge.autoMultistreamParallelMode"] = "CriticalPath:4";
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(kCall, opts, &log));
  for (const char* n : {"x", "r", "p", "out", "t_in", "t1", "t2", "t_out"}) EXPECT_EQ(StreamOf(plan, n), 0) << n;
  EXPECT_EQ(plan.streams.logical, 1);
  // Both graphs chose their schedule (everything on main), not a new stream.
  for (const auto* rec : log.WithKeyword("CriticalPathStreams")) {
    EXPECT_THAT(rec->ToLine(), ::testing::HasSubstr("streams=0")) << rec->ToLine();
  }
}

// A subgraph owner is pinned to the main stream and its subgraphs run there
// right after it, so it holds the main stream for their makespan: work that
// comes after it in topological order but does not need it (q) goes to
// another stream. With the owner priced at 0 (its own launch), q would queue
// behind the subgraph on the main stream (22 + 11 µs).
TEST(DynamicStreamAllocatorTest, CriticalPathPricesASubgraphOwnerAtItsSubgraphsMakespan) {
  constexpr char kOwner[] = R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "p", "type": "PartitionedCall", "inputs": ["x"], "subgraphs": ["body"]},
    {"name": "q", "type": "Relu", "inputs": ["x"], "attrs": {"_cost": 10}},
    {"name": "out", "type": "NetOutput", "inputs": ["p", "q"]}],
    "subgraphs": [{"name": "body", "parent": "p", "nodes": [
      {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0}},
      {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 10}},
      {"name": "t2", "type": "Relu", "inputs": ["t1"], "attrs": {"_cost": 10}},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t2"]}]}]})json";
  auto opts = kMulti;
  opts["ge.autoMultistreamParallelMode"] = "CriticalPath:2";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(kOwner, opts));
  for (const char* n : {"x", "p", "out", "t_in", "t1", "t2", "t_out"}) EXPECT_EQ(StreamOf(plan, n), 0) << n;
  EXPECT_EQ(StreamOf(plan, "q"), 1);
  // The root's estimate covers the model: x records for q (0.5 µs), p holds
  // the main stream [0.5, 22.5] (t1, t2: 10 + 1 µs each); q [1.5, 12.5]
  // records until 13; out waits until 14 and for p: 22.5 µs.
  EXPECT_EQ(plan.streams.estimated_makespan, 22500);
  // The bound covers the subtree too: p at its body's bound (22 µs), and
  // (22 + 11) / 2 µs of work per stream.
  EXPECT_EQ(plan.streams.makespan_lower_bound, 22000);
  // On one stream (no events yet to simulate) the allocator's estimate and
  // the simulator agree exactly: Data, NetOutput, the owner and the
  // subgraph's Data/NetOutput launch nothing, the three Relus 11 µs each.
  opts["ge.autoMultistreamParallelMode"] = "CriticalPath:1";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan one, CompileDynamic(kOwner, opts));
  EXPECT_EQ(one.streams.logical, 1);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(sim::SimResult r, sim::Simulate(one));
  EXPECT_DOUBLE_EQ(r.makespan, 33.0);
  EXPECT_EQ(one.streams.estimated_makespan, 33000);
  EXPECT_EQ(r.streams[0].tasks, 3);
}

// Wide enough to pay for events: the main stream runs one branch, new
// streams the others, and the ids stay continuous from the main stream.
TEST(DynamicStreamAllocatorTest, CriticalPathSpreadsWideDynamicWorkBesideTheMainStream) {
  constexpr char kWide[] = R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "a", "type": "MatMul", "inputs": ["x"], "attrs": {"_cost": 50}},
    {"name": "b", "type": "MatMul", "inputs": ["x"], "attrs": {"_cost": 50}},
    {"name": "c", "type": "MatMul", "inputs": ["x"], "attrs": {"_cost": 50}},
    {"name": "d", "type": "Add", "inputs": ["a", "b", "c"], "attrs": {"_cost": 1}},
    {"name": "out", "type": "NetOutput", "inputs": ["d"]}]})json";
  auto opts = kMulti;
  opts["ge.autoMultistreamParallelMode"] = "CriticalPath:3";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileDynamic(kWide, opts));
  EXPECT_EQ(plan.streams.logical, 3);
  EXPECT_EQ(StreamOf(plan, "x"), 0);
  EXPECT_EQ(StreamOf(plan, "out"), 0);
  std::set<int64_t> branches{StreamOf(plan, "a"), StreamOf(plan, "b"), StreamOf(plan, "c")};
  EXPECT_EQ(branches, (std::set<int64_t>{0, 1, 2}));
  // ns: x and out are queue items on the main stream that launch no task
  // (GE_LOCAL): no time, as in the simulator; the bound is the critical path
  // a → d = 51 + 2 µs. The estimate: x records two events (b, c: 2 × 0.5 µs)
  // at once, so a runs [1, 52] on main and b, c [2, 53] (wait latency 1 µs)
  // and record until 53.5; d waits until 54.5 and ends at 56.5, out too (no
  // Recv tasks on the dynamic path).
  EXPECT_EQ(plan.streams.makespan_lower_bound, 53000);
  EXPECT_EQ(plan.streams.estimated_makespan, 56500);
}

}  // namespace
}  // namespace npuplan::stream
