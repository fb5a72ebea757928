#include "npuplan/verify/verify.h"

#include "npuplan/ir/verifier.h"
#include "npuplan/plan/plan_claims.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/verify/stage_checks.h"

namespace npuplan::verify {

absl::Status VerifyStageChecks(const Plan& plan) {
  for (const StageCheck& row : StageCheckTable()) {
    if (Has(plan.established, row.stage)) NPUPLAN_RETURN_IF_ERROR(row.check(plan));
  }
  return absl::OkStatus();
}

absl::Status VerifyPlan(const Plan& plan) {
  NPUPLAN_RETURN_IF_ERROR(VerifyStructure(plan.model));
  // The plan's claims before the stage checks: those size their tables by
  // the stream counts and ids checked here.
  NPUPLAN_RETURN_IF_ERROR(VerifyPlanClaims(plan));
  return VerifyStageChecks(plan);
}

}  // namespace npuplan::verify
