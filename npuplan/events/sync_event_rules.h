// The steps of sync-event-insertion (sync_event_insertion.h), one function
// per numbered rule, over one InsertionState built per run:
//   1. edges, with GE's five conditions (InsertOneEventInTwoNodes; "rule
//      1".."rule 5" in the code, rule 5 is SkippedByActivation): two
//      implementations of one EdgeWalk — GeneralEdgeEvents for every graph
//      and FastEdgeEvents (sync_event_fast_path.h) for the usual one; Run
//      picks one (the differential test FastAndGeneralEdgeWalksAgree holds
//      them to the same table);
//   2. SubgraphEntryAndEndEvents;  2b. SubgraphInputEvents;
//   3. AttachedStreamEvents;
//   4. one event per pair (DropRepeatedPairs), then GE's ids (NumberEvents).
// Internal to the events module.
#ifndef NPUPLAN_EVENTS_SYNC_EVENT_RULES_H_
#define NPUPLAN_EVENTS_SYNC_EVENT_RULES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/pass/pass.h"
#include "npuplan/plan/plan.h"
#include "npuplan/support/big_vector.h"

namespace npuplan::events {

// An event found by a rule: sender and receiver slots, and the rule.
struct Candidate {
  int32_t from;
  int32_t to;
  SyncReason reason;
};

// What every rule reads, built once per run.
struct InsertionState {
  // `name_prefixes`: the view keeps the name prefixes the fast path ranks
  // senders with (SyncView).
  InsertionState(const Plan& plan, DecisionLog& log, std::string_view pass, bool name_prefixes);

  const Plan& plan;
  const Model& m;
  DecisionLog& log;
  std::string_view pass;  // the pass name, for log lines and errors
  SyncView view;
  ActivationInfo act;
  // Rule 5: per NodeId, the activators of the node's `_stream_label` (empty
  // when no label is activated: most graphs).
  std::vector<const std::vector<NodeId>*> activators_of;
  // Dynamic path: the graphs whose subgraph boundaries get no events.
  std::vector<bool> dynamic_graphs;
  // FFTS / FFTS+ subgraphs get no events (GE does not descend into them).
  std::vector<uint8_t> ffts;
  int64_t skipped_activation = 0;

  // Logical main stream of a node (the view's dense array: no Node read).
  int64_t stream(NodeId x) const { return view.stream(x.value); }
  bool in_ffts(GraphId g) const { return !ffts.empty() && ffts[g.index()] != 0; }
  // Rule 5: next's `_stream_label` is activated by a node A on cur's stream,
  // in cur's graph, at or after cur — and before next (npuplan's guard: the
  // activation orders only what follows the activator). Logs EventSkipped.
  bool SkippedByActivation(NodeId cur, NodeId next);
};

// Edge entries: producer, and consumer with two flag bits (node ids fit in
// 30 bits: Run checks).
struct EdgeEntry {
  int32_t from;
  uint32_t to;  // consumer | flags
};
inline constexpr uint32_t kCtrlEdge = uint32_t{1} << 31;  // a control edge
inline constexpr uint32_t kNoStream = uint32_t{1} << 30;  // the consumer has no stream (rule 4)
inline constexpr uint32_t kIdMask = kNoStream - 1;

// The events found so far.
struct FoundEvents {
  // Set by FastEdgeEvents: the edge events are kept compactly (and numbered
  // by NumberFastEvents) — each cross-stream pair once, in consumer walk order,
  // counted per producer, with every node that may send in GE's sender order.
  bool fast = false;
  BigVector<EdgeEntry> edges;
  BigVector<uint32_t> per_sender;  // edge events per producer (then table cursors)
  BigVector<int32_t> by_name;      // every node with a stream, in GE's sender order
  bool any_ctrl = false;
  // GeneralEdgeEvents' candidates are [0, edge_candidates); the other rules
  // append theirs after them.
  BigVector<Candidate> cands;
  size_t edge_candidates = 0;
};

// 1. Edges, in GE's walk: producers in execution order; per producer its
//    data consumers, then its control consumers, each in graph order.
//    An EdgeWalk fills `out` with the edge events; a rule-4 error (an edge
//    into a node without a stream) names the first offending edge in GE's
//    order.
using EdgeWalk = absl::Status (*)(InsertionState& st, FoundEvents& out);
// The general walk: every graph. Its events become out.cands[0,
// edge_candidates).
absl::Status GeneralEdgeEvents(InsertionState& st, FoundEvents& out);

// 2. Subgraph entry and end (GE InsertEventsForSubgraph). Returns each
//    subgraph's end node (for 2b; invalid for the root).
std::vector<NodeId> SubgraphEntryAndEndEvents(InsertionState& st, FoundEvents& out);
// 2b. Subgraph inputs: a node reading through producers without a stream.
void SubgraphInputEvents(InsertionState& st, const std::vector<NodeId>& end_of, FoundEvents& out);
// 3. Attached streams (GE InsertSyncEventsWithAttachedStream,
//    CoverAllStreamByNetoutput).
void AttachedStreamEvents(InsertionState& st, FoundEvents& out);
// 4. One event per distinct pair: the candidates after the edge events that
//    repeat a pair are dropped (the edge events are distinct already).
void DropRepeatedPairs(FoundEvents& out);
// 4. GE's ids (sender name order, main before attached, events and notifies
//    numbered separately): the table, built directly in (kind, id) order.
//    `notify`: main-stream events are notifies. The numbering follows the
//    form the edge walk left (FoundEvents::fast). Consumes `found`.
// `loop_of_graph` (InnermostLoopOwners; only with notify): an event between
// two loop levels stays an event (the general numbering only).
EventTable NumberEvents(const InsertionState& st, FoundEvents& found, bool notify,
                        const std::vector<int32_t>& loop_of_graph = {});

// NumberEvents' two numberings write the table through this.
struct TableWriter {
  const SyncView& view;
  EventTable& table;
  bool notify;
  size_t num_events = 0;  // positions from here on are notifies
  // Bucket of an event: is_notify * 2 + sent from an attached stream.
  // Per graph, the innermost loop around it (InnermostLoopOwners,
  // plan/loop_order.h); empty: no loop. An event between two loop levels
  // stays an event: a notify pairs its k-th wait with its k-th record, and
  // one end runs once per iteration, the other not.
  const Model* model = nullptr;
  const std::vector<int32_t>* loop_of_graph = nullptr;
  bool SameLoop(int32_t from, int32_t to) const {
    if (loop_of_graph == nullptr || loop_of_graph->empty()) return true;
    const auto& loops = *loop_of_graph;
    return loops[model->node(view.node_of(from)).graph.index()] ==
           loops[model->node(view.node_of(to)).graph.index()];
  }
  uint32_t GroupOf(int32_t from, int32_t to) const {
    const bool from_attached = view.attached_of(from) >= 0;
    const bool is_notify =
        notify && !from_attached && view.attached_of(to) < 0 && SameLoop(from, to);
    return static_cast<uint32_t>(is_notify) * 2 + static_cast<uint32_t>(from_attached);
  }
  // Writes the event at `position` (inline: once per event).
  void Put(size_t position, int32_t from, int32_t to, SyncReason reason) {
    SyncEvent& e = table.events[position];
    const bool is_notify = position >= num_events;
    e.id = static_cast<int32_t>(is_notify ? position - num_events : position);
    if (is_notify) e.kind = SyncKind::kNotify;
    e.send = view.node_of(from);
    e.recv = view.node_of(to);
    e.send_attached = view.attached_of(from);
    e.recv_attached = view.attached_of(to);
    e.reason = reason;
  }
};
}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_SYNC_EVENT_RULES_H_
