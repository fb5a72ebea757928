// Auto multi-stream (issue 5): MiniDAG path cover + merge at scale, and the
// estimated makespan / lower bound of LoadBalance:N, MainStream:N and
// npuplan's CriticalPath:N on generated graphs.
//
//   build/bin/autostream_bench --benchmark_filter=. --benchmark_min_time=1
//
// PathCover/N: Hopcroft–Karp minimum path cover on a random DAG of N nodes
// (GenerateRandomDag, fan-in ≤ 3, every node cost 1..100). Merge/N: path
// cover + LoadBalance:8 merge. Makespan/<graph>/<mode>/<N>: one run; counters
// `ratio` = estimated makespan / max(critical path, work / N) (event latency
// 2 units) and `streams`. Graphs: `transformer` (GenerateTransformer, about
// 10k nodes, costs from shapes) and `random` (GenerateRandomDag, 10k nodes,
// random costs).
//
// Simulated/<graph>/<mode>/<N>: the whole `npuplan compile` pipeline (events
// included) with ge.autoMultistreamParallelMode = LoadBalance:N (mode 0),
// MainStream:N (1), CriticalPath:N (2), WeightedLoadBalance:N (3), or unset
// (4: GE's static chain, N ignored), CriticalPath:N with
// npuplan.stream.reorder=true (5), then the discrete-event simulator
// (npuplan/sim, default SimOptions); npuplan.device.unlimitedStreamDepth=true
// (no physical split). Counters: `makespan_us` (simulated), `limit_us` =
// max(critical path, total work / N) — the physical limit of N streams, both
// taken from a ge.enableSingleStream=true compile of the same model (no
// events, so the Send/Recv tasks a multi-stream plan adds do not raise the
// limit) — `ratio` = makespan / limit, `single_ratio` = total work / limit,
// `streams` (logical), `events`. Graphs: GenerateTransformer with
// about 3000 nodes (`transformer`; seed 1, HCCL and AI CPU on) and
// GenerateRandomDag(3000, 3) (`random`; all AI-core, costs from shapes).
//
// SimulatedModel/<model>/<mode>/<N>: the same on the real ONNX models of
// ../shared/guides/WORKLOADS.md, read from $NPUPLAN_MODEL_CACHE
// (scripts/fetch_models.sh) with their pinned input shapes: 0 = PP-OCR cls
// (x=1x3x48x192), 1 = PP-OCRv4 det (x=1x3x960x960), 2 = PP-OCRv4 rec
// (x=1x3x48x320; partly dynamic, so DAG modes do not run without
// ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1, which this benchmark does not read).
// Skipped with an error when the cache is missing.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <random>

#include "npuplan/compiler/compiler.h"
#include "npuplan/gen/graph_generator.h"
#include "npuplan/importers/onnx_importer.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/sim/simulator.h"
#include "npuplan/stream/critical_path_streams.h"
#include "npuplan/stream/dag_stream_allocator.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {
using stream::StreamDag;

// Root-graph DAG of a generated model: every task node on stream 0 first.
StreamDag DagOf(Model m, bool random_costs) {
  (void)TopologicalSort(m);
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    Node& n = m.node(NodeId(static_cast<int32_t>(i)));
    const EngineConfig* conf = m.engine_table.Find(n.engine);
    n.stream_id = conf != nullptr && conf->skip_assign_stream ? -1 : 0;
  }
  StreamDag d = stream::BuildStreamDag(m, kRootGraph, {});
  if (random_costs) {
    std::mt19937 rng(7);
    for (auto& c : d.cost) c = 1 + static_cast<int64_t>(rng() % 100);
  }
  return d;
}

const StreamDag& RandomDag(int64_t n) {
  static std::map<int64_t, StreamDag> cache;
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, DagOf(GenerateRandomDag(n, 3, 1), true)).first;
  return it->second;
}

const StreamDag& TransformerDag() {
  static StreamDag d = [] {
    GeneratorOptions o;
    o.target_nodes = 10000;
    return DagOf(*GenerateTransformer(o), false);
  }();
  return d;
}

void BM_PathCover(benchmark::State& state) {
  const StreamDag& d = RandomDag(state.range(0));
  std::vector<uint8_t> keep(d.size(), 1);
  int64_t routes = 0;
  for (auto _ : state) {
    stream::PathCover pc = stream::MinimumPathCover(d, keep);
    routes = static_cast<int64_t>(pc.routes.size());
    benchmark::DoNotOptimize(pc);
  }
  state.counters["routes"] = static_cast<double>(routes);
  state.counters["edges"] = static_cast<double>(d.succ.size());
}
BENCHMARK(BM_PathCover)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_Merge(benchmark::State& state) {
  const StreamDag& d = RandomDag(state.range(0));
  for (auto _ : state) {
    stream::DagAssignment a = stream::AssignDag(d, stream::MergeAlgorithm::kLoadBalance, 8);
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK(BM_Merge)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_CriticalPath(benchmark::State& state) {
  const StreamDag& d = RandomDag(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(stream::CriticalPathStreams::Schedule(d, 8, 2));
}
BENCHMARK(BM_CriticalPath)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

// npuplan.stream.reorder's orders: PriorityOrder (bottom level) and the
// dynamic-level schedule with 8 streams (run on graphs up to 100k nodes).
void BM_PriorityOrder(benchmark::State& state) {
  const StreamDag& d = RandomDag(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(stream::CriticalPathStreams::PriorityOrder(d, 0));
}
BENCHMARK(BM_PriorityOrder)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
void BM_DynamicLevel(benchmark::State& state) {
  const StreamDag& d = RandomDag(state.range(0));
  std::vector<int32_t> order;
  for (auto _ : state) {
    benchmark::DoNotOptimize(stream::CriticalPathStreams::DynamicLevelSchedule(d, 8, 2, nullptr, order));
  }
}
BENCHMARK(BM_DynamicLevel)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// mode: 0 LoadBalance, 1 MainStream, 2 CriticalPath (schedule alone), 3 WeightedLoadBalance.
void Makespan(benchmark::State& state, const StreamDag& d) {
  const int mode = static_cast<int>(state.range(0));
  const int64_t n = state.range(1);
  std::vector<int32_t> s;
  for (auto _ : state) {
    if (mode == 2) {
      s = stream::CriticalPathStreams::Schedule(d, n, 2);
    } else {
      auto algo = mode == 0   ? stream::MergeAlgorithm::kLoadBalance
                  : mode == 1 ? stream::MergeAlgorithm::kMainStream
                              : stream::MergeAlgorithm::kWeightedLoadBalance;
      s = stream::AssignDag(d, algo, n).stream_of;
    }
  }
  const int64_t ms = stream::EstimateMakespan(d, s, 2);
  const int64_t lb = std::max(stream::CriticalPathLength(d), (stream::TotalWork(d) + n - 1) / n);
  int32_t streams = 0;
  for (int32_t x : s) streams = std::max(streams, x + 1);
  state.counters["ratio"] = static_cast<double>(ms) / static_cast<double>(lb);
  state.counters["streams"] = streams;
  state.counters["single_ratio"] = static_cast<double>(stream::TotalWork(d)) / static_cast<double>(lb);
}
void BM_MakespanTransformer(benchmark::State& state) { Makespan(state, TransformerDag()); }
void BM_MakespanRandom(benchmark::State& state) { Makespan(state, RandomDag(10000)); }
BENCHMARK(BM_MakespanTransformer)
    ->ArgsProduct({{0, 1, 3, 2}, {2, 4, 8}})
    ->ArgNames({"mode", "N"})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MakespanRandom)
    ->ArgsProduct({{0, 1, 3, 2}, {2, 4, 8}})
    ->ArgNames({"mode", "N"})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Compiles `model` with `options` (no physical split) and simulates it.
absl::StatusOr<std::pair<Plan, sim::SimResult>> CompileAndRun(const Model& model,
                                                              std::map<std::string, std::string> options) {
  CompileConfig config;
  config.read_environment = false;
  // No physical split: it only adds events at task-count limits, and at this
  // size its verifier check failed (reported).
  options["npuplan.device.unlimitedStreamDepth"] = "true";
  config.option_overrides = std::move(options);
  DecisionLog log;
  Statistics stats;
  NPUPLAN_ASSIGN_OR_RETURN(Plan plan, Compile(model, config, log, stats));
  NPUPLAN_ASSIGN_OR_RETURN(sim::SimResult result, sim::Simulate(plan));
  return std::make_pair(std::move(plan), std::move(result));
}

// The physical limit's inputs from a single-stream compile of the same model
// (no events, so no Send/Recv work): critical path and total task work.
std::pair<double, double> Reference(const Model& model) {
  static std::map<const Model*, std::pair<double, double>> cache;
  auto it = cache.find(&model);
  if (it != cache.end()) return it->second;
  auto single = CompileAndRun(model, {{"ge.enableSingleStream", "true"}});
  std::pair<double, double> ref{0, 0};
  if (single.ok()) ref = {single->second.critical_path_us, single->second.total_work};
  return cache.emplace(&model, ref).first->second;
}

// mode: 0 LoadBalance, 1 MainStream, 2 CriticalPath, 3 WeightedLoadBalance, 4 none,
// 5 CriticalPath with npuplan.stream.reorder.
void CompileAndSimulate(benchmark::State& state, const Model& model, int64_t mode, int64_t n) {
  static const char* kAlgo[] = {"LoadBalance", "MainStream", "CriticalPath", "WeightedLoadBalance"};
  std::map<std::string, std::string> options;
  if (mode < 4) options["ge.autoMultistreamParallelMode"] = StrCat(kAlgo[mode], ":", n);
  if (mode == 5) {
    options["ge.autoMultistreamParallelMode"] = StrCat("CriticalPath:", n);
    options["npuplan.stream.reorder"] = "true";
  }
  absl::StatusOr<std::pair<Plan, sim::SimResult>> run;
  for (auto _ : state) {
    run = CompileAndRun(model, options);
    if (!run.ok()) {
      state.SkipWithError(std::string(run.status().message()).c_str());
      return;
    }
  }
  const auto [cp, work] = Reference(model);
  const double limit = std::max(cp, work / static_cast<double>(n));
  const sim::SimResult& r = run->second;
  state.counters["makespan_us"] = r.makespan;
  state.counters["limit_us"] = limit;
  state.counters["ratio"] = r.makespan / limit;
  state.counters["streams"] = static_cast<double>(run->first.streams.logical);
  state.counters["events"] = static_cast<double>(run->first.events.events.size());
  state.counters["single_ratio"] = work / limit;
}
void Simulated(benchmark::State& state, const Model& model) {
  CompileAndSimulate(state, model, state.range(0), state.range(1));
}
const Model& SimTransformer() {
  static Model m = [] {
    GeneratorOptions o;
    o.target_nodes = 3000;
    return *GenerateTransformer(o);
  }();
  return m;
}
const Model& SimRandom() {
  static Model m = GenerateRandomDag(3000, 3, 1);
  return m;
}
void BM_SimulatedTransformer(benchmark::State& state) { Simulated(state, SimTransformer()); }
void BM_SimulatedRandom(benchmark::State& state) { Simulated(state, SimRandom()); }
BENCHMARK(BM_SimulatedTransformer)
    ->ArgsProduct({{0, 1, 3, 2, 5}, {2, 4, 8}})
    ->Args({4, 1})
    ->ArgNames({"mode", "N"})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulatedRandom)
    ->ArgsProduct({{0, 1, 3, 2, 5}, {2, 4, 8}})
    ->Args({4, 1})
    ->ArgNames({"mode", "N"})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

struct RealModel {
  const char* file;
  const char* input_shape;
};
constexpr RealModel kRealModels[] = {{"ch_ppocr_mobile_v2.0_cls_infer.onnx", "x=1x3x48x192"},
                                     {"ch_PP-OCRv4_det_infer.onnx", "x=1x3x960x960"},
                                     {"ch_PP-OCRv4_rec_infer.onnx", "x=1x3x48x320"}};
void BM_SimulatedModel(benchmark::State& state) {
  static std::map<int64_t, absl::StatusOr<Model>> cache;
  const int64_t which = state.range(0);
  auto it = cache.find(which);
  if (it == cache.end()) {
    const char* dir = std::getenv("NPUPLAN_MODEL_CACHE");
    absl::StatusOr<Model> model = absl::NotFoundError("NPUPLAN_MODEL_CACHE is not set");
    if (dir != nullptr) {
      OnnxImportOptions opts;
      opts.input_shapes = {kRealModels[which].input_shape};
      auto imported = ImportOnnxFile(StrCat(dir, "/", kRealModels[which].file), opts);
      model = imported.ok() ? absl::StatusOr<Model>(std::move(imported->model)) : imported.status();
    }
    it = cache.emplace(which, std::move(model)).first;
  }
  if (!it->second.ok()) {
    for (auto _ : state) {
    }
    state.SkipWithError(std::string(it->second.status().message()).c_str());
    return;
  }
  state.SetLabel(kRealModels[which].file);
  CompileAndSimulate(state, *it->second, state.range(1), state.range(2));
}
BENCHMARK(BM_SimulatedModel)
    ->ArgsProduct({{0, 1, 2}, {0, 1, 3, 2, 5}, {2, 4, 8}})
    ->Args({0, 4, 1})
    ->Args({1, 4, 1})
    ->Args({2, 4, 1})
    ->ArgNames({"model", "mode", "N"})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace npuplan

BENCHMARK_MAIN();
