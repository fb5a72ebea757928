// The dynamic-shape partition pass: the whole-graph decisions (PartitionModel,
// in GE's Partition() order), then for each compile graph that is cut the
// clustering (cluster_merge.h), the frames (frame_builder.h) and a re-sort.
#include "npuplan/partition/dynamic_shape_partition.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "npuplan/ir/topo_sort.h"
#include "npuplan/partition/cluster_merge.h"
#include "npuplan/partition/frame_builder.h"
#include "npuplan/partition/partition_internal.h"
#include "npuplan/partition/unknown_shape_graphs.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace partition {
namespace {

// A root-level bool attribute, false when absent; an error when not a bool.
absl::StatusOr<bool> GraphFlag(const Graph& g, std::string_view key) {
  const AttrValue* v = FindAttr(g.attrs, key);
  if (v == nullptr) return false;
  if (const bool* b = v->as<bool>()) return *b;
  return Bad(StrCat("graph '", g.name, "': attribute ", key, " must be a bool, got ", v->TypeName()));
}

// Cuts one compile graph: clusters, merges, frames. Its counters reach
// `stats` once, when it is done.
absl::Status PartitionGraph(Model& model, GraphId graph, const MarkResult& marks,
                            const PartitionOptions& options, DecisionLog* log, Statistics* stats,
                            PartitionResult& out) {
  PassCounters counts(stats);
  NPUPLAN_ASSIGN_OR_RETURN(GraphClusters clusters,
                           MergeClusters(model, graph, marks, options, log, counts));
  BuildFrames(model, graph, clusters, marks, log, counts, out);
  counts.Flush();
  return absl::OkStatus();
}

bool OnlyDataAndNetOutputWithUnknownTensor(const Model& m, const Graph& g) {
  bool unknown_tensor = false;
  for (NodeId id : g.nodes) {
    const Node& n = m.node(id);
    if (!IsDataType(n.type) && n.type != "NetOutput") return false;
    for (const TensorDesc& t : n.outputs) unknown_tensor |= t.IsDynamic();
    for (const OutputRef& in : n.inputs) unknown_tensor |= m.node(in.node).outputs[in.index].IsDynamic();
  }
  return unknown_tensor;
}

void Decide(PartitionResult& out, PartitionDecision decision, std::string reason, DecisionLog* log,
            Statistics* stats) {
  out.ran = true;
  out.decision = decision;
  out.reason = std::move(reason);
  if (stats) stats->Add(kPass, StrCat("decision_", PartitionDecisionName(decision)));
  if (log && log->enabled()) {
    log->Record(kPass, "PartitionDecision", "", Field("decision", PartitionDecisionName(decision)),
                Field("reason", out.reason));
  }
}

// Whole graph dynamic: every graph is flagged, nothing is cut (GE SetRootGraphUnknown).
void MarkWholeGraphDynamic(Model& model) {
  for (GraphId g : model.GraphsPreOrder()) model.graph(g).attrs["_is_unknown_shape"] = true;
  model.root().attrs["_dynamic_shape_partitioned"] = false;
}

// GE GetMultiBatchIndependCompileGraphs: with root attr _enable_dynamic_batch,
// the branches of every root Case with _insert_by_mbatch, in node order.
absl::StatusOr<std::vector<GraphId>> MultiBatchBranches(const Model& model) {
  std::vector<GraphId> branches;
  NPUPLAN_ASSIGN_OR_RETURN(bool enabled, GraphFlag(model.root(), "_enable_dynamic_batch"));
  if (!enabled) return branches;
  for (NodeId id : model.root().nodes) {
    const Node& n = model.node(id);
    if (n.type != "Case") continue;
    const AttrValue* v = FindAttr(n.attrs, "_insert_by_mbatch");
    if (v == nullptr) continue;
    const bool* b = v->as<bool>();
    if (b == nullptr) {
      return Bad(StrCat("node '", n.name, "': attribute _insert_by_mbatch must be a bool, got ", v->TypeName()));
    }
    if (*b) branches.insert(branches.end(), n.subgraphs.begin(), n.subgraphs.end());
  }
  return branches;
}

// GE CtrlEdgeTransfer, run once before a compile graph is cut: in every
// subgraph (not the root), a Const/Constant with incoming control edges loses
// them and each of its consumers (data or control) gets them instead. The
// Const then has no inputs and becomes an input node of its graph's partition.
void TransferConstControlEdges(Model& model, DecisionLog* log, Statistics* stats) {
  const bool logging = log != nullptr && log->enabled();
  int64_t moved = 0;
  std::vector<std::vector<NodeId>> consumers;  // per NodeId; sized at the first graph that needs it
  for (GraphId g : model.GraphsPreOrder()) {
    if (g == kRootGraph) continue;
    const Graph& graph = model.graph(g);
    bool any = false;
    for (NodeId id : graph.nodes) {
      const Node& n = model.node(id);
      any |= IsConstType(n.type) && !n.control_inputs.empty();
    }
    if (!any) continue;
    if (consumers.empty()) consumers.resize(model.num_nodes());
    // Consumers of each Const, in node order, deduplicated.
    for (NodeId id : graph.nodes) {
      const Node& n = model.node(id);
      auto note = [&](NodeId p) {
        if (!IsConstType(model.node(p).type)) return;
        std::vector<NodeId>& c = consumers[p.index()];
        if (c.empty() || c.back() != id) c.push_back(id);
      };
      for (const OutputRef& in : n.inputs) note(in.node);
      for (NodeId p : n.control_inputs) note(p);
    }
    for (NodeId id : graph.nodes) {
      Node& c = model.node(id);
      if (!IsConstType(c.type) || c.control_inputs.empty()) continue;
      std::vector<NodeId> preds = std::move(c.control_inputs);
      model.node(id).control_inputs.clear();
      for (NodeId o : consumers[id.index()]) {
        std::vector<NodeId>& ctrl = model.node(o).control_inputs;
        for (NodeId p : preds) {
          if (p == o || std::find(ctrl.begin(), ctrl.end(), p) != ctrl.end()) continue;
          ctrl.push_back(p);
          ++moved;
          if (logging) {
            log->Record(kPass, "CtrlEdgeTransferred", "", Field("const", model.node(id).name),
                        Field("from", model.node(p).name), Field("to", model.node(o).name));
          }
        }
      }
    }
  }
  if (stats && moved > 0) stats->Add(kPass, "ctrl_edges_transferred", moved);
}

absl::Status SortPartitioned(Model& model, const PartitionOptions& options) {
  absl::Status sorted = TopologicalSort(model, options.topo_mode);
  if (!sorted.ok()) {
    return absl::InternalError(StrCat("[", kPass, "] the partitioned graph is not acyclic: ", sorted.message()));
  }
  return absl::OkStatus();
}

// The root compile graph's decision (GE IsGraphNeedUnknownShapePartition) and cut.
absl::Status PartitionRoot(Model& model, const MarkResult& marks, const PartitionOptions& options, DecisionLog* log,
                           Statistics* stats, PartitionResult& out) {
  Graph& root = model.root();
  NPUPLAN_ASSIGN_OR_RETURN(bool no_need, GraphFlag(root, "_no_need_dynamic_shape_partition"));
  if (no_need) {
    Decide(out, PartitionDecision::kSkipped, "graph attribute _no_need_dynamic_shape_partition",
           log, stats);
    return absl::OkStatus();
  }
  // Does the graph enter the partition flow (P1 a–d, P2)? GE also enters it
  // when the only no-tiling nodes are Data-like nodes and NetOutputs.
  const bool io_only_no_tiling = marks.no_tiling_count > 0 && marks.no_tiling_op_count == 0;
  if (marks.trigger_count == 0 && !io_only_no_tiling) {
    // Read by the marking's walk over the nodes (MarkResult::root_special).
    const bool special = marks.root_special;
    const int64_t known = static_cast<int64_t>(root.nodes.size());
    if (known < options.host_scheduling_threshold && !special) {
      MarkWholeGraphDynamic(model);
      Decide(
          out, PartitionDecision::kWholeDynamic,
          StrCat("host scheduling: ", known, " known nodes < ge.exec.hostSchedulingMaxThreshold=",
                 options.host_scheduling_threshold),
          log, stats);
      return absl::OkStatus();
    }
    for (size_t i = 0; i < model.num_nodes(); ++i) {
      if (marks.no_tiling[i]) model.node(NodeId(static_cast<int32_t>(i))).attrs["_op_no_tiling"] = true;
    }
    root.attrs["_dynamic_shape_partitioned"] = false;
    Decide(out, PartitionDecision::kStatic,
           marks.no_tiling_count > 0 ? "dynamic-shape nodes all run no-tiling; no (a)-(d) node"
                                     : "no node hits rules (a)-(d)",
           log, stats);
    return absl::OkStatus();
  }
  NPUPLAN_ASSIGN_OR_RETURN(bool single_op, GraphFlag(root, "_single_op_scene"));
  if (single_op) {
    MarkWholeGraphDynamic(model);
    Decide(out, PartitionDecision::kWholeDynamic,
           "single-op scene (graph attribute _single_op_scene)", log, stats);
    return absl::OkStatus();
  }
  // Partition the root.
  root.attrs["_dynamic_shape_partitioned"] = true;
  TransferConstControlEdges(model, log, stats);
  NPUPLAN_RETURN_IF_ERROR(PartitionGraph(model, kRootGraph, marks, options, log, stats, out));
  NPUPLAN_RETURN_IF_ERROR(SortPartitioned(model, options));
  Decide(out, PartitionDecision::kPartitioned,
         marks.trigger_count > 0
             ? StrCat(marks.trigger_count, " node(s) hit rules (a)-(d)")
             : "dynamic-shape Data/NetOutput nodes with no other no-tiling node",
         log, stats);
  return absl::OkStatus();
}

}  // namespace

absl::Status PartitionModel(Model& model, const MarkResult& marks, const PartitionOptions& options,
                            DecisionLog* log, Statistics* stats, PartitionResult& out) {
  out.subgraphs.clear();
  out.cluster_counts.clear();
  Graph& root = model.root();
  // 1. Whole-graph shortcuts (GE: before any per-graph work).
  if (options.host_exec) {
    MarkWholeGraphDynamic(model);
    Decide(out, PartitionDecision::kWholeDynamic, "ge.exec.placement=HOST (host exec)", log, stats);
    return absl::OkStatus();
  }
  if (options.lower_limit == -1) {
    MarkWholeGraphDynamic(model);
    Decide(out, PartitionDecision::kWholeDynamic, "ge.exec.static_model_ops_lower_limit=-1", log,
           stats);
    return absl::OkStatus();
  }
  if (OnlyDataAndNetOutputWithUnknownTensor(model, root)) {
    MarkWholeGraphDynamic(model);
    Decide(out, PartitionDecision::kWholeDynamic,
           "only Data/NetOutput nodes with an unknown tensor", log, stats);
    return absl::OkStatus();
  }
  NPUPLAN_ASSIGN_OR_RETURN(std::vector<GraphId> branches, MultiBatchBranches(model));
  NPUPLAN_RETURN_IF_ERROR(PartitionRoot(model, marks, options, log, stats, out));
  if (out.decision == PartitionDecision::kWholeDynamic || branches.empty()) return absl::OkStatus();
  // 2. Multi-batch Case branches: compile graphs of their own (GE), each cut
  //    when it holds an (a)-(d) node itself.
  bool cut = out.decision == PartitionDecision::kPartitioned;
  int64_t cut_branches = 0;
  for (GraphId b : branches) {
    Graph& branch = model.graph(b);
    PartitionDecision decision = PartitionDecision::kStatic;
    std::string reason = "no node hits rules (a)-(d)";
    int64_t triggers = 0;
    for (NodeId id : branch.nodes) triggers += EntersPartitionFlow(marks.reason[id.index()]) ? 1 : 0;
    NPUPLAN_ASSIGN_OR_RETURN(bool no_need, GraphFlag(branch, "_no_need_dynamic_shape_partition"));
    if (no_need) {
      decision = PartitionDecision::kSkipped;
      reason = "graph attribute _no_need_dynamic_shape_partition";
    } else if (triggers > 0) {
      decision = PartitionDecision::kPartitioned;
      reason = StrCat(triggers, " node(s) hit rules (a)-(d)");
      if (!cut) TransferConstControlEdges(model, log, stats);
      cut = true;
      ++cut_branches;
      model.graph(b).attrs["_dynamic_shape_partitioned"] = true;
      NPUPLAN_RETURN_IF_ERROR(PartitionGraph(model, b, marks, options, log, stats, out));
    } else {
      model.graph(b).attrs["_dynamic_shape_partitioned"] = false;
    }
    if (stats) stats->Add(kPass, StrCat("branch_decision_", PartitionDecisionName(decision)));
    if (log && log->enabled()) {
      log->Record(kPass, "PartitionDecision", "", Field("graph", model.graph(b).name),
                  Field("decision", PartitionDecisionName(decision)), Field("reason", reason));
    }
  }
  if (cut_branches > 0) {
    if (out.decision != PartitionDecision::kPartitioned) {
      out.decision = PartitionDecision::kPartitioned;
      out.reason = StrCat("root: ", out.reason, "; ", cut_branches, " multi-batch branch(es) partitioned");
    } else {
      out.reason = StrCat(out.reason, "; ", cut_branches, " multi-batch branch(es) partitioned");
    }
    NPUPLAN_RETURN_IF_ERROR(SortPartitioned(model, options));
  }
  return absl::OkStatus();
}

}  // namespace partition

absl::StatusOr<bool> DynamicShapePartition::Run(Plan& plan, PassContext& ctx) {
  NPUPLAN_ASSIGN_OR_RETURN(partition::PartitionOptions options, partition::ReadPartitionOptions(ctx.options));
  // Marks are recomputed (one linear pass, deterministic); logged only if the
  // marking pass did not run before. What that pass stores in plan.partition
  // (names → reason texts, no-tiling names) does not determine them: a
  // no-tiling node made unknown by its subgraph keeps its no-tiling bit, which
  // the decision reads (test NoTilingCallWithAnUnknownSubgraphKeepsTheGraphStatic).
  const bool log_marks = !plan.partition.marked;
  NPUPLAN_ASSIGN_OR_RETURN(
      partition::MarkResult marks,
      partition::ComputeUnknownShapeMarks(plan.model, options, log_marks ? &ctx.log : nullptr,
                                          log_marks ? &ctx.stats : nullptr));
  NPUPLAN_RETURN_IF_ERROR(partition::PartitionModel(plan.model, marks, options, &ctx.log, &ctx.stats, plan.partition));
  plan.partition.unknown_shape_graphs = partition::ComputeUnknownShapeGraphs(plan);
  plan.EnsureNodeVectors();
  return plan.partition.decision != PartitionDecision::kSkipped;
}

}  // namespace npuplan
