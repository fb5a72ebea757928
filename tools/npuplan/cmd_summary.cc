// `npuplan summary PLAN [--json]`: the stream allocation summary (SPEC S9).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "npuplan/events/resource_use.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/stream/stream_summary.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/option_flags.h"

namespace npuplan::cli {
namespace {

struct SummaryFlags {
  LoadOptions load;  // reader limits
  std::string plan;
  bool json = false;
  std::vector<std::string> options;
};

int RunSummary(const SummaryFlags& f) {
  auto plan = ReadPlanFile(f.plan, f.load.limits);
  if (!plan.ok()) return ReportStatus(plan.status());
  auto summary = GetStreamAllocationSummary(*plan);
  if (!summary.ok()) return ReportStatus(summary.status());
  // Device resources against the budgets (--option npuplan.maxStreams=N …; default the device
  // limits).
  CompileOptions budgets;
  for (const auto& [k, v] : OptionOverrides(f.options)) budgets.Set(k, v);
  if (absl::Status s = budgets.Validate(); !s.ok()) return ReportStatus(s);
  const events::ResourceUse use = events::PlanResourceUse(*plan, budgets);
  std::string text;
  if (f.json) {
    nlohmann::json j = nlohmann::json::parse(StreamSummaryToJson(*summary));
    j["resources"] = nlohmann::json::parse(events::ResourceUseJson(use));
    text = j.dump(1) + "\n";
  } else {
    text = StreamSummaryToText(*summary) + events::ResourceUseText(use);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

void SetupSummary(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<SummaryFlags>();
  CLI::App* cmd = app.add_subcommand(
      "summary",
      "Print the stream allocation summary of a plan and its device resources against the budgets");
  cmd->add_option("plan", flags->plan, "Plan file (npuplan.plan/1)")->required();
  AddReadLimitFlags(cmd, &flags->load);
  cmd->add_flag("--json", flags->json, "Print JSON instead of text");
  AddOptionFlag(cmd, &flags->options);  // budgets to show the resources against
  cmd->callback([flags, &inv] { inv.exit_code = RunSummary(*flags); });
}

NPUPLAN_REGISTER_COMMAND("summary", SetupSummary);

}  // namespace
}  // namespace npuplan::cli
