// `npuplan bundle compile G1 G2 … -o DIR [--concurrent] [--manifest LIST]`:
// N graphs that one process loads on one device, planned together
// (npuplan/compiler/bundle.h). Every graph is compiled with the same options;
// DIR receives each plan (<name>.plan.json), the bundle manifest
// (bundle.json, npuplan.bundle/1) and summary.txt. Nothing is written unless
// every graph compiles and the bundle fits its budget.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "npuplan/compiler/bundle.h"
#include "npuplan/compiler/compiler.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/option_flags.h"

namespace npuplan::cli {
namespace {

struct BundleFlags {
  std::vector<std::string> inputs;
  std::string manifest;
  std::string output;
  bool concurrent = false;
  bool quiet = false;
  std::vector<std::string> options;
  LoadOptions load;
};

// Unique plan names from the inputs' file stems.
std::vector<std::string> Names(const std::vector<std::string>& inputs) {
  std::vector<std::string> names;
  std::map<std::string, int> seen;
  for (const std::string& in : inputs) {
    std::string stem = std::filesystem::path(in).stem().string();
    if (stem.empty()) stem = "graph";
    const int n = ++seen[stem];
    names.push_back(n == 1 ? stem : StrCat(stem, "_", n));
  }
  return names;
}

int RunBundleCompile(BundleFlags& f) {
  std::vector<std::string> inputs = f.inputs;
  if (!f.manifest.empty()) {
    auto text = ReadFile(f.manifest);
    if (!text.ok()) return ReportStatus(text.status());
    auto listed = ReadBundleInput(*text, f.manifest);
    if (!listed.ok()) return ReportStatus(listed.status());
    inputs.insert(inputs.end(), listed->begin(), listed->end());
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "error: bundle compile: name at least one graph, or --manifest LIST\n");
    return kExitUsage;
  }
  CompileConfig config;
  config.option_overrides = OptionOverrides(f.options);
  const std::vector<std::string> names = Names(inputs);
  std::vector<BundleGraph> graphs;
  std::vector<std::string> plan_texts;
  BundleBudget budget;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto model = LoadModel(inputs[i], f.load);
    if (!model.ok()) return ReportStatus(model.status());
    if (i == 0) {  // one budget for the bundle: the options as the first graph reads them
      CompileOptions o =
          CompileOptions::FromModel(*model, config.option_overrides, config.read_environment);
      budget = {BudgetOption(o, "npuplan.maxStreams", "npuplan.device.maxStreams"),
                BudgetOption(o, "npuplan.maxEventIds", "npuplan.device.maxEvents"),
                BudgetOption(o, "npuplan.maxNotifyIds", "npuplan.device.maxNotifies")};
    }
    DecisionLog log(false);
    Statistics stats;
    auto plan = Compile(std::move(model).value(), config, log, stats);
    if (!plan.ok()) {
      return ReportStatus(
          absl::Status(plan.status().code(), StrCat(inputs[i], ": ", plan.status().message())));
    }
    BundleGraph g = BundleGraphFromPlan(*plan);
    g.name = names[i];
    g.input = inputs[i];
    g.plan = names[i] + ".plan.json";
    graphs.push_back(std::move(g));
    plan_texts.push_back(WritePlanJson(*plan));
  }
  const Bundle bundle = LayoutBundle(std::move(graphs), f.concurrent, budget);
  if (absl::Status s = CheckBundleBudget(bundle); !s.ok()) return ReportStatus(s);
  std::error_code ec;
  std::filesystem::create_directories(f.output, ec);
  if (ec)
    return ReportStatus(absl::InvalidArgumentError(StrCat("-o ", f.output, ": ", ec.message())));
  const std::filesystem::path dir(f.output);
  // All or nothing: the plans, the summary and the manifest are replaced together.
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < plan_texts.size(); ++i) {
    files.emplace_back((dir / bundle.graphs[i].plan).string(), std::move(plan_texts[i]));
  }
  const std::string summary = BundleSummaryText(bundle);
  files.emplace_back((dir / "summary.txt").string(), summary);
  files.emplace_back((dir / "bundle.json").string(), BundleToJson(bundle));
  if (auto s = WriteFilesAtomically(files); !s.ok()) return ReportStatus(s);
  if (!f.quiet) std::fwrite(summary.data(), 1, summary.size(), stdout);
  return kExitOk;
}

void SetupBundle(CLI::App& app, Invocation& inv) {
  CLI::App* bundle = app.add_subcommand("bundle", "Plan several graphs that share one device");
  bundle->require_subcommand(1);
  auto f = std::make_shared<BundleFlags>();
  CLI::App* cmd = bundle->add_subcommand("compile",
                                         "Compile N graphs loaded on one device: plans + "
                                         "bundle.json (device stream/event ids, memory) + summary");
  cmd->add_option("graphs", f->inputs, "Graph files (npuplan.graph/1 JSON or .onnx)");
  cmd->add_option("--manifest", f->manifest,
                  "A graph list (npuplan.bundle-input/1, e.g. from gen --batch-sizes)");
  cmd->add_option("-o,--output", f->output, "Output folder")->required();
  cmd->add_flag(
      "--concurrent", f->concurrent,
      "The graphs run at the same time: resources add up (default: one at a time, shared pool)");
  AddOptionFlag(cmd, &f->options);
  cmd->add_option("--engines", f->load.engines_file,
                  "Engine table file merged over the built-in table");
  AddReadLimitFlags(cmd, &f->load);
  AddInputShapeFlag(cmd, &f->load);
  cmd->add_flag("-q,--quiet", f->quiet, "Do not print the summary");
  cmd->callback([f, &inv] { inv.exit_code = RunBundleCompile(*f); });
}

NPUPLAN_REGISTER_COMMAND("bundle", SetupBundle);

}  // namespace
}  // namespace npuplan::cli
