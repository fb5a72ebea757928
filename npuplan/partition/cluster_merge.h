// The clustering of one graph for the dynamic-shape partition (GE
// DynamicShapePartitioner's clusters and merges; docs/partition.md):
//   1. InitClusters: one cluster per node, typed DATA / INPUT_NODE / NETOUTPUT
//      / STAGE / UNKNOWN / KNOWN, with the graph's edges;
//   2. `_control_flow_group` members merge with every cluster on paths
//      between them;
//   3. the strategy: GE's MergeClustersNormal, the merge-known-first variant
//      or, with ge.topoSortingMode=3, runs of equal type in node order (each
//      merge through a cycle-safe primitive of ClusterGraph);
//   4. data-flow re-marking (Stack ops of one `_data_flow_handle` split
//      between kinds of cluster are forced unknown) and, if it forced a node,
//      all of it again.
// Decision keywords: PathAbsorbed, PathMergeRefused, ClusterDemoted,
// ControlFlowGroupMerged, DataFlowForcedUnknown.
#ifndef NPUPLAN_PARTITION_CLUSTER_MERGE_H_
#define NPUPLAN_PARTITION_CLUSTER_MERGE_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"
#include "npuplan/partition/cluster_graph.h"
#include "npuplan/partition/mark_unknown_shape_nodes.h"
#include "npuplan/partition/partition_internal.h"
#include "npuplan/partition/partition_options.h"
#include "npuplan/pass/decision_log.h"
#include "npuplan/support/big_vector.h"

namespace npuplan {
namespace partition {

// One graph's merged clusters: what the frame builder cuts along. Nodes are
// numbered locally, in the graph's (topological) order.
struct GraphClusters {
  std::vector<NodeId> nodes;       // local index → node
  BigVector<int32_t> local;        // NodeId index → local index (-1 = other graph)
  std::vector<MarkReason> reason;  // local index → why unknown (marks, then merges)
  std::optional<ClusterGraph> cg;  // clusters over local indices
  // Some node of the graph has a name starting with `PartitionedCall_` or
  // `<graph>_sub_` (names the frame builder makes).
  bool name_clash = false;
};

// Clusters `graph` given the marks and merges the clusters. Writes
// `_force_unknown_shape` on nodes the data-flow rule forces; `log` may be null.
absl::StatusOr<GraphClusters> MergeClusters(Model& model, GraphId graph, const MarkResult& marks,
                                            const PartitionOptions& options, DecisionLog* log,
                                            PassCounters& counts);

}  // namespace partition
}  // namespace npuplan

#endif  // NPUPLAN_PARTITION_CLUSTER_MERGE_H_
