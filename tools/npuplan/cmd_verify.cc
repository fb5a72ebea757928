// `npuplan verify FILE`: checks a graph or a plan with the independent verifier.
#include <cstdio>
#include <memory>

#include "npuplan/events/plan_complete.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/pass/pass.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"

namespace npuplan::cli {
namespace {

struct VerifyFlags {
  std::string input;
  bool partial = false;
  LoadOptions load;
};

int RunVerify(const VerifyFlags& f) {
  auto in = LoadInput(f.input, f.load);
  if (!in.ok()) return ReportStatus(in.status());
  const Plan& plan = in->plan;
  // A graph has no stage facts yet: VerifyPlan then checks the structure only.
  absl::Status s = VerifyPlan(plan);
  // A plan must also carry every stage its content needs (sync-events for
  // streams that depend on each other), unless --partial asks only about the
  // stages it claims (a partial pipeline's plan, --dump-after files).
  absl::Status complete =
      s.ok() && in->is_plan ? events::VerifyPlanComplete(plan) : absl::OkStatus();
  if (s.ok() && !f.partial) s = complete;
  if (!s.ok()) return ReportStatus(absl::Status(s.code(), f.input + ": " + std::string(s.message())));
  const std::string name = EchoName(f.input);
  if (in->is_plan) {
    std::printf("%s: plan OK (%zu nodes, %zu graphs, stages [%s]%s)\n", name.c_str(),
                plan.model.num_nodes(), plan.model.num_graphs(),
                PropertyNames(plan.established).c_str(),
                complete.ok() ? "" : "; partial: stage 'sync-events' is missing to run it");
  } else {
    std::printf("%s: graph OK (%zu nodes, %zu graphs)\n", name.c_str(), plan.model.num_nodes(),
                plan.model.num_graphs());
  }
  return kExitOk;
}

void SetupVerify(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<VerifyFlags>();
  CLI::App* cmd = app.add_subcommand("verify", "Verify a graph or a plan (exit 1 on any violation)");
  cmd->add_option("file", flags->input, "Graph or plan file")->required();
  cmd->add_flag("--partial", flags->partial,
                "Check only the stages a plan claims (a partial pipeline's plan, --dump-after "
                "files); by default "
                "a plan must also carry every stage its content needs");
  cmd->add_option("--engines", flags->load.engines_file, "Engine table file merged over the built-in table");
  AddReadLimitFlags(cmd, &flags->load);
  AddInputShapeFlag(cmd, &flags->load);
  cmd->callback([flags, &inv] { inv.exit_code = RunVerify(*flags); });
}

NPUPLAN_REGISTER_COMMAND("verify", SetupVerify);

}  // namespace
}  // namespace npuplan::cli
