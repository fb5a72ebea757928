// Partition throughput on random layered DAGs (docs/benchmarks.md, "Partition").
//
//   build-part/bin/partition_bench --benchmark_filter=Partition
//
// The graph: one Data node, then layers of `kWidth` nodes; each node reads 1–2
// outputs of the previous layer (sometimes one two layers back), 5 % are
// Consts (weights) read by the next layer, 1 % have a -1 output dim (rule a;
// their consumers become dynamic too), a NetOutput reads the last layer.
// Timed: marking + clustering + subgraph building (not generation, the copy of
// the input model, or its destruction).
#include <benchmark/benchmark.h>

#include <optional>
#include <random>

#include "npuplan/ir/topo_sort.h"
#include "npuplan/partition/dynamic_shape_partition.h"
#include "npuplan/partition/mark_unknown_shape_nodes.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

constexpr int kWidth = 64;

Model LayeredDag(int64_t n, double dynamic_prob, uint64_t seed) {
  Model m;
  m.set_name("bench");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(0, 1);
  const std::string& ge_local = m.engine_table.EngineForOp("Data");
  Node data;
  data.name = "x";
  data.type = "Data";
  data.engine = ge_local;
  data.outputs.push_back(TensorDesc{{kWidth}, "float16"});
  NodeId x = m.AddNode(kRootGraph, std::move(data));
  std::vector<NodeId> prev2, prev = {x}, cur, consts;
  for (int64_t i = 1; i + 1 < n; ++i) {
    Node node;
    node.name = StrCat("n", i);
    if (uni(rng) < 0.05) {
      node.type = "Const";
      node.engine = ge_local;
      node.outputs.push_back(TensorDesc{{kWidth}, "float16"});
      consts.push_back(m.AddNode(kRootGraph, std::move(node)));
      continue;
    }
    node.type = "Add";
    node.engine = "AIcoreEngine";
    int fanin = 1 + static_cast<int>(rng() % 2);
    for (int k = 0; k < fanin; ++k) node.inputs.push_back(OutputRef{prev[rng() % prev.size()], 0});
    if (!prev2.empty() && uni(rng) < 0.1) node.inputs.push_back(OutputRef{prev2[rng() % prev2.size()], 0});
    if (!consts.empty()) {
      node.inputs.push_back(OutputRef{consts.back(), 0});
      consts.pop_back();
    }
    node.outputs.push_back(TensorDesc{{uni(rng) < dynamic_prob ? -1 : kWidth}, "float16"});
    cur.push_back(m.AddNode(kRootGraph, std::move(node)));
    if (static_cast<int>(cur.size()) == kWidth) {
      prev2 = std::move(prev);
      prev = std::move(cur);
      cur.clear();
    }
  }
  Node out;
  out.name = "out";
  out.type = "NetOutput";
  out.engine = ge_local;
  for (NodeId p : prev) out.inputs.push_back(OutputRef{p, 0});
  m.AddNode(kRootGraph, std::move(out));
  RenumberTopoIds(m);
  return m;
}

void BM_Partition(benchmark::State& state) {
  const int64_t n = state.range(0);
  const double dynamic_prob = static_cast<double>(state.range(1)) / 1000.0;
  const Model original = LayeredDag(n, dynamic_prob, 42);
  CompileOptions options;
  auto popts = partition::ReadPartitionOptions(options);
  PartitionResult result;
  Statistics stats;
  // The copy is made, and the previous one destroyed, with the timer paused:
  // timed is the partition's own work (a fresh copy, so the node vector has
  // no spare capacity and the partition's first AddNode pays its growth).
  std::optional<Model> copy;
  for (auto _ : state) {
    state.PauseTiming();
    copy.reset();
    copy.emplace(original);
    Model& m = *copy;
    result = PartitionResult();
    stats = Statistics();
    state.ResumeTiming();
    auto marks = partition::ComputeUnknownShapeMarks(m, options);
    absl::Status s = partition::PartitionModel(m, *marks, *popts, nullptr, &stats, result);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(m);
  }
  state.counters["nodes"] = static_cast<double>(original.num_nodes());
  state.counters["subgraphs"] = static_cast<double>(result.subgraphs.size());
  state.counters["known_sg"] = static_cast<double>(stats.Get("dynamic-shape-partition", "subgraphs_known"));
  state.counters["unknown_sg"] = static_cast<double>(stats.Get("dynamic-shape-partition", "subgraphs_unknown"));
  state.counters["bfs_visits"] = static_cast<double>(stats.Get("dynamic-shape-partition", "bfs_visits"));
  state.SetItemsProcessed(state.iterations() * n);
}

// Args: nodes, dynamic outputs per mille.
BENCHMARK(BM_Partition)
    ->Args({100000, 10})
    ->Args({1000000, 10})
    ->Args({1000000, 1})
    ->Args({1000000, 50})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace npuplan

BENCHMARK_MAIN();
