// `npuplan memplan IN.csv [--capacity N] [--minimize-peak] [-o OUT.csv]`:
// plans a MiniMalloc-format interval problem and prints peak, lower bound,
// gap and time. `--verify` checks the offsets already in IN.csv instead.
// The search is bounded by steps (deterministic); a wall limit is opt-in.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "npuplan/memory/interval_solver.h"
#include "npuplan/memory/minimalloc_csv.h"
#include "npuplan/memory/plan_validator.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/flag_checks.h"
#include "tools/npuplan/progress.h"

namespace npuplan::cli {
namespace {

// A count, not a wall-clock limit, so the same input always gives the same
// plan; large enough for every MiniMalloc file to reach its best-known peak
// as a capacity (the steps they need: docs/benchmarks.md, "Memory planning").
constexpr int64_t kDefaultSearchSteps = 200'000'000;

struct MemplanFlags {
  std::string input;
  std::string output;
  int64_t capacity = -1;  // -1 = none
  double time_limit = -1;  // -1 = none (opt-in: the wall clock would decide the result)
  int64_t target = 0;     // stop once the peak is at most this (0 = the lower bound)
  int64_t max_nodes = 0;  // 0 = no limit
  int64_t max_steps = kDefaultSearchSteps;  // 0 = no limit
  bool minimize_peak = false;               // with --capacity: keep lowering the peak below it
  bool greedy_only = false;
  bool verify = false;
  bool quiet = false;  // no progress line
};

// Checks the offsets given in the input file.
absl::Status VerifyOffsets(const memory::MinimallocCsv& csv, const MemplanFlags& flags) {
  if (!csv.offsets.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flags.input, ": --verify needs an 'offset' column"));
  }
  const memory::ValidationResult result =
      memory::ValidateIntervalAssignment(csv.problem, *csv.offsets);
  if (!result.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flags.input, ": ", result.status.message()));
  }
  std::printf("valid: %zu buffers, peak %lld\n", csv.problem.buffers.size(),
              static_cast<long long>(memory::ComputePeak(csv.problem, *csv.offsets)));
  return absl::OkStatus();
}

absl::Status RunMemplan(const MemplanFlags& flags) {
  const auto start = std::chrono::steady_clock::now();
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(flags.input));
  NPUPLAN_ASSIGN_OR_RETURN(memory::MinimallocCsv csv,
                           memory::ParseMinimallocCsv(text, flags.input));
  if (flags.capacity >= 0) csv.problem.capacity = flags.capacity;
  if (flags.verify) return VerifyOffsets(csv, flags);
  OutputTransaction out;
  if (!flags.output.empty()) NPUPLAN_RETURN_IF_ERROR(out.Add(flags.output, "-o"));

  memory::IntervalSolverOptions options;
  options.time_limit_seconds = flags.time_limit >= 0 ? flags.time_limit : 1e9;
  options.stop_at_capacity = !flags.minimize_peak;
  options.search = !flags.greedy_only;
  options.target_peak = flags.target;
  options.max_nodes = flags.max_nodes;
  options.max_steps = flags.max_steps;
  // The search runs up to its time limit: say so on a terminal.
  Progress progress("memplan", flags.quiet || !options.search);
  progress.Stage(absl::StrCat("searching ", csv.problem.buffers.size(), " buffers"));
  auto solved = memory::SolveIntervals(csv.problem, options);
  progress.Done();
  NPUPLAN_ASSIGN_OR_RETURN(memory::IntervalSolution solution, std::move(solved));
  if (!flags.output.empty()) {
    NPUPLAN_RETURN_IF_ERROR(
        out.Write(flags.output, memory::PrintMinimallocCsv(csv.problem, solution.assignment)));
  }
  NPUPLAN_RETURN_IF_ERROR(out.Commit());
  FILE* info = out.writes_stdout() ? stderr : stdout;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const memory::IntervalSolverStats& st = solution.stats;
  std::fprintf(info, "buffers: %zu\n", csv.problem.buffers.size());
  std::fprintf(info, "peak: %lld\n", static_cast<long long>(solution.peak));
  std::fprintf(info, "lower_bound: %lld\n", static_cast<long long>(solution.lower_bound));
  std::fprintf(info, "gap: %.2f%%%s\n", 100.0 * solution.gap(),
               solution.optimal ? " (optimal)" : "");
  std::fprintf(info, "greedy_peak: %lld (%s)\n", static_cast<long long>(st.greedy_peak),
               st.greedy_order.c_str());
  std::fprintf(info, "search: %lld nodes, %lld steps, %d probes%s\n",
               static_cast<long long>(st.nodes), static_cast<long long>(st.steps), st.probes,
               st.timed_out         ? ", time limit reached"
               : st.node_limit_hit  ? ", node limit reached"
               : st.steps_exhausted ? ", step limit reached"
               : st.fits_capacity   ? ", fits capacity"
               : st.scalable        ? ", skipped (more than max_conflict_edges conflicts)"
                                    : "");
  std::fprintf(info, "time: %.3f s\n", seconds);
  return absl::OkStatus();
}

void SetupMemplan(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<MemplanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "memplan", "Plans buffer offsets for a MiniMalloc CSV (id,lower,upper,size[,offset])");
  cmd->add_option("input", flags->input, "Input CSV, lifetimes half-open [lower, upper)")
      ->required();
  cmd->add_option("-o,--output", flags->output, "Output CSV with an offset column");
  cmd->add_option("--capacity", flags->capacity,
                  "Memory capacity in bytes: stop at the first plan that fits in it")
      ->check(NonNegativeInt());
  cmd->add_flag("--minimize-peak", flags->minimize_peak,
                "With --capacity: keep lowering the peak below the capacity (until the lower "
                "bound, --target or a limit)");
  cmd->add_option("--time-limit", flags->time_limit,
                  "Search wall-time limit in seconds (default none: the result then depends on "
                  "the machine)")
      ->check(FiniteInRange(0, 1e9));
  cmd->add_option("--target", flags->target,
                  "Stop once the peak is at most this many bytes (0 = the lower bound)")
      ->check(NonNegativeInt());
  cmd->add_option("--max-nodes", flags->max_nodes,
                  "Stop the search after this many nodes (0 = no limit; machine-independent)")
      ->check(NonNegativeInt());
  cmd->add_option("--max-steps", flags->max_steps,
                  "Stop the search after this many steps (buffers/sections visited; 0 = no limit)")
      ->check(NonNegativeInt())
      ->capture_default_str();
  cmd->add_flag("--greedy-only", flags->greedy_only, "Skip the branch-and-bound search");
  cmd->add_flag("--verify", flags->verify, "Only validate the offsets given in the input");
  cmd->add_flag("-q,--quiet", flags->quiet, "No progress line on the terminal");
  AddMaxFileBytesFlag(cmd);
  cmd->callback([flags, &inv] { inv.exit_code = ReportStatus(RunMemplan(*flags)); });
}

NPUPLAN_REGISTER_COMMAND("memplan", SetupMemplan);

}  // namespace
}  // namespace npuplan::cli
