// Events benchmarks: sync-event insertion and the exact / ge reductions on
// 1M-node random layered DAGs (npuplan/gen GenerateRandomDag, fan-in ≤ 3)
// with every node on a uniformly random stream out of k — the worst case for
// events (almost every edge crosses streams). Counters: naive / ge / exact
// event counts. Results: docs/benchmarks.md ("Events").
//
//   build/bin/events_bench --benchmark_filter=. --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <optional>
#include <random>

#include "npuplan/events/event_reuse.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/gen/graph_generator.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

constexpr int64_t kNodes = 1'000'000;

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The generated graph with random streams and the inserted (naive) events, built once per k.
const Plan& InsertedPlan(int k) {
  static std::map<int, std::unique_ptr<Plan>> cache;
  auto& slot = cache[k];
  if (slot) return *slot;
  slot = std::make_unique<Plan>();
  Plan& plan = *slot;
  plan.model = GenerateRandomDag(kNodes, 3, /*seed=*/7);
  std::mt19937 rng(11);
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    plan.model.node(NodeId(static_cast<int32_t>(i))).stream_id = static_cast<int64_t>(rng() % k);
  }
  plan.established = IrProperty::kTopoSorted | IrProperty::kLogicalStreams;
  plan.EnsureNodeVectors();
  CompileOptions opts;
  DecisionLog log;
  Statistics stats;
  PassContext ctx{opts, log, stats};
  SyncEventInsertion insertion;
  (void)insertion.Run(plan, ctx);
  return plan;
}

void BM_Insertion(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const Plan& base = InsertedPlan(k);
  Plan plan;
  plan.model = base.model;
  plan.established = base.established;
  plan.EnsureNodeVectors();
  CompileOptions opts;
  DecisionLog log;
  Statistics stats;
  for (auto _ : state) {
    state.PauseTiming();
    ReleaseCachedHugePages();  // start cold, as the CLI does
    state.ResumeTiming();
    PassContext ctx{opts, log, stats};
    SyncEventInsertion insertion;
    benchmark::DoNotOptimize(insertion.Run(plan, ctx));
  }
  state.counters["naive"] = static_cast<double>(plan.events.events.size());
}

// The whole events stage as the pipeline runs it: insertion, optimisation
// (which computes both the ge and the exact reductions for the counts and
// keeps the chosen one), reuse/renumbering.
void BM_Stage(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const Plan& base = InsertedPlan(k);
  size_t events = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Plan plan;
    plan.model = base.model;
    plan.established = base.established;
    plan.EnsureNodeVectors();
    // Start cold, as the CLI does: no scratch blocks cached by earlier runs.
    ReleaseCachedHugePages();
    state.ResumeTiming();
    CompileOptions opts;
    DecisionLog log;
    Statistics stats;
    PassContext ctx{opts, log, stats};
    SyncEventInsertion insertion;
    SyncEventOptimization optimization;
    EventReuse reuse;
    const size_t f0 = HugePageFreshBytes();
    double t0 = ThreadCpuSeconds();
    benchmark::DoNotOptimize(insertion.Run(plan, ctx));
    double t1 = ThreadCpuSeconds();
    const size_t f1 = HugePageFreshBytes();
    benchmark::DoNotOptimize(optimization.Run(plan, ctx));
    double t2 = ThreadCpuSeconds();
    const size_t f2 = HugePageFreshBytes();
    benchmark::DoNotOptimize(reuse.Run(plan, ctx));
    double t3 = ThreadCpuSeconds();
    const size_t f3 = HugePageFreshBytes();
    state.counters["insert_cpu_s"] = t1 - t0;
    state.counters["optimize_cpu_s"] = t2 - t1;
    state.counters["reuse_cpu_s"] = t3 - t2;
    // Fresh scratch blocks each pass took from the system (the event table,
    // a std::vector, is not included): what it faults in.
    constexpr double kMiB = 1 << 20;
    state.counters["insert_fresh_mib"] = static_cast<double>(f1 - f0) / kMiB;
    state.counters["optimize_fresh_mib"] = static_cast<double>(f2 - f1) / kMiB;
    state.counters["reuse_fresh_mib"] = static_cast<double>(f3 - f2) / kMiB;
    events = plan.events.events.size();
    state.PauseTiming();
    plan = Plan();
    state.ResumeTiming();
  }
  state.counters["events"] = static_cast<double>(events);
}

// event-reuse alone on the k=8 plan with `_event_multiplexing` items on the
// senders of every 100th event (10,000 items over ~1M events, above the
// 65,500 threshold): before the (sender, receiver) index this was items × events.
void BM_Multiplexing(benchmark::State& state) {
  const Plan& base = InsertedPlan(8);
  const int items = static_cast<int>(state.range(0));
  int64_t ids = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Plan plan = base;
    const size_t stride = std::max<size_t>(1, plan.events.events.size() / static_cast<size_t>(items));
    size_t done = 0;
    for (size_t j = 0; j < plan.events.events.size() && done < static_cast<size_t>(items); j += stride, ++done) {
      const SyncEvent& e = plan.events.events[j];
      Node& sender = plan.model.node(e.send);
      AttrValue& v = sender.attrs["_event_multiplexing"];
      if (!v.is<AttrValue::StringList>()) v = AttrValue::StringList{};
      std::get<AttrValue::StringList>(v.get()).push_back(
          StrCat("SendTo;", plan.model.node(e.recv).name, ";", done % 64));
    }
    CompileOptions opts;
    DecisionLog log;
    Statistics stats;
    PassContext ctx{opts, log, stats};
    EventReuse reuse;
    state.ResumeTiming();
    benchmark::DoNotOptimize(reuse.Run(plan, ctx));
    ids = plan.events.event_count;
    state.PauseTiming();
    plan = Plan();
    state.ResumeTiming();
  }
  state.counters["event_ids"] = static_cast<double>(ids);
}

// One reduction as the pipeline runs it: with the shared receiver index
// (built inside the timing), or — `with_index` false — the ge rules on their
// own per-stream lists (the path notify mode and out-of-order tables take).
void BM_Reduction(benchmark::State& state, bool exact, bool with_index = true) {
  const int k = static_cast<int>(state.range(0));
  const Plan& plan = InsertedPlan(k);
  size_t kept = 0;
  for (auto _ : state) {
    events::SyncView view(plan, false);
    events::ActivationInfo act = events::ComputeActivation(plan.model, view);
    std::optional<events::ReceiverIndex> index;
    if (with_index) index.emplace(events::BuildReceiverIndex(plan, view, act));
    auto r = exact ? (index ? events::ExactReduction(plan, view, *index) : events::ExactReduction(plan, view, act))
                   : events::GeReduction(plan, view, act, index ? &*index : nullptr);
    kept = static_cast<size_t>(std::count(r.begin(), r.end(), events::Removal::kKeep));
    benchmark::DoNotOptimize(r.data());
  }
  state.counters["naive"] = static_cast<double>(plan.events.events.size());
  state.counters[exact ? "exact" : "ge"] = static_cast<double>(kept);
}

void BM_Exact(benchmark::State& state) { BM_Reduction(state, true); }
void BM_Ge(benchmark::State& state) { BM_Reduction(state, false); }
void BM_GeWithoutIndex(benchmark::State& state) { BM_Reduction(state, false, false); }

BENCHMARK(BM_Insertion)->Arg(2)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Stage)->Arg(2)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Multiplexing)->Arg(10000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Exact)->Arg(2)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_Ge)->Arg(2)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_GeWithoutIndex)->Arg(2)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
}  // namespace npuplan

BENCHMARK_MAIN();
