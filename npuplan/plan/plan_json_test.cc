#include "npuplan/plan/plan_json.h"

#include <string>
#include <nlohmann/json.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuplan {
namespace {

using ::testing::HasSubstr;

constexpr char kMinimalPlan[] =
    R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [{"name": "d", "type": "Data"}]}})";

TEST(PlanJsonTest, MinimalPlanReadsAndRoundTrips) {
  absl::StatusOr<Plan> plan = ParsePlanJson(kMinimalPlan, "p.json");
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::string text = WritePlanJson(*plan);
  absl::StatusOr<Plan> again = ParsePlanJson(text, "again.json");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(WritePlanJson(*again), text);
}

TEST(PlanJsonTest, RejectsTextThatIsNotJson) {
  absl::StatusOr<Plan> plan = ParsePlanJson("{\"format\": ", "p.json");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("p.json: not valid JSON"));
}

// nlohmann reports a number beyond double as out_of_range, not parse_error;
// it escaped the reader once (found by fuzz/plan_json_fuzz).
TEST(PlanJsonTest, RejectsANumberBeyondDoubleAsInvalidJson) {
  absl::StatusOr<Plan> plan = ParsePlanJson(
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": []}, "events": [{"id": 858993e592}]})",
      "p.json");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("p.json: not valid JSON"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("number overflow"));
}

// The partition's members are node ids in memory and node names in the file:
// written by name, read back to the same ids, the text unchanged.
TEST(PlanJsonTest, PartitionMembersRoundTripAsNames) {
  absl::StatusOr<Plan> plan = ParsePlanJson(
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [)"
      R"({"name": "d", "type": "Data"}, {"name": "e", "type": "Data"}]},)"
      R"( "partition": {"decision": "partitioned", "reason": "r", "subgraphs": [)"
      R"({"name": "g_sub_0_know", "kind": "known", "call_node": "c", "nodes": ["e", "d"], "reasons": []}]}})",
      "p.json");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->partition.subgraphs.size(), 1u);
  const PartitionSubgraph& sg = plan->partition.subgraphs[0];
  EXPECT_THAT(sg.nodes, ::testing::ElementsAre(plan->model.FindNode("e"), plan->model.FindNode("d")));
  EXPECT_THAT(sg.NodeNames(plan->model), ::testing::ElementsAre("e", "d"));
  const std::string text = WritePlanJson(*plan);
  const nlohmann::json written = nlohmann::json::parse(text);
  EXPECT_EQ(written["partition"]["subgraphs"][0]["nodes"], nlohmann::json({"e", "d"}));
  absl::StatusOr<Plan> again = ParsePlanJson(text, "again.json");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->partition.subgraphs[0].nodes, sg.nodes);
  EXPECT_EQ(WritePlanJson(*again), text);
}

TEST(PlanJsonTest, RejectsAPartitionMemberThatIsNotInTheGraph) {
  absl::StatusOr<Plan> plan = ParsePlanJson(
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [{"name": "d", "type": "Data"}]},)"
      R"( "partition": {"decision": "partitioned", "reason": "r", "subgraphs": [)"
      R"({"name": "s0", "kind": "known", "call_node": "c", "nodes": ["d"]},)"
      R"( {"name": "s1", "kind": "unknown", "call_node": "c1", "nodes": ["d", "ghost"]}]}})",
      "p.json");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("p.json"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("$.partition.subgraphs[1].nodes[1]"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("'ghost'"));
}

}  // namespace
}  // namespace npuplan
