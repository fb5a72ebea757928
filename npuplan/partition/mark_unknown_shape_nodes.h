// mark-unknown-shape-nodes: decides, for every node of every graph, whether it
// must run in the dynamic-shape executor, and records why (SPEC P1 a–d, f;
// ge-reference §7 MarkUnknownShapeNodes). The first rule that hits is the
// reason:
//   force_unknown                    `_is_unknown_shape` or `_force_unknown_shape` is true   (b)
//   HostCpu engine                   engine DNN_VM_HOST_CPU                                   (f)
//   dynamic shape                    an input or output tensor has a -1 dim or rank -2 and
//                                    the node cannot run no-tiling (see below)                (a)
//   subgraph contains unknown        a graph the node owns holds an unknown node              (P7)
//   tiling depend not sinkable       `_dynamic_tiling_depend_op`, or a `_tiling_depend_inputs`
//                                    input that is dynamic or not a Const, without tiling sink
//                                    (ge.tiling_schedule_optimize=1 + npuplan.device.tilingSink) (c)
//   _is_support_addr_refresh=false   the attribute is false                                    (d)
//   const input of unknown           a Const/Constant data input of an unknown node (pulled in)
// No-tiling: a dynamic-shape node stays static when it is MemcpyAsync,
// StreamMerge or PartitionedCall, or its engine is in both its
// `_op_tiling_inline_engine` and `_op_export_shape_engine` lists (Data-like
// nodes and NetOutput are exempt from these engine checks, as in GE), it has
// no dynamic output, `_op_max_shape` or a bounded `_shape_range`, and every
// producer of a dynamic input is a Data node or itself no-tiling. If any
// (a)–(d) node exists, all no-tiling nodes are reverted to unknown ("dynamic
// shape (no-tiling reverted)"). When the only no-tiling nodes are Data-like
// nodes and NetOutputs (GE's has_no_tiling_ stays false), the graph still
// needs the partition (GE: "Data(-1)->NetOutput(-1) must be partitioned").
// Only (a)–(d) make the whole graph enter the partition flow (P1, P2).
//
// Requires: topo-sorted. Provides: plan.partition.unknown_nodes (no graph change).
// Malformed attributes (wrong type, index out of range) are InvalidArgument
// errors naming the node and attribute.
//
// Decision keywords: UnknownShapeNode (node, type, reason), NoTiling (node),
// NoTilingReverted (node), TilingSink (node).
#ifndef NPUPLAN_PARTITION_MARK_UNKNOWN_SHAPE_NODES_H_
#define NPUPLAN_PARTITION_MARK_UNKNOWN_SHAPE_NODES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"
#include "npuplan/partition/partition_options.h"
#include "npuplan/pass/pass.h"

namespace npuplan {
namespace partition {

// Why a node is unknown (dynamic); kKnown = static. The text of each is the
// reason written to the decision log and the plan (reason texts are stable).
enum class MarkReason : uint8_t {
  kKnown = 0,
  kForceUnknown,
  kHostCpu,
  kDynamicShape,
  kSubgraphUnknown,
  kTilingDepend,
  kAddrRefresh,
  kConstInput,
  kNoTilingReverted,
  // Set by the partition itself (not by marking).
  kPathAbsorption,
  kSmallCluster,
  kControlFlowGroup,
  kRefVariable,
  kDataFlowHandle,  // a Stack op whose _data_flow_handle group was split (GE DynamicDataFlowPartitionerPass)
};
std::string_view ReasonText(MarkReason r);
// The (a)–(d) rules: a node marked for one of them makes the graph enter the
// partition flow.
bool EntersPartitionFlow(MarkReason r);

struct MarkResult {
  std::vector<MarkReason> reason;  // per NodeId
  std::vector<uint8_t> no_tiling;  // per NodeId: dynamic-shape node that runs no-tiling (static)
  int64_t unknown_count = 0;       // nodes with reason != kKnown
  int64_t trigger_count = 0;       // nodes with an (a)–(d) reason
  int64_t no_tiling_count = 0;     // no-tiling nodes kept static
  int64_t no_tiling_op_count = 0;  // of those, nodes other than Data-like and NetOutput (GE has_no_tiling_)
  // A root-graph node owns a subgraph or has a call / control-flow type
  // (IsSpecialType): read by the dynamic-shape partition's host-scheduling
  // decision, so that it does not walk the nodes again.
  bool root_special = false;
  bool IsUnknown(NodeId n) const { return reason[n.index()] != MarkReason::kKnown; }
};

// Marks every node of the model. `log`/`stats` may be null (no remarks).
absl::StatusOr<MarkResult> ComputeUnknownShapeMarks(const Model& model,
                                                    const PartitionOptions& options,
                                                    DecisionLog* log = nullptr,
                                                    Statistics* stats = nullptr);
// The same with the options read first (ReadPartitionOptions: its errors).
absl::StatusOr<MarkResult> ComputeUnknownShapeMarks(const Model& model, const CompileOptions& options,
                                                    DecisionLog* log = nullptr, Statistics* stats = nullptr);

}  // namespace partition

class MarkUnknownShapeNodes final : public Pass {
 public:
  static constexpr std::string_view kName = "mark-unknown-shape-nodes";
  std::string_view name() const override { return kName; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kTopoSorted); }
  bool preserves_structure() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_PARTITION_MARK_UNKNOWN_SHAPE_NODES_H_
