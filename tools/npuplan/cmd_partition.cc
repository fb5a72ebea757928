// `npuplan partition GRAPH -o OUT.json`: marks unknown-shape nodes and cuts
// the graph into static and dynamic parts (docs/partition.md); writes the
// partitioned graph (npuplan.graph/1).
#include <cstdio>
#include <memory>

#include "npuplan/ir/graph_json.h"
#include "npuplan/partition/partition_passes.h"
#include "npuplan/pass/pass.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/verify.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/option_flags.h"

namespace npuplan::cli {
namespace {

struct PartitionFlags {
  std::string input;
  std::string output;
  std::vector<std::string> options;
  LoadOptions load;
  bool stats = false;
  bool log_decisions = false;
  bool quiet = false;
  std::string remarks;
};

int RunPartitionCommand(const PartitionFlags& f) {
  std::map<std::string, std::string> overrides = OptionOverrides(f.options);
  LoadOptions load = f.load;
  if (auto it = overrides.find("ge.topoSortingMode"); it != overrides.end()) load.topo_sorting_mode = it->second;
  // Declared before the input is read: an unwritable -o or --remarks fails
  // at once, not after reading a large graph.
  OutputTransaction out;
  if (auto s = out.Add(f.output, "-o"); !s.ok()) return ReportStatus(s);
  if (!f.remarks.empty()) {
    if (auto s = out.Add(f.remarks, "--remarks"); !s.ok()) return ReportStatus(s);
  }
  auto model = LoadModel(f.input, load);
  if (!model.ok()) return ReportStatus(model.status());
  CompileOptions options = CompileOptions::FromModel(*model, overrides, /*read_environment=*/true);
  std::vector<std::string> warnings;
  absl::Status valid = options.Validate(&warnings);
  PrintWarnings(warnings);
  if (!valid.ok()) return ReportStatus(valid);

  auto kept = std::make_shared<Plan>();
  KeepUntilExit(kept);
  Plan& plan = *kept;
  plan.model = std::move(model).value();
  plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  plan.EnsureNodeVectors();
  if (auto s = verify::VerifyPlan(plan); !s.ok()) return ReportStatus(s);
  DecisionLog log(/*keep=*/!f.remarks.empty(), f.log_decisions ? stderr : nullptr);
  Statistics stats;
  std::unique_ptr<PassPipeline> pipeline = MakePartitionPipeline();
  PassContext ctx{options, log, stats};
  if (auto r = pipeline->Run(plan, ctx); !r.ok()) return ReportStatus(r.status());
  if (auto s = verify::VerifyPlan(plan); !s.ok()) {
    return ReportStatus(absl::InternalError(StrCat("the partitioned graph failed verification: ", s.message())));
  }
  if (auto s = out.Write(f.output, WriteGraphJson(plan.model)); !s.ok()) return ReportStatus(s);
  if (!f.remarks.empty()) {
    if (auto s = out.Write(f.remarks, log.ToJsonLines()); !s.ok()) return ReportStatus(s);
  }
  if (auto s = out.Commit(); !s.ok()) return ReportStatus(s);
  if (f.stats) std::fprintf(stderr, "%s", stats.ToText().c_str());
  if (!f.quiet) {
    const PartitionResult& p = plan.partition;
    int64_t known = 0, unknown = 0, input = 0;
    for (const PartitionSubgraph& sg : p.subgraphs) {
      (sg.kind == SubgraphKind::kKnown     ? known
       : sg.kind == SubgraphKind::kUnknown ? unknown
                                           : input) += 1;
    }
    std::fprintf(out.writes_stdout() ? stderr : stdout,
                 "partitioned %s: %s (%s); %lld known, %lld unknown, %lld input subgraphs -> %s\n",
                 EchoName(plan.model.name()).c_str(),
                 std::string(PartitionDecisionName(p.decision)).c_str(), p.reason.c_str(),
                 static_cast<long long>(known), static_cast<long long>(unknown),
                 static_cast<long long>(input), EchoName(f.output).c_str());
  }
  return kExitOk;
}

void SetupPartition(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<PartitionFlags>();
  CLI::App* cmd = app.add_subcommand("partition", "Cut a graph into static and dynamic-shape subgraphs (SPEC P1-P7)");
  cmd->add_option("graph", flags->input, "Input graph file")->required();
  cmd->add_option("-o,--output", flags->output,
                  "Output graph file (npuplan.graph/1; - for standard output)")
      ->required();
  AddOptionFlag(cmd, &flags->options);
  cmd->add_option("--engines", flags->load.engines_file, "Engine table file merged over the built-in table");
  AddReadLimitFlags(cmd, &flags->load);
  AddInputShapeFlag(cmd, &flags->load);
  cmd->add_flag("--stats", flags->stats, "Print rule hits, merges and demotions to stderr");
  cmd->add_option("--remarks", flags->remarks, "Write the decision log as JSON lines to this file");
  cmd->add_flag("--log-decisions", flags->log_decisions, "Print the decision log (Mark node[...] lines) to stderr");
  cmd->add_flag("-q,--quiet", flags->quiet, "Do not print the summary line");
  cmd->callback([flags, &inv] { inv.exit_code = RunPartitionCommand(*flags); });
}

NPUPLAN_REGISTER_COMMAND("partition", SetupPartition);

}  // namespace
}  // namespace npuplan::cli
