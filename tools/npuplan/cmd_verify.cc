// `npuplan verify FILE`: checks a graph or a plan with the independent verifier.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "npuplan/compiler/bundle.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/pass/pass.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/json_document.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/plan_complete.h"
#include "npuplan/verify/verify.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"

namespace npuplan::cli {
namespace {

struct VerifyFlags {
  std::string input;
  bool partial = false;
  LoadOptions load;
};

// A bundle manifest (npuplan.bundle/1): every plan it names verified, then
// the manifest recomputed from them.
// Only a regular file is opened (a FIFO would block here before the reader
// could refuse it), and only its top-level "format" counts, as for a plan.
bool LooksLikeBundle(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  char head[4096];
  const size_t n = std::fread(head, 1, sizeof(head), file);
  std::fclose(file);
  if (std::string_view(head, n).find(kBundleFormat) == std::string_view::npos) return false;
  auto text = ReadFile(path);
  return text.ok() && TopLevelString(*text, "format") == kBundleFormat;
}

int RunVerifyBundle(const VerifyFlags& f) {
  auto text = ReadFile(f.input);
  if (!text.ok()) return ReportStatus(text.status());
  auto bundle = BundleFromJson(*text, f.input);
  if (!bundle.ok()) return ReportStatus(bundle.status());
  const std::filesystem::path dir = std::filesystem::path(f.input).parent_path();
  std::vector<BundleGraph> from_plans;
  for (const BundleGraph& g : bundle->graphs) {
    const std::string path = (dir / g.plan).string();
    auto plan = ReadPlanFile(path, f.load.limits);
    if (!plan.ok()) return ReportStatus(plan.status());
    absl::Status s = verify::VerifyPlan(*plan);
    if (s.ok() && !f.partial) s = verify::VerifyPlanComplete(*plan);
    if (!s.ok()) {
      return ReportStatus(absl::Status(s.code(), path + ": " + std::string(s.message())));
    }
    from_plans.push_back(BundleGraphFromPlan(*plan));
  }
  if (absl::Status s = VerifyBundle(*bundle, from_plans); !s.ok()) {
    return ReportStatus(absl::Status(s.code(), f.input + ": " + std::string(s.message())));
  }
  std::printf(
      "%s: bundle OK (%zu graphs, %s: %lld device streams, %lld event ids, %lld notify ids, %lld "
      "bytes)\n",
      f.input.c_str(), bundle->graphs.size(), bundle->concurrent ? "concurrent" : "sequential",
      static_cast<long long>(bundle->streams), static_cast<long long>(bundle->event_ids),
      static_cast<long long>(bundle->notify_ids), static_cast<long long>(bundle->memory_bytes));
  return kExitOk;
}

int RunVerify(const VerifyFlags& f) {
  if (LooksLikeBundle(f.input)) return RunVerifyBundle(f);
  auto loaded = LoadInput(f.input, f.load);
  if (!loaded.ok()) return ReportStatus(loaded.status());
  auto in = std::make_shared<const LoadedInput>(std::move(loaded).value());
  KeepUntilExit(in);
  const Plan& plan = in->plan;
  // A graph has no stage facts yet: VerifyPlan then checks the structure only.
  absl::Status s = verify::VerifyPlan(plan);
  // A plan must also carry every stage its content needs (sync-events for
  // streams that depend on each other), unless --partial asks only about the
  // stages it claims (a partial pipeline's plan, --dump-after files).
  absl::Status complete =
      s.ok() && in->is_plan ? verify::VerifyPlanComplete(plan) : absl::OkStatus();
  if (s.ok() && !f.partial) s = complete;
  if (!s.ok()) return ReportStatus(absl::Status(s.code(), f.input + ": " + std::string(s.message())));
  const std::string name = EchoName(f.input);
  if (in->is_plan) {
    std::printf(
        "%s: plan OK (%zu nodes, %zu graphs, stages [%s]%s)\n", name.c_str(),
        plan.model.num_nodes(), plan.model.num_graphs(), PropertyNames(plan.established).c_str(),
        plan.in_progress != 0
            ? StrCat("; partial: a snapshot inside stage '", PropertyNames(plan.in_progress), "'")
                  .c_str()
        : complete.ok() ? ""
                        : "; partial: stage 'sync-events' is missing to run it");
  } else {
    std::printf("%s: graph OK (%zu nodes, %zu graphs)\n", name.c_str(), plan.model.num_nodes(),
                plan.model.num_graphs());
  }
  return kExitOk;
}

void SetupVerify(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<VerifyFlags>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Verify a graph, a plan or a bundle manifest (exit 1 on any violation)");
  cmd->add_option("file", flags->input, "Graph, plan or bundle.json file")->required();
  cmd->add_flag("--partial", flags->partial,
                "Check only the stages a plan claims (a partial pipeline's plan, --dump-after "
                "files); by default a plan must also carry every stage its content needs");
  cmd->add_option("--engines", flags->load.engines_file, "Engine table file merged over the built-in table");
  AddReadLimitFlags(cmd, &flags->load);
  AddInputShapeFlag(cmd, &flags->load);
  cmd->callback([flags, &inv] { inv.exit_code = RunVerify(*flags); });
}

NPUPLAN_REGISTER_COMMAND("verify", SetupVerify);

}  // namespace
}  // namespace npuplan::cli
