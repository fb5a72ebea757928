// The verifier of a plan (SPEC G4): what `npuplan verify`, the compile driver
// and --verify-each run. It trusts neither the passes nor the plan's claims
// about itself; every check is a function of the plan, linked always.
//
//   VerifyPlan  = VerifyStructure (ir/verifier.h)
//               → VerifyPlanClaims (plan/plan_claims.h): the claimed stages
//                 agree with the content, counts and ids are in range
//               → the rows of stage_checks.def whose stage the plan claims.
// A plan that stops before a stage it would need (a partial pipeline)
// passes; `npuplan verify` also requires those stages (plan_complete.h).
#ifndef NPUPLAN_VERIFY_VERIFY_H_
#define NPUPLAN_VERIFY_VERIFY_H_

#include <functional>
#include <string_view>

#include "absl/status/status.h"
#include "npuplan/plan/plan.h"

namespace npuplan::verify {

absl::Status VerifyPlan(const Plan& plan);
// The same, calling `after_check` with each check's name once it passed:
// "structure", "claims", then the name of each row of stage_checks.def that
// ran (compile --stats times them).
absl::Status VerifyPlan(const Plan& plan,
                        const std::function<void(std::string_view check)>& after_check);

// The rows of the stages in plan.established only (no structure, no claims).
absl::Status VerifyStageChecks(
    const Plan& plan, const std::function<void(std::string_view check)>& after_check = nullptr);

}  // namespace npuplan::verify

#endif  // NPUPLAN_VERIFY_VERIFY_H_
