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
  // A check that did not run because its stage is not claimed runs here; a
  // failure names the missing stage.
  auto missing = [](std::string_view stage, const absl::Status& s, std::string_view rule) {
    std::string why(s.message());
    if (why.rfind(rule, 0) == 0) why = why.substr(rule.size());
    return absl::InternalError(
        StrCat("verifier[stages]: stage '", stage, "' is missing: ", why,
               " (a plan of a partial pipeline: `npuplan verify --partial` checks only the "
               "stages it claims)"));
  };
  if (!Has(plan.established, IrProperty::kSyncEvents)) {
    // VerifyPlan's claims check proved the plan has no events and no physical
    // split: the dependencies must be ordered by same-stream order alone.
    const absl::Status ordered = VerifyHappensBefore(plan);
    if (!ordered.ok()) return missing("sync-events", ordered, "verifier[happens-before]: ");
  }
  if (!Has(plan.established, IrProperty::kActiveStreams)) {
    // Without the stage that adds loop-order events, a loop across streams
    // must still run its iterations in order.
    const absl::Status loops = VerifyLoopOrder(plan);
    if (!loops.ok()) return missing("active-streams", loops, "verifier[loop-order]: ");
    // Nor may an event into or out of a loop skip the loop gates.
    const absl::Status gates = VerifyLoopBoundaries(plan);
    if (!gates.ok()) return missing("active-streams", gates, "verifier[loop-boundary]: ");
  }
  return absl::OkStatus();
}

}  // namespace npuplan::verify
