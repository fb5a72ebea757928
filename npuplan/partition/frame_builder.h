// The frames of one partitioned graph (SPEC P3–P6; docs/partition.md): each
// KNOWN / UNKNOWN / INPUT_NODE cluster becomes a PartitionedCall
// `PartitionedCall_<id>` owning the subgraph `<graph>_sub_<id>_know | _unknow
// | _input`. Its Data nodes (`_parent_node_index`) stand for the inputs from
// outside, its NetOutput's inputs are the call's outputs; data and control
// edges are kept across the boundary, `_is_unknown_shape` is written on the
// calls, their subgraphs and the members, and the calls inherit a stream
// label all their members share.
// Decision keywords: Mark (one per member and call), ClusterSummary.
#ifndef NPUPLAN_PARTITION_FRAME_BUILDER_H_
#define NPUPLAN_PARTITION_FRAME_BUILDER_H_

#include "npuplan/ir/graph.h"
#include "npuplan/partition/cluster_merge.h"
#include "npuplan/partition/mark_unknown_shape_nodes.h"
#include "npuplan/partition/partition_internal.h"
#include "npuplan/pass/decision_log.h"
#include "npuplan/pass/pass.h"

namespace npuplan {
namespace partition {

// Cuts `graph` along `clusters` (from MergeClusters on the same graph) and
// appends the frames to `out.subgraphs` and the cluster counts to
// `out.cluster_counts`. The graphs are not re-sorted. `log` may be null.
void BuildFrames(Model& model, GraphId graph, GraphClusters& clusters, const MarkResult& marks,
                 DecisionLog* log, PassCounters& counts, PartitionResult& out);

}  // namespace partition
}  // namespace npuplan

#endif  // NPUPLAN_PARTITION_FRAME_BUILDER_H_
