// Device event id allocation (issue 23): events::MinimumIdAllocation on plans
// compiled up to stream-activation (the passes before event-id-allocation).
// Inputs: generated transformers of 10k, 100k and 1M nodes (npuplan gen
// --nodes N: 3 streams) and a 100k-node random DAG under LoadBalance:8.
// BM_MinIds: exact (greedy + augmenting phases); BM_GreedyIds: the greedy
// allocator alone (npuplan.eventIdExactLimit=0). Counters: sync edges, ids,
// overlap lower bound. Results: docs/benchmarks.md ("Device event ids").
//
//   build/bin/event_ids_bench --benchmark_filter=. --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "npuplan/compiler/compiler.h"
#include "npuplan/events/event_id_allocation.h"
#include "npuplan/gen/graph_generator.h"

namespace npuplan {
namespace {

constexpr char kUpToActivation[] =
    "mark-unknown-shape-nodes,dynamic-shape-partition,logical-stream-assignment,assign-attached-"
    "stream-pass,"
    "stream-budget,task-count-assignment,sync-event-insertion,sync-event-optimization,event-reuse,"
    "physical-stream-split,stream-activation";

// Input 0..2: transformer of 10k/100k/1M nodes; 3: random DAG of 100k nodes, LoadBalance:8.
const Plan& PlanFor(int input) {
  static std::map<int, std::unique_ptr<Plan>> cache;
  auto& slot = cache[input];
  if (slot) return *slot;
  Model model;
  CompileConfig config;
  config.passes = kUpToActivation;
  config.read_environment = false;
  if (input < 3) {
    GeneratorOptions o;
    o.target_nodes = input == 0 ? 10'000 : input == 1 ? 100'000 : 1'000'000;
    model = GenerateTransformer(o).value();
  } else {
    model = GenerateRandomDag(100'000, 3, /*seed=*/7);
    config.option_overrides["ge.autoMultistreamParallelMode"] = "LoadBalance:8";
  }
  DecisionLog log;
  Statistics stats;
  slot = std::make_unique<Plan>(Compile(std::move(model), config, log, stats).value());
  return *slot;
}

void Run(benchmark::State& state, events::ExactLimits limits) {
  const Plan& plan = PlanFor(static_cast<int>(state.range(0)));
  events::IdAllocation a;
  for (auto _ : state) {
    a = events::MinimumIdAllocation(plan, limits);
    benchmark::DoNotOptimize(a.id.data());
  }
  state.counters["sync_edges"] = static_cast<double>(a.events.edges);
  state.counters["ids"] = static_cast<double>(a.events.ids);
  state.counters["lower_bound"] = static_cast<double>(a.events.lower_bound);
  state.counters["exact"] = a.events.exact ? 1 : 0;
  state.counters["nodes"] = static_cast<double>(plan.model.num_nodes());
}

// Exact at any edge count, within the default list limit (as compile runs).
void BM_MinIds(benchmark::State& state) {
  Run(state, {int64_t{1} << 40, events::ExactLimits{}.entries});
}
void BM_GreedyIds(benchmark::State& state) { Run(state, {0, 0}); }

BENCHMARK(BM_MinIds)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_GreedyIds)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace npuplan

BENCHMARK_MAIN();
