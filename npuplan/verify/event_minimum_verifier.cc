// [event-minimum]: recomputes the fewest events the plan needs, apart from
// event-minimization (which reduces the table alone).
//
// The graph: the slots of nodes with a stream that are not Send/Recv nodes;
// free edges F = physical-stream order (Send/Recv nodes skipped) and
// activation; required edges R = the verifier's own dependencies, the logical
// order across a split, and the table's events (recorded where
// RecordSlots says). Every R edge between different physical streams that is
// in the transitive reduction of F ∪ R (no other path, not an F edge) needs
// an event of its own; every other one is implied. Loop events order the next
// iteration (outside the DAG) and each counts as needed. With the events in
// R the count is the minimum for the orderings the table imposes — the
// dependencies' minimum whenever every event is implied by dependencies
// (insertion only places events on dependencies: docs/events.md).
//
// Clocks are indexed by logical stream with positions among the counted
// slots: R holds the logical order, so "last position known to precede"
// describes the whole set of predecessors.
#include <algorithm>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/plan/branch_chains.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/clock_store.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {
namespace {

constexpr int32_t kFlatChain = -2;  // an entry that is the chain's state, no slot's
// The key of an entry that reaches v through the state after an If (< kFlatChain).
int32_t ExitKey(int32_t exit) { return kFlatChain - 1 - exit; }

// The sweep's clocks as BranchChains reads them: a slot the chain releases
// no longer heads its stream.
template <class Drop>
class MinimumChainClocks : public ChainClocks {
 public:
  MinimumChainClocks(ClockStore& clocks, const std::vector<int32_t>& clock_of,
                     std::vector<bool>& heads, Drop& drop)
      : clocks_(clocks), clock_of_(clock_of), heads_(heads), drop_(drop) {}
  void Read(int32_t slot, int32_t* out) override {
    const int32_t* c = clocks_.get(clock_of_[slot]);
    std::copy(c, c + clocks_.k(), out);
  }
  void Release(int32_t slot) override {
    heads_[slot] = false;
    drop_(slot);
  }

 private:
  ClockStore& clocks_;
  const std::vector<int32_t>& clock_of_;
  std::vector<bool>& heads_;
  Drop& drop_;
};

}  // namespace

absl::Status VerifyEventMinimum(const Plan& plan, const SyncView& view, const SyncView& logical,
                                const ActivationInfo& act, const std::vector<Dep>& deps,
                                const NodeTypes& types) {
  auto fail = [](std::string_view what) {
    return absl::InternalError(StrCat("verifier[event-minimum]: ", what));
  };
  const Model& m = plan.model;
  const int64_t claimed = plan.events.counts.at("minimum");
  const size_t slots = logical.num_slots();
  std::vector<bool> counted(slots, false);
  for (size_t s = 0; s < slots; ++s) {
    const int32_t slot = static_cast<int32_t>(s);
    if ((view.stream(slot) >= 0) != (logical.stream(slot) >= 0)) {
      return fail(StrCat("event_counts.minimum is claimed but node '",
                         m.node(logical.node_of(slot)).name,
                         "' has a physical stream and no logical one (or the reverse)"));
    }
    counted[s] = logical.stream(slot) >= 0 && !types.sync(logical.node_of(slot));
  }
  // Entries per receiving slot: (sender slot, free?).
  std::vector<std::pair<int32_t, std::pair<int32_t, bool>>> in;
  for (const Dep& d : deps) {
    if (counted[d.from] && counted[d.to]) in.push_back({d.to, {d.from, false}});
  }
  int64_t loop_events = 0;
  RecordSlots record(plan, logical);
  for (const SyncEvent& e : plan.events.events) {
    if (OrdersNextIteration(e)) {
      ++loop_events;
      continue;
    }
    const int32_t from = record.ForEvent(e), to = logical.slot(e.recv, e.recv_attached);
    if (counted[from] && counted[to]) in.push_back({to, {from, false}});
  }
  for (const auto& [a, streams] : act.activated) {
    const NodeId an(a);
    const int32_t from = view.slot(an, -1);
    if (!counted[from]) continue;
    for (int64_t s : streams) {
      int32_t to = view.FirstSlotAfter(s, an);
      if (to < 0) continue;
      // A Recv node opening the stream runs first; the activation reaches the slot after it.
      const auto ss = view.stream_slots(view.stream(to));
      for (size_t p = static_cast<size_t>(view.pos(to)); p < ss.size() && !counted[to]; ++p)
        to = ss[p];
      if (counted[to] && view.stream(to) != view.stream(from)) in.push_back({to, {from, true}});
    }
  }
  std::stable_sort(in.begin(), in.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<uint32_t> begin(slots + 1, 0);
  for (const auto& x : in) ++begin[x.first + 1];
  for (size_t i = 0; i < slots; ++i) begin[i + 1] += begin[i];

  const size_t k = static_cast<size_t>(std::max<int64_t>(logical.num_streams(), 1));
  std::vector<int32_t> last_phys(static_cast<size_t>(std::max<int64_t>(view.num_streams(), 1)), -1);
  std::vector<int32_t> last_log(k, -1), next_pos(k, 0), pos(slots, -1);
  // Clocks of every counted slot, freed after the last reader.
  std::vector<int32_t> refs(slots, 0);
  for (const auto& x : in) ++refs[x.second.first];
  ClockStore clocks(k);
  std::vector<int32_t> clock_of(slots, -1);  // handle in `clocks`, -1 none
  // A run takes one branch of each If/Case: the physical chain's states
  // (BranchChains, over the counted slots), indexed by logical stream; an
  // edge between sibling branches orders nothing, one out of a branch v is
  // outside of gives v no clock (docs/events.md, "Branches in the sweeps").
  std::vector<int32_t> logical_of(static_cast<size_t>(std::max<int64_t>(view.num_streams(), 0)), 0);
  for (size_t s = 0; s < slots; ++s) {
    const int32_t slot = static_cast<int32_t>(s);
    if (view.stream(slot) >= 0)
      logical_of[view.stream(slot)] = static_cast<int32_t>(logical.stream(slot));
  }
  BranchChains chains(m, view, k, std::move(logical_of));
  for (const auto& [to, edge] : in) chains.ExpectSender(edge.first, to);
  std::vector<bool> heads(chains.active() ? slots : 0, false);  // slots the chain still reads
  auto drop = [&](int32_t w) {
    if (w < 0) return;
    const bool chained = chains.active() ? heads[w] : last_phys[view.stream(w)] == w;
    if (clock_of[w] >= 0 && refs[w] <= 0 && !chained && last_log[logical.stream(w)] != w) {
      clocks.Release(clock_of[w]);
      clock_of[w] = -1;
    }
  };
  MinimumChainClocks chain_clocks(clocks, clock_of, heads, drop);
  std::vector<int32_t> top1(k), top2(k), top1_by(k), mark(slots, -1);
  struct Entry {
    int32_t w;         // the predecessor slot (kFlatChain: the chain's state)
    bool free;         // stream order or activation (not a required pair)
    const int32_t* c;  // its clock as v sees it, nullptr for none
    int32_t key = -1;  // w, or ExitKey for the state after an If it reaches v through
    int32_t at = -1;   // the position v must know on w's logical stream
  };
  std::vector<Entry> entries;
  std::vector<int32_t> marked_exits;
  auto clock = [&](int32_t w) -> const int32_t* { return clocks.get(clock_of[w]); };
  int64_t needed = 0;
  for (int32_t v : logical.slot_order()) {
    if (!counted[v]) continue;
    const int64_t ls = logical.stream(v), ps = view.stream(v);
    entries.clear();
    int32_t chain = last_phys[ps];
    const int32_t lchain = last_log[ls];
    if (chains.active()) {
      const BranchChains::Source src = chains.Before(v, chain_clocks, next_pos[ls]);
      chain = src.slot;
      if (src.flat != nullptr) entries.push_back({kFlatChain, true, src.flat, kFlatChain});
    }
    if (chain >= 0) entries.push_back({chain, true, clock(chain), chain, pos[chain]});
    auto add = [&](int32_t u, bool free) {
      switch (chains.Relate(u, v)) {
        case BranchChains::Relation::kRunsWith:
          entries.push_back({u, free, clock(u), u, pos[u]});
          break;
        case BranchChains::Relation::kOutOfBranch:
          // Recorded after its If's subgraphs (RecordSlots): the state after the If.
          if (const BranchChains::Source from = chains.Sender(u, v); from.flat != nullptr) {
            entries.push_back({u, free, from.flat, ExitKey(from.exit), from.pos});
          } else {
            entries.push_back({u, free, nullptr, u, pos[u]});
          }
          break;
        case BranchChains::Relation::kSibling:
          break;  // never run together
      }
    };
    if (lchain >= 0 && lchain != chain) add(lchain, false);  // logical order across the split
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) add(in[j].second.first, in[j].second.second);
    std::fill(top1.begin(), top1.end(), -1);
    std::fill(top2.begin(), top2.end(), -1);
    std::fill(top1_by.begin(), top1_by.end(), -1);
    for (const Entry& e : entries) {
      if (e.c == nullptr) continue;
      for (size_t x = 0; x < k; ++x) {
        const int32_t cx = e.c[x];
        if (e.key == top1_by[x]) {
          top1[x] = std::max(top1[x], cx);
        } else if (cx > top1[x]) {
          top2[x] = top1[x];
          top1[x] = cx;
          top1_by[x] = e.key;
        } else {
          top2[x] = std::max(top2[x], cx);
        }
      }
    }
    // Each required pair (u, v) once: needed unless a free edge or another predecessor orders it.
    // (Marked: u already answered for v, or orders v by a free edge; an exit state's key is
    // marked in `marked_exits`.)
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
    for (const Entry& e : entries) {
      if (e.free && e.key != kFlatChain) set_mark(e.key);
    }
    for (const Entry& e : entries) {
      if (e.free || view.stream(e.w) == ps || marked(e.key)) continue;
      set_mark(e.key);
      const int64_t a = logical.stream(e.w);
      if ((top1_by[a] == e.key ? top2[a] : top1[a]) < e.at) ++needed;
    }
    pos[v] = next_pos[ls]++;
    clock_of[v] = clocks.Alloc();
    int32_t* c = clocks.get(clock_of[v]);
    std::copy(top1.begin(), top1.end(), c);
    c[ls] = pos[v];
    last_phys[ps] = v;
    last_log[ls] = v;
    if (chains.active()) {
      if (chain >= 0) heads[chain] = false;  // read: v heads the stream now
      heads[v] = true;
      chains.After(v);
    }
    // A clock is dropped after its last edge, unless it still ends its stream (the next slot reads
    // it).
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) --refs[in[j].second.first];
    for (uint32_t j = begin[v]; j < begin[v + 1]; ++j) drop(in[j].second.first);
    drop(chain);
    drop(lchain);
  }
  chains.Finish(chain_clocks);
  const int64_t minimum = needed + loop_events;
  if (claimed != minimum) {
    return fail(StrCat(
        "event_counts.minimum is ", claimed, " but the plan's orderings need ", minimum,
        " events (the transitive reduction of dependencies, logical-stream order and events over "
        "physical-stream order and activation",
        loop_events > 0 ? StrCat(", plus ", loop_events, " loop events") : std::string(), ")"));
  }
  if (static_cast<int64_t>(plan.events.events.size()) != minimum) {
    return fail(StrCat("event_counts.minimum is ", minimum, " but the table holds ",
                       plan.events.events.size(), " events: some are implied by the others"));
  }
  return absl::OkStatus();
}

}  // namespace npuplan::verify
