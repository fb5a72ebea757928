// `npuplan simulate PLAN`: discrete-event simulation of a plan's streams with
// the cost model; prints makespan, lower bound, critical path and per-stream
// utilisation, and writes a Chrome/Perfetto trace (docs/execution.md).
#include <chrono>
#include <cstdio>
#include <memory>

#include "npuplan/sim/simulator.h"
#include "npuplan/support/file_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/plan_input.h"
#include "tools/npuplan/progress.h"

namespace npuplan::cli {
namespace {

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
    std::fprintf(stderr,
                 "error: simulate: --launch-overhead-us, --record-us and --wait-latency-us must be >= 0, "
                 "--loop-iterations >= 1\n");
    return kExitUsage;
  }
  auto branch = sim::ParseBranchFlag(f.branch);
  if (!branch.ok()) {
    std::fprintf(stderr, "error: simulate: %s\n", std::string(branch.status().message()).c_str());
    return kExitUsage;
  }
  f.options.control_flow.branch = *branch;
  f.options.cost.use_cost_attr = !f.ignore_cost_attr;
  Progress progress("simulate", f.quiet);
  progress.Stage("reading the plan");
  auto plan = ReadPlanInput(f.input, f.load.limits);
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
    if (auto s = WriteFileAtomically(f.trace, sim::ChromeTraceJson(*plan, *result)); !s.ok()) return ReportStatus(s);
  }
  progress.Done();
  if (f.timing) {
    std::fprintf(stderr, "simulated %zu tasks in %.1f ms; trace %.1f ms\n", result->program.num_tasks, sim_ms,
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count());
  }
  const std::string report = f.json ? sim::SimReportJson(*plan, *result, f.options) : sim::SimReportText(*plan, *result);
  if (!f.output.empty()) {
    if (auto s = WriteFileAtomically(f.output, report); !s.ok()) return ReportStatus(s);
  } else {
    std::fputs(report.c_str(), stdout);
  }
  return kExitOk;
}

void SetupSimulate(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* cmd = app.add_subcommand("simulate", "Simulate a plan's streams with the cost model (makespan, critical path, trace)");
  cmd->add_option("plan", flags->input, "Plan file (npuplan.plan/1)")->required();
  AddReadLimitFlags(cmd, &flags->load);
  cmd->add_option("--trace", flags->trace, "Write a Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev)");
  cmd->add_flag("--json", flags->json, "Print the report as JSON (npuplan.sim/1)");
  cmd->add_option("-o,--output", flags->output, "Write the report to this file instead of stdout");
  cmd->add_option("--launch-overhead-us", flags->options.launch_overhead_us, "Per-task launch overhead (default 1)");
  cmd->add_option("--record-us", flags->options.record_us, "Time a record occupies its stream (default 0.5)");
  cmd->add_option("--wait-latency-us", flags->options.wait_latency_us,
                  "Delay from a record to the release of its waiter (default 1)");
  cmd->add_flag("--time", flags->timing, "Print the time the simulation and the trace took to stderr");
  cmd->add_flag("--ignore-cost-attr", flags->ignore_cost_attr, "Estimate every node's cost, ignoring _cost");
  cmd->add_option("--branch", flags->branch,
                  "Branch every If/Case runs: then, else, an index, or longest (default: the branch with the most "
                  "work, the worst case)");
  cmd->add_option("--loop-iterations", flags->options.control_flow.loop_iterations,
                  "Times every loop body runs (default 1)");
  cmd->add_flag("-q,--quiet", flags->quiet, "No progress line on the terminal");
  cmd->callback([flags, &inv] { inv.exit_code = RunSimulate(*flags); });
}

NPUPLAN_REGISTER_COMMAND("simulate", SetupSimulate);

}  // namespace
}  // namespace npuplan::cli
