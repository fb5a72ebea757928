// sync-node-generation (SPEC E6, GE GenerateSyncEventNodes + ReorderEventNodes):
// materialises every event of the plan as nodes:
//   Send `<graph>_Send_<id>` (notify: SendNotify `<graph>_Send_Notify_<id>`)
//     on the sender's (physical) stream, right after the sender, control edge
//     sender → Send;
//   Recv `<graph>_Recv_<id>` (RecvNotify `<graph>_Recv_Notify_<id>`) on the
//     receiver's stream, right before it, control edge Recv → receiver;
// with attribute `event_id` (notify: `notify_id`); `_Reuse_<k>` is appended
// when a name is taken (ids shared across gears). Attached-stream events go
// on the attached stream. The node order stays topological (Recvs before,
// Sends after their node) and topo ids are renumbered. The plan's events keep
// naming the computing nodes, so plan.events and the graph agree (checked by
// verifier[sync-nodes]).
// Dynamic path (GE DynamicStreamAllocator::InsertEvents, issue 5 item 1): in
// a plan with a dynamic stream mode, events between main-stream slots of the
// root / unknown-shape graphs get no nodes; their ids are written as the
// int-list attributes `_send_event_ids` (sender — for an event recorded at a
// subgraph owner's completion, the owner itself, which insertion lists as the
// sender) and `_recv_event_ids` (receiver), ascending, which the dynamic
// executor reads.
//
// Requires: sync-events. Provides: sync-nodes.
// Decision keywords: SyncNodesGenerated sends= recvs= attr_events=
#ifndef NPUPLAN_EVENTS_SYNC_NODE_GENERATION_H_
#define NPUPLAN_EVENTS_SYNC_NODE_GENERATION_H_

#include "npuplan/pass/pass.h"

namespace npuplan {

class SyncNodeGeneration final : public Pass {
 public:
  std::string_view name() const override { return "sync-node-generation"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kSyncEvents); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kSyncNodes); }
  // Adds Send / Recv nodes (their tasks and physical stream) or writes the
  // ids as attributes.
  PlanAccess access() const override {
    return {kAllPlanParts & ~PlanPart::kMemory,
            PlanPart::kModel | PlanPart::kTasks | PlanPart::kPhysicalStream};
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_SYNC_NODE_GENERATION_H_
