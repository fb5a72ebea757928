// Headers of the events module's passes (events/passes.def).
#ifndef NPUPLAN_EVENTS_EVENTS_PASSES_H_
#define NPUPLAN_EVENTS_EVENTS_PASSES_H_

#include "npuplan/events/device_limit_check.h"
#include "npuplan/events/event_id_allocation.h"
#include "npuplan/events/event_minimization.h"
#include "npuplan/events/event_reuse.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"

namespace npuplan {
// tasks → events → optimisation → reuse → split → activation → minimum → device ids →
// Send/Recv nodes.
inline void AddEventsStages(PassPipeline& pipeline) {
  pipeline.AddPass<TaskCountAssignment>();
  pipeline.AddPass<SyncEventInsertion>();
  pipeline.AddPass<SyncEventOptimization>();
  pipeline.AddPass<EventReuse>();
  pipeline.AddPass<PhysicalStreamSplit>();
  pipeline.AddPass<StreamActivation>();
  pipeline.AddPass<EventMinimization>();
  pipeline.AddPass<EventIdAllocation>();
  pipeline.AddPass<SyncNodeGeneration>();
  pipeline.AddPass<DeviceLimitCheck>();
}
}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_EVENTS_PASSES_H_
