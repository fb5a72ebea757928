// `npuplan kernel plan|eval|gen`: intra-core cache planning (docs/kernel.md).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "npuplan/kernel/bounds.h"
#include "npuplan/kernel/evaluator.h"
#include "npuplan/kernel/generator.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/planner.h"
#include "npuplan/kernel/solution.h"
#include "npuplan/pass/decision_log.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/flag_checks.h"
#include "tools/npuplan/progress.h"

namespace npuplan::cli {
namespace {

using namespace npuplan::kernel;

struct KernelFlags {
  std::string input;
  std::string out_dir;
  std::string strategy = "best";
  std::string objective = "balanced";
  std::string schedule, memory, spill;
  bool q1 = false;
  std::string report;
  std::string remarks;
  bool log_decisions = false;
  bool pareto = false;
  bool quiet = false;  // no progress line
  // gen
  std::string kind = "matmul";
  int m = 4, n = 4, k = 4, layers = 3, width = 8, seq = 4;
  std::string out;
};

void PrintMetrics(const KernelMetrics& m, const char* prefix, FILE* to = stdout) {
  for (const auto& [lvl, v] : m.max_vstay) {
    std::fprintf(to, "%smax_vstay.%s %lld\n", prefix, lvl.c_str(), static_cast<long long>(v));
  }
  std::fprintf(to, "%sspills %d\n", prefix, m.spills);
  std::fprintf(to, "%sextra_data_movement %lld\n", prefix,
               static_cast<long long>(m.extra_movement));
  std::fprintf(to, "%smakespan %lld\n", prefix, static_cast<long long>(m.makespan));
}

// Lower bounds and the gaps of a solution's metrics to them (docs/kernel.md,
// "Lower bounds"), printed as `bound.*` / `gap.*` lines and kept as JSON.
nlohmann::json BoundsJson(const KernelGraph& g, const CacheConfig& config, const KernelSolution& s,
                          bool with_memory) {
  const KernelBounds b = ComputeKernelBounds(g, config);
  nlohmann::json j;
  j["makespan"] = b.makespan;
  j["makespan_by"] = b.makespan_by;
  j["pipe_work"] = b.pipe_work;
  j["pipe_work_pipe"] = b.pipe_work_pipe;
  j["critical_path"] = b.critical_path;
  j["pipe_heads_tails"] = b.pipe_heads_tails;
  j["pipe_heads_tails_pipe"] = b.pipe_heads_tails_pipe;
  j["cache_area"] = b.cache_area;
  j["cache_area_cache"] = b.cache_area_cache;
  j["traffic_free_order"] = b.traffic_free_order;
  j["spill_in_cycles"] = b.spill_in_cycles;
  j["spill_out_cycles"] = b.spill_out_cycles;
  j["traffic_cut"] = b.traffic_cut;  // full matmul grids (docs/kernel.md, "Cut bound")
  j["spill_in_cycles_cut"] = b.spill_in_cycles_cut;
  j["vstay"] = b.vstay;
  j["vstay_combined"] = b.vstay_combined;
  j["complete"] = b.complete;
  if (with_memory) {
    const int64_t fixed = FixedOrderTrafficBound(g, config, s.schedule);
    j["traffic_fixed_order"] = fixed;
  }
  return j;
}

// "1.234" (value / bound), or "-" when the bound is 0.
std::string Gap(int64_t value, int64_t bound) {
  if (bound <= 0) return value == 0 ? "1.000" : "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(value) / static_cast<double>(bound));
  return buf;
}

void PrintBounds(const nlohmann::json& b, const KernelMetrics& m, FILE* to = stdout) {
  std::fprintf(to, "bound.makespan %lld (%s)\n",
               static_cast<long long>(b["makespan"].get<int64_t>()),
               b["makespan_by"].get<std::string>().c_str());
  std::fprintf(to, "bound.traffic_free_order %lld\n",
               static_cast<long long>(b["traffic_free_order"].get<int64_t>()));
  if (b.value("traffic_cut", int64_t{0}) > 0) {
    std::fprintf(to, "bound.traffic_cut %lld\nbound.spill_in_cycles_cut %lld\n",
                 static_cast<long long>(b["traffic_cut"].get<int64_t>()),
                 static_cast<long long>(b["spill_in_cycles_cut"].get<int64_t>()));
  }
  if (b.contains("traffic_fixed_order")) {
    std::fprintf(to, "bound.traffic_fixed_order %lld\n",
                 static_cast<long long>(b["traffic_fixed_order"].get<int64_t>()));
  }
  std::fprintf(to, "gap.makespan %s\n", Gap(m.makespan, b["makespan"].get<int64_t>()).c_str());
}

nlohmann::json GapsJson(const nlohmann::json& b, const KernelMetrics& m) {
  nlohmann::json j;
  j["makespan"] = Gap(m.makespan, b["makespan"].get<int64_t>());
  j["traffic_free_order"] = Gap(m.extra_movement, b["traffic_free_order"].get<int64_t>());
  if (b.contains("traffic_fixed_order")) {
    j["traffic_fixed_order"] = Gap(m.extra_movement, b["traffic_fixed_order"].get<int64_t>());
  }
  return j;
}

absl::Status RunPlan(const KernelFlags& f) {
  CacheConfig config;
  NPUPLAN_ASSIGN_OR_RETURN(Strategy strategy, ParseStrategy(f.strategy));
  NPUPLAN_ASSIGN_OR_RETURN(Objective objective, ParseObjective(f.objective));
  NPUPLAN_ASSIGN_OR_RETURN(KernelGraph g, LoadKernelGraph(f.input, config));
  // The five files (six with --pareto) and the remarks form one transaction,
  // declared before the work: written to temporaries, renamed when all are
  // complete, removed on any failure.
  OutputTransaction out;
  std::vector<std::pair<std::string, std::string>> files;  // path, what
  if (!f.out_dir.empty()) {
    const std::string base = f.out_dir + "/" + g.name;
    std::vector<const char*> suffixes = {"_q1_schedule.txt", "_schedule.txt", "_memory.txt",
                                         "_spill.txt", "_report.json"};
    if (f.pareto) suffixes.push_back("_pareto.json");
    for (const char* suffix : suffixes) {
      files.emplace_back(base + suffix, "--out-dir");
      NPUPLAN_RETURN_IF_ERROR(out.Add(files.back().first, files.back().second));
    }
  }
  if (!f.remarks.empty()) NPUPLAN_RETURN_IF_ERROR(out.Add(f.remarks, "--remarks"));
  FILE* info = out.writes_stdout() ? stderr : stdout;
  DecisionLog log(/*keep=*/!f.remarks.empty(), f.log_decisions ? stderr : nullptr);
  PlanOptions opt;
  opt.strategy = strategy;
  opt.objective = objective;
  opt.log = &log;
  auto t0 = std::chrono::steady_clock::now();
  // Large cases take seconds: say what runs on a terminal.
  Progress progress("kernel plan", f.quiet || f.log_decisions || g.num_nodes() < 2000);
  progress.Stage(absl::StrCat("planning ", EchoName(g.name), ": ", g.num_nodes(),
                              " nodes, strategy ", f.strategy));
  auto planned = PlanKernel(g, config, opt);
  progress.Done();
  NPUPLAN_ASSIGN_OR_RETURN(PlanResult r, std::move(planned));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const nlohmann::json bounds = BoundsJson(g, config, r.solution, /*with_memory=*/true);
  nlohmann::json pareto = nlohmann::json::array();
  for (const ParetoPoint& p : r.pareto) {
    pareto.push_back({{"candidate", p.candidate}, {"extra_data_movement", p.extra_movement}, {"makespan", p.makespan}});
  }
  if (!files.empty()) {
    std::map<std::string, std::string> extra = {{"strategy", f.strategy},
                                                {"objective", f.objective},
                                                {"candidate", r.chosen}};
    nlohmann::json report = nlohmann::json::parse(MetricsToJson(r.metrics, g.name, extra));
    report["bounds"] = bounds;
    report["gap"] = GapsJson(bounds, r.metrics);
    if (f.pareto) report["pareto"] = pareto;
    std::vector<std::string> contents = {
        FormatSchedule(r.q1.order), FormatSchedule(r.solution.schedule),
        FormatMemory(r.solution.offsets), FormatSpills(r.solution.spills), report.dump(2) + "\n"};
    if (f.pareto) {
      nlohmann::json pj;
      pj["case"] = g.name;
      pj["points"] = pareto;
      pj["bounds"] = {{"makespan", bounds["makespan"]}, {"traffic_free_order", bounds["traffic_free_order"]}};
      contents.push_back(pj.dump(2) + "\n");
    }
    for (size_t i = 0; i < files.size(); ++i)
      NPUPLAN_RETURN_IF_ERROR(out.Write(files[i].first, contents[i]));
  }
  if (!f.remarks.empty()) NPUPLAN_RETURN_IF_ERROR(out.Write(f.remarks, log.ToJsonLines()));
  NPUPLAN_RETURN_IF_ERROR(out.Commit());
  std::fprintf(info, "case %s\n", EchoName(g.name).c_str());
  for (const auto& [lvl, v] : r.q1_metrics.max_vstay) {
    std::fprintf(info, "q1.max_vstay.%s %lld\n", lvl.c_str(), static_cast<long long>(v));
  }
  std::fprintf(info, "q1.l0_rule %s\n", r.q1.l0_rule_relaxed ? "relaxed" : "kept");
  std::fprintf(info, "strategy %s objective %s candidate %s\n", f.strategy.c_str(),
               f.objective.c_str(), r.chosen.c_str());
  PrintMetrics(r.metrics, "", info);
  PrintBounds(bounds, r.metrics, info);
  if (f.pareto) {
    for (const ParetoPoint& p : r.pareto) {
      std::fprintf(info, "pareto %lld %lld %s\n", static_cast<long long>(p.extra_movement),
                   static_cast<long long>(p.makespan), p.candidate.c_str());
    }
  }
  std::fprintf(info, "plan_seconds %.3f\n", secs);
  return absl::OkStatus();
}

absl::Status RunEval(const KernelFlags& f) {
  CacheConfig config;
  NPUPLAN_ASSIGN_OR_RETURN(KernelGraph g, LoadKernelGraph(f.input, config));
  KernelSolution s;
  NPUPLAN_ASSIGN_OR_RETURN(std::string st, ReadFile(f.schedule));
  NPUPLAN_ASSIGN_OR_RETURN(s.schedule, ParseScheduleText(st, f.schedule));
  EvalOptions eo;
  eo.l0_single_residency = f.q1;
  if (f.memory.empty()) {
    if (!f.spill.empty()) return absl::InvalidArgumentError("--spill needs --memory");
    eo.check_memory = false;
  } else {
    NPUPLAN_ASSIGN_OR_RETURN(std::string mt, ReadFile(f.memory));
    NPUPLAN_ASSIGN_OR_RETURN(s.offsets, ParseMemoryText(mt, f.memory));
    if (!f.spill.empty()) {
      NPUPLAN_ASSIGN_OR_RETURN(std::string pt, ReadFile(f.spill));
      NPUPLAN_ASSIGN_OR_RETURN(s.spills, ParseSpillText(pt, f.spill));
    }
  }
  OutputTransaction out;
  if (!f.report.empty()) NPUPLAN_RETURN_IF_ERROR(out.Add(f.report, "--report"));
  auto m = EvaluateSolution(g, s, config, eo);
  if (!m.ok())
    return absl::InvalidArgumentError(absl::StrCat("invalid solution: ", m.status().message()));
  const nlohmann::json bounds = BoundsJson(g, config, s, eo.check_memory);
  if (!f.report.empty()) {
    nlohmann::json j = nlohmann::json::parse(MetricsToJson(*m, g.name));
    j["bounds"] = bounds;
    j["gap"] = GapsJson(bounds, *m);
    NPUPLAN_RETURN_IF_ERROR(out.Write(f.report, j.dump(2) + "\n"));
  }
  NPUPLAN_RETURN_IF_ERROR(out.Commit());
  FILE* info = out.writes_stdout() ? stderr : stdout;
  std::fprintf(info, "case %s\nvalid yes\n", EchoName(g.name).c_str());
  PrintMetrics(*m, "", info);
  PrintBounds(bounds, *m, info);
  return absl::OkStatus();
}

absl::Status RunGen(const KernelFlags& f) {
  kernel::GeneratorOptions o;
  NPUPLAN_ASSIGN_OR_RETURN(o.kind, ParseGraphKind(f.kind));
  o.m = f.m;
  o.n = f.n;
  o.k = f.k;
  o.layers = f.layers;
  o.width = f.width;
  o.seq = f.seq;
  NPUPLAN_ASSIGN_OR_RETURN(KernelGraph g, GenerateKernelGraph(o, CacheConfig{}));
  return WriteFileAtomically(f.out.empty() ? "-" : f.out, KernelGraphToJson(g));
}

void SetupKernel(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<KernelFlags>();
  CLI::App* kernel = app.add_subcommand("kernel", "Intra-core cache planning: schedule, allocation with spill, makespan");
  kernel->require_subcommand(1);

  CLI::App* plan = kernel->add_subcommand("plan", "Plan a kernel graph (official JSON) and write the official outputs");
  plan->add_option("case", flags->input, "Kernel graph JSON")->required();
  plan->add_option(
      "--out-dir", flags->out_dir,
      "Directory for <case>_q1_schedule/_schedule/_memory/_spill.txt, _report.json and with "
      "--pareto _pareto.json (all or none are written)");
  plan->add_option("--strategy", flags->strategy, "seed|best (default best)")
      ->check(CLI::IsMember({"seed", "best"}));
  plan->add_option("--objective", flags->objective, "traffic|time|balanced (default balanced)")
      ->check(CLI::IsMember({"traffic", "time", "balanced"}));
  plan->add_option("--remarks", flags->remarks,
                   "Write the chosen plan's decisions (BufferSpilled, BufferReloaded, AllocPostponed, "
                   "ScheduleReordered, CandidateChosen) as JSON lines to this file");
  plan->add_flag("--log-decisions", flags->log_decisions, "Print the decision log to stderr");
  plan->add_flag("--pareto", flags->pareto,
                 "Also write <case>_pareto.json: the traffic/makespan frontier of the verified plans built "
                 "(and `pareto` lines)");
  plan->add_flag("-q,--quiet", flags->quiet, "No progress line on the terminal");
  AddMaxFileBytesFlag(plan);
  plan->callback([flags, &inv] { inv.exit_code = ReportStatus(RunPlan(*flags)); });

  CLI::App* eval = kernel->add_subcommand("eval", "Check a solution by the official rules and print its metrics");
  eval->add_option("case", flags->input, "Kernel graph JSON")->required();
  eval->add_option("--schedule", flags->schedule, "<case>_schedule.txt")->required();
  eval->add_option("--memory", flags->memory, "<case>_memory.txt (omit for a Problem 1 schedule)");
  eval->add_option("--spill", flags->spill, "<case>_spill.txt");
  eval->add_flag("--q1", flags->q1, "Also enforce at most one live buffer per L0 cache");
  eval->add_option("--report", flags->report, "Write the metrics as JSON here");
  AddMaxFileBytesFlag(eval);
  eval->callback([flags, &inv] { inv.exit_code = ReportStatus(RunEval(*flags)); });

  CLI::App* gen = kernel->add_subcommand("gen", "Generate a kernel graph in the official schema");
  gen->add_option("--kind", flags->kind, "matmul|flash-attention|conv")
      ->check(CLI::IsMember({"matmul", "flash-attention", "fa", "conv"}));
  gen->add_option("--m", flags->m, "matmul: row tiles of A / C");
  gen->add_option("--n", flags->n, "matmul: column tiles of B / C");
  gen->add_option("--k", flags->k, "matmul: reduction tiles");
  gen->add_option("--seq", flags->seq, "flash-attention: query and key blocks");
  gen->add_option("--layers", flags->layers, "conv: layers");
  gen->add_option("--width", flags->width, "conv: feature tiles per layer");
  gen->add_option("--out", flags->out, "Output file (default stdout)");
  gen->callback([flags, &inv] { inv.exit_code = ReportStatus(RunGen(*flags)); });
}

}  // namespace

NPUPLAN_REGISTER_COMMAND("kernel", SetupKernel);

}  // namespace npuplan::cli
