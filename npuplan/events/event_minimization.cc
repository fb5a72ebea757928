// The transitive reduction of the final plan's orderings (event_minimization.h).
//
// Slot v's predecessors: its previous slot on its *physical* stream, the
// activators whose activation reaches v first on its physical stream, and the
// senders of its events. v's clock is the element-wise max of theirs, indexed
// by logical stream, with c[own logical stream] = v's logical position. That
// is exact only while every slot's clock covers its logical predecessor (the
// split event, or the slot before it on the same piece, provides it); the
// sweep checks that at every slot and gives up (keeps every event) otherwise.
// An event u→v is implied by the rest when u precedes v on one physical
// stream, u also activates v, or another predecessor w ≠ u has u in its clock
// (c_w[stream(u)] ≥ pos(u)): per logical stream the best and second-best
// value over v's distinct predecessors (and which gave the best) answer that
// in O(1), so the sweep is O(k·(n+e)).
#include "npuplan/events/event_minimization.h"

#include <algorithm>

#include "npuplan/events/event_options.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace events {
namespace {

constexpr int32_t kActivation = -1;

}  // namespace

std::vector<bool> RedundantAfterSplit(const Plan& plan) {
  const Model& m = plan.model;
  const auto& evs = plan.events.events;
  const SyncView lv(plan, /*physical=*/false);
  const SyncView pv(plan, /*physical=*/true);
  const size_t slots = lv.num_slots();
  for (size_t s = 0; s < slots; ++s) {
    const int32_t slot = static_cast<int32_t>(s);
    if ((pv.stream(slot) >= 0) != (lv.stream(slot) >= 0)) return {};  // outside the model
  }
  // Entries per receiving slot (CSR): (sender slot, event index or kActivation).
  std::vector<std::pair<int32_t, std::pair<int32_t, int32_t>>> in;  // (to, (from, event))
  RecordSlots record(plan, lv);  // a dynamic-path owner records after its subgraphs
  for (size_t i = 0; i < evs.size(); ++i) {
    const SyncEvent& e = evs[i];
    if (OrdersNextIteration(e)) continue;  // orders the next iteration: kept
    const int32_t from = record.ForEvent(e), to = lv.slot(e.recv, e.recv_attached);
    if (lv.stream(from) < 0 || lv.stream(to) < 0 || lv.rank(from) >= lv.rank(to))
      continue;  // kept as is
    in.push_back({to, {from, static_cast<int32_t>(i)}});
  }
  const ActivationInfo act = ComputeActivation(m, lv, &plan.streams.split_to_logical);
  for (const auto& [a, streams] : act.activated) {
    const NodeId an(a);
    const int32_t from = pv.slot(an, -1);
    if (pv.stream(from) < 0) continue;
    for (int64_t s : streams) {
      const int32_t to = pv.FirstSlotAfter(s, an);
      if (to >= 0 && pv.stream(to) != pv.stream(from)) in.push_back({to, {from, kActivation}});
    }
  }
  std::stable_sort(in.begin(), in.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<uint32_t> begin(slots + 1, 0);
  for (const auto& x : in) ++begin[x.first + 1];
  for (size_t i = 0; i < slots; ++i) begin[i + 1] += begin[i];

  // Clock pool: a clock is freed after its last reader (edges, physical successor).
  const size_t k = static_cast<size_t>(std::max<int64_t>(lv.num_streams(), 1));
  std::vector<int32_t> handle(slots, -1), refs(slots, 0), pool, free_list;
  for (const auto& x : in) ++refs[x.second.first];
  for (int64_t s = 0; s < pv.num_streams(); ++s) {
    const auto ss = pv.stream_slots(s);
    for (size_t i = 0; i + 1 < ss.size(); ++i) ++refs[ss[i]];
  }
  auto clock = [&](int32_t slot) { return pool.data() + static_cast<size_t>(handle[slot]) * k; };
  auto unref = [&](int32_t slot) {
    if (--refs[slot] <= 0 && handle[slot] >= 0) {
      free_list.push_back(handle[slot]);
      handle[slot] = -1;
    }
  };
  std::vector<bool> out(evs.size(), false);
  std::vector<int32_t> top1(k), top2(k), top1_by(k), mark(slots, -1);
  std::vector<int32_t> preds;  // v's distinct-or-not predecessor slots
  for (int32_t v : lv.slot_order()) {
    const int64_t ls = lv.stream(v);
    if (ls < 0) continue;
    const int64_t ps = pv.stream(v);
    const int32_t chain = pv.pos(v) > 0 ? pv.stream_slots(ps)[pv.pos(v) - 1] : -1;
    preds.clear();
    if (chain >= 0) preds.push_back(chain);
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) preds.push_back(in[j].second.first);
    if (free_list.empty()) {
      free_list.push_back(static_cast<int32_t>(pool.size() / k));
      pool.resize(pool.size() + k);
    }
    handle[v] = free_list.back();
    free_list.pop_back();
    std::fill(top1.begin(), top1.end(), -1);
    std::fill(top2.begin(), top2.end(), -1);
    std::fill(top1_by.begin(), top1_by.end(), -1);
    for (int32_t w : preds) {
      const int32_t* c = clock(w);
      for (size_t x = 0; x < k; ++x) {
        if (w == top1_by[x]) {
          top1[x] = std::max(top1[x], c[x]);
        } else if (c[x] > top1[x]) {
          top2[x] = top1[x];
          top1[x] = c[x];
          top1_by[x] = w;
        } else {
          top2[x] = std::max(top2[x], c[x]);
        }
      }
    }
    const int32_t p = lv.pos(v);
    if (top1[ls] < p - 1)
      return {};  // the logical predecessor does not precede v: outside the model
    // An activation by u or an earlier event from u (a duplicate) orders the same pair:
    // then `mark[u] == v`.
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) {
      if (in[j].second.second == kActivation) mark[in[j].second.first] = v;
    }
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) {
      const auto [u, ev] = in[j].second;
      if (ev == kActivation) continue;
      const bool implied = pv.stream(u) == ps || u == chain || mark[u] == v;
      mark[u] = v;
      const int64_t a = lv.stream(u);
      const int32_t other = top1_by[a] == u ? top2[a] : top1[a];
      out[ev] = implied || other >= lv.pos(u);
    }
    int32_t* c = clock(v);
    std::copy(top1.begin(), top1.end(), c);
    c[ls] = p;
    for (int32_t w : preds) unref(w);
    if (refs[v] == 0) {
      ++refs[v];
      unref(v);
    }
  }
  return out;
}

}  // namespace events

absl::StatusOr<bool> EventMinimization::Run(Plan& plan, PassContext& ctx) {
  NPUPLAN_ASSIGN_OR_RETURN(const events::EventOptions opts, events::ReadEventOptions(ctx.options));
  // The same reading as sync-event-optimization's: an empty value is exact.
  if (opts.optimization != events::EventOptimization::kExact) return false;
  const std::vector<bool> redundant = events::RedundantAfterSplit(plan);
  if (redundant.empty() && !plan.events.events.empty()) {
    ctx.log.Record(name(), "EventMinimum", "", Field("events", plan.events.events.size()),
                   Field("minimum", "unknown"));
    return false;
  }
  const Model& m = plan.model;
  auto& evs = plan.events.events;
  int64_t removed = 0, split_removed = 0;
  size_t n_kept = 0;  // compacted in place, table order kept
  for (size_t i = 0; i < evs.size(); ++i) {
    const SyncEvent& e = evs[i];
    if (!redundant[i]) {
      if (n_kept != i) evs[n_kept] = e;
      ++n_kept;
      continue;
    }
    ++removed;
    split_removed += e.reason == SyncReason::kSplit;
    ctx.log.Record(name(), "EventRemoved", "", Field("event", e.id),
                   Field("from", m.node(e.send).name), Field("to", m.node(e.recv).name),
                   Field("reason", "after-split"));
  }
  evs.resize(n_kept);
  if (removed > 0) events::CompactIds(plan.events);
  plan.events.counts["minimum"] = static_cast<int64_t>(evs.size());
  ctx.log.Record(name(), "EventMinimum", "", Field("events", evs.size()),
                 Field("minimum", evs.size()), Field("removed", removed),
                 Field("split_removed", split_removed));
  ctx.stats.Set(name(), "events_removed", removed);
  return true;
}

}  // namespace npuplan
