#include "npuplan/exec/plan_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "npuplan/compiler/compiler.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/runtime/cpu_device.h"
#include "npuplan/sim/sim_testing.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verify.h"

namespace npuplan::exec {
namespace {

using ::npuplan::sim::testing::AddEvent;
using ::npuplan::sim::testing::PlanFromGraph;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::HasSubstr;

// Runs `plan` `repeat` times with jitter; returns the violations of the first
// run that has any (or of the last run).
absl::StatusOr<ExecResult> RunWithJitter(const Plan& plan, int repeat, uint64_t seed, double time_scale = 0,
                                         int64_t jitter_max_us = 300) {
  ExecOptions o;
  o.jitter = true;
  o.jitter_seed = seed;
  o.jitter_max_us = jitter_max_us;
  o.time_scale = time_scale;
  NPUPLAN_ASSIGN_OR_RETURN(auto exec, PlanExecutor::Create(plan, o));
  runtime::CpuDevice device;
  ExecResult last;
  for (int r = 0; r < repeat; ++r) {
    NPUPLAN_ASSIGN_OR_RETURN(last, exec->Run(device, r));
    if (!last.violations.empty()) return last;
  }
  return last;
}

// Runs `exec` up to `runs` times (run r uses jitter seed + r); returns the
// first violation message, or "" when no run had any.
absl::StatusOr<std::string> FirstViolation(PlanExecutor& exec, runtime::CpuDevice& device, int runs) {
  for (int r = 0; r < runs; ++r) {
    NPUPLAN_ASSIGN_OR_RETURN(ExecResult res, exec.Run(device, r));
    if (!res.violations.empty()) return res.messages[0];
  }
  return std::string();
}

// a(100) → b(1) → d(1) on s0; a → c(50) → d with c on s1; events a→c, c→d.
constexpr char kForkJoin[] = R"json({"name": "forkjoin", "nodes": [
  {"name": "w", "type": "Const", "outputs": [{"shape": [4]}]},
  {"name": "a", "type": "Relu", "inputs": ["w"], "attrs": {"_cost": 100, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "b", "type": "Relu", "inputs": ["a"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["a"], "attrs": {"_cost": 50, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "d", "type": "Add", "inputs": ["b", "c"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
]})json";

absl::StatusOr<Plan> ForkJoin(std::string kind = "event") {
  NPUPLAN_ASSIGN_OR_RETURN(Plan plan, PlanFromGraph(kForkJoin));
  AddEvent(plan, "a", "c", 0, kind);
  AddEvent(plan, "c", "d", 1, kind);
  return plan;
}

TEST(PlanExecutorTest, RunsValidPlanWithoutViolations) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, ForkJoin());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, RunWithJitter(plan, 10, 1, /*time_scale=*/2));
  EXPECT_EQ(r.tasks, 4u);
  EXPECT_EQ(r.streams, 2u);
  EXPECT_TRUE(r.violations.empty()) << r.messages[0];
}

TEST(PlanExecutorTest, RunsNotifyPlanWithoutViolations) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, ForkJoin("notify"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, RunWithJitter(plan, 10, 2, 2));
  EXPECT_TRUE(r.violations.empty()) << r.messages[0];
}

// Every event of the plan, deleted in turn, is caught within a bounded number of runs.
// Issue 23: a device event id is one object. s0 records e1 (a->b) and then
// e2 (c->d) on the same id 0 before s1 — held back by x (c2->z, recorded
// after both) — has waited for e1: the second record finds the first pending.
constexpr char kWrongReuse[] = R"json({"name": "reuse", "nodes": [
  {"name": "a", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["a"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "c2", "type": "Relu", "inputs": ["c"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "z", "type": "Relu", "inputs": ["c2"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "b", "type": "Add", "inputs": ["a", "z"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "d", "type": "Add", "inputs": ["c", "b"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]}
]})json";

TEST(PlanExecutorTest, ReportsASecondRecordOfASharedIdBeforeTheFirstWasWaitedFor) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kWrongReuse));
  AddEvent(plan, "a", "b", 0);
  AddEvent(plan, "c", "d", 0);  // wrong: shares a->b's id while a->b is pending
  AddEvent(plan, "c2", "z", 1);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan));
  runtime::CpuDevice device;
  for (int run = 0; run < 3; ++run) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, exec->Run(device, run));
    ASSERT_FALSE(r.event_misuses.empty()) << "run " << run;
    EXPECT_THAT(r.event_misuses,
                ::testing::Contains(HasSubstr(
                    "event id 0: 'c' -> 'd' recorded it on stream 0 while the record of 'a' -> 'b' "
                    "was still pending")));
    EXPECT_THAT(r.messages, ::testing::Contains(HasSubstr("'c' -> 'd' recorded it")));
  }
  // Each edge with its own id: nothing to report.
  plan.events.events[1].id = 2;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto fixed, PlanExecutor::Create(plan));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult ok, fixed->Run(device, 0));
  EXPECT_TRUE(ok.event_misuses.empty()) << ok.event_misuses.front();
}

// A valid reuse (ping-pong: b waits for a->b before b->c is recorded, and d's
// stream passes b before d waits for c->d) never reports, whatever the timing.
constexpr char kPingPong[] = R"json({"name": "pingpong", "nodes": [
  {"name": "a", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "b", "type": "Relu", "inputs": ["a"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["b"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "d", "type": "Relu", "inputs": ["c"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]}
]})json";

TEST(PlanExecutorTest, AValidlySharedIdRunsWithoutMisuse) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kPingPong));
  AddEvent(plan, "a", "b", 0);
  AddEvent(plan, "b", "c", 1);
  AddEvent(plan, "c", "d", 0);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      ExecResult r, RunWithJitter(plan, 30, 11, /*time_scale=*/0, /*jitter_max_us=*/100));
  EXPECT_TRUE(r.violations.empty());
  EXPECT_TRUE(r.event_misuses.empty()) << r.event_misuses.front();
}

TEST(PlanExecutorTest, CatchesEveryDroppedEvent) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan valid, ForkJoin());
  for (size_t drop = 0; drop < valid.events.events.size(); ++drop) {
    Plan plan = valid;
    plan.events.events.erase(plan.events.events.begin() + static_cast<long>(drop));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, RunWithJitter(plan, 20, 7, /*time_scale=*/10));
    ASSERT_FALSE(r.violations.empty()) << "dropping event " << drop << " went unnoticed";
    const std::string consumer = drop == 0 ? "'c'" : "'d'";
    EXPECT_THAT(r.messages[0], HasSubstr(consumer + " (stream"));
    EXPECT_THAT(r.messages[0], HasSubstr(drop == 0 ? "producer 'a'" : "producer 'c'"));
  }
}

// The consumer sits far down its stream; only a late start of the producer's
// stream (stream skew) exposes the missing event.
TEST(PlanExecutorTest, StreamSkewExposesRaceDeepInQueue) {
  std::string nodes = R"json({"name": "p", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 1}, "outputs": [{"shape": [4]}]})json";
  std::string prev;
  for (int i = 0; i < 20; ++i) {
    nodes += StrCat(",\n{\"name\": \"q", i, "\", \"type\": \"Relu\", ", prev.empty() ? "" : StrCat("\"inputs\": [\"", prev, "\"], "),
                    "\"attrs\": {\"_cost\": 1, \"_test_stream\": 0}, \"outputs\": [{\"shape\": [4]}]}");
    prev = StrCat("q", i);
  }
  nodes += StrCat(",\n{\"name\": \"c\", \"type\": \"Add\", \"inputs\": [\"", prev,
                  "\", \"p\"], \"attrs\": {\"_cost\": 1, \"_test_stream\": 0}, \"outputs\": [{\"shape\": [4]}]}");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(StrCat("{\"name\": \"deep\", \"nodes\": [", nodes, "]}")));
  ExecOptions o;
  o.jitter = true;
  o.jitter_seed = 11;
  o.jitter_max_us = 50;
  o.stream_skew_us = 20000;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, o));  // no event p → c
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*exec, device, 30));
  EXPECT_THAT(first, HasSubstr("'c' (stream 0) started before its producer 'p'"));
  AddEvent(plan, "p", "c", 0);  // the valid plan never trips, skew or not
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto ok, PlanExecutor::Create(plan, o));
  for (int r = 0; r < 5; ++r) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, ok->Run(device, r));
    EXPECT_TRUE(res.violations.empty()) << res.messages[0];
  }
}

// a(s0) → h(s1, attached stream 2 which needs input 0) → o = NetOutput(s0).
// The attached task waits for a (attached-value); the NetOutput waits for the
// attached task (attached-end) besides h itself (data-edge).
constexpr char kAttached[] = R"json({"name": "att", "nodes": [
  {"name": "a", "type": "Relu", "attrs": {"_cost": 100, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "h", "type": "HcomAllReduce", "inputs": ["a"], "outputs": [{"shape": [4]}],
   "attrs": {"_cost": 1, "_test_stream": 1, "_test_attached": [2],
             "_attached_stream_info": {"_attached_stream_depend_value_list": [0]}}},
  {"name": "o", "type": "NetOutput", "inputs": ["h"], "attrs": {"_test_stream": 0}}
]})json";

absl::StatusOr<Plan> AttachedPlan() {
  NPUPLAN_ASSIGN_OR_RETURN(Plan plan, PlanFromGraph(kAttached));
  AddEvent(plan, "a", "h", 0);                           // data-edge
  AddEvent(plan, "a", "h", 1, "event", -1, 0);           // attached-value
  AddEvent(plan, "h", "o", 2);                           // data-edge
  AddEvent(plan, "h", "o", 3, "event", 0, -1);           // attached-end
  return plan;
}

TEST(PlanExecutorTest, ChecksAttachedStreamTasks) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan valid, AttachedPlan());
  ExecOptions o;
  o.jitter = true;
  o.jitter_max_us = 200;
  o.stream_skew_us = 5000;
  o.time_scale = 20;
  runtime::CpuDevice device;
  {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(valid, o));
    for (int r = 0; r < 8; ++r) {
      NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, exec->Run(device, r));
      EXPECT_EQ(res.tasks, 4u);  // a, h, h's attached task, o
      EXPECT_TRUE(res.violations.empty()) << res.messages[0];
    }
  }
  struct Case {
    size_t drop;
    std::string expected;
  };
  const Case cases[] = {
      {1, "'h' (attached 0, stream 2) started before its producer 'a' (stream 0) finished [attached-value"},
      {3, "'o' (stream 0) started before its producer 'h' (attached 0, stream 2) finished [attached-end"},
  };
  for (const Case& c : cases) {
    Plan plan = valid;
    plan.events.events.erase(plan.events.events.begin() + static_cast<long>(c.drop));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, o));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*exec, device, 30));
    EXPECT_THAT(first, HasSubstr(c.expected)) << "dropping event " << c.drop;
  }
}

// The compiled golden plan with attached streams (GE's attached-stream
// Send/Recv nodes sit on the attached stream): valid as compiled; dropping
// the attached-end event lets the NetOutput overtake the attached task.
TEST(PlanExecutorTest, CompiledAttachedStreamPlanRunsCleanAndMissesNoDroppedEvent) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      Plan valid, ReadPlanFile(StrCat(NPUPLAN_SOURCE_DIR, "/testdata/plans/labels_attached/expected.plan.json")));
  ExecOptions o;
  o.jitter = true;
  o.jitter_max_us = 200;
  o.stream_skew_us = 20000;
  runtime::CpuDevice device;
  {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(valid, o));
    for (int r = 0; r < 8; ++r) {
      NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, exec->Run(device, r));
      EXPECT_TRUE(res.violations.empty()) << res.messages[0];
    }
  }
  Plan plan = valid;
  auto& events = plan.events.events;
  const size_t before = events.size();
  events.erase(std::remove_if(events.begin(), events.end(), [](const SyncEvent& e) { return e.reason == SyncReason::kAttachedEnd; }),
               events.end());
  ASSERT_LT(events.size(), before);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*exec, device, 40));
  EXPECT_THAT(first, HasSubstr("[attached-end"));
}

TEST(PlanExecutorTest, RunsWithoutJitterOrCost) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, ForkJoin());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan));
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, exec->Run(device));
  EXPECT_TRUE(r.violations.empty());
  EXPECT_EQ(device.live_streams(), 0u);
  EXPECT_EQ(device.live_events(), 0u);
}

// x → If(p){then: Data(1) → t1(s1) → NetOutput} → c; the subgraph input and output are crossed by events.
constexpr char kIfGraph[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 40, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "subgraphs": ["then"], "attrs": {"_test_stream": 0},
   "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [{"name": "then", "parent": "p", "nodes": [
  {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 40, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t_out", "type": "NetOutput", "inputs": ["t1"]}]}]})json";

TEST(PlanExecutorTest, ChecksAcrossSubgraphBoundaries) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfGraph));
  Plan valid = plan;
  AddEvent(valid, "x", "t1", 0);
  AddEvent(valid, "t1", "c", 1);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult ok, RunWithJitter(valid, 5, 3, 10));
  EXPECT_TRUE(ok.violations.empty()) << ok.messages[0];

  Plan no_input = plan;  // t1 may start before x, its parent's input
  AddEvent(no_input, "t1", "c", 1);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult in, RunWithJitter(no_input, 20, 3, 10));
  ASSERT_FALSE(in.violations.empty());
  EXPECT_THAT(in.messages[0], HasSubstr("'t1' (stream 1) started before its producer 'x'"));
  EXPECT_THAT(in.messages[0], HasSubstr("via 't_in'"));

  Plan no_output = plan;  // c may start before t1, its parent's subgraph output
  AddEvent(no_output, "x", "t1", 0);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult out, RunWithJitter(no_output, 20, 3, 10));
  ASSERT_FALSE(out.violations.empty());
  EXPECT_THAT(out.messages[0], HasSubstr("'c' (stream 0) started before its producer 't1'"));
  EXPECT_THAT(out.messages[0], HasSubstr("subgraph-output"));
}

// x → If p {then: t1 (s1, long); else: e1 (s1, short)} → c. Only the then
// branch has its events; the else branch has none.
constexpr char kIfElseGraph[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 10, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0},
   "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "then", "parent": "p", "nodes": [
   {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 40, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "t_out", "type": "NetOutput", "inputs": ["t1"]}]},
  {"name": "else", "parent": "p", "nodes": [
   {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e1", "type": "Relu", "inputs": ["e_in"], "attrs": {"_cost": 30, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e_out", "type": "NetOutput", "inputs": ["e1"]}]}]})json";

TEST(PlanExecutorTest, RunsAndChecksOnlyTheBranchThatRuns) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfElseGraph));
  AddEvent(plan, "x", "t1", 0);
  AddEvent(plan, "t1", "c", 1);
  ExecOptions o;
  o.jitter = true;
  o.jitter_max_us = 300;
  o.time_scale = 10;
  runtime::CpuDevice device;
  // Default: the longer branch (then), whose events are all there.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto then_exec, PlanExecutor::Create(plan, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, then_exec->Run(device, 0));
  EXPECT_EQ(r.tasks, 4u);  // x, p (its owner, on stream 0), t1, c: the else branch does not run
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*then_exec, device, 10));
  EXPECT_EQ(first, "");
  // The else branch: nothing orders e1 after x or c after e1.
  o.control_flow.branch = 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto else_exec, PlanExecutor::Create(plan, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(first, FirstViolation(*else_exec, device, 20));
  EXPECT_THAT(first, HasSubstr("started before its producer"));
  EXPECT_THAT(first, HasSubstr("'e1'"));
}

// The dynamic path (docs/auto-streams.md item 6): x (s1) → If p (s0) → c (s1),
// both branches on s0 as GE forces subgraph owners' Data/NetOutput. The event
// table names the owner p as the sender of p → c (its `_send_event_ids`), and
// GE's executor records it once p's subgraph is done, whichever branch ran.
constexpr char kDynamicIfGraph[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 10, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "subgraphs": ["then", "else"],
   "attrs": {"_test_stream": 0, "_recv_event_ids": [0], "_send_event_ids": [1]}, "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_cost": 1, "_test_stream": 1}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "then", "parent": "p", "nodes": [
   {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 40, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "t_out", "type": "NetOutput", "inputs": ["t1"], "attrs": {"_test_stream": 0}}]},
  {"name": "else", "parent": "p", "nodes": [
   {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e1", "type": "Relu", "inputs": ["e_in"], "attrs": {"_cost": 30, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "e_out", "type": "NetOutput", "inputs": ["e1"], "attrs": {"_test_stream": 0}}]}]})json";

TEST(PlanExecutorTest, DynamicPathOwnerRecordsAfterWhicheverBranchRan) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kDynamicIfGraph));
  plan.streams.mode = StreamMode::kDynamicMulti;
  AddEvent(plan, "x", "p", 0);
  AddEvent(plan, "p", "c", 1);
  ExecOptions o;
  o.jitter = true;
  o.jitter_max_us = 300;
  o.time_scale = 10;
  runtime::CpuDevice device;
  for (int32_t branch : {0, 1}) {
    o.control_flow.branch = branch;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, o));
    // Nothing is skipped: c waits for the record after the branch that ran.
    EXPECT_TRUE(exec->program().skipped.empty()) << "branch " << branch;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*exec, device, 10));
    EXPECT_EQ(first, "") << "branch " << branch;
  }
}

// x → While w {body: b_in → b1 (s1) → b2 (s0) → b_out} → y, event b1 → b2.
// From the second iteration b1 reads b2's value of the iteration before, and
// nothing orders it: only a run with several iterations can catch that.
constexpr char kWhileGraph[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "w", "type": "While", "inputs": ["x"], "subgraphs": ["cond", "body"], "attrs": {"_test_stream": 0},
   "outputs": [{"shape": [4]}]},
  {"name": "y", "type": "Relu", "inputs": ["w"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "cond", "parent": "w", "nodes": [
   {"name": "c_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
   {"name": "c_out", "type": "NetOutput", "inputs": ["c_in"]}]},
  {"name": "body", "parent": "w", "nodes": [
   {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
   {"name": "b1", "type": "Relu", "inputs": ["b_in"], "attrs": {"_cost": 5, "_test_stream": STREAM}, "outputs": [{"shape": [4]}]},
   {"name": "b2", "type": "Relu", "inputs": ["b1"], "attrs": {"_cost": 40, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "b_out", "type": "NetOutput", "inputs": ["b2"]}]}]})json";

absl::StatusOr<Plan> WhilePlan(int b1_stream) {
  const std::string_view graph = kWhileGraph;
  const size_t at = graph.find("STREAM");
  const std::string text = StrCat(graph.substr(0, at), b1_stream, graph.substr(at + 6));
  NPUPLAN_ASSIGN_OR_RETURN(Plan plan, PlanFromGraph(text));
  if (b1_stream != 0) {
    AddEvent(plan, "x", "b1", 0);
    AddEvent(plan, "b1", "b2", 1);
  }
  return plan;
}

TEST(PlanExecutorTest, ChecksLoopCarriedDependenciesWhenLoopsIterate) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, WhilePlan(1));
  ExecOptions o;
  o.jitter = true;
  o.jitter_max_us = 300;
  o.time_scale = 10;
  o.stream_skew_us = 200;
  runtime::CpuDevice device;
  // One iteration: every dependency is ordered.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto once, PlanExecutor::Create(plan, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*once, device, 10));
  EXPECT_EQ(first, "");
  // Three: b1 of iteration 2 may start while b2 of iteration 1 still runs.
  o.control_flow.loop_iterations = 3;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto thrice, PlanExecutor::Create(plan, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, thrice->Run(device, 0));
  EXPECT_EQ(r.tasks, 9u);  // x, w (the owner, on stream 0), 3 × (b1, b2), y
  NPUPLAN_ASSERT_OK_AND_ASSIGN(first, FirstViolation(*thrice, device, 20));
  EXPECT_THAT(first, HasSubstr("'b1' (stream 1) started before its producer 'b2' (stream 0) finished [loop-carried"));
  EXPECT_THAT(first, HasSubstr("consumer run "));
  // With b1 and b2 on one stream the iterations are ordered by the queue.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan serial, WhilePlan(0));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto ordered, PlanExecutor::Create(serial, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(first, FirstViolation(*ordered, device, 10));
  EXPECT_EQ(first, "");
}

// Jittered runs with every loop body run `iterations` times.
ExecOptions JitteredLoops(int64_t iterations) {
  ExecOptions o;
  o.jitter = true;
  o.jitter_max_us = 300;
  o.time_scale = 10;
  o.stream_skew_us = 200;
  o.control_flow.loop_iterations = iterations;
  return o;
}

// The same plan with a loop-next event b2 → b1 of the shape npuplan wrote
// before tail gates: recorded after its wait in the order, so the first
// iteration's wait has no record — a wait-reset device blocks there. The
// program skips it like any backward event, and verify refuses it. Into an
// attached slot (as npuplan wrote it before head gates) the program binds
// it to the previous iteration's record, so a run shows the first
// iteration's wait without one; verify refuses that too.
TEST(PlanExecutorTest, ABackwardLoopNextEventIsRefused) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, WhilePlan(1));
  AddEvent(plan, "b2", "b1", 2);
  plan.events.events.back().reason = SyncReason::kLoopNext;
  const ExecOptions o = JitteredLoops(3);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, o));
  ASSERT_EQ(exec->program().skipped.size(), 1u);
  EXPECT_EQ(exec->program().skipped[0].reason, "backward");
  EXPECT_THAT(verify::VerifyHappensBefore(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "runs backwards in execution order (a loop-next event waited before it "
                       "is recorded: on a wait-reset device the first iteration's wait blocks)"));
}

// A graph compiled with the default options.
absl::StatusOr<Plan> CompileGraph(std::string_view graph) {
  NPUPLAN_ASSIGN_OR_RETURN(Model model, ParseGraphJson(graph, "g.json"));
  DecisionLog log(false);
  Statistics stats;
  return Compile(std::move(model), CompileConfig{}, log, stats);
}

int64_t StreamOf(const Plan& plan, std::string_view node) {
  return plan.physical_stream[plan.model.FindNode(node).index()];
}

// The plan's loop-next events as "send->recv".
std::vector<std::string> LoopNextEvents(const Plan& plan) {
  std::vector<std::string> out;
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason == SyncReason::kLoopNext)
      out.push_back(StrCat(plan.model.node(e.send).name, "->", plan.model.node(e.recv).name));
  }
  return out;
}

// A graph of x → pre → ONNX Loop 'l' → post → out, whose body 'l' starts
// with the Data nodes b_iter, b_cond (the cond) and b_in (the loop variable)
// and goes on with `rest`: the body's other nodes, the closing of its node
// list and graph, and any further subgraphs, then "]}".
std::string OnnxLoopGraph(std::string_view rest) {
  return StrCat(R"json({"format": "npuplan.graph/1", "name": "g", "nodes": [
    {"name": "x", "type": "Data", "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "c0", "type": "Data", "outputs": [{"shape": [1], "dtype": "bool"}]},
    {"name": "pre", "type": "Relu", "inputs": ["x:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "l", "type": "Loop", "inputs": ["c0:0", "pre:0"], "subgraphs": ["body"],
     "attrs": {"_onnx_absent_inputs": [0]}, "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "post", "type": "Relu", "inputs": ["l:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "out", "type": "NetOutput", "inputs": ["post:0"]}],
    "subgraphs": [
      {"name": "body", "parent": "l", "nodes": [
        {"name": "b_iter", "type": "Data", "attrs": {"_onnx_absent_parent_input": true}, "outputs": [{"shape": [1], "dtype": "int64"}]},
        {"name": "b_cond", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [64], "dtype": "float32"}]},
)json",
                rest);
}

// Twenty jittered runs with 3 loop iterations and no violation, then five
// with no misused device id.
void ExpectCleanIterations(const Plan& plan) {
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, JitteredLoops(3)));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*exec, device, 20));
  EXPECT_EQ(first, "");
  for (int r = 0; r < 5; ++r) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, exec->Run(device, r));
    EXPECT_TRUE(res.event_misuses.empty()) << res.event_misuses.front();
  }
}

// Compiled end to end: an HcomAllReduce in a While body runs on a stream of
// its own, and the compiler's loop-order events keep three jittered
// iterations free of races (without them the next iteration's cond read the
// loop variable before the all-reduce wrote it).
TEST(PlanExecutorTest, ACompiledLoopAcrossStreamsRunsItsIterationsInOrder) {
  constexpr char kGraph[] = R"json({"format": "npuplan.graph/1", "name": "g", "nodes": [
    {"name": "x", "type": "Data", "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "pre", "type": "Relu", "inputs": ["x:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "w", "type": "While", "inputs": ["pre:0"], "subgraphs": ["cond", "body"], "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "post", "type": "Relu", "inputs": ["w:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "out", "type": "NetOutput", "inputs": ["post:0"]}],
    "subgraphs": [
      {"name": "cond", "parent": "w", "nodes": [
        {"name": "c_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "c_less", "type": "Less", "inputs": ["c_in:0"], "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "c_out", "type": "NetOutput", "inputs": ["c_less:0"]}]},
      {"name": "body", "parent": "w", "nodes": [
        {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "b_relu", "type": "Relu", "inputs": ["b_in:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "b_ar", "type": "HcomAllReduce", "inputs": ["b_relu:0"], "attrs": {"_cost": 40}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "b_out", "type": "NetOutput", "inputs": ["b_ar:0"]}]}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileGraph(kGraph));
  ASSERT_NE(StreamOf(plan, "b_ar"), StreamOf(plan, "c_less"));
  // The barrier: the body's NetOutput ends it on a stream of its own (the
  // hub); b_ar's and b_relu's events to the hub's tail gate are implied by
  // their data edges into it (exact drops them), and the hub's gate releases
  // c_less's stream's.
  EXPECT_THAT(LoopNextEvents(plan), ::testing::ElementsAre("w_LoopTail_2->w_LoopTail_0"));
  EXPECT_EQ(StreamOf(plan, "c_less"), 0);
  const ExecOptions o = JitteredLoops(3);
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*exec, device, 20));
  EXPECT_EQ(first, "");
  // Events into and out of the loop wait and record at its gates, once per
  // loop run: no device id is misused as a wait-reset device would refuse.
  // Recorded by the body's last task instead (every iteration, waited once
  // after the loop), the id is.
  std::vector<size_t> leaving;
  for (size_t i = 0; i < plan.events.events.size(); ++i) {
    const Node& send = plan.model.node(plan.events.events[i].send);
    if (IsLoopGate(send) && GetStringAttr(send.attrs, "loop_gate") == "exit") leaving.push_back(i);
  }
  ASSERT_FALSE(leaving.empty());
  for (int r = 0; r < 5; ++r) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, exec->Run(device, r));
    EXPECT_TRUE(res.event_misuses.empty()) << res.event_misuses.front();
  }
  Plan crossing = plan;
  crossing.events.events[leaving[0]].send = crossing.model.FindNode("b_ar");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto misused, PlanExecutor::Create(crossing, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, misused->Run(device, 0));
  ASSERT_FALSE(res.event_misuses.empty());
  EXPECT_THAT(res.event_misuses.front(), HasSubstr("'b_ar' -> 'post'"));
  // The same plan without its loop-next event races in some run.
  std::erase_if(plan.events.events,
                [](const SyncEvent& e) { return e.reason == SyncReason::kLoopNext; });
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto racy, PlanExecutor::Create(plan, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(first, FirstViolation(*racy, device, 20));
  EXPECT_THAT(first, HasSubstr("[loop-carried"));
}

// With every If/Case taking branch 0, then branch 1, and loop bodies run
// `iterations` times: five jittered runs without a violation, then one
// without a misused device id.
void ExpectEachBranchRunsClean(const Plan& plan, int64_t iterations) {
  runtime::CpuDevice device;
  for (int32_t branch : {0, 1}) {
    ExecOptions o = JitteredLoops(iterations);
    o.control_flow.branch = branch;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, o));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*exec, device, 5));
    EXPECT_EQ(first, "") << "branch " << branch;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, exec->Run(device, 0));
    EXPECT_TRUE(res.event_misuses.empty())
        << "branch " << branch << ": " << res.event_misuses.front();
  }
}

// Compiled end to end: the then branch's all-reduce and the If's reader run
// on the HCCL stream, the rest on stream 0. One branch runs: the events into and out of it wait and
// record at the If's gates, which run whichever branch is taken, so both choices run clean. Waited
// inside the branch, the record stays set when the other branch runs; recorded inside it, the wait
// after the If has none.
TEST(PlanExecutorTest, ACompiledIfAcrossStreamsRunsEitherBranchWithoutMisuse) {
  constexpr char kGraph[] = R"json({"format": "npuplan.graph/1", "name": "g", "nodes": [
    {"name": "x", "type": "Data", "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "c", "type": "Data", "outputs": [{"shape": [1], "dtype": "bool"}]},
    {"name": "pre", "type": "Relu", "inputs": ["x:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "p", "type": "If", "inputs": ["c:0", "pre:0"], "subgraphs": ["then", "else"], "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "post", "type": "HcomAllReduce", "inputs": ["p:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "out", "type": "NetOutput", "inputs": ["post:0"]}],
    "subgraphs": [
      {"name": "then", "parent": "p", "nodes": [
        {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "t_ar", "type": "HcomAllReduce", "inputs": ["t_in:0"], "attrs": {"_cost": 40}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "t_out", "type": "NetOutput", "inputs": ["t_ar:0"]}]},
      {"name": "else", "parent": "p", "nodes": [
        {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "e_relu", "type": "Relu", "inputs": ["e_in:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "e_out", "type": "NetOutput", "inputs": ["e_relu:0"]}]}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileGraph(kGraph));
  ASSERT_NE(StreamOf(plan, "t_ar"), StreamOf(plan, "pre"));
  int64_t entry = -1, exit = -1;
  for (size_t i = 0; i < plan.events.events.size(); ++i) {
    const SyncEvent& e = plan.events.events[i];
    if (IsLoopGate(plan.model.node(e.recv))) entry = static_cast<int64_t>(i);
    if (IsLoopGate(plan.model.node(e.send))) exit = static_cast<int64_t>(i);
  }
  ASSERT_GE(entry, 0);
  ASSERT_GE(exit, 0);
  ExpectEachBranchRunsClean(plan, 1);
  runtime::CpuDevice device;
  ExecOptions other = JitteredLoops(1);
  other.control_flow.branch = 1;  // the else branch: t_ar does not run
  Plan into = plan;
  into.events.events[static_cast<size_t>(entry)].recv = into.model.FindNode("t_ar");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto stale, PlanExecutor::Create(into, other));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, stale->Run(device, 0));
  ASSERT_FALSE(res.event_misuses.empty());
  EXPECT_THAT(res.event_misuses.front(), HasSubstr("was never consumed by a wait"));
  Plan out_of = plan;
  out_of.events.events[static_cast<size_t>(exit)].send = out_of.model.FindNode("t_out");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto blocked, PlanExecutor::Create(out_of, other));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(res, blocked->Run(device, 0));
  ASSERT_FALSE(res.event_misuses.empty());
  EXPECT_THAT(res.event_misuses.front(), HasSubstr("has no record enqueued before it"));
  EXPECT_THAT(verify::VerifyPlan(into),
              StatusIs(absl::StatusCode::kInternal, "verifier[loop-boundary]"));
  EXPECT_THAT(verify::VerifyLoopBoundaries(out_of),
              StatusIs(absl::StatusCode::kInternal, "recorded inside a branch of 'p'"));
}

// x → pre → w: While → post, with an If `owner` in the cond (`in_cond`) or
// the body whose then branch starts with an MC2-like node t_mm (a main task
// and an attached one on a stream nothing else uses) and whose else branch
// is a Relu.
std::string WhileWithAnAttachedBranch(bool in_cond) {
  constexpr std::string_view kF32 = R"json([{"shape": [64], "dtype": "float32"}])json";
  constexpr std::string_view kBool = R"json([{"shape": [1], "dtype": "bool"}])json";
  const std::string owner = in_cond ? "c_if" : "b_if";
  const std::string cond = in_cond ? StrCat(R"json(
        {"name": "c_c", "type": "Less", "inputs": ["c_in:0"], "outputs": )json",
                                            kBool, R"json(},
        {"name": "c_if", "type": "If", "inputs": ["c_c:0", "c_in:0"], "subgraphs": ["then", "else"], "outputs": )json",
                                            kF32, R"json(},
        {"name": "c_less", "type": "Less", "inputs": ["c_if:0"], "outputs": )json",
                                            kBool, "}")
                                   : StrCat(R"json(
        {"name": "c_less", "type": "Less", "inputs": ["c_in:0"], "outputs": )json",
                                            kBool, "}");
  const std::string body = in_cond ? StrCat(R"json(
        {"name": "b_ar", "type": "HcomAllReduce", "inputs": ["b_in:0"], "outputs": )json",
                                            kF32, "}")
                                   : StrCat(R"json(
        {"name": "b_c", "type": "Less", "inputs": ["b_in:0"], "outputs": )json",
                                            kBool, R"json(},
        {"name": "b_if", "type": "If", "inputs": ["b_c:0", "b_in:0"], "subgraphs": ["then", "else"], "outputs": )json",
                                            kF32, R"json(},
        {"name": "b_ar", "type": "HcomAllReduce", "inputs": ["b_if:0"], "outputs": )json",
                                            kF32, "}");
  return StrCat(R"json({"format": "npuplan.graph/1", "name": "g", "nodes": [
    {"name": "x", "type": "Data", "outputs": )json",
                kF32, R"json(},
    {"name": "pre", "type": "Relu", "inputs": ["x:0"], "outputs": )json",
                kF32, R"json(},
    {"name": "w", "type": "While", "inputs": ["pre:0"], "subgraphs": ["cond", "body"], "outputs": )json",
                kF32, R"json(},
    {"name": "post", "type": "Relu", "inputs": ["w:0"], "outputs": )json",
                kF32, R"json(},
    {"name": "out", "type": "NetOutput", "inputs": ["post:0"]}],
    "subgraphs": [
      {"name": "cond", "parent": "w", "nodes": [
        {"name": "c_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": )json",
                kF32, "},", cond, R"json(,
        {"name": "c_out", "type": "NetOutput", "inputs": ["c_less:0"]}]},
      {"name": "body", "parent": "w", "nodes": [
        {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": )json",
                kF32, "},", body, R"json(,
        {"name": "b_out", "type": "NetOutput", "inputs": ["b_ar:0"]}]},
      {"name": "then", "parent": ")json",
                owner, R"json(", "nodes": [
        {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": )json",
                kF32, R"json(},
        {"name": "t_mm", "type": "MatMul", "inputs": ["t_in:0"], "attrs": {"_attached_stream_info_list": [{"_attached_resource_name": "s", "_attached_resource_reuse_key": "k0", "_attached_resource_required_flag": true, "_attached_resource_depend_value_list_int": [0]}]}, "outputs": )json",
                kF32, R"json(},
        {"name": "t_out", "type": "NetOutput", "inputs": ["t_mm:0"]}]},
      {"name": "else", "parent": ")json",
                owner, R"json(", "nodes": [
        {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": )json",
                kF32, R"json(},
        {"name": "e_relu", "type": "Relu", "inputs": ["e_in:0"], "outputs": )json",
                kF32, R"json(},
        {"name": "e_out", "type": "NetOutput", "inputs": ["e_relu:0"]}]}]})json");
}

// t_mm starts a branch of the If: the event into its attached stream from
// before the branch (a loop-fork from the cond when the If is in the body;
// the loop's head-gate event into the next iteration when it is in the
// cond, the loop's first run) cannot wait at a gate before the If (gates are
// main-stream nodes). A head gate at the start of the branch, on t_mm's main
// stream, records for it instead, and waits at the If's entry gate. (The
// body case waited inside the branch for a record made outside it; the cond
// case fell back to a backward event, which verify refuses: it did not
// compile.) Both branches run three jittered iterations clean, optimised or
// not.
TEST(PlanExecutorTest, AnAttachedTaskStartingABranchInALoopWaitsForTheBranchHeadGate) {
  for (const bool in_cond : {false, true}) {
    for (const char* mode : {"", "LoadBalance:4", "none"}) {
      SCOPED_TRACE(StrCat(in_cond ? "cond" : "body", " ", mode));
      const bool unoptimised = std::string_view(mode) == "none";
      CompileConfig config;
      config.read_environment = false;
      if (unoptimised) {
        config.option_overrides["npuplan.eventOptimization"] = "none";
      } else if (*mode != '\0') {
        config.option_overrides["ge.autoMultistreamParallelMode"] = mode;
      }
      NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model,
                                   ParseGraphJson(WhileWithAnAttachedBranch(in_cond), "g.json"));
      DecisionLog log(false);
      Statistics stats;
      NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Compile(std::move(model), config, log, stats));
      const NodeId head = plan.model.FindNode(
          StrCat(in_cond ? "c_if" : "b_if", "_BranchHead_", StreamOf(plan, "t_mm")));
      ASSERT_TRUE(head.valid());
      EXPECT_EQ(plan.model.node(head).graph, plan.model.node(plan.model.FindNode("t_mm")).graph);
      EXPECT_TRUE(std::any_of(
          plan.events.events.begin(), plan.events.events.end(), [&](const SyncEvent& e) {
            return e.send == head && plan.model.node(e.recv).name == "t_mm" && e.recv_attached == 0;
          }));
      // Unoptimised, the barrier's event from t_mm's attached task (the
      // run's last task on that stream) leaves the branch through a tail
      // gate, last in the branch on t_mm's main stream.
      if (unoptimised) {
        const NodeId tail = plan.model.FindNode(
            StrCat(in_cond ? "c_if" : "b_if", "_BranchTail_", StreamOf(plan, "t_mm")));
        ASSERT_TRUE(tail.valid());
        EXPECT_TRUE(std::any_of(plan.events.events.begin(), plan.events.events.end(),
                                [&](const SyncEvent& e) {
                                  return e.recv == tail && plan.model.node(e.send).name == "t_mm" &&
                                         e.send_attached == 0;
                                }));
      }
      ExpectEachBranchRunsClean(plan, 3);
    }
  }
}

// The same for an ONNX Loop as the ONNX importer builds it (trip count M
// absent, so the body's _parent_node_index counts from cond): its one run,
// the body, spans b_ar's stream and another. The next iteration's b_ar reads
// b_relu's value through v_0 (body input 2, compacted index 1) on a stream
// that waits for nothing after b_relu: only the loop-next event from the
// other stream's last task orders it after the iteration before.
TEST(PlanExecutorTest, ACompiledOnnxLoopAcrossStreamsRunsItsIterationsInOrder) {
  const std::string kGraph = OnnxLoopGraph(R"json(
        {"name": "b_ar", "type": "HcomAllReduce", "inputs": ["b_in:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "b_relu", "type": "Relu", "inputs": ["b_ar:0"], "attrs": {"_cost": 40}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "b_less", "type": "Less", "inputs": ["b_relu:0"], "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "b_out", "type": "NetOutput", "inputs": ["b_less:0", "b_relu:0"], "attrs": {"_parent_output_index": [-1, 0]}}]}]})json");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileGraph(kGraph));
  ASSERT_NE(StreamOf(plan, "b_ar"), StreamOf(plan, "b_relu"));
  ASSERT_EQ(StreamOf(plan, "b_out"), StreamOf(plan, "b_relu"));
  EXPECT_THAT(LoopNextEvents(plan), ::testing::ElementsAre("l_LoopTail_0->l_LoopTail_1"));
  EXPECT_EQ(StreamOf(plan, "b_ar"), 1);
  const ExecOptions o = JitteredLoops(3);
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*exec, device, 20));
  EXPECT_EQ(first, "");
  // Without its loop-next events the next iteration's b_ar overtakes b_relu.
  std::erase_if(plan.events.events,
                [](const SyncEvent& e) { return e.reason == SyncReason::kLoopNext; });
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto racy, PlanExecutor::Create(plan, o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(first, FirstViolation(*racy, device, 20));
  EXPECT_THAT(first, HasSubstr("'b_ar' (stream "));
  EXPECT_THAT(first, HasSubstr("started before its producer 'b_relu'"));
  EXPECT_THAT(first, HasSubstr("[loop-carried via 'b_in'"));
}

// An MC2 node first in an ONNX Loop's body, reading only the loop-carried
// value: nothing in the body orders its attached slot. A stream of attached
// slots holds no tail gate, so the barrier reaches it from the hub's head
// gate at the start of the body (once npuplan sent a backward event from the
// last task instead, whose first wait had no record: verify refuses that
// shape now). Three jittered iterations run without a violation or a misused
// device id; without the event the next iteration's attached task starts
// before the one before has ended.
TEST(PlanExecutorTest, ACompiledLoopWithAnAttachedStreamWaitsAtTheHeadGate) {
  const std::string kGraph = OnnxLoopGraph(R"json(
        {"name": "b_mc2", "type": "MatmulAllReduce", "inputs": ["b_in:0"],
         "attrs": {"_attached_stream_info_list": [{"_attached_resource_name": "s", "_attached_resource_reuse_key": "k",
                   "_attached_resource_required_flag": true, "_attached_resource_depend_value_list_int": [0]}]},
         "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "b_relu", "type": "Relu", "inputs": ["b_mc2:0"], "attrs": {"_cost": 40}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "b_less", "type": "Less", "inputs": ["b_relu:0"], "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "b_out", "type": "NetOutput", "inputs": ["b_less:0", "b_relu:0"], "attrs": {"_parent_output_index": [-1, 0]}}]}]})json");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileGraph(kGraph));
  EXPECT_THAT(LoopNextEvents(plan), ::testing::ElementsAre("l_LoopHead_0->b_mc2"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  ExpectCleanIterations(plan);
  std::erase_if(plan.events.events,
                [](const SyncEvent& e) { return e.reason == SyncReason::kLoopNext; });
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto racy, PlanExecutor::Create(plan, JitteredLoops(3)));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*racy, device, 20));
  EXPECT_THAT(first, HasSubstr("'b_mc2' (attached"));
  EXPECT_THAT(first, HasSubstr("[loop-carried via 'b_in'"));
}

// The same MC2 node inside a loop nested in another: the outer loop's
// barrier reaches the attached stream in the inner loop's body, so its
// events cross the inner loop's boundary with an end on the attached stream.
// No gate can sit there: they record and wait at the inner loop's gates on
// its hub stream (the entry gate before its head gate, the exit gate after
// its tail gate), and verifier[loop-boundary] checks attached ends too. The
// plan runs 3 × 3 jittered iterations clean.
TEST(PlanExecutorTest, ANestedLoopWithAnAttachedStreamCrossesTheInnerLoopAtItsHubGates) {
  const std::string kGraph = OnnxLoopGraph(R"json(
        {"name": "b_relu", "type": "Relu", "inputs": ["b_in:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "l2", "type": "Loop", "inputs": ["b_cond:0", "b_relu:0"], "subgraphs": ["ibody"],
         "attrs": {"_onnx_absent_inputs": [0]}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "b_less", "type": "Less", "inputs": ["l2:0"], "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "b_out", "type": "NetOutput", "inputs": ["b_less:0", "l2:0"], "attrs": {"_parent_output_index": [-1, 0]}}]},
      {"name": "ibody", "parent": "l2", "nodes": [
        {"name": "i_iter", "type": "Data", "attrs": {"_onnx_absent_parent_input": true}, "outputs": [{"shape": [1], "dtype": "int64"}]},
        {"name": "i_cond", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "i_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "i_mc2", "type": "MatmulAllReduce", "inputs": ["i_in:0"],
         "attrs": {"_attached_stream_info_list": [{"_attached_resource_name": "s", "_attached_resource_reuse_key": "k", "_attached_resource_required_flag": true, "_attached_resource_depend_value_list_int": [0]}]},
         "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "i_relu", "type": "Relu", "inputs": ["i_mc2:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
        {"name": "i_less", "type": "Less", "inputs": ["i_relu:0"], "outputs": [{"shape": [1], "dtype": "bool"}]},
        {"name": "i_out", "type": "NetOutput", "inputs": ["i_less:0", "i_relu:0"], "attrs": {"_parent_output_index": [-1, 0]}}]}]})json");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model, ParseGraphJson(kGraph, "g.json"));
  DecisionLog log(true);
  Statistics stats;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Compile(std::move(model), CompileConfig{}, log, stats));
  std::vector<std::string> gates;
  for (const Remark* r : log.WithKeyword("LoopGate")) gates.push_back(r->ToLine());
  EXPECT_THAT(gates, ::testing::ElementsAre(
                         "[stream-activation] LoopGate loop=l2 side=exit gate=l2_LoopExit_0 "
                         "from=i_mc2 to=l_LoopTail_0",
                         "[stream-activation] LoopGate loop=l2 side=entry gate=l2_LoopEntry_0 "
                         "from=l_LoopHead_0 to=i_mc2"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  ExpectCleanIterations(plan);
}

// GE's dynamic path (unknown dims): the host runs While w, synchronizing w's
// stream after each cond run to read the condition before it enqueues more
// (the hybrid executor's While task), and w is done after its last
// iteration. MC2 node m reads w's output on its attached stream: its event's
// Send follows w, so it records once, after the last iteration. b_mc2 in the
// body reaches b_out through an attached-end event; the host enqueues its
// next iteration only after that wait. Three jittered iterations run clean
// (before the CPU back end modelled both, it reported m overtaking the loop
// and b_mc2 recording again before b_out had waited); without m's event its
// attached task overtakes the loop.
// A graph on GE's dynamic path (unknown dims): x → pre, then `before_w`,
// While w (reading pre), `after_w` (the rest of the root graph), w's cond
// c_in → c_less → c_out, and its body: b_in, then `body` (the rest of it).
std::string DynamicWhileGraph(std::string_view before_w, std::string_view after_w,
                              std::string_view body) {
  return StrCat(R"json({"format": "npuplan.graph/1", "name": "g", "nodes": [
  {"name": "x", "type": "Data", "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
  {"name": "pre", "type": "Relu", "inputs": ["x:0"], "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
)json",
                before_w, R"json(
  {"name": "w", "type": "While", "inputs": ["pre:0"], "subgraphs": ["cond", "body"], "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
)json",
                after_w, R"json(],
 "subgraphs": [
  {"name": "cond", "parent": "w", "nodes": [
    {"name": "c_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
    {"name": "c_less", "type": "Less", "inputs": ["c_in:0"], "attrs": {"_cost": 20}, "outputs": [{"shape": [1], "dtype": "bool"}]},
    {"name": "c_out", "type": "NetOutput", "inputs": ["c_less:0"]}]},
  {"name": "body", "parent": "w", "nodes": [
    {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
)json",
                body, "]}]}");
}

const std::string kDynamicWhileWithMc2 = DynamicWhileGraph("", R"json(
  {"name": "m", "type": "MatmulAllReduce", "inputs": ["w:0"],
   "attrs": {"_attached_stream_info_list": [{"_attached_resource_name": "s", "_attached_resource_reuse_key": "k",
             "_attached_resource_required_flag": true, "_attached_resource_depend_value_list_int": [0]}]},
   "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
  {"name": "out", "type": "NetOutput", "inputs": ["m:0"]})json",
                                                           R"json(
    {"name": "b_mc2", "type": "MatmulAllReduce", "inputs": ["b_in:0"],
     "attrs": {"_attached_stream_info_list": [{"_attached_resource_name": "s", "_attached_resource_reuse_key": "k",
               "_attached_resource_required_flag": true, "_attached_resource_depend_value_list_int": [0]}]},
     "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
    {"name": "b_relu", "type": "Relu", "inputs": ["b_mc2:0"], "attrs": {"_cost": 40}, "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
    {"name": "b_out", "type": "NetOutput", "inputs": ["b_relu:0"]})json");

TEST(PlanExecutorTest, TheHostRunsADynamicPathLoopAndItsOwnerRecordsOnceItIsDone) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileGraph(kDynamicWhileWithMc2));
  ASSERT_EQ(plan.streams.mode, StreamMode::kDynamicSingle);
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  ExpectCleanIterations(plan);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, JitteredLoops(3)));
  const sim::PlanProgram& prog = exec->program();
  int64_t host_records = 0, m_records = 0, host_waits_before_b_mc2 = 0;
  for (const sim::ProgramStream& ps : prog.streams) {
    for (const sim::ProgramItem& item : ps.items) {
      if (item.sync < 0) continue;
      const bool host = prog.syncs[item.sync].kind == sim::SyncObject::Kind::kHostSync;
      if (item.kind == sim::ProgramItem::Kind::kRecord) {
        host_records += host ? 1 : 0;
        m_records +=
            item.event >= 0 && plan.model.node(plan.events.events[item.event].recv).name == "m";
      } else if (host && item.attached == 0 && plan.model.node(item.node).name == "b_mc2") {
        ++host_waits_before_b_mc2;
      }
    }
  }
  EXPECT_EQ(host_records, 3);  // one per cond run
  EXPECT_EQ(m_records, 1);
  EXPECT_EQ(host_waits_before_b_mc2, 3);
  std::erase_if(plan.events.events,
                [&](const SyncEvent& e) { return plan.model.node(e.recv).name == "m"; });
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto racy, PlanExecutor::Create(plan, JitteredLoops(3)));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, FirstViolation(*racy, device, 20));
  EXPECT_THAT(first, HasSubstr("'m' (attached 0"));
  EXPECT_THAT(first, HasSubstr("[attached-value via 'w'"));
}

// A loop on GE's dynamic multi-stream path whose body holds an all-reduce
// on a stream of its own that nothing reads: GE's edge events
// leave it unordered before the body's end, where the host synchronizes
// (stream 0 alone) before it enqueues the next run. npuplan adds a
// loop-join event b_ar → b_out; three jittered iterations with late-starting
// streams run clean. Without it the next iteration's b_mul records its event
// to b_ar while the one before is still unconsumed (a wait-reset device
// merges the two and the second wait blocks), and verify refuses the plan.
const std::string kDynamicLoopWithAnUnreadAllReduce = DynamicWhileGraph(
    R"json(
  {"name": "pre_ar", "type": "HcomAllReduce", "inputs": ["pre:0"], "attrs": {"_cost": 1000}, "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},)json",
    R"json(
  {"name": "post", "type": "Relu", "inputs": ["w:0"], "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
  {"name": "out", "type": "NetOutput", "inputs": ["post:0"]})json",
    R"json(
    {"name": "b_mul", "type": "Mul", "inputs": ["b_in:0", "b_in:0"], "attrs": {"_cost": 5}, "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
    {"name": "b_ar", "type": "HcomAllReduce", "inputs": ["b_mul:0"], "attrs": {"_cost": 50}, "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
    {"name": "b_relu", "type": "Relu", "inputs": ["b_mul:0"], "attrs": {"_cost": 5}, "outputs": [{"shape": [-1, 64], "dtype": "float32"}]},
    {"name": "b_out", "type": "NetOutput", "inputs": ["b_relu:0"]})json");

TEST(PlanExecutorTest, AStreamNothingReadsEndsEachHostRunLoopIteration) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model,
                               ParseGraphJson(kDynamicLoopWithAnUnreadAllReduce, "g.json"));
  CompileConfig config;
  config.read_environment = false;
  config.option_overrides["ENABLE_DYNAMIC_SHAPE_MULTI_STREAM"] = "1";
  DecisionLog log(false);
  Statistics stats;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Compile(std::move(model), config, log, stats));
  ASSERT_EQ(plan.streams.mode, StreamMode::kDynamicMulti);
  ASSERT_NE(StreamOf(plan, "b_ar"), StreamOf(plan, "b_out"));
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  // pre_ar (10 ms on b_ar's stream, before the loop) holds stream 1 back.
  const ExecOptions o = JitteredLoops(3);
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan, o));
  for (int r = 0; r < 3; ++r) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, exec->Run(device, r));
    EXPECT_TRUE(res.messages.empty()) << res.messages.front();
  }
  const size_t joins = std::erase_if(
      plan.events.events, [](const SyncEvent& e) { return e.reason == SyncReason::kLoopJoin; });
  EXPECT_EQ(joins, 1u);
  EXPECT_THAT(verify::VerifyLoopOrder(plan).message(), HasSubstr("'b_ar' on stream 1"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto racy, PlanExecutor::Create(plan, o));
  std::string misuse;
  for (int r = 0; r < 3 && misuse.empty(); ++r) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult res, racy->Run(device, r));
    if (!res.event_misuses.empty()) misuse = res.event_misuses.front();
  }
  EXPECT_THAT(misuse, HasSubstr("'b_mul' -> 'b_ar' recorded it on stream 0 while the record of "
                                "'b_mul' -> 'b_ar' was still pending"));
}

TEST(PlanExecutorTest, RunsAttachedStreamsAndActivation) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "act", "type": "StreamActive", "attrs": {"_cost": 30, "_test_stream": 0, "active_stream_list": [1]}},
    {"name": "h", "type": "HcomAllReduce", "control_inputs": ["act"],
     "attrs": {"_cost": 20, "_test_stream": 1, "_test_attached": [2]}, "outputs": [{"shape": [4]}]},
    {"name": "y", "type": "Relu", "inputs": ["h"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
  ]})json"));
  AddEvent(plan, "h", "y", 0, "event", /*send_attached=*/0);
  AddEvent(plan, "h", "y", 1);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, RunWithJitter(plan, 10, 4, 10));
  EXPECT_EQ(r.tasks, 4u);  // act, h, h's attached task, y
  EXPECT_EQ(r.streams, 3u);
  EXPECT_TRUE(r.violations.empty()) << r.messages[0];
}

// Random layered DAGs on random streams with an event on every cross-stream
// dependency (looking through Const nodes): always 0 violations.
TEST(PlanExecutorTest, RandomPlansWithAllEventsHaveNoViolations) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    std::string nodes;
    const int n = 40;
    for (int i = 0; i < n; ++i) {
      std::string inputs;
      for (int k = 0; k < 3 && i > 0; ++k) {
        int p = static_cast<int>(rng() % static_cast<uint64_t>(i));
        if (inputs.find(StrCat("\"n", p, "\"")) != std::string::npos) continue;
        inputs += StrCat(inputs.empty() ? "" : ", ", "\"n", p, "\"");
      }
      const bool konst = i > 0 && rng() % 8 == 0;
      nodes += StrCat(i ? ",\n" : "", "{\"name\": \"n", i, "\", \"type\": \"", konst ? "Const" : "Relu", "\", ",
                      konst ? "" : StrCat("\"inputs\": [", inputs, "], "), "\"attrs\": {\"_cost\": ", rng() % 20,
                      konst ? "" : StrCat(", \"_test_stream\": ", rng() % 4), "}, \"outputs\": [{\"shape\": [4]}]}");
    }
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(StrCat("{\"name\": \"r\", \"nodes\": [", nodes, "]}")));
    DependencyChecker deps(plan);
    int64_t id = 0;
    for (size_t v = 0; v < plan.model.num_nodes(); ++v) {
      for (const sim::Dependency& d : deps.dependencies()[v]) {
        if (plan.model.node(d.producer).stream_id != plan.model.node(NodeId(static_cast<int32_t>(v))).stream_id) {
          AddEvent(plan, plan.model.node(d.producer).name, plan.model.nodes()[v].name, id++);
        }
      }
    }
    NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, RunWithJitter(plan, 3, seed, 0, 100));
    EXPECT_TRUE(r.violations.empty()) << "seed " << seed << ": " << r.messages[0];
  }
}

TEST(PlanExecutorTest, RejectsPlanWithBadEvent) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, ForkJoin());
  plan.events.events[0].recv_attached = 3;
  EXPECT_THAT(PlanExecutor::Create(plan).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "names an attached stream the node does not have"));
}

TEST(PlanExecutorTest, ReportsStreamCreationFailure) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, ForkJoin());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan));
  runtime::CpuDevice device;
  device.FailStreamCreationAfter(1);
  EXPECT_THAT(exec->Run(device).status(),
              StatusIs(absl::StatusCode::kResourceExhausted, "device stream for plan stream 1"));
  EXPECT_EQ(device.live_streams(), 0u);
}

TEST(PlanExecutorTest, RunsPlanWithoutStreamsAsNoOp) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "a", "type": "Relu", "outputs": [{"shape": [4]}]}]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto exec, PlanExecutor::Create(plan));
  runtime::CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ExecResult r, exec->Run(device));
  EXPECT_EQ(r.tasks, 0u);
  EXPECT_TRUE(r.violations.empty());
}

}  // namespace
}  // namespace npuplan::exec
