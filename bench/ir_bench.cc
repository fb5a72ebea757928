// Load (parse + topological sort) and verify generated graphs of 10k, 100k and
// 1M nodes (issue #2 item 12). Run: build/bin/ir_bench --benchmark_min_time=1
// The graph text is generated once per size, outside the timed loop.
#include <benchmark/benchmark.h>

#include <map>

#include "npuplan/gen/graph_generator.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/ir/verifier.h"

namespace npuplan {
namespace {

const std::string& GraphText(int64_t nodes) {
  static std::map<int64_t, std::string> cache;
  auto it = cache.find(nodes);
  if (it != cache.end()) return it->second;
  GeneratorOptions o;
  o.target_nodes = nodes;
  o.if_every = 16;
  o.control_edge_prob = 0.2;
  auto m = GenerateTransformer(o);
  return cache[nodes] = WriteGraphJson(*m);
}

void BM_LoadGraph(benchmark::State& state) {
  const std::string& text = GraphText(state.range(0));
  size_t nodes = 0;
  for (auto _ : state) {
    auto m = ParseGraphJson(text, "bench.json");
    if (!m.ok()) state.SkipWithError(std::string(m.status().message()).c_str());
    nodes = m->num_nodes();
    benchmark::DoNotOptimize(m);
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
}

void BM_TopoSortAndVerify(benchmark::State& state) {
  auto m = ParseGraphJson(GraphText(state.range(0)), "bench.json");
  for (auto _ : state) {
    auto s = TopologicalSort(*m, TopoSortMode::kBfs);
    auto v = VerifyStructure(*m);
    if (!s.ok() || !v.ok()) state.SkipWithError("verify failed");
  }
  state.counters["nodes"] = static_cast<double>(m->num_nodes());
}

void BM_WriteGraph(benchmark::State& state) {
  auto m = ParseGraphJson(GraphText(state.range(0)), "bench.json");
  for (auto _ : state) benchmark::DoNotOptimize(WriteGraphJson(*m));
  state.counters["nodes"] = static_cast<double>(m->num_nodes());
}

BENCHMARK(BM_LoadGraph)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_TopoSortAndVerify)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_WriteGraph)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace npuplan

BENCHMARK_MAIN();
