// `npuplan simulate PLAN`: discrete-event simulation of a plan's streams with
// the cost model; prints makespan, lower bound, critical path and per-stream
// utilisation, and writes a Chrome/Perfetto trace (docs/execution.md).
#include <chrono>
#include <cstdio>
#include <memory>

#include "npuplan/sim/simulator.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/flag_checks.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/plan_input.h"
#include "tools/npuplan/progress.h"

namespace npuplan::cli {
namespace {

// The largest per-task / per-event delay a flag may set: an hour, so that sums
// over millions of tasks stay far inside a double's exact range.
constexpr double kMaxSimDelayUs = 3.6e9;

struct SimulateFlags {
  LoadOptions load;  // reader limits
  std::string input;
  std::string trace;
  std::string output;
  bool json = false;
  sim::SimOptions options;
  bool ignore_cost_attr = false;
  bool timing = false;
  bool quiet = false;
  std::string branch = "longest";
};

int RunSimulate(SimulateFlags& f) {
  if (f.options.launch_overhead_us < 0 || f.options.record_us < 0 || f.options.wait_latency_us < 0 ||
      f.options.control_flow.loop_iterations < 1) {
    return ReportUsage(
        "simulate: --launch-overhead-us, --record-us and --wait-latency-us must be >= 0, "
        "--loop-iterations >= 1");
  }
  auto branch = sim::ParseBranchFlag(f.branch);
  if (!branch.ok())
    return ReportUsage(StrCat("simulate: ", std::string(branch.status().message())));
  f.options.control_flow.branch = *branch;
  f.options.cost.use_cost_attr = !f.ignore_cost_attr;
  Progress progress("simulate", f.quiet);
  // Both outputs in one transaction, declared before the plan is read: an
  // unwritable -o leaves no trace file and fails at once. The report goes to
  // standard output without -o.
  const std::string report_path = f.output.empty() ? "-" : f.output;
  OutputTransaction out;
  if (auto s = out.Add(report_path, "the report (-o)"); !s.ok()) return ReportStatus(s);
  if (!f.trace.empty()) {
    if (auto s = out.Add(f.trace, "--trace"); !s.ok()) return ReportStatus(s);
  }
  progress.Stage("reading the plan");
  auto plan = LoadPlan(f.input, f.load);
  if (!plan.ok()) return ReportStatus(plan.status());
  progress.Stage("simulating");
  const auto t0 = std::chrono::steady_clock::now();
  auto result = sim::Simulate(*plan, f.options);
  const double sim_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!result.ok()) {
    return ReportStatus(absl::Status(result.status().code(), f.input + ": " + std::string(result.status().message())));
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (!f.trace.empty()) {
    progress.Stage("writing the trace");
    if (auto s = out.Write(f.trace, sim::ChromeTraceJson(*plan, *result)); !s.ok())
      return ReportStatus(s);
  }
  progress.Done();
  if (f.timing) {
    std::fprintf(stderr, "simulated %zu tasks in %.1f ms; trace %.1f ms\n", result->program.num_tasks, sim_ms,
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count());
  }
  const std::string report = f.json ? sim::SimReportJson(*plan, *result, f.options) : sim::SimReportText(*plan, *result);
  if (auto s = out.Write(report_path, report); !s.ok()) return ReportStatus(s);
  return ReportStatus(out.Commit());
}

void SetupSimulate(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* cmd = app.add_subcommand("simulate", "Simulate a plan's streams with the cost model (makespan, critical path, trace)");
  cmd->add_option("plan", flags->input, "Plan file (npuplan.plan/1)")->required();
  AddReadLimitFlags(cmd, &flags->load);
  cmd->add_option("--trace", flags->trace, "Write a Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev)");
  cmd->add_flag("--json", flags->json, "Print the report as JSON (npuplan.sim/1)");
  cmd->add_option("-o,--output", flags->output,
                  "Write the report to this file instead of stdout (- is stdout)");
  cmd->add_option("--launch-overhead-us", flags->options.launch_overhead_us,
                  "Per-task launch overhead (default 1)")
      ->check(FiniteInRange(0, kMaxSimDelayUs));
  cmd->add_option("--record-us", flags->options.record_us,
                  "Time a record occupies its stream (default 0.5)")
      ->check(FiniteInRange(0, kMaxSimDelayUs));
  cmd->add_option("--wait-latency-us", flags->options.wait_latency_us,
                  "Delay from a record to the release of its waiter (default 1)")
      ->check(FiniteInRange(0, kMaxSimDelayUs));
  cmd->add_flag("--time", flags->timing, "Print the time the simulation and the trace took to stderr");
  cmd->add_flag("--ignore-cost-attr", flags->ignore_cost_attr, "Estimate every node's cost, ignoring _cost");
  cmd->add_option("--branch", flags->branch,
                  "Branch every If/Case runs: then, else, an index, or longest (default: the branch with the most "
                  "work, the worst case)");
  cmd->add_option("--loop-iterations", flags->options.control_flow.loop_iterations,
                  "Times every loop body runs (default 1)")
      ->check(PositiveInt());
  cmd->add_flag("-q,--quiet", flags->quiet, "No progress line on the terminal");
  cmd->callback([flags, &inv] { inv.exit_code = RunSimulate(*flags); });
}

NPUPLAN_REGISTER_COMMAND("simulate", SetupSimulate);

}  // namespace
}  // namespace npuplan::cli
