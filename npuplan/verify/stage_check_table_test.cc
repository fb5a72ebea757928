// The stage-check table (stage_checks.def) is what VerifyPlan runs: every
// stage has a check, and every row refuses a plan that lies about its fact,
// by the row's own name, both alone and through VerifyPlan (what
// `npuplan verify` and --verify-each call).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "npuplan/events/event_id_allocation.h"
#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/memory/memory_planning.h"
#include "npuplan/plan/plan_claims.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/stage_checks.h"
#include "npuplan/verify/verify.h"

namespace npuplan::verify {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;

// a feeds b and c on two other streams, d joins them; mc2 uses an attached
// stream; the Loop w repeats a body on streams 2 and 0.
Plan StreamedPlan() {
  auto m = ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [64]}]},
    {"name": "b", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [64]}]},
    {"name": "c", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [64]}]},
    {"name": "mc2", "type": "MatmulAllReduce", "inputs": ["b:0"], "outputs": [{"shape": [64]}],
     "attrs": {"_test_stream": 1, "_test_attached": [3],
               "_attached_stream_info": {"_attached_stream_depend_value_list": [0]}}},
    {"name": "d", "type": "Add", "inputs": ["mc2:0", "c:0"], "attrs": {"_test_stream": 0},
     "outputs": [{"shape": [64]}]},
    {"name": "w", "type": "Loop", "inputs": ["d:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0},
     "outputs": [{"shape": [64]}]},
    {"name": "o", "type": "NetOutput", "inputs": ["w:0"], "attrs": {"_test_stream": 0}}],
   "subgraphs": [{"name": "body", "parent": "w", "nodes": [
    {"name": "bd", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [64]}]},
    {"name": "bb", "type": "Add", "inputs": ["bd:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [64]}]},
    {"name": "bo", "type": "NetOutput", "inputs": ["bb:0"], "attrs": {"_test_stream": 0}}]}]})json");
  EXPECT_TRUE(m.ok()) << m.status();
  return PlanFromModel(std::move(m).value());
}

// Every stage of the events and memory passes runs on StreamedPlan.
Plan FullPlan() {
  Plan plan = StreamedPlan();
  EXPECT_THAT(RunPasses(plan, Passes<MemoryPlanning, TaskCountAssignment, SyncEventInsertion,
                                     SyncEventOptimization, EventReuse, PhysicalStreamSplit,
                                     StreamActivation, EventIdAllocation, SyncNodeGeneration>()),
              IsOk());
  return plan;
}

NodeId Named(const Plan& plan, const char* name) { return plan.model.FindNode(name); }

// Per row name: how a plan lies about that row's fact.
const std::map<std::string, std::function<void(Plan&)>>& Lies() {
  static const auto* lies = new std::map<std::string, std::function<void(Plan&)>>{
      {"stream-ids", [](Plan& p) { p.model.node(Named(p, "d")).stream_id = 40; }},
      {"attached-streams", [](Plan& p) { p.streams.attached.push_back(77); }},
      {"memory", [](Plan& p) { p.memory.tensors.at(0).offset += 1; }},
      {"event-ids", [](Plan& p) { ++p.events.event_count; }},
      {"happens-before",
       [](Plan& p) {
         SyncEvent& e = p.events.events.at(0);
         std::swap(e.send, e.recv);
         std::swap(e.send_attached, e.recv_attached);
       }},
      {"in-place-writes",  // c now writes a in place while b, unordered with c, reads it
       [](Plan& p) {
         p.model.node(Named(p, "c")).attrs["_ref_input_index"] = AttrValue(int64_t{0});
       }},
      {"event-id-reuse",
       [](Plan& p) {
         for (SyncEvent& e : p.events.events) e.id = 0;
       }},
      {"physical-streams",
       [](Plan& p) {
         p.physical_stream.at(Named(p, "b").index()) = p.physical_stream.at(Named(p, "a").index());
       }},
      {"active-streams",
       [](Plan& p) {
         const NodeId a = Named(p, "a");
         p.model.node(a).attrs["active_stream_list"] =
             AttrValue::IntList{p.physical_stream.at(a.index())};
       }},
      {"loop-order",
       [](Plan& p) {  // the hub's tail gate no longer releases stream 2's: iterations overlap
         std::erase_if(p.events.events, [&](const SyncEvent& e) {
           return e.reason == SyncReason::kLoopNext && IsLoopGate(p.model.node(e.send));
         });
       }},
      {"loop-boundary",
       [](Plan& p) {  // the loop's input waited inside the body again, not at its entry gate
         const NodeId body_node = p.model.FindNode("bb");
         for (SyncEvent& e : p.events.events) {
           if (!IsLoopGate(p.model.node(e.recv))) continue;
           e.recv = body_node;
           break;
         }
       }},
      {"sync-nodes",
       [](Plan& p) {
         for (size_t i = 0; i < p.model.num_nodes(); ++i) {
           Node& n = p.model.node(NodeId(static_cast<int32_t>(i)));
           if (n.type == "Send") n.attrs.erase("event_id");
         }
       }},
      {"dynamic-senders",
       [](Plan& p) {  // the events now travel as attributes, which no node carries
         p.streams.mode = StreamMode::kDynamicMulti;
         p.partition.ran = true;
         p.partition.decision = PartitionDecision::kWholeDynamic;
       }},
  };
  return *lies;
}

TEST(StageCheckTableTest, EveryStageIsChecked) {
  // Checked outside the table: topo-sorted by the structure check,
  // partitioned and tasks by the plan's claims (stage_checks.def).
  const std::set<IrProperty> outside = {IrProperty::kTopoSorted, IrProperty::kPartitioned,
                                        IrProperty::kTasks};
  for (uint32_t bit = 1; bit <= static_cast<uint32_t>(IrProperty::kSyncNodes); bit <<= 1) {
    const IrProperty stage = static_cast<IrProperty>(bit);
    int rows = 0;
    for (const StageCheck& row : StageCheckTable()) rows += row.stage == stage;
    if (outside.count(stage)) {
      EXPECT_EQ(rows, 0) << PropertyNames(bit) << " has rows now: drop it from the outside set";
    } else {
      EXPECT_GE(rows, 1) << "stage " << PropertyNames(bit) << " has no row in stage_checks.def";
    }
  }
}

TEST(StageCheckTableTest, EveryRowRefusesAPlanThatLiesAboutItsFact) {
  const Plan good = FullPlan();
  ASSERT_THAT(VerifyPlan(good), IsOk());
  ASSERT_EQ(good.established & static_cast<IrProperties>(IrProperty::kSyncNodes),
            static_cast<IrProperties>(IrProperty::kSyncNodes));
  std::set<std::string> names;
  for (const StageCheck& row : StageCheckTable()) {
    SCOPED_TRACE(std::string(row.name));
    EXPECT_TRUE(names.insert(std::string(row.name)).second) << "two rows share a name";
    EXPECT_TRUE(Has(good.established, row.stage));
    Verification good_run(good);
    EXPECT_THAT(row.check(good_run), IsOk());
    auto lie = Lies().find(std::string(row.name));
    ASSERT_NE(lie, Lies().end()) << "no lying plan for row '" << row.name << "': add one to Lies()";
    Plan bad = good;
    lie->second(bad);
    const std::string prefix = "verifier[" + std::string(row.name);
    Verification bad_run(bad);
    const absl::Status alone = row.check(bad_run);
    EXPECT_EQ(alone.code(), absl::StatusCode::kInternal) << alone;
    EXPECT_EQ(std::string(alone.message()).rfind(prefix, 0), 0u) << alone;
    // Through VerifyPlan (structure, claims, then the table): refused too,
    // by this row or by an earlier rule that catches the same lie.
    const absl::Status all = VerifyPlan(bad);
    EXPECT_EQ(all.code(), absl::StatusCode::kInternal) << all;
    // With the stage unclaimed the row does not run: the table decides.
    Plan unclaimed = bad;
    unclaimed.established &= ~static_cast<IrProperties>(row.stage);
    const absl::Status rest = VerifyStageChecks(unclaimed);
    EXPECT_TRUE(rest.ok() || std::string(rest.message()).rfind(prefix, 0) != 0) << rest;
  }
  EXPECT_EQ(names.size(), Lies().size()) << "Lies() names a row the table does not have";
}

// compile --stats times each check by the names VerifyPlan reports: the
// structure, the claims, then every row that ran, in the table's order; a
// failing check reports nothing.
TEST(StageCheckTableTest, VerifyPlanReportsEachCheckItRan) {
  const Plan good = FullPlan();
  std::vector<std::string> ran;
  auto note = [&](const CheckTime& t) { ran.emplace_back(t.check); };
  ASSERT_THAT(VerifyPlan(good, note), IsOk());
  std::vector<std::string> want = {"structure", "claims"};
  for (const StageCheck& row : StageCheckTable()) want.emplace_back(row.name);
  EXPECT_EQ(ran, want);

  Plan bad = good;
  Lies().at("memory")(bad);
  ran.clear();
  EXPECT_FALSE(VerifyPlan(bad, note).ok());
  want.pop_back();  // memory is the last row and fails
  EXPECT_EQ(ran, want);
}

// The memory row runs on a second thread alongside the sync rows; the
// result must be what running the rows one by one gives. Every pair of lies
// (a plan can break several rules): the same status as the rows in order.
absl::Status OneByOne(const Plan& plan) {
  NPUPLAN_RETURN_IF_ERROR(VerifyStructure(plan.model));
  NPUPLAN_RETURN_IF_ERROR(VerifyPlanClaims(plan));
  Verification run(plan);
  for (const StageCheck& row : StageCheckTable()) {
    if (Has(plan.established, row.stage)) NPUPLAN_RETURN_IF_ERROR(row.check(run));
  }
  return absl::OkStatus();
}

// Whether the checks VerifyPlan runs before its memory row pass: structure,
// the claims but the memory section's, the rows before the first that takes
// the run.
bool BeforeTheMemoryRowPasses(const Plan& plan) {
  if (!VerifyStructure(plan.model).ok() || !VerifyPlanClaimsButMemory(plan).ok()) return false;
  Verification run(plan);
  for (const StageCheck& row : StageCheckTable()) {
    if (!Has(plan.established, row.stage) || row.stage == IrProperty::kMemoryPlanned) continue;
    if (row.takes_run) break;
    if (!row.check(run).ok()) return false;
  }
  return true;
}

TEST(StageCheckTableTest, RowsAlongsideReportWhatRowsOneByOneReport) {
  const Plan good = FullPlan();
  int alongside_rows = 0;
  for (const StageCheck& row : StageCheckTable()) {
    alongside_rows += row.alongside;
    EXPECT_FALSE(row.alongside && row.takes_run) << row.name;
  }
  ASSERT_GE(alongside_rows, 1) << "no row runs alongside: this test checks nothing";
  int refused = 0;
  for (const auto& [first, lie_first] : Lies()) {
    for (const auto& [second, lie_second] : Lies()) {
      if (first == second) continue;  // some lies undo themselves
      SCOPED_TRACE(first + " + " + second);
      Plan bad = good;
      lie_first(bad);
      lie_second(bad);
      const absl::Status want = OneByOne(bad);
      const absl::Status got = VerifyPlan(bad);
      EXPECT_EQ(got, want);
      refused += !want.ok();
    }
  }
  EXPECT_EQ(refused, static_cast<int>(Lies().size() * (Lies().size() - 1)));
}

// The compile driver's two parts (VerifyPlanButMemory while memory-planning
// still writes plan.memory, VerifyPlanMemory after): both pass exactly when
// VerifyPlan does, on every lie and pair of lies and on a memory section the
// plan does not claim; when the first passes, the second reports VerifyPlan's
// failure word for word; the first never looks at the memory section. The
// first says when the second may start beside it (the driver runs it then):
// on every plan VerifyPlan accepts, and the second gives the same answer
// there, also on plans whose first part goes on to fail.
TEST(StageCheckTableTest, TheTwoPartsPassExactlyWhenVerifyPlanDoes) {
  const Plan good = FullPlan();
  std::vector<std::pair<std::string, std::function<void(Plan&)>>> lies(Lies().begin(),
                                                                       Lies().end());
  lies.emplace_back("memory section unclaimed", [](Plan& p) {
    p.established &= ~static_cast<IrProperties>(IrProperty::kMemoryPlanned);
  });
  std::vector<std::vector<const std::function<void(Plan&)>*>> cases = {{}};
  for (const auto& [name, lie] : lies) {
    cases.push_back({&lie});
    for (const auto& [other_name, other] : lies) {
      if (name != other_name) cases.push_back({&lie, &other});
    }
  }
  int split_refusals = 0, started_beside_a_failing_first = 0, failed_before_start = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(c);
    Plan bad = good;
    for (const auto* lie : cases[c]) (*lie)(bad);
    const absl::Status whole = VerifyPlan(bad);
    bool may_start = false;
    absl::Status beside;
    const absl::Status first = VerifyPlanButMemory(bad, nullptr, [&] {
      EXPECT_FALSE(may_start) << "called twice";
      may_start = true;
      beside = VerifyPlanMemory(bad);
    });
    EXPECT_EQ(may_start, BeforeTheMemoryRowPasses(bad));
    if (whole.ok()) {
      EXPECT_TRUE(may_start);
    }
    const absl::Status second = VerifyPlanMemory(bad);
    if (may_start) {
      EXPECT_EQ(beside, second);
    }
    if (!first.ok()) {
      EXPECT_FALSE(whole.ok()) << first;
      started_beside_a_failing_first += may_start;
      failed_before_start += !may_start;
      continue;
    }
    EXPECT_TRUE(may_start);
    EXPECT_EQ(second, whole);
    split_refusals += !second.ok();
  }
  EXPECT_GE(split_refusals, 2) << "no plan fails only the memory part: the test checks little";
  EXPECT_GE(started_beside_a_failing_first, 1)
      << "no first part fails after the second may start: the test checks little";
  EXPECT_GE(failed_before_start, 1) << "the second may start before the claims have passed";

  // A memory section still being written is not read: no claim, no row.
  Plan unfinished = good;
  unfinished.memory = MemoryResult{};
  unfinished.memory.tensors.resize(3);  // garbage a reader would refuse
  EXPECT_THAT(VerifyPlanButMemory(unfinished), IsOk());
  EXPECT_FALSE(VerifyPlanMemory(unfinished).ok());
}

// The memory row is reported as having run alongside when sync rows ran
// (it overlaps them), in its table place either way.
TEST(StageCheckTableTest, TheMemoryRowRunsAlongsideTheSyncRows) {
  const Plan good = FullPlan();
  std::vector<std::pair<std::string, bool>> ran;
  ASSERT_THAT(VerifyPlan(good, [&](const CheckTime& t) { ran.emplace_back(t.check, t.alongside); }),
              IsOk());
  ASSERT_FALSE(ran.empty());
  EXPECT_EQ(ran.back(), (std::pair<std::string, bool>("memory", true)));
  for (size_t i = 0; i + 1 < ran.size(); ++i) EXPECT_FALSE(ran[i].second) << ran[i].first;

  // Memory planned, no events: nothing to overlap, it runs in order.
  Plan memory_only = StreamedPlan();
  ASSERT_THAT(RunPasses(memory_only, Passes<MemoryPlanning>()), IsOk());
  ran.clear();
  EXPECT_THAT(VerifyStageChecks(
                  memory_only, [&](const CheckTime& t) { ran.emplace_back(t.check, t.alongside); }),
              IsOk());
  ASSERT_FALSE(ran.empty());
  EXPECT_EQ(ran.back(), (std::pair<std::string, bool>("memory", false)));
}

}  // namespace
}  // namespace npuplan::verify
