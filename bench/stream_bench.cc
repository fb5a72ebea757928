// Logical stream allocation on generated transformer-like graphs (100k / 1M
// nodes): engine partition alone, and the whole logical-stream-assignment
// (partition + GE's pass chain + continuity refresh).
//
//   build/bin/stream_bench --benchmark_filter=. --benchmark_min_time=1
//
// Each layer (16 nodes): Q/K/V MatMuls with Const weights, a VectorEngine
// Softmax, AI-core BatchMatMuls, an AI CPU DropOutGenMask, a fused HCCL
// AllReduce whose result joins the next layer by a control edge, a labelled
// node every 8th layer, and a residual Add.
#include <benchmark/benchmark.h>

#include <string>

#include "npuplan/gen/graph_generator.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/pass/pass.h"
#include "npuplan/stream/engine_partition.h"
#include "npuplan/stream/logical_stream_assignment.h"

namespace npuplan {
namespace {

Model MakeLayeredGraph(int64_t target_nodes) {
  Model m;
  m.set_name("bench");
  const TensorDesc t{{1, 1024}, "float16"};
  auto add = [&](const std::string& name, const std::string& type, const std::string& engine,
                 std::vector<NodeId> inputs, std::vector<NodeId> control = {}) {
    Node n;
    n.name = name;
    n.type = type;
    n.engine = engine;
    for (NodeId in : inputs) n.inputs.push_back({in, 0});
    n.control_inputs = std::move(control);
    n.outputs = {t};
    return m.AddNode(kRootGraph, std::move(n));
  };
  NodeId x = add("x", "Data", "DNN_VM_GE_LOCAL", {});
  NodeId pending_ar;
  for (int64_t l = 0; m.num_nodes() < static_cast<size_t>(target_nodes); ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    std::vector<NodeId> qkv;
    for (const char* w : {"q", "k", "v"}) {
      NodeId c = add(p + "w" + w, "Const", "DNN_VM_GE_LOCAL", {});
      qkv.push_back(add(p + w, "MatMul", "AIcoreEngine", {x, c}));
    }
    NodeId s = add(p + "s", "BatchMatMul", "AIcoreEngine", {qkv[0], qkv[1]});
    NodeId sm = add(p + "softmax", "Softmax", "VectorEngine", {s});
    NodeId o = add(p + "o", "BatchMatMul", "AIcoreEngine", {sm, qkv[2]});
    NodeId mask = add(p + "mask", "DropOutGenMask", "DNN_VM_AICPU", {x});
    NodeId d = add(p + "drop", "DropOutDoMask", "AIcoreEngine", {o, mask});
    std::vector<NodeId> ctrl;
    if (pending_ar.valid()) ctrl.push_back(pending_ar);
    NodeId y = add(p + "add", "Add", "AIcoreEngine", {d, x}, ctrl);
    Node ar;
    ar.name = p + "allreduce";
    ar.type = "HcomAllReduce";
    ar.engine = "DNN_HCCL";
    ar.inputs = {{d, 0}};
    ar.outputs = {t};
    ar.attrs["fusion"] = int64_t{1};
    pending_ar = m.AddNode(kRootGraph, std::move(ar));
    NodeId g = add(p + "gelu", "Gelu", "VectorEngine", {y});
    NodeId f = add(p + "ffn", "MatMul", "AIcoreEngine", {g});
    if (l % 8 == 7) m.node(f).attrs["_stream_label"] = std::string("ffn");
    x = add(p + "res", "Add", "AIcoreEngine", {f, y});
  }
  add("out", "NetOutput", "DNN_VM_GE_LOCAL", {x, pending_ar});
  (void)TopologicalSort(m);
  return m;
}

void BM_EnginePartition(benchmark::State& state) {
  Model m = MakeLayeredGraph(state.range(0));
  for (auto _ : state) {
    auto p = stream::PartitionByEngine(m, kRootGraph);
    benchmark::DoNotOptimize(p.subgraphs.size());
  }
  state.counters["nodes"] = static_cast<double>(m.num_nodes());
  state.SetItemsProcessed(state.iterations() * m.num_nodes());
}

// `npuplan gen --random-dag --nodes N`: fan-in 1..3, mostly local inputs
// with 1/8 uniform long skips, an HCCL node every 97th; the long skips make
// the merge's second-path test the partition's largest step.
void BM_EnginePartitionRandomDag(benchmark::State& state) {
  Model m = GenerateRandomDag(state.range(0), 3, /*seed=*/1, /*hccl_every=*/97);
  int64_t reads = 0;
  for (auto _ : state) {
    auto p = stream::PartitionByEngine(m, kRootGraph);
    reads = p.second_path_reads;
    benchmark::DoNotOptimize(p.subgraphs.size());
  }
  state.counters["nodes"] = static_cast<double>(m.num_nodes());
  state.counters["reads_per_node"] =
      static_cast<double>(reads) / static_cast<double>(m.num_nodes());
  state.SetItemsProcessed(state.iterations() * m.num_nodes());
}

void BM_LogicalStreamAssignment(benchmark::State& state) {
  Plan plan;
  plan.model = MakeLayeredGraph(state.range(0));
  plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  CompileOptions options;
  if (state.range(1)) options.Set("ge.hcomParallel", "1");
  DecisionLog log;
  Statistics stats;
  PassContext ctx{options, log, stats};
  LogicalStreamAssignment pass;
  for (auto _ : state) {
    auto r = pass.Run(plan, ctx);
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
  }
  state.counters["nodes"] = static_cast<double>(plan.model.num_nodes());
  state.counters["streams"] = static_cast<double>(plan.streams.logical);
  state.SetItemsProcessed(state.iterations() * plan.model.num_nodes());
}

BENCHMARK(BM_EnginePartition)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EnginePartitionRandomDag)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(300000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LogicalStreamAssignment)
    ->Args({100000, 0})->Args({1000000, 0})->Args({1000000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace npuplan

BENCHMARK_MAIN();
