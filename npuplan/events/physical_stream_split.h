// physical-stream-split (SPEC T2–T4, GE SplitStreamAndRefreshTaskDef): a
// logical stream whose running task count + 27 reserved tasks exceeds the
// per-stream limit continues on a new physical stream (id = last id + 1),
// ordered after the old one by one event ("split").
//
// Counting, per slot in execution order: Plan::tasks (StreamActive: one
// activation per future physical stream of each stream it activates), +1 per
// event it records (a subgraph owner's on the slot where its Send runs:
// events::SendSlots), +2 per event it waits for — the events in the table
// and the loop-order events stream-activation will add (plan/loop_order.h),
// and +3 at the node whose stream carries a branch gate stream-activation
// will add (events::BranchGateVia: an end inside a static branch on an
// attached stream or on a stream the branch activates); attached streams count
// `_hccl_attached_task_num` (default 1). The node that overflows opens the
// new stream, unless it is its stream's first node, owns subgraphs, is a
// subgraph's first StreamActive, or is LabelSet/LabelGotoEx/
// LabelSwitchByIndex (GE NeedSplitNewStream), or the node before it on its
// logical stream owns its graph (the split event would run backwards;
// events::Enclosure), or either of the two lies inside a loop body or If/Case
// branch (the split event would not order every run; Enclosure::InConditional:
// a deliberate difference from GE, whose labels order the runs) — unless the
// two lie across whole static loops (StaticLoopNesting::MayOpenAcrossLoops):
// stream-activation then moves the split event to loop gates, once per loop
// run against once. A run of nodes with the same
// `_continuous_stream_label` right before the overflow moves along.
//
//   limit 1024, 3 tasks/node: s0 = n0…n331 (332·3+27 = 1023) │ s2 = n332…
//
// Limits: npuplan.device.maxTasksPerStream (1024), hugeStreamTasks (8192,
// stream 0 in single-stream mode when it would overflow), each >= 28 (checked
// with the options), unlimitedStreamDepth (no split); streams assigned in a
// dynamic mode (`dynamic-*`, GE's dynamic path has no split) are never split
// either. Writes Plan::physical_stream, streams.physical/huge/
// split_to_logical/attached_physical/task_limit.
//
// Requires: tasks, sync-events. Provides: physical-streams.
// Decision keywords: StreamSplit logical= physical= at= tasks= moved=
//                    HugeStream stream= tasks= limit=
//                    SplitDisabled reason=unlimited-depth|dynamic-shape
#ifndef NPUPLAN_EVENTS_PHYSICAL_STREAM_SPLIT_H_
#define NPUPLAN_EVENTS_PHYSICAL_STREAM_SPLIT_H_

#include "npuplan/pass/pass.h"

namespace npuplan {

class PhysicalStreamSplit final : public Pass {
 public:
  std::string_view name() const override { return "physical-stream-split"; }
  IrProperties required() const override { return IrProperty::kTasks | IrProperty::kSyncEvents; }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kPhysicalStreams); }
  bool preserves_structure() const override { return true; }
  PlanAccess access() const override {
    return {kAllPlanParts & ~PlanPart::kMemory,
            PlanPart::kTasks | PlanPart::kEvents | PlanPart::kStreams | PlanPart::kPhysicalStream};
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_PHYSICAL_STREAM_SPLIT_H_
