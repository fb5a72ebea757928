#include "npuplan/plan/plan_json.h"

#include <string>

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

}  // namespace
}  // namespace npuplan
