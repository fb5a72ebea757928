#include "npuplan/verify/verify.h"

#include "npuplan/ir/verifier.h"
#include "npuplan/plan/plan_claims.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/verify/stage_checks.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {

absl::Status VerifyStageChecks(const Plan& plan,
                               const std::function<void(std::string_view check)>& after_check) {
  // One run for all rows: what one row builds (views, activation, …) the next reuses.
  Verification run(plan);
  for (const StageCheck& row : StageCheckTable()) {
    if (!Has(plan.established, row.stage)) continue;
    NPUPLAN_RETURN_IF_ERROR(row.check(run));
    if (after_check) after_check(row.name);
  }
  return absl::OkStatus();
}

absl::Status VerifyPlan(const Plan& plan,
                        const std::function<void(std::string_view check)>& after_check) {
  NPUPLAN_RETURN_IF_ERROR(VerifyStructure(plan.model));
  if (after_check) after_check("structure");
  // The plan's claims before the stage checks: those size their tables by
  // the stream counts and ids checked here.
  NPUPLAN_RETURN_IF_ERROR(VerifyPlanClaims(plan));
  if (after_check) after_check("claims");
  return VerifyStageChecks(plan, after_check);
}

absl::Status VerifyPlan(const Plan& plan) { return VerifyPlan(plan, nullptr); }

}  // namespace npuplan::verify
