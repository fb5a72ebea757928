#include "npuplan/events/sync_event_insertion.h"

#include "npuplan/events/event_options.h"
#include "npuplan/events/sync_event_fast_path.h"
#include "npuplan/events/sync_event_rules.h"
#include "npuplan/plan/loop_order.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {

// The steps, one per numbered rule, are in sync_event_rules.h; the fast
// path of rule 1 (and its numbering) in sync_event_fast_path.h.
absl::StatusOr<bool> SyncEventInsertion::Run(Plan& plan, PassContext& ctx) {
  const Model& m = plan.model;
  NPUPLAN_ASSIGN_OR_RETURN(const events::EventOptions opts, events::ReadEventOptions(ctx.options));
  const bool notify = opts.notify;
  if (notify && IsDynamicStreamMode(plan.streams.mode)) {
    return absl::InvalidArgumentError(StrCat("[", name(), "] option ",
                                             ctx.options.ReadableName("ge.event"),
                                             "=notify: notifies are for static-shape "
                                             "graphs only, but streams were assigned in mode '",
                                             StreamModeName(plan.streams.mode), "'"));
  }
  // The fast path ranks senders by name: the view's node pass keeps the
  // name prefixes for that (no second pass over the Nodes).
  events::InsertionState st(plan, ctx.log, name(), /*name_prefixes=*/fast_path_);
  // Node ids fit in 30 bits: the edge entries carry two flag bits.
  const size_t n = m.num_nodes();
  if (n >= (size_t{1} << 30)) {
    return absl::InvalidArgumentError(StrCat("[", name(), "] ", n, " nodes: at most 2^30 are supported"));
  }
  // With notifies, an event between two loop levels stays an event; the
  // fast path's numbering makes every edge event one kind.
  const std::vector<int32_t> loop_of_graph =
      notify ? InnermostLoopOwners(m) : std::vector<int32_t>();
  // The usual graph takes the one-pass walk: no producer-ordered copy, no candidate list.
  const events::EdgeWalk edge_events =
      fast_path_ && loop_of_graph.empty() && events::FastPathApplies(st)
          ? events::FastEdgeEvents
          : events::GeneralEdgeEvents;
  events::FoundEvents found;
  NPUPLAN_RETURN_IF_ERROR(edge_events(st, found));                                  // 1
  const std::vector<NodeId> end_of = events::SubgraphEntryAndEndEvents(st, found);  // 2
  events::SubgraphInputEvents(st, end_of, found);                                   // 2b
  events::AttachedStreamEvents(st, found);                                          // 3
  events::DropRepeatedPairs(found);                                                 // 4
  EventTable table = events::NumberEvents(st, found, notify, loop_of_graph);

  bool changed = table.events.size() != plan.events.events.size() || !plan.events.events.empty();
  plan.events = std::move(table);
  if (ctx.log.enabled()) {
    const events::SyncView& view = st.view;
    for (const SyncEvent& e : plan.events.events) {
      ctx.log.Record(name(), "EventInserted", "", Field("event", e.id), Field("kind", SyncKindName(e.kind)),
                     Field("from", StrCat("s", view.stream(view.slot(e.send, e.send_attached)), ":", m.node(e.send).name)),
                     Field("to", StrCat("s", view.stream(view.slot(e.recv, e.recv_attached)), ":", m.node(e.recv).name)),
                     Field("reason", SyncReasonName(e.reason)));
    }
  }
  plan.events.counts["naive"] = static_cast<int64_t>(plan.events.events.size());
  ctx.stats.Set(name(), "events_inserted", static_cast<int64_t>(plan.events.events.size()));
  ctx.stats.Set(name(), "skipped_by_activation", st.skipped_activation);
  return changed || !plan.events.events.empty();
}

}  // namespace npuplan
