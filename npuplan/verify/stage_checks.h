// The functions of the stage-check table (stage_checks.def). Each checks one
// stage fact of a plan and fails with an Internal error
// "verifier[<rule>]: …"; each assumes the structure check and the plan's
// claims (plan_claims.h) passed, as verify::VerifyPlan runs them.
#ifndef NPUPLAN_VERIFY_STAGE_CHECKS_H_
#define NPUPLAN_VERIFY_STAGE_CHECKS_H_

#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/plan/plan.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {

// [stream-ids] VerifyStreamIdsContinuous (ir/verifier.h) on the plan's model.
absl::Status VerifyStreamIds(const Plan& plan);
// [attached-streams] attached ids are exactly logical..logical+k-1, each
// used by a node, and listed in plan.streams.
absl::Status VerifyAttachedStreams(const Plan& plan);
// [memory-…] memory::VerifyMemoryPlan (memory_verifier.h).
// Reads only the plan (no Verification& overload): it runs alongside the
// sync checks (stage_checks.def).
absl::Status VerifyMemory(const Plan& plan);
// [in-place-writes] every in-place write is ordered with every other touch
// of its memory by a path in the graph (ir/in_place_writes.h;
// in_place_write_verifier.cc).
absl::Status VerifyInPlaceWrites(const Plan& plan);
// The events checks: sync_verifier.h.

// One row of the table. `check` runs the row's function on the run's plan,
// with the run itself when the function has a Verification& overload (what
// it builds is then shared with the later rows). `alongside`: the row may run
// on a second thread (stage_checks.def); such a row never touches the run.
// `takes_run`: the function has the Verification& overload.
struct StageCheck {
  IrProperty stage;
  std::string_view name;
  absl::Status (*check)(Verification&);
  bool alongside = false;
  bool takes_run = false;
};
// The rows of stage_checks.def, in order.
std::span<const StageCheck> StageCheckTable();

}  // namespace npuplan::verify

#endif  // NPUPLAN_VERIFY_STAGE_CHECKS_H_
