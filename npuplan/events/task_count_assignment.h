// task-count-assignment (SPEC T1): how many device tasks each node issues on
// its main stream (GE CollectTaskSize, without the TaskDefs GE reads).
//
// The model itself is npuplan/plan/task_model.h (shared with the simulator):
//   engine with skip_assign_stream (GE_LOCAL, HOST_CPU, ffts_plus) → 0
//   Recv / RecvNotify                         → 2 (event wait + reset)
//   Send / SendNotify / StreamActive / other  → 1 (StreamActive is replaced by
//       one activation per future physical stream in physical-stream-split)
//   HCCL engine                               → _hccl_task_num, else 1
// `_node_sqe_num` overrides all of these; a Recv still adds its reset task.
// Nodes inside an FFTS / FFTS+ subgraph (npuplan/ir/ffts_regions.h) issue
// none: GE generates no task for them, the owner's FFTS task runs them.
// Attached streams carry `_hccl_attached_task_num` tasks each (default 1).
// Event waits (+1 each, GE's EVENT_WAIT reset) are added by the split, which
// runs after the events exist.
//
// A negative task-count attribute is an error naming the node.
// Requires: logical-streams. Provides: tasks (Plan::tasks).
// Decision keywords: TaskCountOverridden node= tasks= attr=
#ifndef NPUPLAN_EVENTS_TASK_COUNT_ASSIGNMENT_H_
#define NPUPLAN_EVENTS_TASK_COUNT_ASSIGNMENT_H_

#include "npuplan/pass/pass.h"

namespace npuplan {

class TaskCountAssignment final : public Pass {
 public:
  std::string_view name() const override { return "task-count-assignment"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kLogicalStreams); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kTasks); }
  bool preserves_structure() const override { return true; }
  PlanAccess access() const override {
    return {kAllPlanParts & ~PlanPart::kMemory, PlanPart::kTasks | PlanPart::kPhysicalStream};
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_TASK_COUNT_ASSIGNMENT_H_
