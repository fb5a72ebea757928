#include "npuplan/plan/plan_claims.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "npuplan/ir/control_flow_types.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// a (stream 0) → b (stream 1): a cross-stream data edge. `extra` is spliced
// into the top level; `a_entry` / `b_entry` into the node entries.
std::string TwoStreamPlan(std::string_view stages, std::string_view extra = "",
                          std::string_view a_entry = "", std::string_view b_entry = "") {
  return StrCat(
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "name": "g", "nodes": [)",
      R"({"name": "a", "type": "Relu", "engine": "AIcoreEngine", "outputs": [{"shape": [1]}]},)",
      R"( {"name": "b", "type": "Relu", "engine": "AIcoreEngine", "inputs": ["a:0"], "outputs": [{"shape": [1]}]}]},)",
      R"( "nodes": {"a": {"logical_stream": 0)", a_entry, R"(}, "b": {"logical_stream": 1)",
      b_entry, "}},", R"( "stages": [)", stages, "]", extra, "}");
}

constexpr char kThroughLogical[] = R"("topo-sorted", "logical-streams")";

absl::Status Claims(const std::string& text) {
  absl::StatusOr<Plan> plan = ParsePlanJson(text, "p.json");
  if (!plan.ok()) return plan.status();
  return VerifyPlanClaims(*plan);
}

TEST(PlanClaimsTest, AcceptsAPlanWhoseClaimsMatchItsContent) {
  EXPECT_THAT(
      Claims(TwoStreamPlan(kThroughLogical,
                           R"(, "streams": {"logical": 2, "physical": 2, "mode": "multi"})")),
      IsOk());
}

// The issue's plan: nodes on two streams and no stages — no stage check ran.
TEST(PlanClaimsTest, ContentOnStreamsRequiresTheLogicalStreamsStage) {
  for (const char* stages : {"", R"("topo-sorted")"}) {
    EXPECT_THAT(
        Claims(TwoStreamPlan(stages, R"(, "streams": {"logical": 2, "physical": 2})")),
        StatusIs(absl::StatusCode::kInternal,
                 "node 'a' is on stream 0, but the plan does not claim stage 'logical-streams'"))
        << stages;
  }
}

// A --dump-after snapshot between two logical-stream sub-passes: nodes on
// streams, the stage not claimed yet, in progress.
TEST(PlanClaimsTest, ASnapshotInsideAStageMayHoldThatStagesContentUnclaimed) {
  const std::string snapshot =
      TwoStreamPlan(R"("topo-sorted")", R"(, "in_progress": "logical-streams")");
  EXPECT_THAT(Claims(snapshot), IsOk());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, ParsePlanJson(snapshot, "p.json"));
  EXPECT_EQ(plan.in_progress, static_cast<IrProperties>(IrProperty::kLogicalStreams));
  // Written back as read.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan again, ParsePlanJson(WritePlanJson(plan), "q.json"));
  EXPECT_EQ(again.in_progress, plan.in_progress);
  // Only that stage's content: task counts still need the tasks stage.
  EXPECT_THAT(Claims(TwoStreamPlan(R"("topo-sorted")", R"(, "in_progress": "logical-streams")",
                                   R"(, "tasks": 1)")),
              StatusIs(absl::StatusCode::kInternal, "does not claim stage 'tasks'"));
}

TEST(PlanClaimsTest, InProgressMustBeTheNextStageNotAClaimedOne) {
  EXPECT_THAT(Claims(TwoStreamPlan(kThroughLogical, R"(, "in_progress": "logical-streams")")),
              StatusIs(absl::StatusCode::kInternal,
                       "claims stage 'logical-streams' and says it is still in progress"));
  EXPECT_THAT(Claims(TwoStreamPlan(R"("topo-sorted")", R"(, "in_progress": "sync-events")")),
              StatusIs(absl::StatusCode::kInternal,
                       "stage 'sync-events' is in progress but the plan does not claim"));
  EXPECT_THAT(
      Claims(TwoStreamPlan(R"("topo-sorted")", R"(, "in_progress": "streams")")),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.in_progress: unknown stage 'streams'"));
  EXPECT_THAT(Claims(TwoStreamPlan(R"("topo-sorted")", R"(, "in_progress": 4)")),
              StatusIs(absl::StatusCode::kInvalidArgument, "$.in_progress: expected a stage name"));
}

TEST(PlanClaimsTest, AClaimedStageNeedsItsPrerequisites) {
  EXPECT_THAT(Claims(TwoStreamPlan(R"("topo-sorted", "logical-streams", "physical-streams")")),
              StatusIs(absl::StatusCode::kInternal,
                       "claims stage 'physical-streams' but not [tasks,sync-events]"));
  EXPECT_EQ(StageNeeds(IrProperty::kSyncNodes), static_cast<IrProperties>(IrProperty::kSyncEvents));
}

TEST(PlanClaimsTest, StreamsLogicalMustBeTheMainStreamsTheNodesUse) {
  EXPECT_THAT(Claims(TwoStreamPlan(kThroughLogical, R"(, "streams": {"logical": 1099511627776})")),
              StatusIs(absl::StatusCode::kInvalidArgument,  // the reader: beyond the stream slots
                       "$.streams.logical: 1099511627776 streams is out of range"));
  EXPECT_THAT(
      Claims(TwoStreamPlan(kThroughLogical, R"(, "streams": {"logical": 1})")),
      StatusIs(absl::StatusCode::kInternal, "node 'b' is on stream 1 but streams.logical is 1"));
  EXPECT_THAT(
      Claims(TwoStreamPlan(kThroughLogical, R"(, "streams": {"logical": 5, "physical": 5})")),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.streams.logical: 5 streams is out of range"));
  // 3 claimed, 2 used (the issue's "5 with 3 used", at this size).
  const std::string three_nodes = StrCat(
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [)",
      R"({"name": "a", "type": "Data"}, {"name": "b", "type": "Data"}, {"name": "c", "type": "Data"}]},)",
      R"( "nodes": {"a": {"logical_stream": 0}, "b": {"logical_stream": 1}, "c": {"logical_stream": 1}},)",
      R"( "stages": ["topo-sorted", "logical-streams"], "streams": {"logical": 3}})");
  EXPECT_THAT(Claims(three_nodes),
              StatusIs(absl::StatusCode::kInternal,
                       "streams.logical is 3 but no node is on main stream 2"));
}

TEST(PlanClaimsTest, StreamsPhysicalIsTheLogicalCountBeforeTheSplit) {
  EXPECT_THAT(
      Claims(TwoStreamPlan(kThroughLogical, R"(, "streams": {"logical": 2, "physical": 7})")),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.streams.physical: 7 streams is out of range"));
  // Within the slots, the claims check: 1 physical stream for 2 logical ones.
  EXPECT_THAT(
      Claims(TwoStreamPlan(kThroughLogical, R"(, "streams": {"logical": 2, "physical": 1})")),
      StatusIs(absl::StatusCode::kInternal, "streams.physical is 1 but the plan has 2"));
}

TEST(PlanClaimsTest, TheStreamListMustDescribeTheStreams) {
  EXPECT_THAT(
      Claims(TwoStreamPlan(kThroughLogical, R"(, "streams": {"logical": 2, "list": [{"id": 0}]})")),
      StatusIs(absl::StatusCode::kInternal, "streams.list has 1 entries for 2 main streams"));
  EXPECT_THAT(
      Claims(TwoStreamPlan(
          kThroughLogical,
          R"(, "streams": {"logical": 2, "list": [{"id": 0}, {"id": 1, "physical_count": 3}]})")),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "$.streams.list[1].physical_count: expected an integer in [0, 2], found 3"));
  EXPECT_THAT(
      Claims(TwoStreamPlan(
          kThroughLogical,
          R"(, "streams": {"logical": 2, "list": [{"id": 0}, {"id": 1, "physical_count": 2}]})")),
      StatusIs(absl::StatusCode::kInternal, "streams.list[1].physical_count is 2"));
  EXPECT_THAT(
      Claims(TwoStreamPlan(
          kThroughLogical,
          R"(, "streams": {"logical": 2, "list": [{"id": 0, "user_label": "x"}, {"id": 1}]})")),
      StatusIs(absl::StatusCode::kInternal, "streams.list[0].user_label is 'x'"));
}

TEST(PlanClaimsTest, AModeMustAgreeWithThePartition) {
  EXPECT_THAT(Claims(TwoStreamPlan(kThroughLogical,
                                   R"(, "streams": {"logical": 2, "mode": "dynamic-multi"})")),
              StatusIs(absl::StatusCode::kInternal,
                       "streams.mode is 'dynamic-multi' but no graph is unknown-shape"));
  EXPECT_THAT(
      Claims(TwoStreamPlan(kThroughLogical, R"(, "streams": {"logical": 2, "mode": "sideways"})")),
      StatusIs(absl::StatusCode::kInternal, "streams.mode 'sideways' is not one of"));
}

// An owner two levels down marked unknown-shape makes the plan dynamic: the
// mode must say so (the rule walks each graph's owners, memoised).
TEST(PlanClaimsTest, ANestedUnknownShapeOwnerMakesTheModeDynamic) {
  auto plan = [](std::string_view flag, std::string_view mode) {
    auto branch = [](std::string_view name, std::string_view parent, std::string_view body) {
      return StrCat(R"({"name": ")", name, R"(", "parent": ")", parent, R"(", "nodes": [)",
                    R"({"name": ")", name, R"(_in", "type": "Data", "attrs": {"_parent_node_index": 1},)",
                    R"( "outputs": [{"shape": [1]}]})", body, "]}");
    };
    const std::string inner_if = StrCat(
        R"(, {"name": "i2", "type": "If", "inputs": ["s1t_in:0", "s1t_in:0"], "subgraphs": ["s2t", "s2e"],)",
        R"( "attrs": {"_is_unknown_shape": )", flag, R"(}, "outputs": [{"shape": [1]}]})");
    return StrCat(
        R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "name": "g", "nodes": [)",
        R"({"name": "x", "type": "Data", "outputs": [{"shape": [1]}]},)",
        R"( {"name": "i1", "type": "If", "inputs": ["x:0", "x:0"], "subgraphs": ["s1t", "s1e"], "outputs": [{"shape": [1]}]}],)",
        R"( "subgraphs": [)", branch("s1t", "i1", inner_if), ", ", branch("s1e", "i1", ""), ", ",
        branch("s2t", "i2", ""), ", ", branch("s2e", "i2", ""), "]},",
        R"( "nodes": {"x": {}, "i1": {"logical_stream": 0}, "s1t_in": {}, "i2": {}, "s1e_in": {},)",
        R"( "s2t_in": {}, "s2e_in": {}},)",
        R"( "stages": ["topo-sorted", "logical-streams"], "streams": {"logical": 1, "mode": ")", mode,
        R"("}})");
  };
  EXPECT_THAT(Claims(plan("false", "multi")), IsOk());
  EXPECT_THAT(Claims(plan("true", "multi")),
              StatusIs(absl::StatusCode::kInternal,
                       "streams.mode is 'multi' but the partition makes a graph unknown-shape"));
}

TEST(PlanClaimsTest, EventsRequireTheSyncEventsStage) {
  const std::string events =
      R"(, "streams": {"logical": 2}, "events": [{"id": 0, "send": "a", "recv": "b"}])";
  EXPECT_THAT(Claims(TwoStreamPlan(kThroughLogical, events)),
              StatusIs(absl::StatusCode::kInternal, "does not claim stage 'sync-events'"));
}

TEST(PlanClaimsTest, AnEventsAttachedIndexIsAStreamOfItsNode) {
  const std::string events =
      StrCat(R"(, "streams": {"logical": 2}, "summary": {"events": 1}, )",
             R"("events": [{"id": 0, "send": "a", "recv": "b", "send_attached": -7}])");
  EXPECT_THAT(Claims(TwoStreamPlan(R"("topo-sorted", "logical-streams", "sync-events")", events)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.events[0].send_attached: -7 is out of range: node 'a' has 0 attached streams"));
  const std::string two =
      StrCat(R"(, "streams": {"logical": 2}, "summary": {"events": 1}, )",
             R"("events": [{"id": 0, "send": "a", "recv": "b", "recv_attached": 0}])");
  EXPECT_THAT(Claims(TwoStreamPlan(R"("topo-sorted", "logical-streams", "sync-events")", two)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.events[0].recv_attached: 0 is out of range: node 'b' has 0 attached streams"));
}

// A plan claiming 2^62 tasks on a node verified before (issue item 2).
TEST(PlanClaimsTest, TaskCountsAreWhatTheTaskModelGives) {
  const std::string stages = R"("topo-sorted", "logical-streams", "tasks")";
  const std::string streams = R"(, "streams": {"logical": 2})";
  EXPECT_THAT(Claims(TwoStreamPlan(stages, streams, R"(, "tasks": 1)", R"(, "tasks": 1)")), IsOk());
  EXPECT_THAT(Claims(TwoStreamPlan(stages, streams, R"(, "tasks": 4611686018427387904)",
                                   R"(, "tasks": 1)")),
              StatusIs(absl::StatusCode::kInternal,
                       "node 'a' has 4611686018427387904 tasks but the task model gives 1"));
  EXPECT_THAT(Claims(TwoStreamPlan(kThroughLogical, streams, R"(, "tasks": 1)")),
              StatusIs(absl::StatusCode::kInternal, "does not claim stage 'tasks'"));
}

// Each node's engine decides its count, whatever engine the node before it
// has (the check looks an engine up once per run of equal engines).
TEST(PlanClaimsTest, TaskCountsFollowEachNodesOwnEngine) {
  Plan plan = *ParsePlanJson(TwoStreamPlan(R"("topo-sorted", "logical-streams", "tasks")",
                                           R"(, "streams": {"logical": 2, "physical": 2})",
                                           R"(, "tasks": 0)", R"(, "tasks": 1)"),
                             "p.json");
  Node& a = plan.model.node(plan.model.FindNode("a"));
  Node& b = plan.model.node(plan.model.FindNode("b"));
  const EngineConfig* local = plan.model.engine_table.Find("DNN_VM_GE_LOCAL");
  ASSERT_NE(local, nullptr);
  ASSERT_TRUE(local->skip_assign_stream);
  a.engine = "DNN_VM_GE_LOCAL";  // no task
  EXPECT_THAT(VerifyPlanClaims(plan), IsOk());
  plan.tasks[plan.model.FindNode("b").index()] = 0;
  EXPECT_THAT(VerifyPlanClaims(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "node 'b' has 0 tasks but the task model gives 1 (rule default)"));
  b.engine = "DNN_VM_GE_LOCAL";
  EXPECT_THAT(VerifyPlanClaims(plan), IsOk());
  a.engine = "AIcoreEngine";
  EXPECT_THAT(VerifyPlanClaims(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "node 'a' has 0 tasks but the task model gives 1 (rule default)"));
}

TEST(PlanClaimsTest, APartitionSectionIsChecked) {
  const std::string stages = R"("topo-sorted", "partitioned")";
  const std::string plan =
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [)"
      R"({"name": "d", "type": "Data"}]}, "stages": [%s], "partition": {"decision": "%s"}})";
  auto with = [&](std::string_view st, std::string_view decision) {
    std::string s = plan;
    s.replace(s.find("%s"), 2, st);
    s.replace(s.find("%s"), 2, decision);
    return s;
  };
  EXPECT_THAT(Claims(with(stages, "static")), IsOk());
  EXPECT_THAT(Claims(with(stages, "maybe")),
              StatusIs(absl::StatusCode::kInternal, "partition.decision 'maybe'"));
  // Checked whether or not the stage is claimed (no stage check reads it).
  EXPECT_THAT(Claims(with(R"("topo-sorted")", "maybe")),
              StatusIs(absl::StatusCode::kInternal, "partition.decision 'maybe'"));
  EXPECT_THAT(Claims(with(stages, "partitioned")),
              StatusIs(absl::StatusCode::kInternal, "lists 0 partitioned subgraphs"));
}

// Loop-order events come with stream-activation, whose stage runs the
// loop-order check: a plan holding one must claim that stage.
TEST(PlanClaimsTest, ALoopOrderEventNeedsTheActiveStreamsClaim) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      Plan plan,
      ReadPlanFile(NPUPLAN_SOURCE_DIR "/testdata/plans/transformer_split_full/expected.plan.json"));
  ASSERT_FALSE(plan.events.events.empty());
  plan.events.events[0].reason = SyncReason::kLoopNext;
  ASSERT_THAT(VerifyPlanClaims(plan), IsOk());
  plan.established &= ~static_cast<IrProperties>(IrProperty::kActiveStreams);
  plan.established &= ~static_cast<IrProperties>(IrProperty::kSyncNodes);
  EXPECT_THAT(
      VerifyPlanClaims(plan),
      StatusIs(
          absl::StatusCode::kInternal,
          "events[0] is a loop-order event, but the plan does not claim stage 'active-streams'"));
}

// A loop gate is skipped by the subgraph-entry rules, so a node that reads or
// feeds something may not pass for one (with the 0 tasks the model gives it).
TEST(PlanClaimsTest, ALoopGateReadsAndFeedsNothing) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      Plan plan,
      ReadPlanFile(NPUPLAN_SOURCE_DIR "/testdata/plans/transformer_split_full/expected.plan.json"));
  ASSERT_THAT(VerifyPlanClaims(plan), IsOk());
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    Node& n = plan.model.node(NodeId(static_cast<int32_t>(i)));
    if (n.inputs.empty() || n.outputs.empty()) continue;
    n.type = std::string(kLoopGateType);
    plan.tasks[i] = 0;
    break;
  }
  EXPECT_THAT(VerifyPlanClaims(plan), StatusIs(absl::StatusCode::kInternal,
                                               "a loop gate only marks a place on its stream"));
}

// A split event's Send/Recv tasks are not counted against the task limit: a
// plan could relabel events as split ones to pass the physical-stream check.
TEST(PlanClaimsTest, OnlyTheEventOpeningASplitStreamIsASplitEvent) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      Plan plan,
      ReadPlanFile(NPUPLAN_SOURCE_DIR "/testdata/plans/transformer_split_full/expected.plan.json"));
  ASSERT_THAT(VerifyPlanClaims(plan), IsOk());
  int relabelled = 0;
  for (SyncEvent& e : plan.events.events) {
    if (e.reason != SyncReason::kSplit && relabelled++ == 0) e.reason = SyncReason::kSplit;
  }
  ASSERT_EQ(relabelled > 0, true);
  EXPECT_THAT(VerifyPlanClaims(plan),
              StatusIs(absl::StatusCode::kInternal, "is a split event but does not open"));
}

// Every golden plan, written by `compile`, passes.
TEST(PlanClaimsTest, EveryGoldenPlanPasses) {
  int seen = 0;
  for (const auto& dir :
       std::filesystem::directory_iterator(NPUPLAN_SOURCE_DIR "/testdata/plans")) {
    const std::string path = (dir.path() / "expected.plan.json").string();
    if (!std::filesystem::exists(path)) continue;
    absl::StatusOr<Plan> plan = ReadPlanFile(path);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_THAT(VerifyPlanClaims(*plan), IsOk()) << path;
    ++seen;
  }
  EXPECT_GT(seen, 5);
}

}  // namespace
}  // namespace npuplan
