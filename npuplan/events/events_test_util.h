// Test helpers of the events module (header-only, used by *_test.cc and the
// benchmark only): plans from inline graphs whose `_test_stream` attribute
// gives the logical stream, pipelines of events passes, random DAGs.
#ifndef NPUPLAN_EVENTS_EVENTS_TEST_UTIL_H_
#define NPUPLAN_EVENTS_EVENTS_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/events/event_id_allocation.h"
#include "npuplan/events/event_minimization.h"
#include "npuplan/events/event_reuse.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/pass/pass.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"

namespace npuplan::events::testing {

// Moves `_test_stream` (int) into Node::stream_id and `_test_attached` (int
// list) into attached_stream_ids, and marks logical streams established.
// An AI Core "Add" on `_test_stream` `stream`, fed by `input` when given.
inline Node Op(std::string name, int64_t stream, NodeId input = {}) {
  Node n;
  n.name = std::move(name);
  n.type = "Add";
  n.engine = "AIcoreEngine";
  n.outputs.push_back(TensorDesc{{1}, "float32"});
  if (input.valid()) n.inputs.push_back({input, 0});
  n.attrs["_test_stream"] = stream;
  return n;
}

inline Plan PlanFromModel(Model model) {
  Plan plan;
  plan.model = std::move(model);
  const npuplan::testing::TestStreamIds ids = npuplan::testing::ApplyTestStreams(plan.model);
  plan.streams.logical = ids.max_main + 1;
  plan.established = IrProperty::kTopoSorted | IrProperty::kLogicalStreams;
  // Attached ids follow the main ones, as assign-attached-stream-pass numbers them.
  for (int64_t a = ids.max_main + 1; a <= ids.max_any; ++a) plan.streams.attached.push_back(a);
  if (!plan.streams.attached.empty())
    plan.established = plan.established | IrProperty::kAttachedStreams;
  plan.EnsureNodeVectors();
  return plan;
}

struct RunResult {
  DecisionLog log{true};
  Statistics stats;
};

// Runs `passes` in order with verify-each on; options are --option overrides.
inline absl::Status RunPasses(Plan& plan, std::vector<std::unique_ptr<Pass>> passes,
                              const std::map<std::string, std::string>& options = {},
                              RunResult* result = nullptr) {
  CompileOptions opts;
  for (const auto& [k, v] : options) opts.Set(k, v);
  NPUPLAN_RETURN_IF_ERROR(opts.Validate());
  RunResult local;
  RunResult& r = result ? *result : local;
  PassContext ctx{opts, r.log, r.stats};
  ctx.instrumentation.verify_each = true;
  PassPipeline pipeline("test");
  for (auto& p : passes) pipeline.AddPass(std::move(p));
  return pipeline.Run(plan, ctx).status();
}

template <typename... P>
std::vector<std::unique_ptr<Pass>> Passes() {
  std::vector<std::unique_ptr<Pass>> v;
  (v.push_back(std::make_unique<P>()), ...);
  return v;
}

// Every events pass, task-count-assignment to sync-node-generation (the
// compiler's order), with verify-each on.
inline absl::Status RunEventsPasses(Plan& plan, RunResult* result,
                                    const std::map<std::string, std::string>& options = {}) {
  return RunPasses(plan,
                   Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization,
                          EventReuse, PhysicalStreamSplit, StreamActivation, EventMinimization,
                          EventIdAllocation, SyncNodeGeneration>(),
                   options, result);
}

// A random layered DAG: `n` nodes in the root graph, each with up to
// `max_inputs` inputs from the previous `window` nodes, streams uniform in
// [0, k). Deterministic for a seed.
inline Plan RandomPlan(uint32_t seed, int n, int k, int max_inputs = 3, int window = 64) {
  std::mt19937 rng(seed);
  Model model;
  model.set_name("rand");
  std::vector<NodeId> ids;
  ids.reserve(n);
  for (int i = 0; i < n; ++i) {
    Node node;
    node.name = StrCat("n", i);
    node.type = i == 0 ? "Data" : "Add";
    node.engine = i == 0 ? "DNN_VM_GE_LOCAL" : "AIcoreEngine";
    node.outputs.push_back(TensorDesc{{1}, "float32"});
    if (i > 0) {
      int ins = 1 + static_cast<int>(rng() % max_inputs);
      for (int j = 0; j < ins; ++j) {
        int lo = std::max(0, i - window);
        int src = lo + static_cast<int>(rng() % (i - lo));
        if (j > 0 && rng() % 4 == 0) {
          node.control_inputs.push_back(ids[src]);
        } else {
          node.inputs.push_back(OutputRef{ids[src], 0});
        }
      }
    }
    node.stream_id = static_cast<int64_t>(rng() % k);
    ids.push_back(model.AddNode(kRootGraph, std::move(node)));
  }
  // Compact the stream ids (a small graph may leave a stream empty).
  std::map<int64_t, int64_t> used;
  for (NodeId id : ids) used[model.node(id).stream_id] = 0;
  int64_t next = 0;
  for (auto& [s, v] : used) v = next++;
  for (NodeId id : ids) model.node(id).stream_id = used[model.node(id).stream_id];
  RenumberTopoIds(model);
  Plan plan = PlanFromModel(std::move(model));
  return plan;
}

// s0: a0 → a1 → a2, s1: x with a1 → x → a2. At a task limit of 40, a2 (5 + 2
// for its Recv, 18 + 27 reserved > 40) opens physical stream 2 and the split
// adds a1 → a2, which a1 → x → a2 already orders.
inline Plan SplitImpliedByEvents() {
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "a0", "type": "Add", "attrs": {"_test_stream": 0, "_node_sqe_num": 5}, "outputs": [{"shape": [1]}]},
    {"name": "a1", "type": "Add", "inputs": ["a0:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 5}, "outputs": [{"shape": [1]}]},
    {"name": "x", "type": "Add", "inputs": ["a1:0"], "attrs": {"_test_stream": 1, "_node_sqe_num": 1}, "outputs": [{"shape": [1]}]},
    {"name": "a2", "type": "Add", "inputs": ["a1:0", "x:0"], "attrs": {"_test_stream": 0, "_node_sqe_num": 5}, "outputs": [{"shape": [1]}]}]})json");
  return PlanFromModel(std::move(m).value());
}

// An If whose branches share stream 2: x (s0) → p: If(then: t1 (s1) → to
// (s2); else: e1 (s2) → eo (s2)) → y (s0). Both branches read x. One
// execution holding every branch orders x before e1 through t1 → to and
// stream 2's queue; a run takes one branch, so when else runs nothing but an
// event of its own orders x before e1 (property seed 17113).
inline Plan BranchesSharingAStream() {
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "p", "type": "If", "inputs": ["x:0", "x:0"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["p:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [
      {"name": "then", "parent": "p", "nodes": [
        {"name": "td", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
        {"name": "t1", "type": "Add", "inputs": ["td:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
        {"name": "to", "type": "NetOutput", "inputs": ["t1:0"], "attrs": {"_test_stream": 2}}]},
      {"name": "else", "parent": "p", "nodes": [
        {"name": "ed", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
        {"name": "e1", "type": "Add", "inputs": ["ed:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
        {"name": "eo", "type": "NetOutput", "inputs": ["e1:0"], "attrs": {"_test_stream": 2}}]}]})json");
  return PlanFromModel(std::move(m).value());
}

// An If p on stream 1 read by y (s0); only its then branch runs on stream 2:
// a (s1) → p: If(then: t1 (s1) → t2 (s2) → to (s2); else: e1 (s3) → eo
// (s3)) → y (s0). After the gates, p → t1 → t2 → to → p's exit gate on
// stream 2 → y orders p before y only when then runs: when else runs the
// exit gate follows nothing of p (property seed 1442).
inline Plan OwnerOrderedThroughOneBranch() {
  absl::StatusOr<Model> m = npuplan::testing::ParseVerifiedGraph(R"json({"name": "g", "nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "p", "type": "If", "inputs": ["a:0", "a:0"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["p:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [
      {"name": "then", "parent": "p", "nodes": [
        {"name": "td", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
        {"name": "t1", "type": "Add", "inputs": ["td:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
        {"name": "t2", "type": "Add", "inputs": ["t1:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
        {"name": "to", "type": "NetOutput", "inputs": ["t2:0"], "attrs": {"_test_stream": 2}}]},
      {"name": "else", "parent": "p", "nodes": [
        {"name": "ed", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [1]}]},
        {"name": "e1", "type": "Add", "inputs": ["ed:0"], "attrs": {"_test_stream": 3}, "outputs": [{"shape": [1]}]},
        {"name": "eo", "type": "NetOutput", "inputs": ["e1:0"], "attrs": {"_test_stream": 3}}]}]})json");
  return PlanFromModel(std::move(m).value());
}

// Whether the plan has an event from `from` to `to` (by node name).
inline bool HasEvent(const Plan& plan, std::string_view from, std::string_view to) {
  for (const SyncEvent& e : plan.events.events) {
    if (plan.model.node(e.send).name == from && plan.model.node(e.recv).name == to) return true;
  }
  return false;
}

}  // namespace npuplan::events::testing

#endif  // NPUPLAN_EVENTS_EVENTS_TEST_UTIL_H_
