// Memplan() of the public API: the interval solver as `npuplan memplan` runs
// it, plus the independent validation of its answer.
#include "npuplan/api/memplan.h"

#include <utility>

#include "npuplan/memory/interval_solver.h"
#include "npuplan/memory/minimalloc_csv.h"
#include "npuplan/memory/plan_validator.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::api {
namespace {

memory::IntervalProblem ToProblem(const std::vector<Interval>& intervals) {
  memory::IntervalProblem problem;
  problem.buffers.reserve(intervals.size());
  for (size_t i = 0; i < intervals.size(); ++i) {
    const Interval& v = intervals[i];
    problem.buffers.push_back(memory::IntervalBuffer{v.id.empty() ? std::to_string(i) : v.id,
                                                     v.lower, v.upper, v.size, v.alignment});
  }
  return problem;
}

absl::StatusOr<MemplanResult> Solve(memory::IntervalProblem problem,
                                    const MemplanOptions& options) {
  if (options.capacity.has_value()) problem.capacity = *options.capacity;
  memory::IntervalSolverOptions o;  // the CLI's flags → the solver's options
  o.time_limit_seconds = options.time_limit_seconds;
  o.search = !options.greedy_only;
  o.target_peak = options.target;
  o.max_nodes = options.max_nodes;
  o.max_steps = options.max_steps;
  o.validate = false;  // validated below, with memplan's message
  NPUPLAN_ASSIGN_OR_RETURN(memory::IntervalSolution s, memory::SolveIntervals(problem, o));
  const memory::ValidationResult valid = memory::ValidateIntervalAssignment(problem, s.assignment);
  if (!valid.ok()) {
    return absl::InternalError(
        StrCat("memplan: the packing failed validation: ", std::string(valid.status.message())));
  }
  MemplanResult out;
  out.offsets = std::move(s.assignment.offsets);
  out.peak = s.peak;
  out.lower_bound = s.lower_bound;
  out.optimal = s.optimal;
  out.greedy_peak = s.stats.greedy_peak;
  out.greedy_order = s.stats.greedy_order;
  out.search_nodes = s.stats.nodes;
  out.search_steps = s.stats.steps;
  out.timed_out = s.stats.timed_out;
  return out;
}

}  // namespace

absl::StatusOr<MemplanResult> Memplan(const std::vector<Interval>& intervals,
                                      const MemplanOptions& options) {
  return Solve(ToProblem(intervals), options);
}

absl::StatusOr<MemplanResult> MemplanCsvFile(const std::string& path,
                                             const MemplanOptions& options) {
  ReadFileOptions read;
  if (options.max_file_bytes > 0) read.max_bytes = options.max_file_bytes;
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path, read));
  NPUPLAN_ASSIGN_OR_RETURN(memory::MinimallocCsv csv, memory::ParseMinimallocCsv(text, path));
  return Solve(std::move(csv.problem), options);
}

std::string MemplanCsv(const std::vector<Interval>& intervals,
                       const std::vector<int64_t>& offsets) {
  return memory::PrintMinimallocCsv(ToProblem(intervals), memory::IntervalAssignment{offsets});
}

}  // namespace npuplan::api
