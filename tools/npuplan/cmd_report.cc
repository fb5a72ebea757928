// `npuplan report INPUT -o report.html`: one self-contained HTML page
// (docs/report.md). INPUT is a plan (npuplan.plan/1: stream timeline from the
// simulator, utilisation, partition, memory) or the <case>_report.json of
// `npuplan kernel plan` with --case CASE.json (cache occupancy, spills).
// Bad input: a message naming the file, exit 1, no output file.
#include <cstdio>
#include <memory>
#include <string>

#include "npuplan/plan/plan_json.h"
#include "npuplan/report/kernel_report.h"
#include "npuplan/report/plan_report.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/plan_input.h"
#include "tools/npuplan/progress.h"

namespace npuplan::cli {
namespace {

struct ReportFlags {
  LoadOptions load;  // reader limits (plans)
  std::string input;
  std::string output;
  std::string case_path;
  std::string title;
  size_t max_items = 200000;
  std::string branch = "longest";
  int64_t loop_iterations = 1;
  bool quiet = false;
};

int RunReport(const ReportFlags& f) {
  auto branch = sim::ParseBranchFlag(f.branch);
  if (!branch.ok() || f.loop_iterations < 1) {
    return ReportUsage(StrCat("report: ", branch.ok() ? "--loop-iterations must be >= 1"
                                                      : std::string(branch.status().message())));
  }
  Progress progress("report", f.quiet);
  OutputTransaction out;  // before the input is read: an unwritable -o fails at once
  if (auto s = out.Add(f.output, "-o"); !s.ok()) return ReportStatus(s);
  progress.Stage("reading the input");
  auto text = ReadFile(f.input);
  if (!text.ok()) return ReportStatus(text.status());
  absl::StatusOr<std::string> html;
  if (LooksLikePlan(*text)) {
    if (!f.case_path.empty()) {
      return ReportUsage(
          StrCat("report: --case is only for kernel reports, but ", f.input, " is a plan"));
    }
    auto plan = ParsePlanJson(*text, f.input, f.load.limits);
    if (!plan.ok()) return ReportStatus(plan.status());
    if (auto s = CheckPlanClaims(*plan, f.input); !s.ok()) return ReportStatus(s);
    report::PlanReportOptions options;
    options.sim.control_flow.branch = *branch;
    options.sim.control_flow.loop_iterations = f.loop_iterations;
    options.on_stage = [&progress](std::string_view stage) { progress.Stage(stage); };
    options.title = f.title;
    options.source = f.input;
    options.max_timeline_items = f.max_items;
    options.max_memory_buffers = f.max_items;
    html = report::PlanReportHtml(*plan, options);
    if (!html.ok()) {
      return ReportStatus(absl::Status(
          html.status().code(), StrCat(f.input, ": ", std::string(html.status().message()))));
    }
  } else if (report::LooksLikeKernelReport(*text)) {
    html = report::KernelReportHtml({*text, f.input, f.case_path});
    if (!html.ok()) return ReportStatus(html.status());
  } else if (LooksLikeGraph(f.input, *text)) {
    return ReportStatus(CompileFirstError(f.input));
  } else {
    return ReportStatus(absl::InvalidArgumentError(StrCat(
        f.input,
        ": neither a plan (\"format\": \"npuplan.plan/1\", from `npuplan compile`) nor a kernel "
        "report (<case>_report.json from `npuplan kernel plan`); a graph must be compiled first")));
  }
  progress.Stage("writing");
  if (auto s = out.Write(f.output, *html); !s.ok()) return ReportStatus(s);
  return ReportStatus(out.Commit());
}

void SetupReport(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* cmd =
      app.add_subcommand("report", "Write a self-contained HTML report of a plan or a kernel plan");
  cmd->add_option("input", flags->input,
                  "Plan file (npuplan.plan/1) or <case>_report.json of `kernel plan`")
      ->required();
  cmd->add_option("-o,--output", flags->output, "HTML file to write (- for standard output)")
      ->required();
  AddReadLimitFlags(cmd, &flags->load);
  cmd->add_option("--case", flags->case_path,
                  "Kernel graph JSON of the case (kernel reports only)");
  cmd->add_option("--title", flags->title, "Page title");
  cmd->add_option(
      "--max-items", flags->max_items,
      "Carry at most this many timeline items / memory buffers one by one; above it the timeline "
      "shows busy fractions per time bucket (default 200000)");
  cmd->add_option("--branch", flags->branch,
                  "Branch every If/Case runs in the simulated timeline: then, else, an index, or longest (default)");
  cmd->add_option("--loop-iterations", flags->loop_iterations, "Times every loop body runs (default 1)");
  cmd->add_flag("-q,--quiet", flags->quiet, "No progress line on the terminal");
  cmd->callback([flags, &inv] { inv.exit_code = RunReport(*flags); });
}

NPUPLAN_REGISTER_COMMAND("report", SetupReport);

}  // namespace
}  // namespace npuplan::cli
