// Validates an interval assignment independently of the solver that produced
// it (the MiniMalloc `Validate` idea): every buffer placed, offsets aligned,
// no two conflicting buffers overlapping in time x address, peak <= capacity.
//
// Conflicts are recomputed here from lifetimes, `extra_conflicts` and
// `forbid_sharing` with code that shares nothing with the solver's conflict
// graph, so a solver bug cannot hide behind a shared helper.
#ifndef NPUPLAN_MEMORY_PLAN_VALIDATOR_H_
#define NPUPLAN_MEMORY_PLAN_VALIDATOR_H_


#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "npuplan/memory/interval_problem.h"

namespace npuplan::memory {

// The first rule an assignment breaks, checked in this order.
enum class Violation {
  kNone = 0,
  kWrongOffsetCount,  // assignment.offsets.size() != problem.buffers.size()
  kNegativeOffset,    // a buffer left unplaced (offset < 0)
  kOffsetOverflow,    // offset + size does not fit in int64
  kMisaligned,        // offset % alignment != 0
  kOverlap,           // two conflicting buffers share an address
  kOverCapacity,      // offset + size > capacity
};

// Stable lower-case name of a violation ("overlap", "over-capacity", ...).
const char* ViolationName(Violation v);

// kNone with OK, or the first violation with an Internal status naming the
// buffer ids, their lifetimes and address ranges.
struct ValidationResult {
  Violation violation = Violation::kNone;
  absl::Status status;
  bool ok() const { return violation == Violation::kNone; }
};

ABSL_MUST_USE_RESULT ValidationResult ValidateIntervalAssignment(
    const IntervalProblem& problem, const IntervalAssignment& assignment);

}  // namespace npuplan::memory

#endif  // NPUPLAN_MEMORY_PLAN_VALIDATOR_H_
