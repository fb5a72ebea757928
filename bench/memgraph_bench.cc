// Graph-level memory planning benchmarks: the memory price of parallelism.
//
// BM_Transformer/<layers>/<single>: npuplan gen transformer graphs compiled
// with the library's Compile() (default pipeline, multi-stream) or with
// ge.enableSingleStream=true; counters: activation peak, lower bound,
// peak / lower bound, streams, the pass's extra (cross-stream) conflicts and
// cross-stream reuses. Time = whole compile.
// BM_RandomStreams/<k>: 2,000-node random DAGs (fan-in ≤ 3, sizes 1–64 KiB)
// with every node on a random stream out of k, memory-planning only.
// BM_TensorLifetimes/<nodes>: ComputeTensorLifetimes alone (memory planning
// and the memory verifier each run it once per compile) on a random DAG
// (fan-in <= 3) with every node on one of 8 streams.
// Results: docs/benchmarks.md ("Device memory (graphs)").
//
//   build-memg/bin/memgraph_bench --benchmark_min_time=1
//
// Whole compile (docs/benchmarks.md "Whole compile"): CPU seconds per stage
// (generate, each pass of the default pipeline, final verification, plan
// JSON) of `npuplan gen --nodes N` transformers, one run each:
//
//   build/bin/memgraph_bench --whole-compile 10000,100000,1000000
//
// Memory stages of one graph file: compiles it once with the default
// pipeline, then runs memory planning (on the plan as it was before that
// pass) and the final plan's memory check `reps` times each; prints the CPU
// seconds of every run and of memory planning's stages (a target for
// `perf record`, which then sees little besides these stages):
//
//   build/bin/memgraph_bench --memory-stages /tmp/r1m.json 3
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "npuplan/compiler/compiler.h"
#include "npuplan/gen/graph_generator.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/memory/memory_planning.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/verify/memory_verifier.h"
#include "npuplan/verify/tensor_lifetimes.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

void Report(benchmark::State& state, const Plan& plan, const Statistics& stats) {
  state.counters["peak_KiB"] = static_cast<double>(plan.memory.peak) / 1024.0;
  state.counters["lb_KiB"] = static_cast<double>(plan.memory.lower_bound) / 1024.0;
  state.counters["peak/lb"] =
      plan.memory.lower_bound > 0 ? static_cast<double>(plan.memory.peak) / plan.memory.lower_bound : 1.0;
  state.counters["streams"] = static_cast<double>(plan.streams.logical);
  state.counters["extra_conflicts"] = static_cast<double>(stats.Get("memory-planning", "extra_conflicts"));
  state.counters["xstream_reuses"] = static_cast<double>(stats.Get("memory-planning", "cross_stream_reuses"));
  state.counters["buffers"] = static_cast<double>(stats.Get("memory-planning", "pool_buffers"));
}

void BM_Transformer(benchmark::State& state) {
  GeneratorOptions gen;
  gen.layers = state.range(0);
  gen.seed = 3;
  absl::StatusOr<Model> model = GenerateTransformer(gen);
  if (!model.ok()) {
    state.SkipWithError(std::string(model.status().message()).c_str());
    return;
  }
  CompileConfig config;
  config.read_environment = false;
    if (state.range(1) != 0) config.option_overrides["ge.enableSingleStream"] = "true";
  Plan plan;
  Statistics stats;
  for (auto _ : state) {
    DecisionLog log;
    stats = Statistics();
    absl::StatusOr<Plan> p = Compile(*model, config, log, stats);
    if (!p.ok()) {
      state.SkipWithError(std::string(p.status().message()).c_str());
      return;
    }
    plan = std::move(p).value();
  }
  Report(state, plan, stats);
}
BENCHMARK(BM_Transformer)
    ->ArgsProduct({{4, 16}, {0, 1}})
    ->ArgNames({"layers", "single"})
    ->Unit(benchmark::kMillisecond);

void BM_RandomStreams(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  Plan base;
  base.model = GenerateRandomDag(2000, 3, /*seed=*/7);
  std::mt19937 rng(11);
  for (size_t i = 0; i < base.model.num_nodes(); ++i) {
    Node& n = base.model.node(NodeId(static_cast<int32_t>(i)));
    n.stream_id = static_cast<int64_t>(rng() % k);
    for (TensorDesc& t : n.outputs) t = TensorDesc{{static_cast<int64_t>(256 + rng() % 16384)}, "float32"};
  }
  base.streams.logical = k;
  base.established = IrProperty::kTopoSorted | IrProperty::kLogicalStreams;
  base.EnsureNodeVectors();
  CompileOptions opts;
  Plan plan;
  Statistics stats;
  for (auto _ : state) {
    plan = base;
    DecisionLog log;
    stats = Statistics();
    PassContext ctx{opts, log, stats};
    MemoryPlanning pass;
    absl::StatusOr<bool> r = pass.Run(plan, ctx);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
  }
  Report(state, plan, stats);
}
BENCHMARK(BM_RandomStreams)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);

void BM_TensorLifetimes(benchmark::State& state) {
  Model model = GenerateRandomDag(static_cast<int>(state.range(0)), 3, /*seed=*/7);
  std::mt19937 rng(11);
  for (size_t i = 0; i < model.num_nodes(); ++i) {
    Node& n = model.node(NodeId(static_cast<int32_t>(i)));
    n.stream_id = static_cast<int64_t>(rng() % 8);
    for (TensorDesc& t : n.outputs)
      t = TensorDesc{{static_cast<int64_t>(256 + rng() % 16384)}, "float32"};
  }
  size_t buffers = 0;
  for (auto _ : state) {
    absl::StatusOr<memory::TensorLifetimes> lt = memory::ComputeTensorLifetimes(model, 512);
    if (!lt.ok()) {
      state.SkipWithError(std::string(lt.status().message()).c_str());
      return;
    }
    buffers = lt->buffers.size();
  }
  state.counters["buffers"] = static_cast<double>(buffers);
}
BENCHMARK(BM_TensorLifetimes)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// System CPU seconds and minor page faults of the process so far: fresh
// memory is faulted in and zeroed by the kernel, which CpuSeconds counts too.
struct Kernel {
  double sys = 0;
  long faults = 0;
};
Kernel KernelNow() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {static_cast<double>(u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_stime.tv_usec),
          u.ru_minflt};
}

// One whole compile with CPU time per stage, printed as a markdown table row.
int WholeCompile(int64_t target_nodes) {
  std::vector<std::pair<std::string, double>> stages;
  double t = CpuSeconds();
  auto lap = [&](std::string name) {
    const double now = CpuSeconds();
    stages.emplace_back(std::move(name), now - t);
    t = now;
  };
  GeneratorOptions gen;
  gen.target_nodes = target_nodes;
  absl::StatusOr<Model> model = GenerateTransformer(gen);
  if (!model.ok()) {
    std::fprintf(stderr, "gen: %s\n", std::string(model.status().message()).c_str());
    return 1;
  }
  lap("gen");
  const size_t nodes = model->num_nodes();
  CompileOptions options = CompileOptions::FromModel(*model, {}, /*read_environment=*/false);
  absl::StatusOr<std::unique_ptr<PassPipeline>> pipeline = BuildDefaultPipeline(options);
  if (!pipeline.ok()) return 1;
  Plan plan;
  plan.model = std::move(model).value();
  plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  plan.EnsureNodeVectors();
  DecisionLog log;
  Statistics stats;
  PassContext ctx{options, log, stats};
  ctx.instrumentation.after_pass = [&](int, std::string_view pass, const Plan&) {
    lap(std::string(pass));
    return absl::OkStatus();
  };
  absl::Status run = (*pipeline)->Run(plan, ctx).status();
  if (!run.ok()) {
    std::fprintf(stderr, "compile: %s\n", std::string(run.message()).c_str());
    return 1;
  }
  plan.EnsureNodeVectors();
  absl::Status verified = verify::VerifyPlan(plan);
  lap("verify");
  const std::string json = WritePlanJson(plan);
  lap("plan-json");
  double total = 0;
  for (const auto& [name, secs] : stages) total += secs;
  std::printf("| %zu | %.2f |", nodes, total);
  for (const auto& [name, secs] : stages) std::printf(" %s %.2f |", name.c_str(), secs);
  std::printf(" peak/lb %.4f | %s |\n",
              plan.memory.lower_bound > 0 ? static_cast<double>(plan.memory.peak) / plan.memory.lower_bound : 1.0,
              verified.ok() ? "verified" : std::string(verified.message()).substr(0, 60).c_str());
  std::fflush(stdout);
  return 0;
}

// Leaf passes in the order they run; a pipeline after its own passes (the
// order of PassInstrumentation::after_pass calls).
void RunOrder(const PassPipeline& p, std::vector<std::string>& out) {
  for (const auto& pass : p.passes()) {
    if (const PassPipeline* nested = pass->nested()) RunOrder(*nested, out);
    out.emplace_back(pass->name());
  }
}

int MemoryStages(const std::string& path, int reps) {
  absl::StatusOr<Model> model = ReadGraphFile(path);
  if (!model.ok()) {
    std::fprintf(stderr, "read: %s\n", std::string(model.status().message()).c_str());
    return 1;
  }
  CompileOptions options = CompileOptions::FromModel(*model, {}, /*read_environment=*/false);
  absl::StatusOr<std::unique_ptr<PassPipeline>> pipeline = BuildDefaultPipeline(options);
  if (!pipeline.ok()) return 1;
  std::vector<std::string> order;
  RunOrder(**pipeline, order);
  const auto mem = std::find(order.begin(), order.end(), "memory-planning");
  if (mem == order.begin() || mem == order.end()) {
    std::fprintf(stderr, "no memory-planning pass after another\n");
    return 1;
  }
  // The after_pass call just before memory planning's.
  const int64_t before_calls = mem - order.begin();
  Plan plan;
  plan.model = std::move(model).value();
  plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  plan.EnsureNodeVectors();
  Plan before;
  int64_t calls = 0;
  DecisionLog log;
  Statistics stats;
  PassContext ctx{options, log, stats};
  ctx.instrumentation.after_pass = [&](int, std::string_view, const Plan& p) {
    if (++calls == before_calls) before = p;
    return absl::OkStatus();
  };
  if (absl::Status run = (*pipeline)->Run(plan, ctx).status(); !run.ok()) {
    std::fprintf(stderr, "compile: %s\n", std::string(run.message()).c_str());
    return 1;
  }
  plan.EnsureNodeVectors();
  for (int r = 0; r < reps; ++r) {
    Plan p = before;
    Statistics s;
    PassContext c{options, log, s};
    MemoryPlanning pass;
    const double t = CpuSeconds();
    const Kernel k = KernelNow();
    absl::StatusOr<bool> ran = pass.Run(p, c);
    const Kernel k2 = KernelNow();
    std::printf("memory-planning %.3f s (sys %.3f s, %ld faults):", CpuSeconds() - t,
                k2.sys - k.sys, k2.faults - k.faults);
    if (!ran.ok()) std::printf(" %s", std::string(ran.status().message()).c_str());
    for (const Statistics::StepTime& st : s.times())
      std::printf(" %s %.3f", st.step.substr(st.step.find(':') + 2).c_str(), st.cpu);
    std::printf("\n");
  }
  for (int r = 0; r < reps; ++r) {
    const double t = CpuSeconds();
    const Kernel k = KernelNow();
    absl::Status verified = memory::VerifyMemoryPlan(plan);
    const Kernel k2 = KernelNow();
    std::printf("verify: memory %.3f s (sys %.3f s, %ld faults) %s\n", CpuSeconds() - t,
                k2.sys - k.sys, k2.faults - k.faults,
                verified.ok() ? "ok" : std::string(verified.message()).c_str());
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace npuplan

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--whole-compile") != 0) continue;
    int rc = 0;
    std::string list = argv[i + 1];
    for (size_t start = 0; start < list.size();) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      rc |= npuplan::WholeCompile(std::stoll(list.substr(start, comma - start)));
      start = comma + 1;
    }
    return rc;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--memory-stages") != 0) continue;
    return npuplan::MemoryStages(argv[i + 1], i + 2 < argc ? std::atoi(argv[i + 2]) : 1);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
