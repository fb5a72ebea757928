// The transitive reduction of the final plan's orderings (event_minimization.h).
//
// Slot v's predecessors: its *physical* stream's state (its previous slot
// there; with If/Case branches the state one run guarantees:
// plan/branch_chains.h), the activators whose activation reaches v first on
// its physical stream, and the senders of its events. v's clock is the element-wise max of theirs,
// indexed by logical stream, with c[own logical stream] = v's logical position. That is exact only
// while every slot's clock covers its logical predecessor (the split event, or the slot before it
// on the same piece, provides it); the sweep checks that at every slot and gives up (keeps every
// event) otherwise. An event u→v is implied by the rest when u precedes v on one physical stream, u
// also activates v, or another predecessor w ≠ u has u in its clock (c_w[stream(u)] ≥ pos(u)): per
// logical stream the best and second-best value over v's distinct predecessors (and which gave the
// best) answer that in O(1), so the sweep is O(k·(n+e)).
#include "npuplan/events/event_minimization.h"

#include <algorithm>

#include "npuplan/events/event_options.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/plan/branch_chains.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace events {
namespace {

constexpr int32_t kActivation = -1;
constexpr int32_t kFlatChain = -2;  // a predecessor clock that is the chain's state, no slot's
// A predecessor's key: its slot, or (< kFlatChain) the exit state it reaches v through.
int32_t ExitKey(int32_t exit) { return kFlatChain - 1 - exit; }
int32_t KeyOf(int32_t u, const BranchChains::Source& from) {
  return from.slot < 0 && from.flat != nullptr ? ExitKey(from.exit) : u;
}

// The sweep's clocks as BranchChains reads them.
template <class ClockOf, class Unref>
class ChainClocksOf : public ChainClocks {
 public:
  ChainClocksOf(size_t k, ClockOf& clock, Unref& unref) : k_(k), clock_(clock), unref_(unref) {}
  void Read(int32_t slot, int32_t* out) override { std::copy_n(clock_(slot), k_, out); }
  void Release(int32_t slot) override { unref_(slot); }

 private:
  size_t k_;
  ClockOf& clock_;
  Unref& unref_;
};

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

  // Clock pool: a clock is freed after its last reader (edges, the chain).
  const size_t k = static_cast<size_t>(std::max<int64_t>(lv.num_streams(), 1));
  // A run takes one branch of each If/Case (docs/events.md, "Branches in the
  // sweeps"): the physical chain's states, indexed by logical stream.
  std::vector<int32_t> logical_of(static_cast<size_t>(std::max<int64_t>(pv.num_streams(), 0)), 0);
  for (size_t s = 0; s < slots; ++s) {
    const int32_t slot = static_cast<int32_t>(s);
    if (pv.stream(slot) >= 0) logical_of[pv.stream(slot)] = static_cast<int32_t>(lv.stream(slot));
  }
  BranchChains chains(m, pv, k, std::move(logical_of));
  for (const auto& [to, edge] : in) chains.ExpectSender(edge.first, to);
  std::vector<int32_t> handle(slots, -1), refs(slots, 0), pool, free_list;
  for (const auto& x : in) ++refs[x.second.first];
  for (int64_t s = 0; s < pv.num_streams(); ++s) {
    for (int32_t slot : chains.ChainRead(pv.stream_slots(s))) ++refs[slot];
  }
  auto clock = [&](int32_t slot) { return pool.data() + static_cast<size_t>(handle[slot]) * k; };
  auto unref = [&](int32_t slot) {
    if (--refs[slot] <= 0 && handle[slot] >= 0) {
      free_list.push_back(handle[slot]);
      handle[slot] = -1;
    }
  };
  ChainClocksOf chain_clocks(k, clock, unref);
  std::vector<bool> out(evs.size(), false);
  std::vector<int32_t> top1(k), top2(k), top1_by(k), mark(slots, -1);
  // v's predecessor clocks, with who gave each (kFlatChain: the chain's state).
  std::vector<std::pair<int32_t, const int32_t*>> preds;
  std::vector<BranchChains::Source> senders;  // per edge into v
  std::vector<int32_t> marked_exits;
  for (int32_t v : lv.slot_order()) {
    const int64_t ls = lv.stream(v);
    if (ls < 0) continue;
    const int64_t ps = pv.stream(v);
    const BranchChains::Source chain_src = chains.Before(v, chain_clocks, lv.pos(v));
    const int32_t chain = chain_src.slot;
    if (free_list.empty()) {
      free_list.push_back(static_cast<int32_t>(pool.size() / k));
      pool.resize(pool.size() + k);
    }
    handle[v] = free_list.back();
    free_list.pop_back();
    preds.clear();
    if (chain >= 0) preds.push_back({chain, clock(chain)});
    if (chain_src.flat != nullptr) preds.push_back({kFlatChain, chain_src.flat});
    // Each edge's sender as v sees it: its slot, or the state after the If it
    // lies in (a dynamic-path owner records after its subgraphs), keyed by
    // KeyOf; nothing between sibling branches.
    senders.clear();
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) {
      const int32_t u = in[j].second.first;
      const BranchChains::Source from = chains.Sender(u, v);
      senders.push_back(from);
      if (from.slot >= 0) {
        preds.push_back({u, clock(u)});
      } else if (from.flat != nullptr) {
        preds.push_back({ExitKey(from.exit), from.flat});
      }
    }
    std::fill(top1.begin(), top1.end(), -1);
    std::fill(top2.begin(), top2.end(), -1);
    std::fill(top1_by.begin(), top1_by.end(), -1);
    for (const auto& [w, c] : preds) {
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
    // (An exit state's key is marked in `marked_exits`.)
    marked_exits.clear();
    auto marked = [&](int32_t key) {
      return key >= 0
                 ? mark[key] == v
                 : std::find(marked_exits.begin(), marked_exits.end(), key) != marked_exits.end();
    };
    auto set_mark = [&](int32_t key) {
      if (key >= 0) {
        mark[key] = v;
      } else {
        marked_exits.push_back(key);
      }
    };
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) {
      if (in[j].second.second == kActivation)
        set_mark(KeyOf(in[j].second.first, senders[j - begin[v]]));
    }
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) {
      const auto [u, ev] = in[j].second;
      if (ev == kActivation) continue;
      const BranchChains::Source& from = senders[j - begin[v]];
      const int32_t key = KeyOf(u, from);
      const bool implied = pv.stream(u) == ps || u == chain || marked(key);
      set_mark(key);
      const int64_t a = lv.stream(u);
      const int32_t other = top1_by[a] == key ? top2[a] : top1[a];
      out[ev] = implied || other >= (key >= 0 ? lv.pos(u) : from.pos);
    }
    int32_t* c = clock(v);
    std::copy(top1.begin(), top1.end(), c);
    c[ls] = p;
    if (chain >= 0) unref(chain);
    chains.After(v);
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) unref(in[j].second.first);
    if (refs[v] == 0) {
      ++refs[v];
      unref(v);
    }
  }
  chains.Finish(chain_clocks);
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
