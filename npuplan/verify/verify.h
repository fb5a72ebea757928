// The verifier of a plan (SPEC G4): what `npuplan verify`, the compile driver
// and --verify-each run. It trusts neither the passes nor the plan's claims
// about itself; every check is a function of the plan, linked always.
// The memory check runs on a second thread alongside the sync checks
// (stage_checks.def "alongside"); the result is the same as one by one.
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

// One check that passed, and what it cost on the thread that ran it.
struct CheckTime {
  std::string_view check;
  double wall_seconds = 0;
  double cpu_seconds = 0;  // that thread's CPU time
  bool alongside = false;  // ran on the second thread (stage_checks.def)
};
// The same, calling `after_check` on the calling thread with each check that
// passed, in order: "structure", "claims", then each row of stage_checks.def
// that ran (compile --stats times them). Rows that run alongside are
// reported in their table place once the second thread is done.
absl::Status VerifyPlan(const Plan& plan, const std::function<void(const CheckTime&)>& after_check);

// VerifyPlan in two parts, for a plan whose memory section another thread is
// still writing (the compile driver's final verification, compiler.cc): the
// first reads nothing of plan.memory, the second (the memory-section claim
// and the memory row) runs once it is final, on the same plan otherwise.
// Both pass exactly when VerifyPlan does. When the first fails, VerifyPlan's
// own message may differ (its claims check the memory section before other
// claims): run VerifyPlan for it. Both report their claims as "claims".
// `memory_may_start`, when set, is called (on the calling thread) once what
// VerifyPlan runs before its memory row has passed — structure, claims and
// the rows before the first that takes the run — so the second part may run
// beside the rest of the first, as the memory row does in VerifyPlan.
absl::Status VerifyPlanButMemory(const Plan& plan,
                                 const std::function<void(const CheckTime&)>& after_check = nullptr,
                                 const std::function<void()>& memory_may_start = nullptr);
absl::Status VerifyPlanMemory(const Plan& plan,
                              const std::function<void(const CheckTime&)>& after_check = nullptr);

// The rows of the stages in plan.established only (no structure, no claims).
absl::Status VerifyStageChecks(const Plan& plan,
                               const std::function<void(const CheckTime&)>& after_check = nullptr);

}  // namespace npuplan::verify

#endif  // NPUPLAN_VERIFY_VERIFY_H_
