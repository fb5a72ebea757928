#include "npuplan/partition/partition_passes.h"

namespace npuplan {

std::unique_ptr<PassPipeline> MakePartitionPipeline() {
  auto p = std::make_unique<PassPipeline>("partition");
  p->AddPass<MarkUnknownShapeNodes>();
  p->AddPass<DynamicShapePartition>();
  return p;
}

}  // namespace npuplan
