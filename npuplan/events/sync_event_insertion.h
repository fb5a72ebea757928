// sync-event-insertion (SPEC E1, GE InsertSyncEvents): one event (or notify)
// per ordered pair of slots on different streams that must be ordered:
//   * data and control edges cur→next, with GE's five rules: no event when
//     cur has no stream or both share one, or cur is Enter/RefEnter and next
//     is not StreamActive, or next's `_stream_label` is activated by a node A
//     on cur's stream, in cur's graph, at or after cur (and before next in
//     execution order — npuplan's safety guard); next without a stream
//     is an error (unless it has `_thread_scope_id`);
//   * subgraph entry: each node of a subgraph with no inputs waits for every
//     input of the parent node; subgraph end: the first `_subgraph_end_node`
//     (else the NetOutput) signals every successor of the parent;
//   * subgraph input: a node reading through producers without a stream (a
//     subgraph's Data node with `_parent_node_index` i stands for the parent's
//     input i) waits for the producers with a stream behind them (rules 2, 3
//     and 5 apply as for edges) — GE orders these by the subgraph's
//     first-active StreamActive instead (docs/events.md);
//   * attached streams: producers of the `_attached_stream_depend_value_list`
//     inputs → the attached stream (from the producer's attached stream when it
//     has one; Data/Const producers excluded); the last user of each attached
//     stream → its graph's NetOutput (GE CoverAllStreamByNetoutput).
// Dynamic path (streams assigned in a dynamic mode; parent's graph and
// subgraph both root/unknown-shape): no subgraph entry/end events, as GE's
// DynamicStreamAllocator::InsertEvents; an edge event out of a node owning
// such subgraphs names that node as its sender (it carries the id in
// `_send_event_ids`) and is recorded at the node's completion, the last slot
// of its subtree on its own stream (events::RecordSlots) — what GE's dynamic
// executor does when it records the owner's `_send_event_ids`.
// FFTS / FFTS+ subgraphs (below a node with `_ffts_sub_graph` /
// `_ffts_plus_sub_graph`, at any depth) get no events of their own — no edge,
// boundary, subgraph-input or attached-value events — as GE's insertion does
// not descend into them: the owner's FFTS task runs them, and the owner's own
// edge events stand for them.
// Duplicate pairs (a data and a control edge) give one event. ge.event=notify
// makes main-stream events notifies (static graphs only), but for one whose
// ends lie at different loop levels (into or out of a loop body: one end
// runs every iteration, the other once), which a notify's k-th-wait-to-k-th-
// record pairing cannot express: it stays an event (docs/events.md). Ids are then made
// continuous in GE's order (sender node name).
//
// The steps, one function per numbered rule, are in sync_event_rules.h.
// Requires: logical-streams. Provides: sync-events.
// Decision keywords: EventInserted event= kind= from= to= reason=
//                      (reason: data-edge control-edge subgraph-entry
//                      subgraph-input subgraph-end attached attached-end)
//                    EventSkipped from= to= reason=activated-by:<node>
#ifndef NPUPLAN_EVENTS_SYNC_EVENT_INSERTION_H_
#define NPUPLAN_EVENTS_SYNC_EVENT_INSERTION_H_

#include "npuplan/pass/pass.h"

namespace npuplan {

class SyncEventInsertion final : public Pass {
 public:
  // `fast_path` = false makes every plan take the general edge walk
  // (GeneralEdgeEvents, sync_event_rules.h), which the usual graph otherwise
  // skips (FastEdgeEvents, sync_event_fast_path.h; same table: the
  // differential test in sync_event_insertion_test.cc holds the two to that).
  explicit SyncEventInsertion(bool fast_path = true) : fast_path_(fast_path) {}
  std::string_view name() const override { return "sync-event-insertion"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kLogicalStreams); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kSyncEvents); }
  bool preserves_structure() const override { return true; }
  PlanAccess access() const override {
    return {kAllPlanParts & ~PlanPart::kMemory, PlanPart::kEvents};
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;

 private:
  bool fast_path_;
};

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_SYNC_EVENT_INSERTION_H_
