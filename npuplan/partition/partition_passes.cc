#include "npuplan/partition/partition_passes.h"

namespace npuplan {

std::unique_ptr<PassPipeline> MakePartitionPipeline() {
  auto p = std::make_unique<PassPipeline>("partition");
#define NPUPLAN_PASS(pipeline, name, cls) p->AddPass<cls>();
#include "npuplan/partition/passes.def"
#undef NPUPLAN_PASS
  return p;
}

}  // namespace npuplan
