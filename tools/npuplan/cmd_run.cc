// `npuplan run PLAN`: executes a plan on the CPU back end (one worker thread
// per stream, device events/notifies for the plan's events) and reports every
// task that started before one of its producers finished, and every pair of
// buffers placed over the same bytes that the run's order does not keep apart
// (docs/execution.md).
#include <cstdio>
#include <limits>
#include <memory>

#include "npuplan/exec/plan_executor.h"
#include "npuplan/runtime/cpu_device.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/flag_checks.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/plan_input.h"
#include "tools/npuplan/progress.h"

namespace npuplan::cli {
namespace {

struct RunFlags {
  LoadOptions load;  // reader limits
  std::string input;
  int64_t jitter_seed = -1;  // -1 = no jitter
  int64_t repeat = 1;
  double time_scale = 0.0;
  int64_t jitter_max_us = 200;
  int64_t stream_skew_us = 0;
  int64_t show = 5;
  bool quiet = false;
  std::string branch = "longest";
  int64_t loop_iterations = 1;
  bool no_memory_check = false;
  uint64_t memory_check_budget = exec::kDefaultMemoryCheckBudget;
  int64_t branch_seed = -1;  // -1: --branch decides
};

std::string Plural(size_t n, const char* word) { return StrCat(n, " ", word, n == 1 ? "" : "s"); }

int RunRun(const RunFlags& f) {
  if (f.repeat < 1 || f.show < 0 || f.jitter_max_us < 0 || f.time_scale < 0 || f.stream_skew_us < 0 ||
      f.loop_iterations < 1) {
    return ReportUsage(
        "run: --repeat and --loop-iterations must be >= 1; --show, --jitter-max-us, "
        "--stream-skew-us and "
        "--time-scale >= 0");
  }
  auto branch = sim::ParseBranchFlag(f.branch);
  if (!branch.ok()) return ReportUsage(StrCat("run: ", std::string(branch.status().message())));
  auto plan = LoadPlan(f.input, f.load);
  if (!plan.ok()) return ReportStatus(plan.status());
  exec::ExecOptions options;
  options.jitter = f.jitter_seed >= 0;
  options.jitter_seed = f.jitter_seed >= 0 ? static_cast<uint64_t>(f.jitter_seed) : 0;
  options.jitter_max_us = f.jitter_max_us;
  options.time_scale = f.time_scale;
  options.stream_skew_us = f.stream_skew_us;
  options.control_flow.branch = *branch;
  if (f.branch_seed >= 0) {
    options.control_flow.branch = sim::ControlFlowOptions::kDrawnBranch;
    options.control_flow.branch_seed = static_cast<uint64_t>(f.branch_seed);
  }
  options.control_flow.loop_iterations = f.loop_iterations;
  options.check_memory = !f.no_memory_check;
  options.memory_check_budget = f.memory_check_budget;
  auto executor = exec::PlanExecutor::Create(*plan, options);
  if (!executor.ok()) {
    return ReportStatus(absl::Status(executor.status().code(), f.input + ": " + std::string(executor.status().message())));
  }
  runtime::CpuDevice device;
  size_t total = 0, bad_runs = 0, tasks = 0, streams = 0;
  double wall_ms = 0;
  std::vector<std::string> shown;
  Progress progress("run", f.quiet);
  for (int64_t r = 0; r < f.repeat; ++r) {
    progress.Count("run", static_cast<size_t>(r), static_cast<size_t>(f.repeat));
    auto result = (*executor)->Run(device, static_cast<uint64_t>(r));
    if (!result.ok()) return ReportStatus(result.status());
    tasks = result->tasks;
    streams = result->streams;
    wall_ms += result->wall_ms;
    const size_t bad = result->problems();
    total += bad;
    bad_runs += bad == 0 ? 0 : 1;
    for (const std::string& m : result->messages) {
      if (static_cast<int64_t>(shown.size()) < f.show) shown.push_back("run " + std::to_string(r) + ": " + m);
    }
  }
  progress.Done();
  const sim::PlanProgram& program = (*executor)->program();
  if (!f.quiet) {
    const std::string runs = Plural(static_cast<size_t>(f.repeat), "run");
    std::printf("%s: %s, %s%s (%zu tasks on %zu streams%s, %.3f ms)\n", f.input.c_str(), runs.c_str(),
                Plural(total, "violation").c_str(),
                bad_runs > 0 ? StrCat(" in ", Plural(bad_runs, "run")).c_str() : "", tasks, streams,
                options.jitter ? (", jitter seed " + std::to_string(f.jitter_seed)).c_str() : "", wall_ms);
    for (const std::string& line : sim::DescribeControlFlow(*plan, program.control_flow)) {
      std::printf("%s\n", line.c_str());
    }
    if (!program.skipped.empty()) std::printf("skipped events: %s\n", sim::SkippedSummary(program).c_str());
    const exec::MemoryRaceReport& memory = (*executor)->memory_races();
    if (!memory.skipped.empty()) {
      std::printf("memory check skipped: %s (--memory-check-budget)\n", memory.skipped.c_str());
    } else if (options.check_memory && plan->memory.planned) {
      std::printf(
          "memory check: %zu buffer instances, %zu overlapping pairs, %zu races, %zu hazards "
          "(clocks over %zu lanes)\n",
          memory.instances, memory.checked, memory.races, memory.hazards, memory.lanes);
    }
    if (streams == 0 && plan->model.num_nodes() > 0) {
      std::printf("note: no node of the plan has a stream; nothing ran\n");
    }
  }
  for (const std::string& s : shown) std::printf("violation: %s\n", s.c_str());
  if (total > static_cast<size_t>(shown.size())) std::printf("... and %zu more\n", total - shown.size());
  return total == 0 ? kExitOk : kExitInvalid;
}

void SetupRun(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand("run",
                                     "Execute a plan on the CPU back end and check dependencies "
                                     "and memory (exit 1 on any violation)");
  cmd->add_option("plan", flags->input, "Plan file (npuplan.plan/1)")->required();
  AddReadLimitFlags(cmd, &flags->load);
  cmd->add_option("--jitter", flags->jitter_seed,
                  "Add random per-task sleeps drawn from this seed (run r uses seed+r)")
      ->check(IntInRange(-1, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--repeat", flags->repeat, "Number of runs (default 1)")->check(PositiveInt());
  cmd->add_option("--jitter-max-us", flags->jitter_max_us,
                  "Largest jitter sleep in microseconds (default 200)")
      ->check(IntInRange(0, exec::kMaxSleepUs));
  cmd->add_option(
         "--stream-skew-us", flags->stream_skew_us,
         "With --jitter: start each stream after a random delay of up to this many microseconds")
      ->check(IntInRange(0, exec::kMaxSleepUs));
  cmd->add_option("--time-scale", flags->time_scale,
                  "Sleep this many microseconds per modelled microsecond of node cost (default 0: "
                  "no-op tasks)")
      ->check(FiniteInRange(0, 1e6));
  cmd->add_option("--show", flags->show, "Print at most this many violations (default 5)")
      ->check(NonNegativeInt());
  cmd->add_option("--branch", flags->branch,
                  "Branch every If/Case runs: then, else, an index, or longest (default: the branch with the most "
                  "work)");
  cmd->add_option(
         "--branch-seed", flags->branch_seed,
         "Each If/Case takes a branch drawn from this seed and its node (instead of --branch): "
         "nested and sibling branches mix")
      ->check(IntInRange(0, std::numeric_limits<int64_t>::max()));
  cmd->add_option(
         "--loop-iterations", flags->loop_iterations,
         "Times every loop body runs (default 1); > 1 also checks loop-carried dependencies")
      ->check(PositiveInt());
  cmd->add_flag("--no-memory-check", flags->no_memory_check,
                "Do not check the memory placements against the run's order (docs/execution.md)");
  cmd->add_option(
         "--memory-check-budget", flags->memory_check_budget,
         "Skip the memory check (saying so) when its clocks would take more than this many "
         "entries stored or read (default 2^28, 1 GiB)")
      ->check(PositiveInt());
  cmd->add_flag("-q,--quiet", flags->quiet, "Print only violations (no summary, no progress)");
  cmd->callback([flags, &inv] { inv.exit_code = RunRun(*flags); });
}

NPUPLAN_REGISTER_COMMAND("run", SetupRun);

}  // namespace
}  // namespace npuplan::cli
