// Fuzzes the plan reader and the independent verifier (npuplan/plan/plan_json.h,
// VerifyPlan with every stage check registered): any text is rejected with a
// Status, or read and verified (pass or fail) without crashing; a plan that
// reads back is written and read again identically.
#include <string>

#include "fuzz/fuzz_util.h"
#include "npuplan/events/sync_verifier.h"
#include "npuplan/memory/memory_verifier.h"
#include "npuplan/pass/pass.h"
#include "npuplan/plan/plan_json.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Static libraries drop unreferenced registrars: register the stage checks here.
  npuplan::events::RegisterEventStageChecks();
  npuplan::memory::RegisterMemoryStageChecks();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuplan;
  absl::StatusOr<Plan> plan = ParsePlanJson(fuzz::AsText(data, size), "fuzz.plan.json");
  if (!plan.ok()) return 0;
  (void)VerifyPlan(*plan);  // violations are results, crashes are bugs
  std::string text = WritePlanJson(*plan);
  absl::StatusOr<Plan> again = ParsePlanJson(text, "fuzz-roundtrip.plan.json");
  FUZZ_CHECK(again.ok(), "written plan does not read back: " + std::string(again.status().message()));
  FUZZ_CHECK(WritePlanJson(*again) == text, "plan JSON round trip is not stable");
  return 0;
}
