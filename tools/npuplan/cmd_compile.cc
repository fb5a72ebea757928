// `npuplan compile`: graph (or ONNX model) → verified plan JSON.
#include <cstdio>
#include <memory>
#include <string>

#include "npuplan/compiler/compiler.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/option_flags.h"
#include "tools/npuplan/progress.h"

namespace npuplan::cli {
namespace {

struct CompileFlags {
  std::string input;
  std::string output;
  std::vector<std::string> options;
  LoadOptions load;
  CompileConfig config;
  bool stats = false;
  bool log_decisions = false;
  bool print_pipeline = false;
  bool quiet = false;
  std::string remarks;
};

int RunCompile(CompileFlags& f) {
  f.config.option_overrides = OptionOverrides(f.options);
  if (auto it = f.config.option_overrides.find("ge.topoSortingMode"); it != f.config.option_overrides.end()) {
    f.load.topo_sorting_mode = it->second;
  }
  if (f.output.empty() && !f.print_pipeline) return ReportUsage("compile: -o PLAN is required");
  // Every output is declared before the work, and before the input is read
  // (seconds for a million nodes): an unwritable -o or --remarks fails now,
  // and no output is replaced unless all of them can be.
  OutputTransaction out;
  if (!f.output.empty()) {
    if (auto s = out.Add(f.output, "-o"); !s.ok()) return ReportStatus(s);
    if (!f.remarks.empty()) {
      if (auto s = out.Add(f.remarks, "--remarks"); !s.ok()) return ReportStatus(s);
    }
  }
  Statistics stats;
  const StepTimer read_timer;
  auto model = LoadModel(f.input, f.load);
  if (!model.ok()) return ReportStatus(model.status());
  read_timer.Record(stats, "read input");
  if (f.print_pipeline) {
    CompileOptions opts = CompileOptions::FromModel(*model, f.config.option_overrides, f.config.read_environment);
    std::vector<std::string> warnings;
    absl::Status valid = opts.Validate(&warnings);
    PrintWarnings(warnings);
    if (!valid.ok()) return ReportStatus(valid);
    auto pipeline = f.config.passes.empty() ? BuildDefaultPipeline(opts)
                                            : BuildPipelineFromNames(f.config.passes, opts);
    if (!pipeline.ok()) return ReportStatus(pipeline.status());
    std::fprintf(f.output == "-" ? stderr : stdout, "%s\n", (*pipeline)->Describe().c_str());
    if (f.output.empty()) return kExitOk;
  }
  DecisionLog log(/*keep=*/!f.remarks.empty(), f.log_decisions ? stderr : nullptr);
  std::vector<std::string> warnings;
  f.config.warnings = &warnings;
  // Progress on a terminal for large graphs (seconds of work), never with -q or --log-decisions.
  Progress progress("compile", f.quiet || f.log_decisions || model->num_nodes() < 100000);
  if (progress.enabled()) {
    progress.Stage(StrCat(model->num_nodes(), " nodes"));
    f.config.on_pass = [&progress](int seq, std::string_view pass) {
      progress.Stage(StrCat("pass ", seq, " done: ", pass));
    };
  }
  // The plan is written while the final verification runs (a second
  // thread; its first keys while memory-planning still runs, FinalPlanGate);
  // the temporary file becomes the output only if it verified. Streamed: a
  // 1M-node plan is never whole in memory.
  f.config.alongside_name = "write plan";
  f.config.alongside_final_verification = [&](const Plan& p, const FinalPlanGate& gate) {
    return out.WriteChunks(f.output, [&](const OutputTransaction::ChunkWriter& write) {
      return WritePlanJson(p, write, [&] {
        if (!gate.AwaitFinal()) return false;
        progress.Stage("verifying and writing the plan");  // the passes' progress has ended
        return true;
      });
    });
  };
  auto plan = Compile(std::move(model).value(), f.config, log, stats);
  progress.Done();
  PrintWarnings(warnings);
  if (!plan.ok()) return ReportStatus(plan.status());
  auto kept = std::make_shared<const Plan>(std::move(plan).value());
  KeepUntilExit(kept);
  const Plan& p = *kept;
  if (!f.remarks.empty()) {
    if (auto s = out.Write(f.remarks, log.ToJsonLines()); !s.ok()) return ReportStatus(s);
  }
  if (auto s = out.Commit(); !s.ok()) return ReportStatus(s);
  if (f.stats) std::fprintf(stderr, "%s", stats.ToText().c_str());
  if (!f.quiet) {
    // Device ids, and the sync edges behind them when event-id-allocation
    // recorded its counts (npuplan.eventIdReuse min / none).
    long long edges[2] = {0, 0};
    for (const SyncEvent& e : p.events.events) ++edges[e.kind == SyncKind::kNotify ? 1 : 0];
    auto count = [&](long long ids, int kind, const char* key) {
      std::string text = std::to_string(ids) + (kind == 0 ? " events" : " notifies");
      if (p.events.counts.count(key) && edges[kind] != ids)
        text += " (" + std::to_string(edges[kind]) + " sync edges)";
      return text;
    };
    std::fprintf(
        out.writes_stdout() ? stderr : stdout,
        "compiled %s: %zu nodes in %zu graphs, %lld logical / %lld physical streams, %s, "
        "%s, memory peak %lld bytes -> %s\n",
        EchoName(p.model.name()).c_str(), p.model.num_nodes(), p.model.num_graphs(),
        static_cast<long long>(p.streams.logical), static_cast<long long>(p.streams.physical),
        count(p.events.event_count, 0, "device_event_ids").c_str(),
        count(p.events.notify_count, 1, "device_notify_ids").c_str(),
        static_cast<long long>(p.memory.peak), EchoName(f.output).c_str());
  }
  return kExitOk;
}

void SetupCompile(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<CompileFlags>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile a graph (npuplan.graph/1 JSON or .onnx) into a verified plan");
  cmd->add_option("graph", flags->input, "Input graph file")->required();
  cmd->add_option("-o,--output", flags->output,
                  "Output plan file (npuplan.plan/1; - for standard output)");
  AddOptionFlag(cmd, &flags->options);
  cmd->add_option("--engines", flags->load.engines_file, "Engine table file merged over the built-in table");
  AddReadLimitFlags(cmd, &flags->load);
  AddInputShapeFlag(cmd, &flags->load);
  cmd->add_flag("--verify-each", flags->config.verify_each, "Run the verifier after every pass");
  cmd->add_option("--passes", flags->config.passes, "Comma-separated pass list replacing the default pipeline");
  cmd->add_flag("--print-pipeline", flags->print_pipeline, "Print the pipeline that would run");
  cmd->add_option("--dump-after", flags->config.dump_after, "Dump the plan after passes matching this regex");
  cmd->add_option("--dump-dir", flags->config.dump_dir, "Folder for --dump-after files (NNN.<pass>.plan.json)");
  cmd->add_flag("--stats", flags->stats, "Print per-pass counters and wall times to stderr");
  cmd->add_option("--remarks", flags->remarks, "Write the decision log as JSON lines to this file");
  cmd->add_flag("--log-decisions", flags->log_decisions, "Print the decision log to stderr");
  cmd->add_flag("-q,--quiet", flags->quiet, "Do not print the summary line (nor progress on a terminal)");
  cmd->callback([flags, &inv] { inv.exit_code = RunCompile(*flags); });
}

NPUPLAN_REGISTER_COMMAND("compile", SetupCompile);

}  // namespace
}  // namespace npuplan::cli
