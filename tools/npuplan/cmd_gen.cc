// `npuplan gen`: writes a synthetic transformer-style graph (npuplan/gen).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "npuplan/compiler/bundle.h"
#include "npuplan/gen/graph_generator.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/flag_checks.h"

namespace npuplan::cli {
namespace {

struct GenFlags {
  GeneratorOptions opts;
  std::string output;
  bool random_dag = false;
  int64_t max_fanin = 3;
  std::string batch_sizes;
  int64_t fan_out = 0;   // > 0: GenerateFanOut
  int64_t if_depth = 0;  // > 0: GenerateNestedIf
  int64_t max_depth = GraphReadLimits{}.max_depth;  // what the readers will be told
  double ref_write_prob = 0;                        // AddRefWrites
  double owner_control_prob = 0;                    // AddOwnerControls
};

// "1,2,8" / "1-200" / "1-8,16" → the sizes, in order; InvalidArgument otherwise.
absl::StatusOr<std::vector<int64_t>> ParseBatchSizes(const std::string& text) {
  std::vector<int64_t> out;
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("gen --batch-sizes '", text, "': ", why));
  };
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const size_t dash = item.find('-');
    int64_t lo = 0, hi = 0;
    const bool ok = dash == std::string::npos ? absl::SimpleAtoi(item, &lo) && (hi = lo, true)
                                              : absl::SimpleAtoi(item.substr(0, dash), &lo) &&
                                                    absl::SimpleAtoi(item.substr(dash + 1), &hi);
    if (!ok || lo < 1 || hi < lo || hi > (int64_t{1} << 20)) {
      return bad("expected sizes N or ranges A-B in [1, 1048576], comma-separated");
    }
    if (hi - lo + static_cast<int64_t>(out.size()) >= 100000) return bad("more than 100000 sizes");
    for (int64_t b = lo; b <= hi; ++b) out.push_back(b);
    start = comma + 1;
  }
  return out;
}

// One model per batch size: <stem>_b<N>.json next to the output, and the
// output itself the list of them (npuplan.bundle-input/1) for `bundle compile --manifest`.
int RunGenBatches(GenFlags& f) {
  auto sizes = ParseBatchSizes(f.batch_sizes);
  if (!sizes.ok()) return ReportStatus(sizes.status());
  if (f.random_dag || f.opts.dynamic_input || f.fan_out > 0 || f.if_depth > 0) {
    return ReportStatus(
        absl::InvalidArgumentError("gen --batch-sizes needs a transformer with a static batch "
                                   "(not --random-dag, --fan-out, --if-depth or --dynamic-input)"));
  }
  const std::filesystem::path out(f.output);
  const std::string stem = out.stem().string();
  nlohmann::json list = {{"format", kBundleInputFormat}, {"graphs", nlohmann::json::array()}};
  std::vector<std::pair<std::string, std::string>> files;  // written only when all are generated
  size_t nodes = 0;
  for (int64_t b : *sizes) {
    GeneratorOptions o = f.opts;
    o.batch = b;
    auto m = GenerateTransformer(o);
    if (!m.ok()) return ReportStatus(m.status());
    if (f.ref_write_prob > 0) AddRefWrites(*m, f.ref_write_prob, f.opts.seed);
    if (f.owner_control_prob > 0) AddOwnerControls(*m, f.owner_control_prob, f.opts.seed);
    m->set_name(StrCat(m->name(), "_b", b));
    const std::string name = StrCat(stem, "_b", b, ".json");
    files.emplace_back((out.parent_path() / name).string(), WriteGraphJson(*m));
    list["graphs"].push_back(name);
    nodes = m->num_nodes();
  }
  files.emplace_back(f.output, list.dump(1) + "\n");
  if (auto s = WriteFilesAtomically(files); !s.ok()) return ReportStatus(s);  // all or none
  files.pop_back();
  std::printf("generated %zu graphs of %zu nodes (batch %s) -> %s_b<N>.json, list -> %s\n",
              files.size(), nodes, f.batch_sizes.c_str(),
              (out.parent_path() / stem).string().c_str(), f.output.c_str());
  return kExitOk;
}

int RunGen(GenFlags& f) {
  if (!f.batch_sizes.empty()) return RunGenBatches(f);
  Model model;
  if ((f.random_dag ? 1 : 0) + (f.fan_out > 0 ? 1 : 0) + (f.if_depth > 0 ? 1 : 0) > 1) {
    return ReportStatus(absl::InvalidArgumentError("gen: --random-dag, --fan-out and --if-depth exclude each other"));
  }
  if (f.fan_out > 0) {
    model = GenerateFanOut(f.fan_out);
  } else if (f.if_depth > 0) {
    // What gen writes, the readers accept: with the --max-depth they are given.
    if (f.if_depth > f.max_depth) {
      return ReportStatus(absl::InvalidArgumentError(
          StrCat("gen --if-depth ", f.if_depth, ": the Ifs nest deeper than --max-depth (", f.max_depth,
                 ", the readers' default 64); pass --max-depth ", f.if_depth,
                 " here and to the commands that read the graph")));
    }
    model = GenerateNestedIf(f.if_depth);
  } else if (f.random_dag) {
    if (auto s = CheckRandomDagSize(f.opts.target_nodes, f.max_fanin); !s.ok()) return ReportStatus(s);
    model = GenerateRandomDag(f.opts.target_nodes, f.max_fanin, f.opts.seed, f.opts.hccl ? 97 : 0);
  } else {
    auto m = GenerateTransformer(f.opts);
    if (!m.ok()) return ReportStatus(m.status());
    model = std::move(m).value();
  }
  if (f.ref_write_prob > 0) AddRefWrites(model, f.ref_write_prob, f.opts.seed);
  if (f.owner_control_prob > 0) AddOwnerControls(model, f.owner_control_prob, f.opts.seed);
  if (auto s = WriteFileAtomically(f.output, WriteGraphJson(model)); !s.ok()) return ReportStatus(s);
  std::fprintf(f.output == "-" ? stderr : stdout, "generated %s: %zu nodes in %zu graphs -> %s\n",
               EchoName(model.name()).c_str(), model.num_nodes(), model.num_graphs(),
               EchoName(f.output).c_str());
  return kExitOk;
}

void SetupGen(CLI::App& app, Invocation& inv) {
  auto f = std::make_shared<GenFlags>();
  CLI::App* cmd = app.add_subcommand("gen", "Generate a synthetic transformer-style graph (npuplan.graph/1)");
  cmd->add_option("-o,--output", f->output, "Output graph file (- for standard output)")
      ->required();
  cmd->add_option("--layers", f->opts.layers, "Transformer layers")->check(CLI::PositiveNumber);
  cmd->add_option("--nodes", f->opts.target_nodes, "Approximate node count (overrides --layers)");
  cmd->add_option("--seed", f->opts.seed, "Random seed");
  cmd->add_option("--hidden", f->opts.hidden, "Hidden size")->check(CLI::PositiveNumber);
  cmd->add_option("--seq", f->opts.seq, "Sequence length")->check(CLI::PositiveNumber);
  cmd->add_flag("!--no-hccl", f->opts.hccl, "No data-parallel HCCL all-reduce");
  cmd->add_flag("!--no-aicpu", f->opts.aicpu, "No AI CPU dropout masks");
  cmd->add_option("--control-edge-prob", f->opts.control_edge_prob,
                  "Probability of a control edge per layer")
      ->check(FiniteInRange(0, 1));
  cmd->add_option("--stream-label-prob", f->opts.stream_label_prob,
                  "Probability that a layer's FFN is labelled")
      ->check(FiniteInRange(0, 1));
  cmd->add_option("--if-every", f->opts.if_every, "Every k-th layer's FFN inside an If")
      ->check(NonNegativeInt());
  cmd->add_option("--while-every", f->opts.while_every, "Every k-th layer followed by a While")
      ->check(NonNegativeInt());
  cmd->add_option("--dynamic-prob", f->opts.dynamic_prob, "Probability that a layer has a -1 dim")
      ->check(FiniteInRange(0, 1));
  cmd->add_flag("--dynamic-input", f->opts.dynamic_input, "Graph input batch dim is -1");
  cmd->add_option("--ref-write-prob", f->ref_write_prob,
                  "Probability that a computing node writes its input 0 in place "
                  "(_ref_input_index 0), after any generator")
      ->check(FiniteInRange(0, 1));
  cmd->add_option("--owner-control-prob", f->owner_control_prob,
                  "Probability that a control-flow owner (If, While, …) gets a control edge from "
                  "an earlier node of its graph, after any generator")
      ->check(FiniteInRange(0, 1));
  cmd->add_option("--batch", f->opts.batch, "Batch dim of the activations (default 8)");
  cmd->add_option("--batch-sizes", f->batch_sizes,
                  "One model per batch size (e.g. 1-200 or 1,2,4,8): <stem>_b<N>.json files, and "
                  "-o becomes their "
                  "list for `bundle compile --manifest`");
  cmd->add_flag("--random-dag", f->random_dag, "A random layered DAG of --nodes nodes instead");
  cmd->add_option("--max-fanin", f->max_fanin, "Random DAG: maximum fan-in");
  cmd->add_option("--fan-out", f->fan_out, "One node with N consumers, all read by the NetOutput, instead")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}));
  cmd->add_option("--if-depth", f->if_depth, "A chain of N nested Ifs instead (at most --max-depth)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
  cmd->add_option("--max-depth", f->max_depth,
                  "The --max-depth the graph will be read with (bounds --if-depth)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  cmd->callback([f, &inv] { inv.exit_code = RunGen(*f); });
}

NPUPLAN_REGISTER_COMMAND("gen", SetupGen);

}  // namespace
}  // namespace npuplan::cli
