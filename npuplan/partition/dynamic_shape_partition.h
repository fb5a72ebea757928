// dynamic-shape-partition: cuts the root graph into static (known) and
// dynamic (unknown) parts, each called from the root through a
// PartitionedCall node (SPEC P1–P7; ge-reference §7 DynamicShapePartitioner).
//
//   1. Whole-graph decisions, in GE's order: ge.exec.placement=HOST (host
//      exec), ge.exec.static_model_ops_lower_limit = -1 or a root with only
//      Data/NetOutput nodes and an unknown tensor →
//      whole graph dynamic; root attr `_no_need_dynamic_shape_partition` →
//      skipped; no (a)–(d) node → static (P2), unless fewer root nodes than
//      ge.exec.hostSchedulingMaxThreshold and no control-flow node (→ whole
//      dynamic, host scheduling); root attr `_single_op_scene` → whole dynamic.
//      With root attr `_enable_dynamic_batch`, the branches of every root
//      `Case` with `_insert_by_mbatch` are compile graphs of their own and are
//      partitioned like the root (GE GetMultiBatchIndependCompileGraphs).
//      Before a graph is cut, GE's CtrlEdgeTransfer: in every subgraph, a
//      Const's incoming control edges move to the Const's consumers.
//   2. Clusters (cluster_graph.h): one per node, typed DATA / INPUT_NODE /
//      NETOUTPUT / STAGE / UNKNOWN / KNOWN; `_control_flow_group` members merge
//      with every cluster on paths between them; then GE's MergeClustersNormal
//      (unknown MergeAllPathFrom, known TryMerge, inputs, small-cluster
//      demotion, unknown TryMerge), or the merge-known-first variant
//      (npuplan.partition.mergeKnownFirst), or, with ge.topoSortingMode=3, runs
//      of consecutive same-type clusters in node order.
//   3. Frames: each KNOWN / UNKNOWN / INPUT_NODE cluster becomes a
//      PartitionedCall `PartitionedCall_<id>` owning `<root>_sub_<id>_know |
//      _unknow | _input`; Data nodes carry `_parent_node_index`, the NetOutput's
//      inputs are the call's outputs; data and control edges are kept across
//      the boundary; `_is_unknown_shape` is written on call nodes and members.
//      Attribute inheritance: docs/partition.md.
//
// Code: the options (partition_options.h), step 1 (here), step 2
// (cluster_merge.h over cluster_graph.h), step 3 (frame_builder.h).
//
// Requires: topo-sorted. Provides: partitioned (plan.partition filled).
//
// Decision keywords:
//   Mark node[<name>,<type>] attr[_is_unknown_shape] to <0|1>.  reason= before= after=
//   PartitionDecision decision= reason=       ClusterSummary all= data= known= …
//   PathAbsorbed into= from= clusters= nodes= ClusterDemoted cluster= nodes= limit=
//   PathMergeRefused into= from= blocker=     ControlFlowGroupMerged group= nodes=
//   CtrlEdgeTransferred const= from= to=      (PartitionDecision graph= … for a
//                                              multi-batch branch)
#ifndef NPUPLAN_PARTITION_DYNAMIC_SHAPE_PARTITION_H_
#define NPUPLAN_PARTITION_DYNAMIC_SHAPE_PARTITION_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "npuplan/partition/mark_unknown_shape_nodes.h"
#include "npuplan/partition/partition_options.h"
#include "npuplan/pass/pass.h"

namespace npuplan {
namespace partition {

// Partitions `model` (root graph) given the marks; fills `out`. `log` and
// `stats` may be null.
absl::Status PartitionModel(Model& model, const MarkResult& marks, const PartitionOptions& options,
                            DecisionLog* log, Statistics* stats, PartitionResult& out);

}  // namespace partition

class DynamicShapePartition final : public Pass {
 public:
  static constexpr std::string_view kName = "dynamic-shape-partition";
  std::string_view name() const override { return kName; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kTopoSorted); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kPartitioned); }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_PARTITION_DYNAMIC_SHAPE_PARTITION_H_
