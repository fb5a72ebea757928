// Which graphs run on GE's dynamic-shape path ("unknown shape"): the root by
// the partition's decision, a partition subgraph by its kind, any other graph
// by its owner node's `_is_unknown_shape`, else as its parent graph. The
// partition stage computes this once (DynamicShapePartition stores it in
// PartitionResult::unknown_shape_graphs) and the stream and events stages
// read it. It is not in the plan JSON: the rule itself is the execution
// semantics' UnknownShapeGraphs (plan/execution_semantics.h), which the events
// stage and the verifier call on their own.
#ifndef NPUPLAN_PARTITION_UNKNOWN_SHAPE_GRAPHS_H_
#define NPUPLAN_PARTITION_UNKNOWN_SHAPE_GRAPHS_H_

#include <vector>

#include "npuplan/plan/plan.h"

namespace npuplan::partition {

// The rule over every graph, indexed by GraphId, in one walk (a parent's
// answer serves its subgraphs: linear in graphs + partition subgraphs).
std::vector<bool> ComputeUnknownShapeGraphs(const Plan& plan);

// The stored fact when the partition stage ran in this process and the
// graphs are the ones it saw; otherwise (a plan read from a file, a pipeline
// without the stage, a hand-made plan in a test) computed now.
std::vector<bool> UnknownShapeGraphs(const Plan& plan);
bool IsUnknownShapeGraph(const Plan& plan, GraphId g);

}  // namespace npuplan::partition

#endif  // NPUPLAN_PARTITION_UNKNOWN_SHAPE_GRAPHS_H_
