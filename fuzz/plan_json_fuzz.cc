// Fuzzes the plan reader and the independent verifier (npuplan/plan/plan_json.h,
// verify::VerifyPlan, every row of stage_checks.def): any text is rejected with a
// Status, or read and verified (pass or fail) without crashing; a plan that
// reads back is written and read again identically.
#include <string>

#include "fuzz/fuzz_util.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/verify/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuplan;
  absl::StatusOr<Plan> plan = ParsePlanJson(fuzz::AsText(data, size), "fuzz.plan.json");
  if (!plan.ok()) return 0;
  (void)npuplan::verify::VerifyPlan(*plan);  // violations are results, crashes are bugs
  std::string text = WritePlanJson(*plan);
  absl::StatusOr<Plan> again = ParsePlanJson(text, "fuzz-roundtrip.plan.json");
  FUZZ_CHECK(again.ok(), "written plan does not read back: " + std::string(again.status().message()));
  FUZZ_CHECK(WritePlanJson(*again) == text, "plan JSON round trip is not stable");
  return 0;
}
