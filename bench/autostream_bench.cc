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
#include <benchmark/benchmark.h>

#include <random>

#include "npuplan/gen/graph_generator.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/stream/critical_path_streams.h"
#include "npuplan/stream/dag_stream_allocator.h"

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

}  // namespace
}  // namespace npuplan

BENCHMARK_MAIN();
