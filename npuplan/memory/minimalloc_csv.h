// MiniMalloc's CSV format (google/minimalloc), so plans can be compared with
// other tools directly:
//
//   id,lower,upper,size[,offset]
//   b1,0,3,4
//   b2,3,9,4
//
// One header line naming the columns (any order; `alignment` is an optional
// npuplan extension), then one buffer per line, live on [lower, upper).
// Blank lines are ignored, CRLF line ends accepted.
#ifndef NPUPLAN_MEMORY_MINIMALLOC_CSV_H_
#define NPUPLAN_MEMORY_MINIMALLOC_CSV_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "npuplan/memory/interval_problem.h"

namespace npuplan::memory {

// A parsed CSV: the problem, plus the offsets when the file has that column.
struct MinimallocCsv {
  IntervalProblem problem;
  std::optional<IntervalAssignment> offsets;
};

// Parses CSV text. `source` names the input in messages ("in.csv:7: ...").
// InvalidArgument on a missing or duplicate column, a wrong field count, a
// field that is not a 64-bit integer, or a buffer CheckIntervalProblem
// rejects (negative size, lower >= upper, duplicate id, overflow).
absl::StatusOr<MinimallocCsv> ParseMinimallocCsv(std::string_view text, std::string_view source);

// Prints `id,lower,upper,size,offset` rows (plus `alignment` before `offset`
// when any buffer has alignment > 1), in problem order.
std::string PrintMinimallocCsv(const IntervalProblem& problem,
                               const IntervalAssignment& assignment);

}  // namespace npuplan::memory

#endif  // NPUPLAN_MEMORY_MINIMALLOC_CSV_H_
