// LogicalStreamAssignment (`logical-stream-assignment`, SPEC S1–S6): GE's
// LogicalStreamAllocator::Assign as one composite pass.
//
// For the root graph and then every subgraph in pre-order (GE's DoAssign, one
// shared AssignContext so stream ids are global), it forms the engine
// subgraphs (engine_partition.h) and runs the pass chain registered in
// stream/passes.def:
//   multi-stream: update-for-mde-group-pass → assign-by-label-pass →
//     independent-stream-pass → assign-by-dependency-pass →
//     node-stream-update-pass → update-for-parallel-group-pass →
//     all-reduce-parallel-pass → update-for-skipped-engine-pass →
//     optimize-ineffective-multi-stream-pass
//   single-stream (ge.enableSingleStream=true): single-stream-pass →
//     node-stream-update-pass → update-for-skipped-engine-pass
// through a PassPipeline, so that the pipeline's after-each checks
// (--verify-each, --dump-after) follow each sub-pass on each graph; then
// refresh-continuous-streams over all nodes, and fills plan.streams. A pass
// object runs one compilation at a time (it binds its chain to the graph).
//
// Unknown-shape graphs (the root when partition decided "whole-dynamic" or
// "partitioned", partition subgraphs of kind unknown/input and what they
// contain) go to the dynamic-shape allocator (dynamic_stream_allocator.h)
// when ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1; otherwise all their nodes go on
// one stream: the parent's stream, else one shared stream (0 for a dynamic
// root). ge.autoMultistreamParallelMode (root graph attribute, then option):
// cv marks vector nodes (cv_parallel_marking.h); LoadBalance:N, MainStream:N,
// WeightedLoadBalance:N run the DAG allocator (dag_stream_allocator.h) and
// CriticalPath:N npuplan's schedule-aware mode (critical_path_streams.h) on
// every graph (unknown-shape graphs only under the env switch), before the
// final continuity refresh.
//
// Requires: topo-sorted. Provides: logical-streams. Preserves structure.
// An auto multi-stream mode set while dynamic-shape graphs run on one stream
// (no ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1) does nothing on them: one warning
// line says so with the fix (PassContext::warnings).
// Decision keywords: EnginePartition (graph, subgraphs), UnknownShapeSingleStream
// (graph, stream), AutoModeSkipped (mode, graphs, of, reason),
// LogicalStreamsAssigned (mode, streams); the chain's passes log under their
// own names.
#ifndef NPUPLAN_STREAM_LOGICAL_STREAM_ASSIGNMENT_H_
#define NPUPLAN_STREAM_LOGICAL_STREAM_ASSIGNMENT_H_

#include <memory>
#include <vector>

#include "npuplan/pass/pass.h"
#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan {

class LogicalStreamAssignment final : public Pass {
 public:
  static constexpr std::string_view kName = "logical-stream-assignment";
  // The registered chain of the mode the run's options select.
  LogicalStreamAssignment() = default;
  // The registered chain of the mode these options select, fixed now (so
  // that the pipeline can be printed with it).
  explicit LogicalStreamAssignment(const CompileOptions& options);
  // This chain, whatever the mode (--passes logical-stream-assignment(a,b)).
  explicit LogicalStreamAssignment(
      std::vector<std::unique_ptr<stream::LogicalStreamChainPass>> chain);
  const PassPipeline* nested() const override { return chain_.get(); }
  std::string_view name() const override { return kName; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kTopoSorted); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kLogicalStreams); }
  bool preserves_structure() const override { return true; }
  // CriticalPath:N under npuplan.stream.reorder=true writes its schedule's order.
  bool may_reorder() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;

 private:
  std::unique_ptr<PassPipeline> chain_;  // null: chosen by the run's options
};

namespace stream {
// partition::IsUnknownShapeGraph / UnknownShapeGraphs (unknown_shape_graphs.h):
// the fact the partition stage stored.
bool IsUnknownShapeGraph(const Plan& plan, GraphId g);
std::vector<bool> UnknownShapeGraphs(const Plan& plan);
}  // namespace stream

}  // namespace npuplan

#endif  // NPUPLAN_STREAM_LOGICAL_STREAM_ASSIGNMENT_H_
