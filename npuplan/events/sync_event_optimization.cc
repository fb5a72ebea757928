// Two reductions over the inserted events.
//
// exact: one sweep over the slots in execution order keeping, per live slot,
// a vector clock c[s] = last position on stream s known to precede it. For a
// slot v its predecessors are its stream's state (the previous slot on it;
// with If/Case branches the state one run, taking one branch, guarantees:
// plan/branch_chains.h), activators whose activation reaches v first on its
// stream, and the senders of its candidate events. Per stream we keep the best and second-best
// clock value among the predecessors (with who gave the best), so "is sender u covered by some
// other predecessor" is O(1) per event and the sweep is O(k·(n+e)). Clocks are pooled and freed
// after their last reader.
//
// ge: the four GE rules in GE's order over main-stream events (ge_reduction.cc).
#include "npuplan/events/sync_event_optimization.h"

#include <algorithm>

#include "npuplan/events/event_options.h"
#include "npuplan/plan/branch_chains.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace events {
std::string_view RemovalName(Removal r) {
  switch (r) {
    case Removal::kKeep: return "keep";
    case Removal::kTransitive: return "transitive";
    case Removal::kGeSend: return "ge-send-rule";
    case Removal::kGeRecv: return "ge-recv-rule";
    case Removal::kGeActivation: return "ge-activation";
    case Removal::kStreamSwitch: return "stream-switch";
  }
  return "?";
}

ReceiverIndex BuildReceiverIndex(const Plan& plan, const SyncView& view, const ActivationInfo& act) {
  const auto& evs = plan.events.events;
  const size_t slots = view.num_slots();
  ReceiverIndex index;
  // The receiving slot of an event the sweep decides (both ends on a
  // stream, sender first), else -1: such an event is kept as is. Reads the
  // view's dense 4-byte stream array (denser than `info` for these random
  // lookups; the rank is the node id itself on a one-graph plan).
  auto sweep_to = [&](const SyncEvent& e, int32_t from) {
    const int32_t to = view.slot(e.recv, e.recv_attached);
    if (view.stream(from) < 0 || view.stream(to) < 0 || view.rank(from) >= view.rank(to)) return -1;
    return to;
  };

  // Candidate events and activation edges into each slot (CSR). Pred entry: (sender slot, event index or -1).
  BigVector<uint32_t>& begin = index.begin;
  begin.assign(slots + 1, 0);
  std::vector<std::pair<int32_t, int32_t>> act_edges;  // (to, from)
  for (const auto& [a, streams] : act.activated) {
    NodeId an(a);
    int32_t from = view.slot(an, -1);
    if (view.stream(from) < 0) continue;
    for (int64_t s : streams) {
      int32_t to = view.FirstSlotAfter(s, an);
      if (to >= 0 && view.stream(to) != view.stream(from)) act_edges.emplace_back(to, from);
    }
  }
  // Per event: its receiving slot when the sweep decides it, else -1.
  BigVector<int32_t> ev_to(evs.size());
  // The ge rules can use these lists when the table is in id order, every
  // main-stream event is in them, and each sender's main-stream events are
  // one run of the table (GE's order: by sender; `seen` marks the senders
  // whose run ended).
  RecordSlots record_slot(plan, view);  // a dynamic-path owner records after its subgraphs
  bool id_order = true;
  size_t main_outside = 0;
  bool sender_runs = true;
  NodeId run_sender;
  std::vector<uint64_t> seen((view.num_nodes() + 63) / 64, 0);
  // The table is in sender-name order: the receivers' entries are read at
  // random, so prefetch them this many events ahead.
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < evs.size(); ++i) {
    if (i + kAhead < evs.size()) {
      const SyncEvent& f = evs[i + kAhead];
      const int32_t t = view.slot(f.recv, f.recv_attached);
      view.PrefetchStream(t);
      __builtin_prefetch(&begin[t + 1]);
    }
    const SyncEvent& e = evs[i];
    if (i > 0 && e.id < evs[i - 1].id) id_order = false;
    const bool main = e.send_attached < 0 && e.recv_attached < 0;
    if (main && e.send != run_sender) {
      if (run_sender.valid()) seen[run_sender.index() / 64] |= uint64_t{1} << (run_sender.index() % 64);
      sender_runs &= (seen[e.send.index() / 64] >> (e.send.index() % 64) & 1) == 0;
      run_sender = e.send;
    }
    ev_to[i] = -1;
    if (SentBySwitch(view, e)) {
      ++index.switch_sent;
      main_outside += main;
      continue;
    }
    const int32_t to = sweep_to(e, record_slot.ForEvent(e));
    if (to < 0) {
      main_outside += main;
      continue;
    }
    ev_to[i] = to;
    ++begin[to + 1];
  }
  index.ge_ready = id_order && main_outside == 0 && sender_runs;
  index.activated.assign(static_cast<size_t>(std::max<int64_t>(view.num_streams(), 0)), false);
  for (const auto& [s, activators] : act.activators_of_stream) {
    if (s >= 0 && s < view.num_streams()) index.activated[static_cast<size_t>(s)] = true;
  }
  for (const auto& [to, from] : act_edges) ++begin[to + 1];
  for (size_t i = 0; i < slots; ++i) begin[i + 1] += begin[i];
  // Filled with begin[to] as the cursor (it ends as to's end, i.e. the next
  // slot's begin), then shifted back by one entry: no copy of `begin`.
  auto& preds = index.preds;
  preds.resize(begin[slots]);
  for (size_t i = 0; i < evs.size(); ++i) {
    if (i + kAhead < evs.size() && ev_to[i + kAhead] >= 0) __builtin_prefetch(&begin[ev_to[i + kAhead]]);
    if (ev_to[i] < 0) continue;
    const SyncEvent& e = evs[i];
    preds[begin[ev_to[i]]++] = {record_slot.ForEvent(e), static_cast<int32_t>(i)};
  }
  FreeStorage(ev_to);  // freed before `info` is allocated: a lower peak
  for (const auto& [to, from] : act_edges) preds[begin[to]++] = {from, -1};
  for (size_t i = slots; i > 0; --i) begin[i] = begin[i - 1];
  begin[0] = 0;
  index.info.resize(slots);
  for (size_t i = 0; i < slots; ++i) {
    index.info[i] = {static_cast<int32_t>(view.stream(static_cast<int32_t>(i))), view.pos(static_cast<int32_t>(i)), -1, 0};
  }
  return index;
}

BigVector<Removal> ExactReduction(const Plan& plan, const SyncView& view,
                                  const ActivationInfo& act) {
  ReceiverIndex index = BuildReceiverIndex(plan, view, act);
  return ExactReduction(plan, view, index);
}

namespace {

using SlotInfo = ReceiverIndex::SlotInfo;
using PredEntry = std::pair<int32_t, int32_t>;  // ReceiverIndex::preds: (sender slot, event index)

// Up to this many predecessor entries a slot's tests compare entries pair by
// pair; above, they use per-slot marks and per-stream best-two values.
constexpr uint32_t kPairwiseMax = 16;
// A predecessor entry whose event only repeats an earlier one (set in its event field).
constexpr int32_t kDuplicate = -3;

// Readers of each clock: its entries in `preds` (in receiver order, so
// mostly near the receiver: cache-friendly) and the chain (BranchChains::ChainRead).
void CountClockReaders(const SyncView& view, const BranchChains& chains, ReceiverIndex& index) {
  auto& info = index.info;
  for (const auto& pr : index.preds) ++info[pr.first].refs;
  for (int64_t s = 0; s < view.num_streams(); ++s) {
    for (int32_t slot : chains.ChainRead(view.stream_slots(s))) ++info[slot].refs;
  }
}

// The live slots' vector clocks, k entries each, in one pool: a clock is
// freed after its last reader (SlotInfo::refs) and its storage reused.
class ClockPool {
 public:
  ClockPool(size_t k, BigVector<SlotInfo>& info) : k_(k), info_(info) {}

  int32_t* clock(int32_t slot) {
    return pool_.data() + static_cast<size_t>(info_[slot].handle) * k_;
  }

  // A clock for `slot` (uninitialised). Other clocks' pointers taken before
  // this call may move; taken after, they stay valid until the next one.
  int32_t* Allocate(int32_t slot) {
    int32_t h;
    if (!free_list_.empty()) {
      h = free_list_.back();
      free_list_.pop_back();
    } else {
      h = static_cast<int32_t>(pool_.size() / k_);
      pool_.resize(pool_.size() + k_);
    }
    info_[slot].handle = h;
    return clock(slot);
  }

  // One reader of `slot`'s clock is done.
  void Release(int32_t slot) {
    SlotInfo& x = info_[slot];
    if (--x.refs <= 0 && x.handle >= 0) {
      free_list_.push_back(x.handle);
      x.handle = -1;
    }
  }

  // Every cache line of the clocks of w's predecessors that have one.
  void PrefetchPredecessorClocks(const ReceiverIndex& index, int32_t w) const {
    for (uint32_t j = index.begin[w]; j < index.begin[w + 1]; ++j) {
      if (const int32_t h = info_[index.preds[j].first].handle; h >= 0) {
        const char* c = reinterpret_cast<const char*>(pool_.data() + static_cast<size_t>(h) * k_);
        for (size_t b = 0; b < k_ * sizeof(int32_t); b += 64) __builtin_prefetch(c + b);
      }
    }
  }

 private:
  const size_t k_;
  BigVector<SlotInfo>& info_;
  BigVector<int32_t> pool_;  // huge pages: its clocks are read at random
  std::vector<int32_t> free_list_;
};

void PrefetchPredecessorHandles(const ReceiverIndex& index, int32_t w) {
  for (uint32_t j = index.begin[w]; j < index.begin[w + 1]; ++j) {
    __builtin_prefetch(&index.info[index.preds[j].first]);
  }
}

// A second event from the same sender slot into the same slot v only repeats
// the first: it is removed and takes no part in the covered tests (left in,
// each copy would cover the other and both would go). Found among v's own
// entries [lo, hi) (few, in cache); for a slot with many entries
// `dup_seen[u] == v` marks that slot u already sends an event into v.
void MarkDuplicateEvents(BigVector<PredEntry>& preds, uint32_t lo, uint32_t hi, int32_t v,
                         size_t slots, BigVector<int32_t>& dup_seen, BigVector<Removal>& out) {
  if (hi - lo <= kPairwiseMax) {
    for (uint32_t j = lo + 1; j < hi; ++j) {
      auto& [u, ev] = preds[j];
      if (ev < 0) continue;
      for (uint32_t j2 = lo; j2 < j; ++j2) {
        if (preds[j2].first == u && preds[j2].second >= 0) {
          out[ev] = Removal::kTransitive;
          ev = kDuplicate;
          break;
        }
      }
    }
  } else {
    if (dup_seen.empty()) dup_seen.assign(slots, -1);
    for (uint32_t j = lo; j < hi; ++j) {
      auto& [u, ev] = preds[j];
      if (ev < 0) continue;
      if (dup_seen[u] == v) {
        out[ev] = Removal::kTransitive;
        ev = kDuplicate;
      } else {
        dup_seen[u] = v;
      }
    }
  }
}

// v's clock (`c`, allocated before any clock pointer was taken): the
// element-wise max of its predecessors' clocks — `chain`, the state of its
// stream, and clock_of(j) per entry (nullptr: an entry that orders nothing);
// its own position is set by the caller after the covered tests.
template <class ClockOf>
void MergePredecessorClocks(int32_t* c, const int32_t* chain, uint32_t lo, uint32_t hi, size_t k,
                            const ClockOf& clock_of) {
  if (chain != nullptr) {
    std::copy_n(chain, k, c);
  } else {
    std::fill_n(c, k, -1);
  }
  for (uint32_t j = lo; j < hi; ++j) {
    const int32_t* w = clock_of(j);
    if (w == nullptr) continue;
    for (size_t x = 0; x < k; ++x) c[x] = std::max(c[x], w[x]);
  }
}

// An event u→v is covered when another predecessor entry (the chain
// predecessor, another event, an activation edge) already knows u's
// position on u's stream a (u's own clock holds exactly pos(u) there).
// Few predecessors (the usual case): ask each of the others, O(deg²) reads.
template <class ClockOf, class AtOf>
void MarkCoveredPairwise(const BigVector<SlotInfo>& info, const BigVector<PredEntry>& preds,
                         uint32_t lo, uint32_t hi, const int32_t* chain, const ClockOf& clock_of,
                         const AtOf& at_of, BigVector<Removal>& out) {
  for (uint32_t j = lo; j < hi; ++j) {
    const auto [u, ev] = preds[j];
    if (ev < 0) continue;
    const int32_t a = info[u].stream, u_pos = at_of(j);
    int32_t others = chain != nullptr ? chain[a] : -1;
    for (uint32_t j2 = lo; j2 < hi && others < u_pos; ++j2) {
      if (j2 == j || preds[j2].second == kDuplicate) continue;
      if (const int32_t* w = clock_of(j2); w != nullptr) others = std::max(others, w[a]);
    }
    if (others >= u_pos) out[ev] = Removal::kTransitive;
  }
}

// Per stream the best and second-best clock value among a slot's
// predecessors, with the entry that gave the best (-2: the chain predecessor).
struct BestTwo {
  explicit BestTwo(size_t k) : top1(k), top2(k), top1_by(k) {}
  std::vector<int32_t> top1, top2, top1_by;
};

// The same test for many predecessors: per stream the best two values, so
// "covered by some other entry" is one read per event.
template <class ClockOf, class AtOf>
void MarkCoveredByBestTwo(const BigVector<SlotInfo>& info, const BigVector<PredEntry>& preds,
                          uint32_t lo, uint32_t hi, const int32_t* chain, const ClockOf& clock_of,
                          const AtOf& at_of, size_t k, BestTwo& best, BigVector<Removal>& out) {
  auto& top1 = best.top1;
  auto& top2 = best.top2;
  auto& top1_by = best.top1_by;
  std::fill(top1.begin(), top1.end(), -1);
  std::fill(top2.begin(), top2.end(), -1);
  std::fill(top1_by.begin(), top1_by.end(), -1);
  auto offer = [&](const int32_t* cw, int32_t entry) {
    if (cw == nullptr) return;
    for (size_t x = 0; x < k; ++x) {
      const int32_t val = cw[x], t1 = top1[x];
      const bool gt = val > t1;
      top2[x] = std::max(top2[x], gt ? t1 : val);
      top1[x] = gt ? val : t1;
      top1_by[x] = gt ? entry : top1_by[x];
    }
  };
  offer(chain, -2);
  for (uint32_t j = lo; j < hi; ++j) {
    if (preds[j].second != kDuplicate) offer(clock_of(j), static_cast<int32_t>(j));
  }
  for (uint32_t j = lo; j < hi; ++j) {
    const auto [u, ev] = preds[j];
    if (ev < 0) continue;
    const int32_t a = info[u].stream, u_pos = at_of(j);
    const int32_t others = top1_by[a] == static_cast<int32_t>(j) ? top2[a] : top1[a];
    if (others >= u_pos) out[ev] = Removal::kTransitive;
  }
}

// The pool's clocks as BranchChains reads them.
class PoolChainClocks : public ChainClocks {
 public:
  PoolChainClocks(ClockPool& clocks, size_t k) : clocks_(clocks), k_(k) {}
  void Read(int32_t slot, int32_t* out) override { std::copy_n(clocks_.clock(slot), k_, out); }
  void Release(int32_t slot) override { clocks_.Release(slot); }

 private:
  ClockPool& clocks_;
  size_t k_;
};

// Each entry's clock as v sees it (BranchChains::Sender), and the position on
// its sender's stream that another entry must know to cover it: the sender's
// own, or — for an event out of a branch v is outside of, which
// stream-activation moves to the If's exit gate on the sender's stream — the
// state after the If there and the If's last slot on it. Two events through
// one such state are one ordering (one gate): the later is a duplicate. An
// attached sender or one on a stream some node activates gets its gate on
// another stream (its node's, the activator's) and gives v nothing.
void SourcesAsSeen(const BranchChains& chains, ClockPool& clocks, BigVector<PredEntry>& preds,
                   uint32_t lo, uint32_t hi, int32_t v, std::vector<const int32_t*>& sources,
                   std::vector<int32_t>& at, std::vector<int32_t>& exits,
                   const BigVector<SlotInfo>& info, BigVector<Removal>& out) {
  sources.assign(hi - lo, nullptr);
  at.assign(hi - lo, -1);
  exits.assign(hi - lo, -1);
  for (uint32_t j = lo; j < hi; ++j) {
    auto& [u, ev] = preds[j];
    const BranchChains::Source from = chains.Sender(u, v);
    at[j - lo] = info[u].pos;
    if (from.slot >= 0) {
      sources[j - lo] = clocks.clock(from.slot);
      continue;
    }
    if (from.flat == nullptr) continue;
    sources[j - lo] = from.flat;
    at[j - lo] = from.pos;
    exits[j - lo] = from.exit;
    if (ev < 0) continue;
    for (uint32_t j2 = lo; j2 < j; ++j2) {
      if (exits[j2 - lo] == from.exit && preds[j2].second >= 0) {
        out[ev] = Removal::kTransitive;
        ev = kDuplicate;
        break;
      }
    }
  }
}

}  // namespace

BigVector<Removal> ExactReduction(const Plan& plan, const SyncView& view, ReceiverIndex& index) {
  const auto& evs = plan.events.events;
  BigVector<Removal> out(evs.size(), Removal::kKeep);
  if (index.switch_sent > 0) {
    for (size_t i = 0; i < evs.size(); ++i) {
      if (SentBySwitch(view, evs[i])) out[i] = Removal::kStreamSwitch;
    }
  }
  const size_t slots = view.num_slots();
  const size_t k = static_cast<size_t>(std::max<int64_t>(view.num_streams(), 1));
  const BigVector<uint32_t>& begin = index.begin;
  auto& preds = index.preds;
  auto& info = index.info;
  // A run takes one branch of each If/Case (docs/events.md, "Branches in the sweeps").
  BranchChains chains(plan.model, view, k);
  CountClockReaders(view, chains, index);
  if (chains.active()) {
    for (size_t v = 0; v < slots; ++v) {
      for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) {
        const int32_t u = preds[j].first;
        if (view.attached_of(u) < 0 && !index.activated[static_cast<size_t>(view.stream(u))])
          chains.ExpectSender(u, static_cast<int32_t>(v));
      }
    }
  }
  ClockPool clocks(k, info);
  PoolChainClocks chain_clocks(clocks, k);
  BestTwo best(k);
  BigVector<int32_t> dup_seen;  // MarkDuplicateEvents' marks, allocated on first use
  // With branches, per entry of v: its clock as v sees it, the position to
  // cover, and the exit state it comes through (SourcesAsSeen).
  std::vector<const int32_t*> sources;
  std::vector<int32_t> at, exits;
  // Predecessors are earlier slots anywhere in the order (their clocks sit at
  // random in the pool): prefetch the next slots' handles, then the clocks
  // they name, this many slots ahead.
  const auto& slot_order = view.slot_order();
  constexpr size_t kHandlesAhead = 12, kClocksAhead = 4;
  for (size_t i = 0; i < slot_order.size(); ++i) {
    if (i + kHandlesAhead < slot_order.size())
      PrefetchPredecessorHandles(index, slot_order[i + kHandlesAhead]);
    if (i + kClocksAhead < slot_order.size())
      clocks.PrefetchPredecessorClocks(index, slot_order[i + kClocksAhead]);
    const int32_t v = slot_order[i];
    const int64_t s = view.stream(v);
    if (s < 0) continue;
    const int32_t p = view.pos(v);
    const BranchChains::Source chain_src = chains.Before(v, chain_clocks);
    const uint32_t lo = begin[v], hi = begin[v + 1];
    MarkDuplicateEvents(preds, lo, hi, v, slots, dup_seen, out);
    int32_t* c = clocks.Allocate(v);  // first: the pointers below stay valid
    const int32_t* chain = chain_src.slot >= 0 ? clocks.clock(chain_src.slot) : chain_src.flat;
    auto mark = [&](const auto& clock_of, const auto& at_of) {
      MergePredecessorClocks(c, chain, lo, hi, k, clock_of);
      if (hi - lo <= kPairwiseMax) {
        MarkCoveredPairwise(info, preds, lo, hi, chain, clock_of, at_of, out);
      } else {
        MarkCoveredByBestTwo(info, preds, lo, hi, chain, clock_of, at_of, k, best, out);
      }
    };
    if (!chains.active()) {
      mark([&](uint32_t j) -> const int32_t* { return clocks.clock(preds[j].first); },
           [&](uint32_t j) { return info[preds[j].first].pos; });
    } else {
      SourcesAsSeen(chains, clocks, preds, lo, hi, v, sources, at, exits, info, out);
      mark([&](uint32_t j) { return sources[j - lo]; }, [&](uint32_t j) { return at[j - lo]; });
    }
    c[s] = p;
    if (chain_src.slot >= 0) clocks.Release(chain_src.slot);
    chains.After(v);
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) clocks.Release(preds[j].first);
    if (info[v].refs == 0) {
      ++info[v].refs;
      clocks.Release(v);
    }
  }
  chains.Finish(chain_clocks);
  return out;
}

}  // namespace events

absl::StatusOr<bool> SyncEventOptimization::Run(Plan& plan, PassContext& ctx) {
  NPUPLAN_ASSIGN_OR_RETURN(const events::EventOptions opts, events::ReadEventOptions(ctx.options));
  const events::EventOptimization mode = opts.optimization;
  const Model& m = plan.model;
  const int64_t naive = static_cast<int64_t>(plan.events.events.size());
  if (!plan.events.counts.count("naive")) plan.events.counts["naive"] = naive;
  events::SyncView view(plan, Has(plan.established, IrProperty::kPhysicalStreams));
  events::ActivationInfo act = events::ComputeActivation(
      m, view, Has(plan.established, IrProperty::kPhysicalStreams) ? &plan.streams.split_to_logical : nullptr);
  // One receiver index for both reductions: the ge rules read it, the exact sweep then consumes it.
  BigVector<events::Removal> ge, exact;
  {
    events::ReceiverIndex index = events::BuildReceiverIndex(plan, view, act);
    ge = events::GeReduction(plan, view, act, &index);
    exact = events::ExactReduction(plan, view, index);
  }
  auto kept = [](const BigVector<events::Removal>& r) {
    return static_cast<int64_t>(std::count(r.begin(), r.end(), events::Removal::kKeep));
  };
  plan.events.counts["ge"] = kept(ge);
  plan.events.counts["exact"] = kept(exact);
  ctx.log.Record(name(), "EventCounts", "", Field("naive", plan.events.counts["naive"]),
                 Field("ge", plan.events.counts["ge"]), Field("exact", plan.events.counts["exact"]),
                 Field("mode", events::EventOptimizationName(mode)));
  if (mode == events::EventOptimization::kNone) return false;
  const BigVector<events::Removal>& chosen = mode == events::EventOptimization::kGe ? ge : exact;
  int64_t removed = 0;
  size_t n_kept = 0;  // compacted in place
  for (size_t i = 0; i < plan.events.events.size(); ++i) {
    SyncEvent& e = plan.events.events[i];
    if (chosen[i] == events::Removal::kKeep) {
      if (n_kept != i) plan.events.events[n_kept] = std::move(e);
      ++n_kept;
      continue;
    }
    ++removed;
    if (!ctx.log.enabled()) continue;
    ctx.log.Record(name(), "EventRemoved", "", Field("event", e.id), Field("from", m.node(e.send).name),
                   Field("to", m.node(e.recv).name), Field("reason", events::RemovalName(chosen[i])));
  }
  plan.events.events.resize(n_kept);
  events::RenumberGeOrder(plan);
  ctx.stats.Set(name(), "events_removed", removed);
  ctx.stats.Set(name(), "events_kept", static_cast<int64_t>(plan.events.events.size()));
  return removed > 0;
}

}  // namespace npuplan
