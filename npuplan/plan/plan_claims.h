// The plan's claims about itself, checked against its content (part of
// VerifyPlan, run after the structure check and before the stage checks).
//
// A stage check runs only for a stage the plan claims, so a plan could avoid
// a check by not claiming the stage. Here the content decides instead:
//   [stages]    every claimed stage's prerequisites are claimed (the passes'
//               required(): kStageNeeds), and content a stage produces
//               requires that stage: a node on a stream → logical-streams,
//               attached streams → attached-streams, task counts → tasks,
//               events → sync-events, a split / physical stream data →
//               physical-streams, a memory section → memory-planned, a
//               partition section → partitioned (and each claim its data).
//               A snapshot inside a stage (Plan::in_progress: one unclaimed
//               stage whose prerequisites are claimed) may hold that stage's
//               content unclaimed; VerifyPlanComplete refuses it.
//   [streams]   streams.logical is the number of main streams the nodes use,
//               each of 0..logical-1 carries a node, node ids are main or
//               attached ids; streams.physical = logical + attached + split
//               streams (= logical before the split); split_to_logical keys
//               are the streams after those and map to existing ones; the
//               list has one entry per main stream (id, physical_count,
//               attached_ids, user_label from its nodes); huge ids, limits,
//               attached_physical, mode and the auto-mode figures are in
//               range and consistent.
//   [events]    send_attached / recv_attached are -1 or an attached stream
//               of the node; event counts (naive/ge/exact) are known keys.
//   [tasks]     every node's task count is what the task model gives for it
//               (a StreamActive's, after the split, one per activated physical
//               stream at most).
//   [partition] the decision and kinds are known; each partitioned subgraph is
//               a graph owned by its PartitionedCall node in the root, lists
//               that graph's nodes, and the decision agrees with the cut;
//               marked node names exist; streams.mode is dynamic exactly when
//               a graph is unknown-shape.
// Failures are Internal errors "verifier[<rule>]: …" naming the field.
#ifndef NPUPLAN_PLAN_PLAN_CLAIMS_H_
#define NPUPLAN_PLAN_PLAN_CLAIMS_H_

#include "absl/status/status.h"
#include "npuplan/plan/plan.h"

namespace npuplan {

// Stages each stage needs first (the union of the required() of the passes
// that provide it; a test in the compiler module keeps the two in step).
IrProperties StageNeeds(IrProperty stage);

absl::Status VerifyPlanClaims(const Plan& plan);

// The same in two parts, for a plan whose memory section is still being
// written on another thread (the compile driver's final verification): the
// first reads nothing of plan.memory; the second is the one claim that does
// ([stages]: a memory section requires memory-planned). Both pass exactly
// when VerifyPlanClaims does; when both fail, VerifyPlanClaims reports the
// first part's failure only if it comes first in its order, so a caller that
// wants its message runs it.
absl::Status VerifyPlanClaimsButMemory(const Plan& plan);
absl::Status VerifyMemorySectionClaim(const Plan& plan);

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_PLAN_CLAIMS_H_
