// What `npuplan verify` requires of a plan beyond VerifyPlan: every stage its
// content needs. VerifyPlan checks the stages a plan claims (a partial
// pipeline's plan, stopped after the stream passes, passes it); a plan whose
// nodes use several streams with a dependency between two of them that
// nothing orders is not executable, whatever it claims. Without sync-events
// the happens-before check would not run, so here it runs anyway, and a
// failure names the missing stage:
//   verifier[stages]: stage 'sync-events' is missing: data-edge dependency
//   'a' on stream 0 -> 'b' on stream 1 is not ordered …
// Likewise without active-streams (the stage that adds loop-order events),
// verifier[loop-order] and verifier[loop-boundary] run anyway: a loop whose
// runs use several streams must run its iterations in order, and no event may
// be recorded and waited at different levels of a loop.
#ifndef NPUPLAN_VERIFY_PLAN_COMPLETE_H_
#define NPUPLAN_VERIFY_PLAN_COMPLETE_H_

#include "absl/status/status.h"
#include "npuplan/plan/plan.h"

namespace npuplan::verify {

// Call after VerifyPlan(plan) succeeded.
absl::Status VerifyPlanComplete(const Plan& plan);

}  // namespace npuplan::verify

#endif  // NPUPLAN_VERIFY_PLAN_COMPLETE_H_
