#include "npuplan/events/event_id_allocation.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

#include "npuplan/events/sync_verifier.h"
#include "npuplan/events/sync_view.h"
#include "absl/strings/numbers.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace events {
namespace {

[[maybe_unused]] const bool kChecks = RegisterEventStageChecks();

constexpr int64_t kInfRank = std::numeric_limits<int64_t>::max();
constexpr int kKinds = 2;  // SyncKind::kEvent, kNotify
int KindIndex(SyncKind k) { return k == SyncKind::kNotify ? 1 : 0; }

// Per graph: 1 when its nodes run exactly once per run of the model (every
// owner above it is a PartitionedCall); If/Case branches may not run, loop
// bodies may run many times.
std::vector<uint8_t> OnceGraphs(const Model& m) {
  std::vector<uint8_t> once(m.num_graphs(), 1);
  for (GraphId g : m.GraphsPreOrder()) {  // parents before their subgraphs
    const Graph& graph = m.graph(g);
    if (!graph.parent_node.valid()) continue;
    const Node& owner = m.node(graph.parent_node);
    const bool call = owner.type == "PartitionedCall" || owner.type == "StatefulPartitionedCall";
    once[g.index()] = call && once[owner.graph.index()];
  }
  return once;
}

// A plan whose root iterates (GE's loop structures, or loop events): every
// event repeats, and reuse across iterations is not modelled.
bool PlanLoops(const Plan& plan) {
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason == SyncReason::kLoop) return true;
  }
  for (const Node& n : plan.model.nodes()) {
    const std::string_view t = n.type;
    if (t == "StreamSwitch" || t == "Enter" || t == "RefEnter" || t == "NextIteration" || t == "LoopCond") return true;
  }
  return false;
}

// Per table entry: both ends inside one branch of a `_batch_num` Case (any
// depth): a multi-gear edge (event-reuse numbered it per Case).
std::vector<uint8_t> MultiGearEdges(const Plan& plan) {
  const Model& m = plan.model;
  std::vector<uint8_t> out(plan.events.events.size(), 0);
  // Per graph: the (Case, branch) pairs above it, as "case node id * 2^20 + branch".
  std::vector<std::vector<int64_t>> above(m.num_graphs());
  bool any = false;
  for (GraphId g : m.GraphsPreOrder()) {
    const Graph& graph = m.graph(g);
    if (!graph.parent_node.valid()) continue;
    const Node& owner = m.node(graph.parent_node);
    above[g.index()] = above[owner.graph.index()];
    if (owner.type == "Case" && HasAttr(owner.attrs, "_batch_num")) {
      const auto it = std::find(owner.subgraphs.begin(), owner.subgraphs.end(), g);
      above[g.index()].push_back(static_cast<int64_t>(graph.parent_node.value) * (int64_t{1} << 20) +
                                 (it - owner.subgraphs.begin()));
      any = true;
    }
  }
  if (!any) return out;
  for (size_t i = 0; i < out.size(); ++i) {
    const SyncEvent& e = plan.events.events[i];
    const auto& a = above[m.node(e.send).graph.index()];
    const auto& b = above[m.node(e.recv).graph.index()];
    for (int64_t x : a) {
      if (std::find(b.begin(), b.end(), x) != b.end()) out[i] = 1;
    }
  }
  return out;
}

// Physical stream of a slot (the logical one before the split).
class PhysicalOf {
 public:
  PhysicalOf(const Plan& plan, const SyncView& view) : plan_(plan), view_(view) {
    split_ = Has(plan.established, IrProperty::kPhysicalStreams) && plan.physical_stream.size() >= view.num_nodes();
  }
  int64_t operator()(int32_t slot) const {
    const NodeId n = view_.node_of(slot);
    const int32_t a = view_.attached_of(slot);
    if (!split_) return view_.stream(slot);
    if (a < 0) return plan_.physical_stream[n.index()];
    if (auto it = plan_.streams.attached_physical.find(n.value); it != plan_.streams.attached_physical.end() &&
                                                                  static_cast<size_t>(a) < it->second.size()) {
      return it->second[a];
    }
    return view_.stream(slot);
  }

 private:
  const Plan& plan_;
  const SyncView& view_;
  bool split_ = false;
};

// What the order needs of each table entry, from the logical view.
struct EdgeFacts {
  std::vector<uint8_t> multi_gear;  // kept in event-reuse's per-Case ranges
  std::vector<uint8_t> eligible;    // may share an id (chains)
  std::vector<uint8_t> has_pred;    // (B) can hold: its receiver has a slot before it on its physical stream
  std::vector<int32_t> own, sendslot, recv, before_recv;  // slots (-1 = none)
  std::vector<int64_t> start, end;  // interval in execution order (rank)
};

EdgeFacts CollectFacts(const Plan& plan, const SyncView& view) {
  const Model& m = plan.model;
  const auto& evs = plan.events.events;
  const size_t n = evs.size();
  EdgeFacts f;
  f.multi_gear = MultiGearEdges(plan);
  f.eligible.assign(n, 0);
  f.has_pred.assign(n, 0);
  f.own.assign(n, -1);
  f.sendslot.assign(n, -1);
  f.recv.assign(n, -1);
  f.before_recv.assign(n, -1);
  f.start.assign(n, -1);
  f.end.assign(n, kInfRank);
  // The slot before each slot on its physical stream (Send/Recv nodes of a
  // materialised plan skipped: the bound reads the same then).
  PhysicalOf physical(plan, view);
  std::vector<int32_t> prev(view.num_slots(), -1);
  std::map<int64_t, int32_t> last;
  for (int32_t slot : view.slot_order()) {
    if (view.stream(slot) < 0 || IsSyncNode(m.node(view.node_of(slot)))) continue;
    auto [it, fresh] = last.try_emplace(physical(slot), slot);
    if (!fresh) {
      prev[slot] = it->second;
      it->second = slot;
    }
  }
  const std::vector<uint8_t> once = OnceGraphs(m);
  const bool loops = PlanLoops(plan);
  SendSlots send_slots(m, view);
  for (size_t i = 0; i < n; ++i) {
    const SyncEvent& e = evs[i];
    if (!e.send.valid() || !e.recv.valid() || e.send.index() >= m.num_nodes() || e.recv.index() >= m.num_nodes()) continue;
    if (e.send_attached >= view.num_attached(e.send) || e.recv_attached >= view.num_attached(e.recv)) continue;
    const int32_t own = view.slot(e.send, e.send_attached), recv = view.slot(e.recv, e.recv_attached);
    if (view.stream(own) < 0 || view.stream(recv) < 0 || view.rank(own) < 0 || view.rank(own) >= view.rank(recv)) continue;
    const int32_t sendslot = send_slots.ForEvent(e);
    if (view.stream(sendslot) < 0 || view.rank(sendslot) >= view.rank(recv)) continue;
    f.own[i] = own;
    f.sendslot[i] = sendslot;
    f.recv[i] = recv;
    f.before_recv[i] = prev[recv];
    if (f.multi_gear[i] || loops || e.reason == SyncReason::kLoop) continue;
    if (!once[m.node(e.send).graph.index()] || !once[m.node(e.recv).graph.index()]) continue;
    f.eligible[i] = 1;
    f.has_pred[i] = prev[recv] >= 0 && e.reason != SyncReason::kSplit;
    f.end[i] = view.rank(recv);
    f.start[i] = f.has_pred[i] ? std::min({view.rank(own), view.rank(sendslot), view.rank(prev[recv])}) : -1;
  }
  return f;
}

// Vector clocks of live slots (k logical streams); a clock is freed after
// its last reader.
class Clocks {
 public:
  Clocks(size_t slots, size_t k) : k_(k), handle_(slots, -1), refs_(slots, 0) {}
  void Ref(int32_t slot) { ++refs_[slot]; }
  int32_t* Alloc(int32_t slot) {
    int32_t h;
    if (!free_.empty()) {
      h = free_.back();
      free_.pop_back();
    } else {
      h = static_cast<int32_t>(data_.size() / std::max<size_t>(k_, 1));
      data_.resize(data_.size() + k_);
    }
    handle_[slot] = h;
    return get(slot);
  }
  int32_t* get(int32_t slot) { return data_.data() + static_cast<size_t>(handle_[slot]) * k_; }
  void Unref(int32_t slot) {
    if (--refs_[slot] <= 0 && handle_[slot] >= 0) Release(slot);
  }
  void ReleaseIfUnused(int32_t slot) {
    if (refs_[slot] <= 0 && handle_[slot] >= 0) Release(slot);
  }

 private:
  void Release(int32_t slot) {
    free_.push_back(handle_[slot]);
    handle_[slot] = -1;
  }
  size_t k_;
  std::vector<int32_t> data_;
  std::vector<int32_t> free_;
  std::vector<int32_t> handle_;
  std::vector<int32_t> refs_;
};

// The lefts (edges by their receiver) of one (kind, stream), in sweep order:
// positions ascend. FindAlive(i) = the last unmatched entry at or before i.
struct LeftList {
  std::vector<int32_t> edge, pos, up;
  int32_t FindAlive(int32_t i) {
    int32_t r = i;
    while (r >= 0 && up[r] != r) r = up[r];
    while (i >= 0 && up[i] != i) {
      const int32_t next = up[i];
      up[i] = r;
      i = next;
    }
    return r;
  }
};

// Happens-before sweep over the logical view in execution order. For every
// eligible edge e with (B) possible, at its receiver: ready(e) = element-wise
// min of the clocks of its sender slot, its Send slot and the slot before its
// receiver; e1 ≺ e iff ready(e)[stream(recv e1)] >= pos(recv e1).
// `on_right(e, ready)` runs there, before the receiver's own edges become
// lefts (`on_left(e)`).
template <typename OnRight, typename OnLeft>
void SweepReuseOrder(const Plan& plan, const SyncView& view, const EdgeFacts& f, OnRight on_right, OnLeft on_left) {
  const Model& m = plan.model;
  const auto& evs = plan.events.events;
  const size_t slots = view.num_slots();
  const size_t k = static_cast<size_t>(std::max<int64_t>(view.num_streams(), 1));
  // Incoming edges per receiving slot (CSR, table order): every edge that orders (not loop ones).
  std::vector<uint32_t> in_begin(slots + 1, 0);
  std::vector<uint32_t> in_edges;
  auto orders = [&](size_t i) {
    if (f.recv[i] < 0 || evs[i].reason == SyncReason::kLoop) return false;
    return true;
  };
  for (size_t i = 0; i < evs.size(); ++i) {
    if (orders(i)) ++in_begin[f.recv[i] + 1];
  }
  for (size_t s = 0; s < slots; ++s) in_begin[s + 1] += in_begin[s];
  in_edges.resize(in_begin[slots]);
  {
    std::vector<uint32_t> cursor(in_begin.begin(), in_begin.end() - 1);
    for (size_t i = 0; i < evs.size(); ++i) {
      if (orders(i)) in_edges[cursor[f.recv[i]]++] = static_cast<uint32_t>(i);
    }
  }
  // Activation: activator slot → first slot of each activated stream after it.
  std::vector<std::pair<int32_t, int32_t>> act;  // (target, activator)
  ActivationInfo info = ComputeActivation(m, view);
  for (const auto& [a, streams] : info.activated) {
    const NodeId an(a);
    const int32_t from = view.slot(an, -1);
    if (view.stream(from) < 0) continue;
    for (int64_t s : streams) {
      int64_t logical = s;
      if (s >= view.num_streams()) {
        auto it = plan.streams.split_to_logical.find(s);
        if (it == plan.streams.split_to_logical.end()) continue;
        logical = it->second;
      }
      const int32_t to = view.FirstSlotAfter(logical, an);
      if (to >= 0 && view.stream(to) != view.stream(from)) act.emplace_back(to, from);
    }
  }
  std::sort(act.begin(), act.end());
  std::vector<uint32_t> act_begin(slots + 1, 0);
  for (const auto& [to, from] : act) ++act_begin[to + 1];
  for (size_t s = 0; s < slots; ++s) act_begin[s + 1] += act_begin[s];
  Clocks clocks(slots, k);
  for (int64_t s = 0; s < view.num_streams(); ++s) {
    const auto ss = view.stream_slots(s);
    for (size_t i = 0; i + 1 < ss.size(); ++i) clocks.Ref(ss[i]);
  }
  for (uint32_t i : in_edges) {
    clocks.Ref(f.own[i]);
    clocks.Ref(f.sendslot[i]);
    if (f.eligible[i] && f.has_pred[i]) clocks.Ref(f.before_recv[i]);
  }
  for (const auto& [to, from] : act) clocks.Ref(from);
  std::vector<int32_t> ready(k);
  for (int32_t v : view.slot_order()) {
    const int64_t s = view.stream(v);
    if (s < 0) continue;
    int32_t* c = clocks.Alloc(v);
    const int32_t p = view.pos(v);
    const int32_t pred = p > 0 ? view.stream_slots(s)[p - 1] : -1;
    if (pred >= 0) {
      std::copy(clocks.get(pred), clocks.get(pred) + k, c);
    } else {
      std::fill(c, c + k, -1);
    }
      auto join = [&](const int32_t* o) {
      for (size_t x = 0; x < k; ++x) c[x] = std::max(c[x], o[x]);
    };
    // An event releases its receiver after the record, which follows the
    // sender's slot (plan program) and the slot its Send runs after
    // (materialised): what both know.
    for (uint32_t j = in_begin[v]; j < in_begin[v + 1]; ++j) {
      const uint32_t i = in_edges[j];
      const int32_t* o1 = clocks.get(f.own[i]);
      const int32_t* o2 = clocks.get(f.sendslot[i]);
      c = clocks.get(v);
      for (size_t x = 0; x < k; ++x) c[x] = std::max(c[x], std::min(o1[x], o2[x]));
    }
    for (uint32_t b = act_begin[v]; b < act_begin[v + 1]; ++b) join(clocks.get(act[b].second));
    c[s] = p;
    for (uint32_t j = in_begin[v]; j < in_begin[v + 1]; ++j) {
      const uint32_t i = in_edges[j];
      if (!f.eligible[i] || !f.has_pred[i]) continue;
      const int32_t* o1 = clocks.get(f.own[i]);
      const int32_t* o2 = clocks.get(f.sendslot[i]);
      const int32_t* o3 = clocks.get(f.before_recv[i]);
      for (size_t x = 0; x < k; ++x) ready[x] = std::min({o1[x], o2[x], o3[x]});
      on_right(i, ready.data());
    }
    for (uint32_t j = in_begin[v]; j < in_begin[v + 1]; ++j) {
      const uint32_t i = in_edges[j];
      if (f.eligible[i]) on_left(i);
    }
    // Release what this slot read.
    if (pred >= 0) clocks.Unref(pred);
    for (uint32_t j = in_begin[v]; j < in_begin[v + 1]; ++j) {
      const uint32_t i = in_edges[j];
      clocks.Unref(f.own[i]);
      clocks.Unref(f.sendslot[i]);
      if (f.eligible[i] && f.has_pred[i]) clocks.Unref(f.before_recv[i]);
    }
    for (uint32_t b = act_begin[v]; b < act_begin[v + 1]; ++b) clocks.Unref(act[b].second);
    clocks.ReleaseIfUnused(v);
  }
}

// Maximum matching of "e1 ≺ e2" pairs: greedy during the sweep, then
// augmenting phases (when `exact`). succ[e1] = e2 means e2 follows e1 on its id.
struct Matching {
  std::vector<int32_t> succ, pred;
  bool exact[kKinds] = {false, false};
};

// The rights of one (kind, stream), sorted by ready value (descending): a
// left at position p is ≺ the prefix with ready >= p.
struct RightList {
  std::vector<std::pair<int32_t, int32_t>> entries;  // (ready, edge)
  std::vector<int32_t> next;                         // lazy skip over visited rights
  int32_t Bound(int32_t p) const {
    return static_cast<int32_t>(std::partition_point(entries.begin(), entries.end(),
                                                     [&](const auto& x) { return x.first >= p; }) -
                                entries.begin());
  }
};

class ChainCover {
 public:
  ChainCover(const Plan& plan, const SyncView& view, const EdgeFacts& f, int64_t exact_limit)
      : plan_(plan), view_(view), f_(f), k_(static_cast<size_t>(std::max<int64_t>(view.num_streams(), 1))) {
    const size_t n = plan.events.events.size();
    m_.succ.assign(n, -1);
    m_.pred.assign(n, -1);
    left_index_.assign(n, -1);
    lefts_.resize(kKinds * k_);
    for (size_t i = 0; i < n; ++i) {
      if (f.eligible[i]) ++eligible_[KindIndex(plan.events.events[i].kind)];
    }
    for (int kind = 0; kind < kKinds; ++kind) collect_[kind] = eligible_[kind] > 0 && eligible_[kind] <= exact_limit;
    if (collect_[0] || collect_[1]) rights_.resize(kKinds * k_);
  }

  Matching Run() {
    SweepReuseOrder(
        plan_, view_, f_, [&](uint32_t e, const int32_t* ready) { Right(e, ready); },
        [&](uint32_t e) { Left(e); });
    for (int kind = 0; kind < kKinds; ++kind) {
      if (collect_[kind]) Augment(kind);
      m_.exact[kind] = collect_[kind] || eligible_[kind] == 0;
    }
    return std::move(m_);
  }

 private:
  int Kind(uint32_t e) const { return KindIndex(plan_.events.events[e].kind); }
  int32_t Stream(uint32_t e) const { return static_cast<int32_t>(view_.stream(f_.recv[e])); }
  int32_t Pos(uint32_t e) const { return view_.pos(f_.recv[e]); }

  void Left(uint32_t e) {
    LeftList& l = lefts_[Kind(e) * k_ + Stream(e)];
    left_index_[e] = static_cast<int32_t>(l.edge.size());
    l.up.push_back(static_cast<int32_t>(l.edge.size()));
    l.edge.push_back(static_cast<int32_t>(e));
    l.pos.push_back(Pos(e));
  }

  // Greedy: of the unmatched predecessors (the last one per stream), the one
  // whose wait comes last in execution order.
  void Right(uint32_t e, const int32_t* ready) {
    const int kind = Kind(e);
    int32_t best = -1;
    int64_t best_rank = -1;
    for (size_t s = 0; s < k_; ++s) {
      if (ready[s] < 0) continue;
      if (collect_[kind]) rights_[kind * k_ + s].entries.emplace_back(ready[s], static_cast<int32_t>(e));
      LeftList& l = lefts_[kind * k_ + s];
      if (l.pos.empty()) continue;
      const int32_t i = static_cast<int32_t>(std::upper_bound(l.pos.begin(), l.pos.end(), ready[s]) - l.pos.begin()) - 1;
      const int32_t alive = i >= 0 ? l.FindAlive(i) : -1;
      if (alive < 0) continue;
      const int32_t cand = l.edge[alive];
      const int64_t rank = view_.rank(f_.recv[cand]);
      if (rank > best_rank || (rank == best_rank && cand < best)) {
        best = cand;
        best_rank = rank;
      }
    }
    if (best < 0) return;
    m_.succ[best] = static_cast<int32_t>(e);
    m_.pred[e] = best;
    LeftList& l = lefts_[kind * k_ + Stream(best)];
    l.up[left_index_[best]] = left_index_[best] - 1;
  }

  // Augmenting phases (Kuhn, one visited set per phase) from the greedy
  // matching until a phase finds no augmenting path: then it is maximum.
  void Augment(int kind) {
    std::vector<RightList*> lists;
    for (size_t s = 0; s < k_; ++s) {
      RightList& r = rights_[kind * k_ + s];
      std::sort(r.entries.begin(), r.entries.end(),
                [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
      lists.push_back(&r);
    }
    std::vector<int32_t> free_lefts;
    for (size_t s = 0; s < k_; ++s) {
      for (int32_t e : lefts_[kind * k_ + s].edge) free_lefts.push_back(e);
    }
    std::sort(free_lefts.begin(), free_lefts.end());
    std::vector<uint8_t> visited(plan_.events.events.size(), 0);
    bool any = true;
    while (any) {
      any = false;
      std::fill(visited.begin(), visited.end(), 0);
      for (RightList* r : lists) {
        r->next.resize(r->entries.size());
        for (size_t i = 0; i < r->next.size(); ++i) r->next[i] = static_cast<int32_t>(i);
      }
      for (int32_t u : free_lefts) {
        if (m_.succ[u] < 0 && TryAugment(u, lists, visited)) any = true;
      }
    }
  }

  // First unvisited entry at or after i in list r.
  static int32_t FindNext(RightList& r, const std::vector<uint8_t>& visited, int32_t i) {
    int32_t j = i;
    const int32_t n = static_cast<int32_t>(r.entries.size());
    while (j < n && (r.next[j] != j || visited[r.entries[j].second])) j = r.next[j] != j ? r.next[j] : j + 1;
    while (i < j && i < n) {
      const int32_t nx = r.next[i] != i ? r.next[i] : i + 1;
      r.next[i] = j;
      i = nx;
    }
    return j;
  }

  bool TryAugment(int32_t u, std::vector<RightList*>& lists, std::vector<uint8_t>& visited) {
    struct Frame {
      int32_t left, cursor, bound, right;
      RightList* list;
    };
    std::vector<Frame> stack;
    auto push = [&](int32_t x) {
      RightList* r = lists[Stream(x)];
      stack.push_back({x, 0, r->Bound(Pos(x)), -1, r});
    };
    push(u);
    while (!stack.empty()) {
      Frame& fr = stack.back();
      const int32_t i = FindNext(*fr.list, visited, fr.cursor);
      if (i >= fr.bound) {
        stack.pop_back();
        continue;
      }
      const int32_t r = fr.list->entries[i].second;
      visited[r] = 1;
      fr.cursor = i + 1;
      fr.right = r;
      if (m_.pred[r] < 0) {
        for (const Frame& x : stack) {
          m_.pred[x.right] = x.left;
          m_.succ[x.left] = x.right;
        }
        return true;
      }
      push(m_.pred[r]);
    }
    return false;
  }

  const Plan& plan_;
  const SyncView& view_;
  const EdgeFacts& f_;
  size_t k_;
  Matching m_;
  int64_t eligible_[kKinds] = {0, 0};
  bool collect_[kKinds] = {false, false};
  std::vector<int32_t> left_index_;
  std::vector<LeftList> lefts_;
  std::vector<RightList> rights_;
};

// Largest number of pairwise-overlapping intervals [start, end) of `kind`'s
// non-multi-gear edges (an edge that may share nothing spans everything).
int64_t OverlapBound(const Plan& plan, const EdgeFacts& f, SyncKind kind) {
  std::vector<std::pair<int64_t, int>> points;  // (coordinate, +1 start / -1 end)
  for (size_t i = 0; i < plan.events.events.size(); ++i) {
    if (plan.events.events[i].kind != kind || f.multi_gear[i]) continue;
    points.emplace_back(f.start[i], +1);
    points.emplace_back(f.end[i], -1);
  }
  std::sort(points.begin(), points.end());
  int64_t live = 0, best = 0;
  for (size_t i = 0; i < points.size();) {
    const int64_t at = points[i].first;
    for (; i < points.size() && points[i].first == at; ++i) live += points[i].second;
    best = std::max(best, live);
  }
  return best;
}

// Distinct ids of the multi-gear edges of `kind`, compacted from 0 in id order.
std::map<int32_t, int32_t> MultiGearIds(const Plan& plan, const EdgeFacts& f, SyncKind kind) {
  std::map<int32_t, int32_t> ids;
  for (size_t i = 0; i < plan.events.events.size(); ++i) {
    if (plan.events.events[i].kind == kind && f.multi_gear[i]) ids.emplace(plan.events.events[i].id, 0);
  }
  int32_t next = 0;
  for (auto& [old, nu] : ids) nu = next++;
  return ids;
}

}  // namespace

IdAllocation MinimumIdAllocation(const Plan& plan, int64_t exact_limit) {
  const auto& evs = plan.events.events;
  SyncView view(plan, /*physical=*/false);
  const EdgeFacts f = CollectFacts(plan, view);
  Matching match = ChainCover(plan, view, f, exact_limit).Run();
  IdAllocation out;
  out.id.assign(evs.size(), -1);
  for (const SyncKind kind : {SyncKind::kEvent, SyncKind::kNotify}) {
    IdAllocationStats& st = kind == SyncKind::kEvent ? out.events : out.notifies;
    const std::map<int32_t, int32_t> gears = MultiGearIds(plan, f, kind);
    // Chains in order of their smallest previous id (then table order): a
    // plan where nothing is shared keeps its ids.
    std::vector<std::pair<int32_t, uint32_t>> chains;  // (smallest old id, head)
    for (size_t i = 0; i < evs.size(); ++i) {
      if (evs[i].kind != kind) continue;
      ++st.edges;
      if (f.multi_gear[i]) {
        out.id[i] = gears.at(evs[i].id);
      } else if (match.pred[i] < 0) {
        int32_t smallest = evs[i].id;
        for (int32_t e = match.succ[i]; e >= 0; e = match.succ[e]) smallest = std::min(smallest, evs[e].id);
        chains.emplace_back(smallest, static_cast<uint32_t>(i));
      } else {
        ++st.shared;
      }
    }
    std::sort(chains.begin(), chains.end());
    int32_t next = static_cast<int32_t>(gears.size());
    for (const auto& [old, head] : chains) {
      for (int32_t e = static_cast<int32_t>(head); e >= 0; e = match.succ[e]) out.id[e] = next;
      ++next;
    }
    st.ids = next;
    st.exact = match.exact[KindIndex(kind)];
    st.lower_bound = OverlapBound(plan, f, kind) + static_cast<int64_t>(gears.size());
  }
  return out;
}

IdAllocation IdLowerBounds(const Plan& plan) {
  SyncView view(plan, /*physical=*/false);
  const EdgeFacts f = CollectFacts(plan, view);
  IdAllocation out;
  for (const SyncKind kind : {SyncKind::kEvent, SyncKind::kNotify}) {
    IdAllocationStats& st = kind == SyncKind::kEvent ? out.events : out.notifies;
    std::set<int32_t> ids;
    for (const SyncEvent& e : plan.events.events) {
      if (e.kind != kind) continue;
      ++st.edges;
      ids.insert(e.id);
    }
    st.ids = static_cast<int64_t>(ids.size());
    st.shared = st.edges - st.ids;
    st.lower_bound = OverlapBound(plan, f, kind) + static_cast<int64_t>(MultiGearIds(plan, f, kind).size());
  }
  return out;
}

}  // namespace events

namespace {

void WriteCounts(Plan& plan, const events::IdAllocation& a) {
  auto& c = plan.events.counts;
  c["device_event_ids"] = a.events.ids;
  c["device_event_ids_lower_bound"] = a.events.lower_bound;
  c["device_event_ids_exact"] = a.events.exact ? 1 : 0;
  if (a.notifies.edges > 0) {
    c["device_notify_ids"] = a.notifies.ids;
    c["device_notify_ids_lower_bound"] = a.notifies.lower_bound;
    c["device_notify_ids_exact"] = a.notifies.exact ? 1 : 0;
  }
}

}  // namespace

absl::StatusOr<bool> EventIdAllocation::Run(Plan& plan, PassContext& ctx) {
  if (Has(plan.established, IrProperty::kSyncNodes)) {
    return absl::FailedPreconditionError(
        StrCat("[", name(), "] Send/Recv nodes already carry the ids: allocate them before sync-node-generation"));
  }
  const std::string mode = EventIdReuseMode(ctx.options);
  if (mode == "ge") return false;  // GE's ids, byte for byte
  int64_t exact_limit = 0;
  if (!absl::SimpleAtoi(ctx.options.Get("npuplan.eventIdExactLimit"), &exact_limit)) exact_limit = 0;
  events::IdAllocation a;
  bool changed = false;
  if (mode == "min") {
    a = events::MinimumIdAllocation(plan, exact_limit);
    auto& evs = plan.events.events;
    for (size_t i = 0; i < evs.size(); ++i) {
      changed |= evs[i].id != a.id[i];
      evs[i].id = a.id[i];
    }
    auto by_kind_id = [](const SyncEvent& x, const SyncEvent& y) {
      return x.kind != y.kind ? x.kind < y.kind : x.id < y.id;
    };
    if (!std::is_sorted(evs.begin(), evs.end(), by_kind_id)) std::stable_sort(evs.begin(), evs.end(), by_kind_id);
    events::RecountIds(plan.events);
  } else {
    a = events::IdLowerBounds(plan);
  }
  WriteCounts(plan, a);
  for (const auto* st : {&a.events, &a.notifies}) {
    if (st->edges == 0) continue;
    const bool notify = st == &a.notifies;
    ctx.log.Record(name(), "EventIdsAllocated", "", Field("kind", notify ? "notify" : "event"), Field("mode", mode),
                   Field("edges", st->edges), Field("ids", st->ids), Field("lower_bound", st->lower_bound),
                   Field("exact", st->exact ? 1 : 0), Field("shared", st->shared));
  }
  ctx.stats.Set(name(), "event_edges", a.events.edges);
  ctx.stats.Set(name(), "event_ids", a.events.ids);
  ctx.stats.Set(name(), "event_ids_lower_bound", a.events.lower_bound);
  ctx.stats.Set(name(), "notify_ids", a.notifies.ids);
  // Budgets, when set (unset they are the device limits, which
  // device-limit-check enforces as the hard check).
  const int64_t max_events = ctx.options.Has("npuplan.maxEventIds")
                                 ? BudgetOption(ctx.options, "npuplan.maxEventIds", "npuplan.device.maxEvents")
                                 : INT64_MAX;
  const int64_t max_notifies = ctx.options.Has("npuplan.maxNotifyIds")
                                   ? BudgetOption(ctx.options, "npuplan.maxNotifyIds", "npuplan.device.maxNotifies")
                                   : INT64_MAX;
  if (a.events.ids > max_events) {
    return absl::ResourceExhaustedError(StrCat(
        "[", name(), "] the plan needs ", a.events.ids, " device event ids for ", a.events.edges,
        " sync edges (eventIdReuse=", mode, "; at least ", a.events.lower_bound,
        " edges overlap) but the budget is ", max_events,
        " (npuplan.maxEventIds / npuplan.device.maxEvents); use npuplan.eventIdReuse=min, fewer streams "
        "(npuplan.maxStreams, ge.enableSingleStream=true) or ge.event=notify"));
  }
  if (a.notifies.ids > max_notifies) {
    return absl::ResourceExhaustedError(StrCat(
        "[", name(), "] the plan needs ", a.notifies.ids, " device notify ids for ", a.notifies.edges,
        " sync edges (eventIdReuse=", mode, "; at least ", a.notifies.lower_bound,
        " edges overlap) but the budget is ", max_notifies,
        " (npuplan.maxNotifyIds / npuplan.device.maxNotifies); use ge.event=event or fewer streams"));
  }
  return changed;
}

}  // namespace npuplan
