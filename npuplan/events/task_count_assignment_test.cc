#include "npuplan/events/task_count_assignment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "npuplan/events/events_test_util.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

TEST(TaskCountAssignmentTest, CountsByEngineAndHonoursOverrides) {
  auto m = ParseVerifiedGraph(R"json({"nodes": [
    {"name": "d", "type": "Data", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "mm", "type": "MatMul", "inputs": ["d:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "big", "type": "MatMul", "inputs": ["mm:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 5}, "outputs": [{"shape": [1]}]},
    {"name": "ar", "type": "HcomAllReduce", "inputs": ["big:0"], "attrs": {"_test_stream": 0, "_hccl_task_num": 7}, "outputs": [{"shape": [1]}]},
    {"name": "ar2", "type": "HcomAllReduce", "inputs": ["ar:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "r", "type": "Recv", "attrs": {"_test_stream": 0}},
    {"name": "o", "type": "NetOutput", "inputs": ["ar2:0"], "attrs": {"_test_stream": 0}}]})json");
  ASSERT_THAT(m, IsOk());
  Plan plan = PlanFromModel(std::move(m).value());
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<TaskCountAssignment>(), {}, &r), IsOk());
  auto tasks = [&](const char* n) { return plan.tasks[plan.model.FindNode(n).index()]; };
  EXPECT_EQ(tasks("d"), 0);
  EXPECT_EQ(tasks("mm"), 1);
  EXPECT_EQ(tasks("big"), 5);
  EXPECT_EQ(tasks("ar"), 7);
  EXPECT_EQ(tasks("ar2"), 1);
  EXPECT_EQ(tasks("r"), 2);
  EXPECT_EQ(tasks("o"), 0);
  EXPECT_EQ(r.log.WithKeyword("TaskCountOverridden").size(), 2u);
  EXPECT_EQ(r.stats.Get("task-count-assignment", "tasks_total"), 16);
}

// Each node's count is the task model's for its own engine, with engines in
// random runs (the pass looks an engine up once per run of equal engines).
TEST(TaskCountAssignmentTest, CountsEachNodeByItsOwnEngine) {
  std::string nodes;
  for (int i = 0; i < 200; ++i) {
    nodes += StrCat(i == 0 ? "" : ",", R"({"name": "n)", i, R"(", "type": ")",
                    i % 7 == 3 ? "Recv" : "Relu", R"(", "attrs": {"_test_stream": 0)",
                    i % 11 == 5 ? R"(, "_node_sqe_num": 3)" : "", "}}");
  }
  auto m = ParseVerifiedGraph(StrCat(R"json({"nodes": [)json", nodes, "]}"));
  ASSERT_THAT(m, IsOk());
  Plan plan = PlanFromModel(std::move(m).value());
  std::vector<std::string> engines = {"NoSuchEngine"};
  for (const auto& [name, config] : plan.model.engine_table.engines()) engines.push_back(name);
  std::mt19937 rng(7);
  std::string engine = engines[0];
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    if (rng() % 3 == 0) engine = engines[rng() % engines.size()];
    plan.model.node(NodeId(static_cast<int32_t>(i))).engine = engine;
  }
  ASSERT_THAT(RunPasses(plan, Passes<TaskCountAssignment>()), IsOk());
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    const Node& n = plan.model.node(NodeId(static_cast<int32_t>(i)));
    EXPECT_EQ(plan.tasks[i], NodeTasks(n, plan.model.engine_table)) << n.name << " " << n.engine;
  }
}

// A negative task count is bad input: an error naming the node and the
// attribute, for each of the three task-count attributes.
TEST(TaskCountAssignmentTest, NegativeTaskCountAttributeIsAnErrorNamingTheNode) {
  for (const char* attr : {"_node_sqe_num", "_hccl_task_num", "_hccl_attached_task_num"}) {
    // The graph reader refuses the value itself, so it is set in code here.
    auto m = ParseVerifiedGraph(R"json({"nodes": [
      {"name": "d", "type": "Data", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
      {"name": "ar", "type": "HcomAllReduce", "inputs": ["d:0"], "attrs": {"_test_stream": 0},
       "outputs": [{"shape": [1]}]}]})json");
    ASSERT_THAT(m, IsOk()) << attr;
    m->node(m->FindNode("ar")).attrs[attr] = int64_t{-3};
    Plan plan = PlanFromModel(std::move(m).value());
    const absl::Status status = RunPasses(plan, Passes<TaskCountAssignment>());
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, "node 'ar'")) << attr;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(attr));
  }
}

// Issue #19: a Recv adds its reset task to `_node_sqe_num`; INT64_MAX + 1
// is refused, naming the node, instead of wrapping to a negative count.
TEST(TaskCountAssignmentTest, ATaskCountThatOverflowsWithTheResetIsAnError) {
  auto m = ParseVerifiedGraph(R"json({"nodes": [
    {"name": "r", "type": "Recv", "attrs": {"_test_stream": 0, "_node_sqe_num": 9223372036854775807}}]})json");
  ASSERT_THAT(m, IsOk());
  Plan plan = PlanFromModel(std::move(m).value());
  EXPECT_THAT(RunPasses(plan, Passes<TaskCountAssignment>()),
              StatusIs(absl::StatusCode::kInvalidArgument, "node 'r': attribute _node_sqe_num is 9223372036854775807; "
                                                           "with the Recv's reset task the count overflows int64"));
}

// The statistic `tasks_total` sums every node's count: it saturates instead
// of wrapping (two nodes of 2^62 tasks on two streams are a valid input; the
// split checks the per-stream sums).
TEST(TaskCountAssignmentTest, TasksTotalSaturates) {
  auto m = ParseVerifiedGraph(R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0, "_node_sqe_num": 4611686018427387904}},
    {"name": "b", "type": "Add", "attrs": {"_test_stream": 1, "_node_sqe_num": 4611686018427387904}}]})json");
  ASSERT_THAT(m, IsOk());
  Plan plan = PlanFromModel(std::move(m).value());
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<TaskCountAssignment>(), {}, &r), IsOk());
  EXPECT_EQ(r.stats.Get("task-count-assignment", "tasks_total"), INT64_MAX);
}

}  // namespace
}  // namespace npuplan
