// sync-event-insertion's fast path (sync_event_rules.h): rule 1 and the
// numbering for the usual graph — no rule-5 activation labels, every node in
// the execution order. Only the order within one producer reaches the table
// (an event's id is its sender's name rank, then its index among the
// sender's candidates), so one pass over the consumers suffices: each
// cross-stream pair once (first data edge, else control edge), counted per
// producer, and the table is filled from that list (no producer-ordered
// copy, no candidate list). Same table as the general walk (the differential
// test FastAndGeneralEdgeWalksAgree in sync_event_insertion_test.cc).
// Internal to the events module.
#ifndef NPUPLAN_EVENTS_SYNC_EVENT_FAST_PATH_H_
#define NPUPLAN_EVENTS_SYNC_EVENT_FAST_PATH_H_

#include "absl/status/status.h"
#include "npuplan/events/sync_event_rules.h"

namespace npuplan::events {

// True for the graphs FastEdgeEvents takes: no rule-5 activation labels
// (EventSkipped is logged in producer order) and every node in the execution
// order.
bool FastPathApplies(const InsertionState& st);

// 1. Edges (an EdgeWalk, for a graph FastPathApplies to): sets out.fast and
//    keeps the edge events in out.edges / per_sender / by_name. A graph with
//    a rule-4 error is handed to GeneralEdgeEvents, which reports the first
//    one in GE's order.
absl::Status FastEdgeEvents(InsertionState& st, FoundEvents& out);

// 4. NumberEvents for FoundEvents::fast: per sender, its edge events (data
//    edges in walk order, then control edges), then its other candidates.
//    Sets `w.num_events` before writing.
void NumberFastEvents(FoundEvents& found, TableWriter& w);

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_SYNC_EVENT_FAST_PATH_H_
