// The partition stage (first stage of `npuplan compile`): the module's passes
// and the pipeline `partition(mark-unknown-shape-nodes,dynamic-shape-partition)`
// that `npuplan partition` runs, built from partition/passes.def.
#ifndef NPUPLAN_PARTITION_PARTITION_PASSES_H_
#define NPUPLAN_PARTITION_PARTITION_PASSES_H_

#include <memory>

#include "npuplan/partition/dynamic_shape_partition.h"
#include "npuplan/partition/mark_unknown_shape_nodes.h"
#include "npuplan/pass/pass.h"

namespace npuplan {

std::unique_ptr<PassPipeline> MakePartitionPipeline();

}  // namespace npuplan

#endif  // NPUPLAN_PARTITION_PARTITION_PASSES_H_
