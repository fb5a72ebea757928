#include "npuplan/verify/plan_complete.h"

#include <string>

#include "npuplan/support/str_util.h"
#include "npuplan/verify/sync_verifier.h"

namespace npuplan::verify {

absl::Status VerifyPlanComplete(const Plan& plan) {
  if (plan.in_progress != 0) {
    return absl::InternalError(
        StrCat("verifier[stages]: the plan is a snapshot taken inside stage '",
               PropertyNames(plan.in_progress),
               "' (--dump-after of a sub-pass), not a complete plan (`npuplan verify --partial` "
               "checks it)"));
  }
  if (Has(plan.established, IrProperty::kSyncEvents))
    return absl::OkStatus();  // checked by VerifyPlan
  // VerifyPlan's claims check proved the plan has no events and no physical
  // split: the dependencies must be ordered by same-stream order alone.
  const absl::Status ordered = VerifyHappensBefore(plan);
  if (ordered.ok()) return ordered;
  std::string why(ordered.message());
  if (why.rfind("verifier[happens-before]: ", 0) == 0) why = why.substr(26);
  return absl::InternalError(
      StrCat("verifier[stages]: stage 'sync-events' is missing: ", why,
             " (a plan of a partial pipeline: `npuplan verify --partial` checks only the "
             "stages it claims)"));
}

}  // namespace npuplan::verify
