// stream-activation (SPEC T5): writes `active_stream_list` (physical ids).
//   * SetActiveStreamsByLabel: a node with `_active_label_list` activates the
//     streams of the nodes carrying those `_stream_label`s;
//   * SetActiveStreamsForSubgraphs: a `subgraph_first_active` node activates
//     the streams of its graph's unlabelled nodes (attached ones too) but its own;
//     such a stream that also runs a node outside that graph is an error
//     (InvalidArgument): on a device that node would wait for the graph's run;
//   * after the split each activated logical stream brings along the physical
//     streams split from it whose first node is in the activator's graph;
//   * UpdateActiveStreamsForSwitchNode: a StreamSwitch label whose nodes span
//     more than one stream gets a new StreamActive `<switch>_StreamActive_<i>`
//     on a new physical stream, placed after the switch, taking over the
//     switch's control edges into that label; the switch activates the new
//     streams. (The new node has no logical stream: it is born after logical
//     allocation.)
//   * SetActiveStreamsForLoop: the first `is_loop_active` node without
//     `_active_label_list` activates every stream nobody else activates; the
//     last node of each such stream (root graph, no StreamSwitch on it)
//     signals the loop's StreamSwitch (reason "loop", a loop-carried event
//     the happens-before check does not use).
// A node activating its own stream is an error (GE CheckStreamActived).
// Then loop-order events (loop_order_events.h): a static loop whose runs use
// several streams gets "loop-fork" / "loop-next" events between its runs,
// and a loop the host runs (the dynamic path) "loop-join" events that end
// each run on the owner's stream (host_join_events.h).
// Then loop gates (loop_gates.h): an event into or out of a static loop (a
// loop-order event of an outer loop included) waits or records at a LoopGate
// node at the loop's boundary, once per loop run.
//
// Requires: physical-streams. Provides: active-streams.
// Decision keywords: StreamsActivated node= streams= reason=
//                    StreamActiveCreated node= stream= label=   LoopEvent from= to=
//                    LoopOrderEvent loop= kind=fork|next from= to=
//                    HostJoinEvent loop= from= to=
//                    LoopGate loop= side=entry|exit|implied gate= from= to=
#ifndef NPUPLAN_EVENTS_STREAM_ACTIVATION_H_
#define NPUPLAN_EVENTS_STREAM_ACTIVATION_H_

#include <map>
#include <span>

#include "npuplan/pass/pass.h"

namespace npuplan {

namespace events {
// The graph of the first slot (main stream, then attached ones, per node in
// `order`, the execution order) of each split physical stream in
// plan.streams.split_to_logical that has a slot (the physical SyncView's
// stream_slots(p).front()).
std::map<int64_t, GraphId> SplitStreamOpeningGraphs(const Plan& plan,
                                                    std::span<const NodeId> order);
}  // namespace events

class StreamActivation final : public Pass {
 public:
  std::string_view name() const override { return "stream-activation"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kPhysicalStreams); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kActiveStreams); }
  // Adds StreamActive and LoopGate nodes (their stream, tasks, physical
  // stream) and loop events, moves loop-crossing events to the gates, writes
  // active_stream_list attributes.
  PlanAccess access() const override {
    return {kAllPlanParts & ~PlanPart::kMemory, PlanPart::kModel | PlanPart::kStreams |
                                                    PlanPart::kEvents | PlanPart::kTasks |
                                                    PlanPart::kPhysicalStream};
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_STREAM_ACTIVATION_H_
