// The default compile pipeline, in GE's build order (ge-reference §1):
// partition → logical streams → attached streams → memory → tasks → events →
// physical split → activation → Send/Recv nodes.
#include "npuplan/compiler/compiler.h"
#include "npuplan/compiler/all_passes.h"


namespace npuplan {

absl::StatusOr<std::unique_ptr<PassPipeline>> BuildDefaultPipeline(const CompileOptions& options) {
  auto pipeline = std::make_unique<PassPipeline>("compile");
  // Stages register here as they land (see passes.def).
  pipeline->AddPass(MakePartitionPipeline());
  pipeline->AddPass<LogicalStreamAssignment>();
  pipeline->AddPass<AssignAttachedStreamPass>();
  pipeline->AddPass<StreamBudget>();
  pipeline->AddPass<MemoryPlanning>();
  AddEventsStages(*pipeline);
  return pipeline;
}

}  // namespace npuplan
