#include "npuplan/sim/simulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "npuplan/plan/task_model.h"
#include "npuplan/sim/dependencies.h"
#include "npuplan/sim/sim_testing.h"
#include "npuplan/sim/trace_views.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::sim {
namespace {

using ::npuplan::sim::testing::AddEvent;
using ::npuplan::sim::testing::PlanFromGraph;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::npuplan::testing::StatusIs;

std::vector<std::string> Names(const Plan& plan, const std::vector<NodeId>& ids) {
  std::vector<std::string> out;
  for (NodeId id : ids) out.push_back(plan.model.node(id).name);
  return out;
}

SimOptions NoOverheads() {
  SimOptions o;
  o.launch_overhead_us = 0;
  o.record_us = 0;
  o.wait_latency_us = 0;
  return o;
}

// a(2) → b(5) → d(1) on s0, a → c(3) → d on s1; events a→c (e0), c→d (e1).
constexpr char kDiamond[] = R"json({"name": "diamond", "nodes": [
  {"name": "a", "type": "Relu", "attrs": {"_cost": 2, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "b", "type": "Relu", "inputs": ["a"], "attrs": {"_cost": 5, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["a"], "attrs": {"_cost": 3.0, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "d", "type": "Add", "inputs": ["b", "c"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
]})json";

absl::StatusOr<Plan> DiamondPlan() {
  NPUPLAN_ASSIGN_OR_RETURN(Plan plan, PlanFromGraph(kDiamond));
  AddEvent(plan, "a", "c", 0);
  AddEvent(plan, "c", "d", 1);
  return plan;
}

TEST(SimulatorTest, ComputesHandCheckedMakespanWithoutOverheads) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  // s0: a 0-2, b 2-7, d 7-8; s1: c 2-5.
  EXPECT_DOUBLE_EQ(r.makespan, 8.0);
  EXPECT_DOUBLE_EQ(r.total_work, 11.0);
  EXPECT_DOUBLE_EQ(r.critical_path_us, 8.0);
  EXPECT_DOUBLE_EQ(r.lower_bound, 8.0);
  EXPECT_THAT(Names(plan, r.critical_path), ElementsAre("a", "b", "d"));
  ASSERT_EQ(r.streams.size(), 2u);
  EXPECT_DOUBLE_EQ(r.streams[0].busy_us, 8.0);
  EXPECT_DOUBLE_EQ(r.streams[1].busy_us, 3.0);
  EXPECT_DOUBLE_EQ(r.streams[1].utilisation, 3.0 / 8.0);
}

TEST(SimulatorTest, ChargesLaunchOverheadRecordAndWaitLatency) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  SimOptions o;
  o.launch_overhead_us = 1;
  o.record_us = 0.5;
  o.wait_latency_us = 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, o));
  // s0: a 0-3, rec e0 3-3.5, b 3.5-9.5, wait e1 until 9+1=10, d 10-12.
  // s1: wait e0 until 3.5+1=4.5, c 4.5-8.5, rec e1 8.5-9.
  EXPECT_DOUBLE_EQ(r.makespan, 12.0);
  EXPECT_DOUBLE_EQ(r.critical_path_us, 11.0);  // a(3) b(6) d(2)
  EXPECT_DOUBLE_EQ(r.total_work, 15.0);
  EXPECT_DOUBLE_EQ(r.lower_bound, 11.0);
  EXPECT_THAT(Names(plan, r.schedule_path), ElementsAre("a", "c", "d"));
  EXPECT_DOUBLE_EQ(r.streams[0].busy_us, 11.5);
}

// Launch overhead is charged per device task (GE launches nothing for a
// node with 0 tasks): Data, Const, NetOutput and GE_LOCAL ops on a stream
// take no time there, yet keep their place in the queue.
constexpr char kZeroTaskChain[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Data", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "w", "type": "Const", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "a", "type": "Relu", "inputs": ["x"], "attrs": {"_cost": 3, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "r", "type": "Reshape", "inputs": ["a", "w"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "b", "type": "Relu", "inputs": ["r"], "attrs": {"_cost": 2, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "out", "type": "NetOutput", "inputs": ["b"], "attrs": {"_test_stream": 0}}
]})json";

TEST(SimulatorTest, ChargesNoLaunchForNodesWithoutTasks) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kZeroTaskChain));
  AddEvent(plan, "a", "r", 0);
  SimOptions o;
  o.launch_overhead_us = 1;
  o.record_us = 0.5;
  o.wait_latency_us = 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, o));
  // s1: a 0-4, rec e0 4-4.5. s0: x, w take nothing; r (Reshape, 0 tasks)
  // waits for e0 until 5.5 and holds the stream: b 5.5-8.5; out 8.5.
  EXPECT_DOUBLE_EQ(r.makespan, 8.5);
  EXPECT_DOUBLE_EQ(r.total_work, 7.0);        // a 3+1, b 2+1; no launch for x, w, r, out
  EXPECT_DOUBLE_EQ(r.critical_path_us, 7.0);  // a → r → b
  ASSERT_EQ(r.streams.size(), 2u);
  EXPECT_EQ(r.streams[0].tasks, 1);  // b only
  EXPECT_EQ(r.streams[1].tasks, 1);
  EXPECT_DOUBLE_EQ(r.streams[0].busy_us, 3.0);
  EXPECT_EQ(r.node_tasks[plan.model.FindNode("x").index()], 0);
  EXPECT_EQ(r.node_tasks[plan.model.FindNode("b").index()], 1);
  // The trace still shows the zero-task items, with no duration.
  nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(plan, r));
  bool saw_reshape = false;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "r") {
      saw_reshape = true;
      EXPECT_NEAR(e["ts"].get<double>(), 5.5, 1e-3);  // + half a ns (chrome_trace.cc)
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 0.0);
      EXPECT_EQ(e["args"]["tasks"], 0);
    }
  }
  EXPECT_TRUE(saw_reshape);
}

// A stream that launches no task does not count in work / streams.
TEST(SimulatorTest, LowerBoundCountsOnlyStreamsThatLaunchTasks) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Data", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "a", "type": "Relu", "inputs": ["x"], "attrs": {"_cost": 4, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
    {"name": "b", "type": "Relu", "inputs": ["x"], "attrs": {"_cost": 4, "_test_stream": 1}, "outputs": [{"shape": [4]}]}
  ]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_DOUBLE_EQ(r.total_work, 8.0);
  EXPECT_DOUBLE_EQ(r.lower_bound, 8.0);  // work 8 over 1 stream with tasks, not 2
}

// Once task-count-assignment has run, the plan's counts are used: one launch
// per task (a Recv's wait + reset, an HCCL node's _hccl_task_num, ...).
TEST(SimulatorTest, ChargesOneLaunchPerTaskOfThePlan) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_cost": 2, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "h", "type": "HcomAllReduce", "engine": "DNN_HCCL", "inputs": ["a"],
     "attrs": {"_cost": 5, "_test_stream": 0, "_test_attached": [1], "_hccl_attached_task_num": 2},
     "outputs": [{"shape": [4]}]}
  ]})json"));
  SimOptions o = NoOverheads();
  o.launch_overhead_us = 1;
  // Without task counts: the default model, 1 task each (+ 2 on h's attached stream).
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, o));
  EXPECT_DOUBLE_EQ(r.makespan, 9.0);  // a 0-3, h 3-9
  EXPECT_DOUBLE_EQ(r.total_work, 11.0);
  plan.tasks[plan.model.FindNode("a").index()] = 1;
  plan.tasks[plan.model.FindNode("h").index()] = 3;
  plan.established |= static_cast<IrProperties>(IrProperty::kTasks);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(r, Simulate(plan, o));
  EXPECT_DOUBLE_EQ(r.makespan, 11.0);  // h: 5 + 3 launches
  EXPECT_EQ(r.streams[0].tasks, 4);
  EXPECT_EQ(r.streams[1].tasks, 2);
  EXPECT_DOUBLE_EQ(r.streams[1].busy_us, 2.0);
  plan.tasks[plan.model.FindNode("h").index()] = 0;  // _node_sqe_num 0, say: launches nothing
  NPUPLAN_ASSERT_OK_AND_ASSIGN(r, Simulate(plan, o));
  EXPECT_DOUBLE_EQ(r.makespan, 3.0);
}

TEST(CostModelTest, DefaultTaskModelFollowsTaskCountAssignment) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Data", "outputs": [{"shape": [4]}]},
    {"name": "r", "type": "Reshape", "inputs": ["x"], "outputs": [{"shape": [4]}]},
    {"name": "a", "type": "Relu", "inputs": ["r"], "outputs": [{"shape": [4]}]},
    {"name": "recv", "type": "Recv", "control_inputs": ["a"]},
    {"name": "sqe", "type": "Relu", "inputs": ["a"], "attrs": {"_node_sqe_num": 4}, "outputs": [{"shape": [4]}]},
    {"name": "h", "type": "HcomAllReduce", "engine": "DNN_HCCL", "inputs": ["a"], "attrs": {"_hccl_task_num": 3},
     "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["sqe", "h"]}
  ]})json"));
  const Model& m = plan.model;
  auto tasks = [&](const char* name) { return NodeTasks(m.node(m.FindNode(name)), m.engine_table); };
  EXPECT_EQ(tasks("x"), 0);  // GE_LOCAL
  EXPECT_EQ(tasks("r"), 0);
  EXPECT_EQ(tasks("out"), 0);
  EXPECT_EQ(tasks("a"), 1);
  EXPECT_EQ(tasks("recv"), 2);  // wait + reset
  EXPECT_EQ(tasks("sqe"), 4);
  EXPECT_EQ(tasks("h"), 3);
  EXPECT_EQ(AttachedNodeTasks(m.node(m.FindNode("h"))), 1);
}

// Issue #19: the per-stream task count is a sum of plan values, and a plan
// file may claim 2^62 tasks per node (`simulate` does not verify first): it
// saturates instead of printing a negative count.
TEST(SimulatorTest, StreamTaskCountsSaturate) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kDiamond));
  for (const char* n : {"a", "b", "c", "d"})
    plan.tasks[plan.model.FindNode(n).index()] = int64_t{1} << 62;
  plan.established |= static_cast<IrProperties>(IrProperty::kTasks);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  ASSERT_EQ(r.streams.size(), 2u);
  EXPECT_EQ(r.streams[0].tasks, INT64_MAX);         // a, b, d: 3 * 2^62
  EXPECT_EQ(r.streams[1].tasks, int64_t{1} << 62);  // c
}

TEST(SimulatorTest, SingleStreamMakespanIsTotalWork) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kDiamond));
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) plan.model.node(NodeId(static_cast<int32_t>(i))).stream_id = 0;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_DOUBLE_EQ(r.makespan, 11.0);
  EXPECT_DOUBLE_EQ(r.lower_bound, 11.0);
}

TEST(SimulatorTest, UsesPhysicalStreamsOverLogicalOnes) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.physical_stream[plan.model.FindNode("c").index()] = 7;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  ASSERT_EQ(r.streams.size(), 2u);
  EXPECT_EQ(r.streams[1].plan_stream, 7);
  EXPECT_DOUBLE_EQ(r.makespan, 8.0);
}

TEST(SimulatorTest, NodesWithoutStreamTakeNoTime) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "w", "type": "Const", "attrs": {"_cost": 100}, "outputs": [{"shape": [4]}]},
    {"name": "a", "type": "Relu", "inputs": ["w"], "attrs": {"_cost": 2, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
  ]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_DOUBLE_EQ(r.makespan, 2.0);
  EXPECT_EQ(r.program.num_tasks, 1u);
}

TEST(SimulatorTest, ActivatedStreamWaitsForItsActivator) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "act", "type": "StreamActive", "attrs": {"_cost": 5, "_test_stream": 0, "active_stream_list": [1]}},
    {"name": "b", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 1}, "outputs": [{"shape": [4]}]}
  ]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_DOUBLE_EQ(r.makespan, 6.0);
}

TEST(SimulatorTest, SkipsLoopAndBackwardEvents) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  AddEvent(plan, "d", "c", 2);  // backward
  AddEvent(plan, "b", "c", 3);
  plan.events.events.back().reason = SyncReason::kLoop;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  ASSERT_EQ(r.program.skipped.size(), 2u);
  EXPECT_EQ(r.program.skipped[0].reason, "backward");
  EXPECT_EQ(r.program.skipped[1].reason, "loop-carried");
  EXPECT_DOUBLE_EQ(r.makespan, 8.0);
}

TEST(SimulatorTest, RejectsEventTouchingNodeWithoutStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.model.node(plan.model.FindNode("c")).stream_id = -1;
  EXPECT_THAT(Simulate(plan).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "touches a node without a stream"));
}

TEST(SimulatorTest, RejectsUnknownAttachedStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.events.events[0].send_attached = 0;
  EXPECT_THAT(Simulate(plan).status(), StatusIs(absl::StatusCode::kInvalidArgument, "attached stream"));
}

TEST(SimulatorTest, PairsNotifiesInEnqueueOrder) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kDiamond));
  AddEvent(plan, "a", "c", 0, "notify");
  AddEvent(plan, "c", "d", 0, "notify");  // the same notify reused
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_DOUBLE_EQ(r.makespan, 8.0);
  ASSERT_EQ(r.program.syncs.size(), 1u);
  EXPECT_EQ(r.program.syncs[0].kind, SyncObject::Kind::kNotify);
}

TEST(SimulatorTest, WritesChromeTraceWithTracksAndFlows) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan));
  nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(plan, r));
  int threads = 0, tasks = 0;
  std::map<int64_t, double> starts, ends;
  std::map<int64_t, std::string> start_names, end_names;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") ++threads;
    if (e["ph"] == "X" && e["cat"] != "sync") ++tasks;
    if (e["ph"] == "s") {
      EXPECT_TRUE(starts.emplace(e["id"].get<int64_t>(), e["ts"].get<double>()).second) << "flow id used twice";
      start_names[e["id"]] = e["name"];
    }
    if (e["ph"] == "f") {
      EXPECT_TRUE(ends.emplace(e["id"].get<int64_t>(), e["ts"].get<double>()).second) << "flow id used twice";
      end_names[e["id"]] = e["name"];
      EXPECT_FALSE(e.contains("bp")) << "the end binds to the slice that follows the release";
    }
  }
  EXPECT_EQ(threads, 2);
  EXPECT_EQ(tasks, 4);
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  for (const auto& [id, ts] : starts) {
    ASSERT_TRUE(ends.count(id));
    EXPECT_LE(ts, ends[id]) << "flow " << id << " ends before it starts";
    EXPECT_EQ(start_names[id], end_names[id]);
  }
  // e0: recorded after a (3-3.5 µs, the flow starts mid-record), released at 4.5 µs.
  int64_t e0 = -1;
  for (const auto& [id, name] : start_names) {
    if (name == "e0 a → c") e0 = id;
  }
  ASSERT_GE(e0, 0);
  EXPECT_NEAR(starts[e0], 3.25, 1e-3);  // (+ half a ns, see chrome_trace.cc)
  EXPECT_NEAR(ends[e0], 4.5, 1e-3);
  nlohmann::json rep = nlohmann::json::parse(SimReportJson(plan, r, SimOptions{}));
  EXPECT_EQ(rep["critical_path"], nlohmann::json({"a", "b", "d"}));
  EXPECT_THAT(SimReportText(plan, r), HasSubstr("critical path: a -> b -> d"));
}

// The flow of a wait that blocked: its end is the release, after the record,
// even though the waiting stream reached the wait long before.
TEST(SimulatorTest, TraceFlowsEndAtTheReleaseNotAtTheStartOfTheWait) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(plan, r));
  std::map<int64_t, double> starts;
  std::vector<std::pair<int64_t, double>> ends;
  int waits = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "s") starts[e["id"]] = e["ts"];
    if (e["ph"] == "f") ends.emplace_back(e["id"], e["ts"]);
    if (e["ph"] == "X" && e["cat"] == "sync" && e["name"].get<std::string>().rfind("wait", 0) == 0) ++waits;
    if (e["ph"] == "X" && e["name"] == "wait e0") {
      EXPECT_NEAR(e["ts"].get<double>(), 0.0, 1e-3);  // s1 reaches the wait at once
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2.0);  // and is blocked until a's record at 2
    }
  }
  EXPECT_EQ(waits, 1);  // d's wait for e1 did not block (c recorded at 5, b ended at 7): no slice
  ASSERT_EQ(ends.size(), 2u);
  for (const auto& [id, ts] : ends) EXPECT_GE(ts, starts.at(id));
}

// Perfetto makes integer ns of ts·1000 and dur·1000, each truncated: the
// slices of a thread must still not overlap.
TEST(SimulatorTest, TraceSlicesNestAfterPerfettosTruncationToNanoseconds) {
  // b runs from 0.001 to 1.003 µs, c from 1.003: 0.001 · 1000 and 1.002 · 1000
  // truncate to 1 and 1002, but 1.003 · 1000 = 1002.9999999999999 to 1002.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_cost": 0.001, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "b", "type": "Relu", "inputs": ["a"], "attrs": {"_cost": 1.002, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "c", "type": "Relu", "inputs": ["b"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
  ]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(plan, r));
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> slices;  // tid → (start, end) ns
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const int64_t ts = static_cast<int64_t>(e["ts"].get<double>() * 1000.0);
    slices[e["tid"]].emplace_back(ts, ts + static_cast<int64_t>(e["dur"].get<double>() * 1000.0));
  }
  for (auto& [tid, list] : slices) {
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i) EXPECT_LE(list[i - 1].second, list[i].first) << "thread " << tid;
  }
}

TEST(SimulatorTest, TraceNamesProcessesAfterLogicalStreamsAndCountsMemory) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  // d on physical stream 2, a split piece of logical stream 0.
  plan.physical_stream[plan.model.FindNode("d").index()] = 2;
  plan.streams.split_to_logical[2] = 0;
  plan.memory.planned = true;
  TensorPlacement t;
  t.node = plan.model.FindNode("a");
  t.region = MemoryRegion::kActivation;
  t.size = 512;
  t.first_use = 0;
  t.last_use = 2;
  t.buffer = "a:0";
  plan.memory.tensors.push_back(t);
  plan.memory.region_bytes["constant"] = 4096;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan));
  nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(plan, r));
  std::map<std::pair<int64_t, int64_t>, std::string> threads;
  std::map<int64_t, std::string> processes;
  std::vector<int64_t> memory;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "C" && e["name"] == "activation memory in use") memory.push_back(e["args"]["bytes"]);
  }
  EXPECT_EQ(processes[1], "diamond: logical stream 0");
  EXPECT_EQ(processes[2], "diamond: logical stream 1");
  EXPECT_EQ((threads[{1, 1}]), "stream 0 (logical 0, piece 1 of 2)");
  EXPECT_EQ((threads[{2, 2}]), "stream 1");
  EXPECT_EQ((threads[{1, 3}]), "stream 2 (logical 0, piece 2 of 2)");
  // a:0 is in use from a's start until its last reader (b, then c) ends.
  EXPECT_THAT(memory, ElementsAre(0, 512, 0));
}

TEST(SimulatorTest, SimulatesOneBranchOfAnIfAndSaysWhich) {
  constexpr char kIfElse[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0},
   "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "then", "parent": "p", "nodes": [
   {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 10, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "t_out", "type": "NetOutput", "inputs": ["t1"]}]},
  {"name": "else", "parent": "p", "nodes": [
   {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e1", "type": "Relu", "inputs": ["e_in"], "attrs": {"_cost": 3, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e_out", "type": "NetOutput", "inputs": ["e1"]}]}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfElse));
  AddEvent(plan, "x", "t1", 0);
  AddEvent(plan, "t1", "c", 1);
  AddEvent(plan, "x", "e1", 2);
  AddEvent(plan, "e1", "c", 3);
  // Both branches back to back would be 1 + 10 + 3 + 1 = 15 us.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_DOUBLE_EQ(r.makespan, 12.0);  // x, then t1 (the longer branch), c
  // x → e1 into the else branch and e1 → c out of it are listed as skipped
  // (verify refuses such events: the If's gates); as on a device, their ends
  // outside the branch still run — x's record nothing waits for, and c's wait
  // with no record — and nothing is moved.
  EXPECT_EQ(r.program.skipped.size(), 2u);
  EXPECT_EQ(r.program.moved_records, 0u);
  EXPECT_THAT(SimReportText(plan, r), HasSubstr("control flow: 1 If/Case ran one branch each (the longer branch"));
  EXPECT_THAT(SimReportText(plan, r), HasSubstr("skipped events: 2 (2 branch-not-taken)"));
  SimOptions o = NoOverheads();
  o.control_flow.branch = 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(r, Simulate(plan, o));
  EXPECT_DOUBLE_EQ(r.makespan, 5.0);  // x, e1, c
  EXPECT_THAT(Names(plan, r.critical_path), ElementsAre("x", "e1", "c"));
  nlohmann::json rep = nlohmann::json::parse(SimReportJson(plan, r, o));
  EXPECT_EQ(rep["control_flow"]["branches"][0]["chosen"], 1);
  EXPECT_EQ(rep["options"]["branch"], "else");
}

// On the dynamic path a plan writes an If owner's outgoing event on the last
// branch's NetOutput; when another branch runs, the owner still records it
// after its subgraph (the host runs the If): the last node of the subtree
// that runs on that stream. A static plan's record there is not made.
TEST(SimulatorTest, MovesAnOwnersRecordOutOfTheBranchThatDoesNotRun) {
  constexpr char kIfElse[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0},
   "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_cost": 1, "_test_stream": 1}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "then", "parent": "p", "nodes": [
   {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 10, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "t_out", "type": "NetOutput", "inputs": ["t1"], "attrs": {"_test_stream": 0}}]},
  {"name": "else", "parent": "p", "nodes": [
   {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e1", "type": "Relu", "inputs": ["e_in"], "attrs": {"_cost": 3, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "e_out", "type": "NetOutput", "inputs": ["e1"], "attrs": {"_test_stream": 0}}]}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfElse));
  AddEvent(plan, "x", "p", 0);
  AddEvent(plan, "e_out", "c", 1);  // the owner's event, written on the last branch
  // In a static plan nothing moves it: the else branch does not run, so c's
  // wait has no record (verify refuses the event; a device blocks there).
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult static_run, Simulate(plan, NoOverheads()));
  EXPECT_EQ(static_run.program.moved_records, 0u);
  ASSERT_EQ(static_run.program.skipped.size(), 1u);
  EXPECT_EQ(static_run.program.skipped[0].reason, "branch-not-taken");
  EXPECT_DOUBLE_EQ(static_run.makespan, 11.0);    // c follows x alone on stream 1; t1 ends at 11
  plan.streams.mode = StreamMode::kDynamicMulti;  // the whole graph on the dynamic path
  plan.partition.ran = true;
  plan.partition.decision = PartitionDecision::kWholeDynamic;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_EQ(r.program.moved_records, 1u);
  EXPECT_TRUE(r.program.skipped.empty());
  // s1: x 0-1, then c waits for the record after t_out (then ran: t1 1-11).
  EXPECT_DOUBLE_EQ(r.makespan, 12.0);
  SimOptions o = NoOverheads();
  o.control_flow.branch = 1;  // the branch the event was written on: nothing moves
  NPUPLAN_ASSERT_OK_AND_ASSIGN(r, Simulate(plan, o));
  EXPECT_EQ(r.program.moved_records, 0u);
  EXPECT_DOUBLE_EQ(r.makespan, 5.0);  // x, e1, c
}

// On the dynamic path the event table names the owner as the sender (its
// `_send_event_ids`); the record follows the last node of its subtree on its
// stream that runs: t_out when then runs, e_out when else runs.
TEST(SimulatorTest, DynamicPathOwnerRecordsAfterTheBranchThatRuns) {
  constexpr char kIfElse[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "subgraphs": ["then", "else"],
   "attrs": {"_test_stream": 0, "_recv_event_ids": [0], "_send_event_ids": [1]}, "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_cost": 1, "_test_stream": 1}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [
  {"name": "then", "parent": "p", "nodes": [
   {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 10, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "t_out", "type": "NetOutput", "inputs": ["t1"], "attrs": {"_test_stream": 0}}]},
  {"name": "else", "parent": "p", "nodes": [
   {"name": "e_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
   {"name": "e1", "type": "Relu", "inputs": ["e_in"], "attrs": {"_cost": 3, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "e_out", "type": "NetOutput", "inputs": ["e1"], "attrs": {"_test_stream": 0}}]}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfElse));
  plan.streams.mode = StreamMode::kDynamicMulti;
  AddEvent(plan, "x", "p", 0);
  AddEvent(plan, "p", "c", 1);
  // then (the longer branch): not after e_out, the last node of the subtree.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_TRUE(r.program.skipped.empty());
  EXPECT_EQ(r.program.moved_records, 1u);
  EXPECT_DOUBLE_EQ(r.makespan, 12.0);  // x 0-1, t1 1-11, c 11-12
  EXPECT_THAT(Names(plan, r.critical_path), ElementsAre("x", "t1", "t_out", "c"));
  SimOptions o = NoOverheads();
  o.control_flow.branch = 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(r, Simulate(plan, o));
  EXPECT_TRUE(r.program.skipped.empty());
  EXPECT_EQ(r.program.moved_records, 0u);
  EXPECT_DOUBLE_EQ(r.makespan, 5.0);  // x, e1, c
}

TEST(SimulatorTest, RepeatsLoopBodiesAndChainsIterationsOnTheCriticalPath) {
  constexpr char kWhile[] = R"json({"name": "g", "nodes": [
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
   {"name": "b1", "type": "Relu", "inputs": ["b_in"], "attrs": {"_cost": 2, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
   {"name": "b_out", "type": "NetOutput", "inputs": ["b1"]}]}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kWhile));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_DOUBLE_EQ(r.makespan, 4.0);
  SimOptions o = NoOverheads();
  o.control_flow.loop_iterations = 4;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(r, Simulate(plan, o));
  EXPECT_DOUBLE_EQ(r.makespan, 10.0);  // x, 4 × b1, y
  // Each iteration reads the one before (loop-carried): the chain is x, b1 ×4, y.
  EXPECT_DOUBLE_EQ(r.critical_path_us, 10.0);
  EXPECT_THAT(Names(plan, r.critical_path), ElementsAre("x", "b1", "b1", "b1", "b1", "y"));
  EXPECT_THAT(r.critical_path_runs, ElementsAre(0, 0, 1, 2, 3, 0));
  EXPECT_THAT(SimReportText(plan, r), HasSubstr("1 loop(s) ran their body 4 times (--loop-iterations 4)"));
}

// x → If(p){then: Data(0) → t1 → NetOutput} → c; Data/NetOutput off the streams.
constexpr char kIfGraph[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "subgraphs": ["then"], "attrs": {"_cost": 1, "_test_stream": 0},
   "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [{"name": "then", "parent": "p", "nodes": [
  {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_cost": 4, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t_out", "type": "NetOutput", "inputs": ["t1"]}]}]})json";

TEST(DependenciesTest, CrossesSubgraphBoundariesAndLooksThroughNodesWithoutTask) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfGraph));
  EXPECT_THAT(Names(plan, plan.model.ExecutionOrder()), ElementsAre("x", "p", "t_in", "t1", "t_out", "c"));
  auto deps = BuildDependencies(plan);
  const auto& t1 = deps[plan.model.FindNode("t1").index()];
  ASSERT_EQ(t1.size(), 1u);
  EXPECT_EQ(plan.model.node(t1[0].producer).name, "x");
  EXPECT_EQ(plan.model.node(t1[0].via).name, "t_in");
  const auto& c = deps[plan.model.FindNode("c").index()];
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(plan.model.node(c[0].producer).name, "p");
  EXPECT_STREQ(c[0].kind, "data-edge");
  EXPECT_EQ(plan.model.node(c[1].producer).name, "t1");
  EXPECT_STREQ(c[1].kind, "subgraph-output");
  EXPECT_TRUE(deps[plan.model.FindNode("t_in").index()].empty());
}

// A control edge into the If orders its branch: t1 reads the branch's Data,
// a source, which stands for x (the input) and w (the If's control input);
// k2 reads a Const without a task, a source too, which stands for w alone; a
// source with a task (r, no input) waits for w itself.
TEST(DependenciesTest, SubgraphSourcesWaitForTheOwnersControlInputs) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "w", "type": "Relu", "attrs": {"_test_stream": 2}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "control_inputs": ["w"], "subgraphs": ["then"],
   "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [{"name": "then", "parent": "p", "nodes": [
  {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
  {"name": "k", "type": "Const", "outputs": [{"shape": [4]}]},
  {"name": "r", "type": "RandomUniform", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "k2", "type": "Add", "inputs": ["k", "r"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t_out", "type": "NetOutput", "inputs": ["t1", "k2"]}]}]})json"));
  const auto deps = BuildDependencies(plan);
  auto of = [&](const char* node) {
    std::vector<std::string> out;
    for (const Dependency& d : deps[plan.model.FindNode(node).index()])
      out.push_back(StrCat(plan.model.node(d.producer).name, " ", d.kind, " via ",
                           plan.model.node(d.via).name));
    return out;
  };
  EXPECT_THAT(of("t1"), ElementsAre("x data-edge via t_in", "w data-edge via t_in"));
  EXPECT_THAT(of("r"), ElementsAre("w owner-control via w"));
  EXPECT_THAT(of("k2"), ElementsAre("w data-edge via k", "r data-edge via r"));
}

// A Send after an If records its event once the If's own task is done: it
// reads no value, so it does not wait for the If's subgraph outputs (the
// event's receiver does). Found by the full property test (seed 25: a Send
// of the If "started before" its then-branch NetOutput).
TEST(DependenciesTest, SendAfterSubgraphOwnerWaitsForTheOwnersTaskOnly) {
  constexpr char kIfWithSend[] = R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "If", "inputs": ["x", "x"], "subgraphs": ["then"], "attrs": {"_test_stream": 0},
   "outputs": [{"shape": [4]}]},
  {"name": "p_send", "type": "Send", "control_inputs": ["p"], "attrs": {"event_id": 0, "_test_stream": 0}},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [{"name": "then", "parent": "p", "nodes": [
  {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t_out", "type": "NetOutput", "inputs": ["t1"]}]}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfWithSend));
  auto deps = BuildDependencies(plan);
  const auto& send = deps[plan.model.FindNode("p_send").index()];
  ASSERT_EQ(send.size(), 1u);
  EXPECT_EQ(plan.model.node(send[0].producer).name, "p");
  EXPECT_STREQ(send[0].kind, "control-edge");
  // A value consumer of the If still waits for the subgraph's output.
  const auto& c = deps[plan.model.FindNode("c").index()];
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(plan.model.node(c[1].producer).name, "t1");
  EXPECT_STREQ(c[1].kind, "subgraph-output");
}

// Nodes inside an FFTS+ subgraph run inside the owner's FFTS task: no
// dependencies of their own, and the owner's consumers look through them.
TEST(DependenciesTest, FftsSubgraphNodesAreNoTasksOfTheirOwn) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
  {"name": "x", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "p", "type": "PartitionedCall", "inputs": ["x", "x"], "subgraphs": ["then"],
   "attrs": {"_test_stream": 0, "_ffts_plus_sub_graph": "then"}, "outputs": [{"shape": [4]}]},
  {"name": "c", "type": "Relu", "inputs": ["p"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]}
 ],
 "subgraphs": [{"name": "then", "parent": "p", "nodes": [
  {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t1", "type": "Relu", "inputs": ["t_in"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "t_out", "type": "NetOutput", "inputs": ["t1"]}]}]})json"));
  auto deps = BuildDependencies(plan);
  EXPECT_TRUE(deps[plan.model.FindNode("t1").index()].empty());
  // c waits for p, and for what t1 stands for: p's input x.
  std::vector<std::string> producers;
  for (const Dependency& d : deps[plan.model.FindNode("c").index()]) producers.push_back(plan.model.node(d.producer).name);
  EXPECT_THAT(producers, ::testing::UnorderedElementsAre("p", "x"));
}

TEST(DependenciesTest, CriticalPathRunsThroughSubgraph) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(kIfGraph));
  AddEvent(plan, "x", "t1", 0);
  AddEvent(plan, "t1", "c", 1);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimResult r, Simulate(plan, NoOverheads()));
  EXPECT_THAT(Names(plan, r.critical_path), ElementsAre("x", "t1", "c"));
  EXPECT_DOUBLE_EQ(r.critical_path_us, 6.0);
  EXPECT_DOUBLE_EQ(r.makespan, 6.0);  // x 0-1, p 1-2; t1 1-5; c 5-6
}

TEST(CostModelTest, EstimatesMatMulFromFlopsAndCopiesFromBytes) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "a", "type": "Data", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [128, 256], "dtype": "float16"}]},
    {"name": "b", "type": "Data", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [256, 512], "dtype": "float16"}]},
    {"name": "mm", "type": "MatMul", "engine": "AIcoreEngine", "inputs": ["a", "b"], "attrs": {"_test_stream": 0},
     "outputs": [{"shape": [128, 512], "dtype": "float16"}]},
    {"name": "r", "type": "Relu", "engine": "DNN_VM_AICPU", "inputs": ["mm"], "attrs": {"_test_stream": 0},
     "outputs": [{"shape": [128, 512], "dtype": "float16"}]}
  ]})json"));
  EXPECT_DOUBLE_EQ(NodeFlops(plan.model, plan.model.FindNode("mm")), 2.0 * 128 * 512 * 256);
  CostModelOptions o;
  auto cost = NodeCosts(plan, o);
  // mm: 2 + max(33554432 / 1e8, (65536 + 262144 + 131072) / 1e6) = 2 + 0.458752.
  EXPECT_NEAR(cost[plan.model.FindNode("mm").index()], 2.458752, 1e-9);
  // r on AICPU: 10 + max(65536 / 1e5, 262144 / 2e4) = 10 + 13.1072.
  EXPECT_NEAR(cost[plan.model.FindNode("r").index()], 23.1072, 1e-9);
  EXPECT_DOUBLE_EQ(cost[plan.model.FindNode("a").index()], 0.0);  // Data: skipped engine
}

}  // namespace
}  // namespace npuplan::sim
