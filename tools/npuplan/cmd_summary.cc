// `npuplan summary PLAN [--json]`: the stream allocation summary (SPEC S9).
#include <cstdio>
#include <memory>

#include "npuplan/plan/plan_json.h"
#include "npuplan/stream/stream_summary.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"

namespace npuplan::cli {
namespace {

struct SummaryFlags {
  LoadOptions load;  // reader limits
  std::string plan;
  bool json = false;
};

int RunSummary(const SummaryFlags& f) {
  auto plan = ReadPlanFile(f.plan, f.load.limits);
  if (!plan.ok()) return ReportStatus(plan.status());
  auto summary = GetStreamAllocationSummary(*plan);
  if (!summary.ok()) return ReportStatus(summary.status());
  std::string text = f.json ? StreamSummaryToJson(*summary) : StreamSummaryToText(*summary);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

void SetupSummary(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<SummaryFlags>();
  CLI::App* cmd = app.add_subcommand("summary", "Print the stream allocation summary of a plan");
  cmd->add_option("plan", flags->plan, "Plan file (npuplan.plan/1)")->required();
  AddReadLimitFlags(cmd, &flags->load);
  cmd->add_flag("--json", flags->json, "Print JSON instead of text");
  cmd->callback([flags, &inv] { inv.exit_code = RunSummary(*flags); });
}

NPUPLAN_REGISTER_COMMAND("summary", SetupSummary);

}  // namespace
}  // namespace npuplan::cli
