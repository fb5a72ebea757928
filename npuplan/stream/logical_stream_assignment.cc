// The logical stream driver, in four steps (GE's LogicalStreamAllocator::Assign):
//   1. read the options into one AssignContext;
//   2. DoAssign the root graph, then every subgraph in pre-order;
//   3. RefreshContinuousStreams over all nodes;
//   4. fill plan.streams (one LogicalStream per id, user labels).
#include "npuplan/stream/logical_stream_assignment.h"

#include <memory>

#include "npuplan/stream/all_reduce_parallel_pass.h"
#include "npuplan/stream/assign_by_dependency_pass.h"
#include "npuplan/stream/assign_by_label_pass.h"
#include "npuplan/stream/independent_stream_pass.h"
#include "npuplan/stream/node_stream_update_pass.h"
#include "npuplan/stream/optimize_ineffective_multi_stream_pass.h"
#include "npuplan/stream/refresh_continuous_streams.h"
#include "npuplan/stream/single_stream_pass.h"
#include "npuplan/stream/update_for_mde_group_pass.h"
#include "npuplan/stream/update_for_parallel_group_pass.h"
#include "npuplan/stream/update_for_skipped_engine_pass.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace stream {

bool IsUnknownShapeGraph(const Plan& plan, GraphId g) {
  const Model& m = plan.model;
  const Graph& graph = m.graph(g);
  if (graph.IsRoot()) {
    return plan.partition.ran &&
           (plan.partition.decision == "whole-dynamic" || plan.partition.decision == "partitioned");
  }
  for (const PartitionSubgraph& ps : plan.partition.subgraphs) {
    if (ps.name == graph.name) return ps.kind != "known";
  }
  if (auto flag = GetBoolAttr(m.node(graph.parent_node).attrs, kAttrIsUnknownShape)) return *flag;
  return IsUnknownShapeGraph(plan, graph.parent_graph);
}

namespace {

std::vector<std::unique_ptr<LogicalStreamPass>> BuildChain(bool single_stream) {
  std::vector<std::unique_ptr<LogicalStreamPass>> chain;
  if (single_stream) {
    chain.push_back(std::make_unique<SingleStreamPass>());
    chain.push_back(std::make_unique<NodeStreamUpdatePass>());
    chain.push_back(std::make_unique<UpdateForSkippedEnginePass>());
    return chain;
  }
  chain.push_back(std::make_unique<UpdateForMdeGroupPass>());
  chain.push_back(std::make_unique<AssignByLabelPass>());
  chain.push_back(std::make_unique<IndependentStreamPass>());
  chain.push_back(std::make_unique<AssignByDependencyPass>());
  chain.push_back(std::make_unique<NodeStreamUpdatePass>());
  chain.push_back(std::make_unique<UpdateForParallelGroupPass>());
  chain.push_back(std::make_unique<AllReduceParallelPass>());
  chain.push_back(std::make_unique<UpdateForSkippedEnginePass>());
  // GE's RunOptimizeByTopoPasses (multi-stream only).
  chain.push_back(std::make_unique<OptimizeIneffectiveMultiStreamPass>());
  return chain;
}

// GE's DoAssign for one graph.
absl::Status DoAssign(const Plan& plan, GraphId g, AssignContext& ctx, int64_t& unknown_stream) {
  Model& m = ctx.model;
  const Graph& graph = m.graph(g);
  int64_t parent_stream = -1;
  bool owner_unknown = false;
  if (graph.parent_node.valid()) {
    parent_stream = m.node(graph.parent_node).stream_id;
    owner_unknown = IsUnknownShapeGraph(plan, graph.parent_graph);
  }
  if (IsUnknownShapeGraph(plan, g)) {
    // TODO(#5): the dynamic-shape allocator owns unknown-shape graphs.
    int64_t s = parent_stream;
    if (s < 0) {
      if (unknown_stream < 0) unknown_stream = ctx.next_stream++;
      s = unknown_stream;
    }
    for (NodeId id : graph.nodes) m.node(id).stream_id = s;
    ctx.log.Record(LogicalStreamAssignment::kName, "UnknownShapeSingleStream", "", Field("graph", graph.name),
                   Field("stream", s));
    return absl::OkStatus();
  }
  GraphState gs;
  absl::Status init = InitGraphState(gs, m, g, ctx, owner_unknown ? -1 : parent_stream, owner_unknown);
  if (!init.ok()) {
    return absl::InvalidArgumentError(StrCat("[", LogicalStreamAssignment::kName, "] ", std::string(init.message())));
  }
  ctx.log.Record(LogicalStreamAssignment::kName, "EnginePartition", "", Field("graph", graph.name),
                 Field("subgraphs", gs.partition.subgraphs.size()));
  ctx.stats.Add(LogicalStreamAssignment::kName, "engine_subgraphs", static_cast<int64_t>(gs.partition.subgraphs.size()));
  for (auto& pass : BuildChain(ctx.enable_single_stream)) {
    auto changed = pass->Run(gs, ctx);
    if (!changed.ok()) {
      std::string msg(changed.status().message());
      if (msg.rfind("[", 0) != 0) msg = StrCat("[", pass->name(), "] ", msg);
      return absl::Status(changed.status().code(), StrCat(msg, " (graph '", graph.name, "')"));
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace stream

absl::StatusOr<bool> LogicalStreamAssignment::Run(Plan& plan, PassContext& pctx) {
  using namespace stream;  // NOLINT
  Model& m = plan.model;
  // 1. Options.
  Adjacency adjacency(m);
  AssignContext ctx(m, pctx.options, pctx.log, pctx.stats);
  ctx.adjacency = &adjacency;
  ctx.enable_single_stream = pctx.options.Get("ge.enableSingleStream") == "true";
  ctx.enable_hcom_parallel = pctx.options.GetBool("ge.hcomParallel");
  ctx.memory_priority = pctx.options.Get("ge.exec.memoryOptimizationPolicy") == "MemoryPriority";
  NPUPLAN_ASSIGN_OR_RETURN(ctx.max_parallel, ParseStreamMaxParallelNum(pctx.options.Get("ge.streamMaxParallelNum")));
  for (const auto& [engine, n] : ctx.max_parallel) {
    if (m.engine_table.Find(engine) == nullptr) {
      pctx.log.Record(kName, "UnknownEngineInOption", "", Field("option", "ge.streamMaxParallelNum"),
                      Field("engine", engine));
    }
  }
  for (size_t i = 0; i < m.num_nodes(); ++i) m.node(NodeId(static_cast<int32_t>(i))).stream_id = -1;

  // 2. DoAssign over the root and every subgraph.
  int64_t unknown_stream = -1;
  for (GraphId g : m.GraphsPreOrder()) {
    NPUPLAN_RETURN_IF_ERROR(DoAssign(plan, g, ctx, unknown_stream));
  }
  // TODO(#5): custom "AfterAssignLogicStream" passes (auto multi-stream) run here.

  // 3. Continuity.
  const int64_t count = RefreshContinuousStreams::Run(m, ctx.next_stream, &pctx.log);

  // 4. Plan fields.
  StreamResult& s = plan.streams;
  s = StreamResult{};
  s.logical = count;
  s.physical = count;
  s.mode = ctx.enable_single_stream ? "single" : "multi";
  s.streams.resize(count);
  for (int64_t i = 0; i < count; ++i) s.streams[i].id = i;
  for (GraphId g : m.GraphsPreOrder()) {
    for (NodeId id : m.graph(g).nodes) {
      const Node& n = m.node(id);
      if (n.stream_id < 0 || !s.streams[n.stream_id].user_label.empty()) continue;
      s.streams[n.stream_id].user_label = GetStringAttr(n.attrs, kAttrUserStreamLabel).value_or("");
    }
  }
  pctx.stats.Set(kName, "logical_streams", count);
  pctx.log.Record(kName, "LogicalStreamsAssigned", "", Field("mode", s.mode), Field("streams", count));
  if (pctx.instrumentation.verify_each) {
    NPUPLAN_RETURN_IF_ERROR(VerifyStreamIdsContinuous(m));
  }
  return true;
}

}  // namespace npuplan
