// `npuplan gen`: writes a synthetic transformer-style graph (npuplan/gen).
#include <cstdio>
#include <memory>

#include "npuplan/gen/graph_generator.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/support/file_util.h"
#include "tools/npuplan/command.h"

namespace npuplan::cli {
namespace {

struct GenFlags {
  GeneratorOptions opts;
  std::string output;
  bool random_dag = false;
  int64_t max_fanin = 3;
  int64_t fan_out = 0;   // > 0: GenerateFanOut
  int64_t if_depth = 0;  // > 0: GenerateNestedIf
};

int RunGen(GenFlags& f) {
  Model model;
  if ((f.random_dag ? 1 : 0) + (f.fan_out > 0 ? 1 : 0) + (f.if_depth > 0 ? 1 : 0) > 1) {
    return ReportStatus(absl::InvalidArgumentError("gen: --random-dag, --fan-out and --if-depth exclude each other"));
  }
  if (f.fan_out > 0) {
    model = GenerateFanOut(f.fan_out);
  } else if (f.if_depth > 0) {
    model = GenerateNestedIf(f.if_depth);
  } else if (f.random_dag) {
    if (f.opts.target_nodes < 1) return ReportStatus(absl::InvalidArgumentError("gen --random-dag needs --nodes N >= 1"));
    if (f.max_fanin < 1) return ReportStatus(absl::InvalidArgumentError("gen --max-fanin must be >= 1"));
    model = GenerateRandomDag(f.opts.target_nodes, f.max_fanin, f.opts.seed, f.opts.hccl ? 97 : 0);
  } else {
    auto m = GenerateTransformer(f.opts);
    if (!m.ok()) return ReportStatus(m.status());
    model = std::move(m).value();
  }
  if (auto s = WriteFileAtomically(f.output, WriteGraphJson(model)); !s.ok()) return ReportStatus(s);
  std::printf("generated %s: %zu nodes in %zu graphs -> %s\n", model.name().c_str(), model.num_nodes(),
              model.num_graphs(), f.output.c_str());
  return kExitOk;
}

void SetupGen(CLI::App& app, Invocation& inv) {
  auto f = std::make_shared<GenFlags>();
  CLI::App* cmd = app.add_subcommand("gen", "Generate a synthetic transformer-style graph (npuplan.graph/1)");
  cmd->add_option("-o,--output", f->output, "Output graph file")->required();
  cmd->add_option("--layers", f->opts.layers, "Transformer layers")->check(CLI::PositiveNumber);
  cmd->add_option("--nodes", f->opts.target_nodes, "Approximate node count (overrides --layers)");
  cmd->add_option("--seed", f->opts.seed, "Random seed");
  cmd->add_option("--hidden", f->opts.hidden, "Hidden size")->check(CLI::PositiveNumber);
  cmd->add_option("--seq", f->opts.seq, "Sequence length")->check(CLI::PositiveNumber);
  cmd->add_flag("!--no-hccl", f->opts.hccl, "No data-parallel HCCL all-reduce");
  cmd->add_flag("!--no-aicpu", f->opts.aicpu, "No AI CPU dropout masks");
  cmd->add_option("--control-edge-prob", f->opts.control_edge_prob, "Probability of a control edge per layer")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--stream-label-prob", f->opts.stream_label_prob, "Probability that a layer's FFN is labelled")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--if-every", f->opts.if_every, "Every k-th layer's FFN inside an If")->check(CLI::NonNegativeNumber);
  cmd->add_option("--while-every", f->opts.while_every, "Every k-th layer followed by a While")->check(CLI::NonNegativeNumber);
  cmd->add_option("--dynamic-prob", f->opts.dynamic_prob, "Probability that a layer has a -1 dim")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--dynamic-input", f->opts.dynamic_input, "Graph input batch dim is -1");
  cmd->add_flag("--random-dag", f->random_dag, "A random layered DAG of --nodes nodes instead");
  cmd->add_option("--max-fanin", f->max_fanin, "Random DAG: maximum fan-in");
  cmd->add_option("--fan-out", f->fan_out, "One node with N consumers, all read by the NetOutput, instead")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}));
  cmd->add_option("--if-depth", f->if_depth, "A chain of N nested Ifs instead")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
  cmd->callback([f, &inv] { inv.exit_code = RunGen(*f); });
}

NPUPLAN_REGISTER_COMMAND("gen", SetupGen);

}  // namespace
}  // namespace npuplan::cli
