// The memory verifier (the memory-planned row of stage_checks.def). It trusts neither the
// planner nor the interval solver: from the plan's graph it recomputes the
// logical buffers (tensor_lifetimes.h) and the happens-before relation
// (stream_aware_reuse.h), then checks plan.memory directly — no interval
// problem, conflict graph or solver validator is involved:
//   [memory-tensors]  every tensor of a planned buffer has exactly one
//                     placement, none for dynamic or unknown tensors; sizes
//                     match the aligned tensor sizes; regions match; all
//                     members of a buffer share one offset; lifetimes match
//                     (until Send/Recv nodes renumber the plan order)
//   [memory-align]    offsets are non-negative multiples of the alignment
//   [memory-overlap]  two activation-pool buffers whose address ranges
//                     intersect are provably ordered (every use of one
//                     happens before every use of the other); inputs and
//                     constants never overlap inside their regions
//   [memory-peak]     peak = max end offset of the pool; lower bound <= peak;
//                     region totals cover their buffers
// Failures are Internal errors "verifier[memory-…]: …" naming the tensors,
// their streams and the rule.
#ifndef NPUPLAN_VERIFY_MEMORY_VERIFIER_H_
#define NPUPLAN_VERIFY_MEMORY_VERIFIER_H_

#include "absl/status/status.h"
#include "npuplan/plan/plan.h"

namespace npuplan::verify {
class Verification;  // verification.h
}  // namespace npuplan::verify

namespace npuplan::memory {

absl::Status VerifyMemoryPlan(const Plan& plan);
// The same as a check of `run` (verify::VerifyPlan's memory row).
absl::Status VerifyMemoryPlan(verify::Verification& run);

}  // namespace npuplan::memory

#endif  // NPUPLAN_VERIFY_MEMORY_VERIFIER_H_
