#include "npuplan/events/event_id_allocation.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <span>

#include "absl/strings/numbers.h"
#include "npuplan/events/event_options.h"
#include "npuplan/events/ready_lists.h"
#include "npuplan/events/reuse_order.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace events {
namespace {

constexpr int kKinds = 2;  // SyncKind::kEvent, kNotify
int KindIndex(SyncKind k) { return k == SyncKind::kNotify ? 1 : 0; }

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

// Maximum matching of "e1 ≺ e2" pairs: greedy during the sweep, then
// augmenting phases (when `exact`). succ[e1] = e2 means e2 follows e1 on its id.
struct Matching {
  std::vector<int32_t> succ, pred;
  bool exact[kKinds] = {true, true};  // every context's cover is a minimum
};

// The rights of one (kind, stream), sorted by ready value (descending), then
// edge: a left at position p is ≺ the first `sorted->AtLeast(stream, p)`.
struct RightList {
  std::span<int32_t> edges;  // in ChainCover::sorted_
  ReadyLists* sorted = nullptr;
  size_t stream = 0;
  std::vector<int32_t> next;  // lazy skip over visited rights
  int32_t Bound(int32_t p) const { return static_cast<int32_t>(sorted->AtLeast(stream, p)); }
};

class ChainCover final : public ReuseVisitor {
 public:
  ChainCover(const Plan& plan, const EdgeFacts& f, ReuseOrder& order, ExactLimits limits)
      : plan_(plan), f_(f), order_(order), limits_(limits) {
    const size_t n = plan.events.events.size();
    m_.succ.assign(n, -1);
    m_.pred.assign(n, -1);
    left_index_.assign(n, -1);
    left_pos_.assign(n, -1);
    left_stream_.assign(n, -1);
    visited_.assign(n, 0);
    right_begin_.assign(n, 0);
    right_end_.assign(n, 0);
  }

  // One context at a time: its chain cover is independent of the others'.
  Matching Run() {
    std::map<int32_t, std::array<int64_t, kKinds>> counts;  // eligible edges per context and kind
    for (size_t i = 0; i < f_.eligible.size(); ++i) {
      if (f_.eligible[i]) ++counts[f_.context[i]][Kind(static_cast<uint32_t>(i))];
    }
    for (int32_t c : order_.contexts()) {
      const std::array<int64_t, kKinds> count = counts[c];
      for (int kind = 0; kind < kKinds; ++kind)
        collect_[kind] = count[kind] > 0 && count[kind] <= limits_.edges;
      k_ = order_.Prepare(c);
      lefts_.assign(kKinds * k_, LeftList{});
      live_at_.assign(kKinds * k_, -1);
      for (std::vector<int32_t>& l : live_) l.clear();
      rights_.assign(collect_[0] || collect_[1] ? kKinds * k_ : 0, RightList{});
      flat_.clear();
      right_edges_.clear();
      // At most k entries per collected edge: reserved up front (address
      // space; pages come as Right writes them), so the vector never grows
      // by copies, which held old and new buffers at once.
      size_t collected = 0;
      for (int kind = 0; kind < kKinds; ++kind) collected += collect_[kind] ? count[kind] : 0;
      flat_.reserve(std::min<size_t>(collected * k_, static_cast<size_t>(limits_.entries)));
      order_.Sweep(c, *this);
      // Both kinds' lists first: what the sweep recorded is then freed
      // before the phases allocate their skip lists.
      for (int kind = 0; kind < kKinds; ++kind) {
        if (collect_[kind]) SortRights(kind);
      }
      FreeStorage(flat_);
      for (int kind = 0; kind < kKinds; ++kind) {
        if (collect_[kind]) {
          Augment(kind);
        } else if (count[kind] > 0) {
          m_.exact[kind] = false;
        }
      }
    }
    for (ReadyLists& r : sorted_) r = {};
    return std::move(m_);
  }

  void Left(uint32_t e, int32_t stream, int32_t pos) override {
    LeftList& l = lefts_[Kind(e) * k_ + stream];
    left_index_[e] = static_cast<int32_t>(l.edge.size());
    left_pos_[e] = pos;
    left_stream_[e] = stream;
    l.up.push_back(static_cast<int32_t>(l.edge.size()));
    l.edge.push_back(static_cast<int32_t>(e));
    l.pos.push_back(pos);
    const int kind = Kind(e);
    if (int32_t& at = live_at_[kind * k_ + stream]; at < 0) {
      at = static_cast<int32_t>(live_[kind].size());
      live_[kind].push_back(stream);
    }
  }

  // Greedy: of the unmatched predecessors (the last one per stream), the one
  // whose wait comes last in execution order.
  void Right(uint32_t e, const int32_t* ready) override {
    const int kind = Kind(e);
    int32_t best = -1;
    int64_t best_rank = -1;
    if (collect_[kind] && flat_.size() + k_ > static_cast<size_t>(limits_.entries)) {
      // The lists would pass the limit: this context keeps the greedy cover
      // (both kinds: they share the record).
      collect_[0] = collect_[1] = false;
      FreeStorage(flat_);
    }
    if (collect_[kind]) {
      right_edges_.push_back(static_cast<int32_t>(e));
      right_begin_[e] = flat_.size();
    }
    // The unmatched predecessor on stream s, if better than the best so far.
    auto consider = [&](size_t s) {
      // Lefts arrive in position order, and every left at or before
      // ready[s] has arrived (its slot ran before this one): with none of
      // them yet, no left of this stream precedes e, and Augment needs no
      // entry for it.
      LeftList& l = lefts_[kind * k_ + s];
      if (l.pos.empty() || ready[s] < l.pos[0]) return;
      if (collect_[kind]) flat_.emplace_back(static_cast<int32_t>(s), ready[s]);
      const int32_t i =
          static_cast<int32_t>(std::upper_bound(l.pos.begin(), l.pos.end(), ready[s]) -
                               l.pos.begin()) -
          1;
      const int32_t alive = l.FindAlive(i);
      if (alive < 0) return;
      const int32_t cand = l.edge[alive];
      const int64_t rank = f_.end[cand];
      if (rank > best_rank || (rank == best_rank && cand < best)) {
        best = cand;
        best_rank = rank;
      }
    };
    if (collect_[kind]) {
      for (size_t s = 0; s < k_; ++s) consider(s);  // Augment needs every stream's entry
    } else {
      // The streams with an unmatched left only: the choice (latest rank,
      // then edge) does not depend on the order they are seen in.
      for (const int32_t s : live_[kind]) consider(static_cast<size_t>(s));
    }
    if (collect_[kind]) right_end_[e] = flat_.size();
    if (best < 0) return;
    m_.succ[best] = static_cast<int32_t>(e);
    m_.pred[e] = best;
    const int32_t stream = left_stream_[best];
    LeftList& l = lefts_[kind * k_ + stream];
    l.up[left_index_[best]] = left_index_[best] - 1;
    if (l.FindAlive(static_cast<int32_t>(l.pos.size()) - 1) < 0) {  // every left matched
      std::vector<int32_t>& live = live_[kind];
      int32_t& at = live_at_[kind * k_ + stream];
      live_at_[kind * k_ + live.back()] = at;
      live[at] = live.back();
      live.pop_back();
      at = -1;
    }
  }

 private:
  int Kind(uint32_t e) const { return KindIndex(plan_.events.events[e].kind); }

  // Augmenting phases (Kuhn, one visited set per phase) from the greedy
  // matching until a phase finds no augmenting path: then it is maximum.
  void Augment(int kind) {
    std::vector<RightList*> lists;
    for (size_t s = 0; s < k_; ++s) lists.push_back(&rights_[kind * k_ + s]);
    std::vector<int32_t> free_lefts;
    for (size_t s = 0; s < k_; ++s) {
      for (int32_t e : lefts_[kind * k_ + s].edge) free_lefts.push_back(e);
    }
    std::sort(free_lefts.begin(), free_lefts.end());
    bool any = true;
    while (any) {
      any = false;
      for (RightList* r : lists) {
        for (int32_t e : r->edges) visited_[e] = 0;
        r->next.resize(r->edges.size());
        for (size_t i = 0; i < r->next.size(); ++i) r->next[i] = static_cast<int32_t>(i);
      }
      for (int32_t u : free_lefts) {
        if (m_.succ[u] < 0 && TryAugment(u, lists)) any = true;
      }
    }
  }

  // Fills each stream's RightList of `kind` from what Right recorded.
  void SortRights(int kind) {
    std::vector<int32_t> edges;
    for (int32_t e : right_edges_) {
      if (Kind(static_cast<uint32_t>(e)) == kind) edges.push_back(e);
    }
    sorted_[kind] = ReadyLists(flat_, right_begin_, right_end_, std::move(edges), k_);
    for (size_t s = 0; s < k_; ++s) {
      RightList& r = rights_[kind * k_ + s];
      r.edges = sorted_[kind].list(s);
      r.sorted = &sorted_[kind];
      r.stream = s;
    }
  }

  // First unvisited entry at or after i in list r.
  int32_t FindNext(RightList& r, int32_t i) const {
    int32_t j = i;
    const int32_t n = static_cast<int32_t>(r.edges.size());
    while (j < n && (r.next[j] != j || visited_[r.edges[j]]))
      j = r.next[j] != j ? r.next[j] : j + 1;
    while (i < j && i < n) {
      const int32_t nx = r.next[i] != i ? r.next[i] : i + 1;
      r.next[i] = j;
      i = nx;
    }
    return j;
  }

  bool TryAugment(int32_t u, std::vector<RightList*>& lists) {
    struct Frame {
      int32_t left, cursor, bound, right;
      RightList* list;
    };
    std::vector<Frame> stack;
    auto push = [&](int32_t x) {
      RightList* r = lists[left_stream_[x]];
      stack.push_back({x, 0, r->Bound(left_pos_[x]), -1, r});
    };
    push(u);
    while (!stack.empty()) {
      Frame& fr = stack.back();
      const int32_t i = FindNext(*fr.list, fr.cursor);
      if (i >= fr.bound) {
        stack.pop_back();
        continue;
      }
      const int32_t r = fr.list->edges[i];
      visited_[r] = 1;
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
  const EdgeFacts& f_;
  ReuseOrder& order_;
  size_t k_ = 1;
  ExactLimits limits_;
  Matching m_;
  bool collect_[kKinds] = {false, false};
  std::vector<int32_t> left_index_, left_pos_, left_stream_;
  std::vector<LeftList> lefts_;
  // Per kind, the streams with an unmatched left (the greedy sweep's
  // candidates; a few hundred of thousands of streams on models of many
  // Ifs), and per (kind, stream) its index there (-1: none).
  std::vector<int32_t> live_[kKinds];
  std::vector<int32_t> live_at_;
  std::vector<RightList> rights_;
  std::vector<uint8_t> visited_;  // rights visited in the current phase
  // What Right saw, for Augment: per right (in right_edges_), its
  // (stream, ready) pairs flat_[right_begin_[e], right_end_[e]). Up to k
  // per right, written once: huge pages, whose faults cost far less than
  // 4 KiB ones for the same bytes.
  BigVector<std::pair<int32_t, int32_t>> flat_;
  std::vector<size_t> right_begin_, right_end_;
  std::vector<int32_t> right_edges_;
  ReadyLists sorted_[kKinds];  // storage of rights_' entries
};

// Largest number of pairwise-overlapping intervals [start, end) of `edges`.
int64_t OverlapBound(const EdgeFacts& f, std::span<const int32_t> edges) {
  std::vector<std::pair<int64_t, int>> points;  // (coordinate, +1 start / -1 end)
  points.reserve(2 * edges.size());
  for (int32_t i : edges) {
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

// Edges in different contexts never share, except those of sibling branches
// (one If / Case), which never both run. So a set of pairwise-exclusive edges
// is: every ineligible edge, and per group of sibling contexts (the root
// alone is a group) the largest overlap bound of one member.
int64_t LowerBound(const Plan& plan, const RunContexts& contexts, const EdgeFacts& f,
                   SyncKind kind) {
  int64_t bound = 0;
  // The kind's eligible edges by context (a counting sort: one pass over the
  // table, not one per context — models have thousands of branches).
  std::vector<uint32_t> first(contexts.size() + 1, 0);
  for (size_t i = 0; i < f.eligible.size(); ++i) {
    if (plan.events.events[i].kind != kind) continue;
    if (f.eligible[i]) {
      ++first[f.context[i] + 1];
    } else {
      ++bound;
    }
  }
  for (size_t c = 0; c < contexts.size(); ++c) first[c + 1] += first[c];
  std::vector<int32_t> edges(first.back());
  {
    std::vector<uint32_t> at(first.begin(), first.end() - 1);
    for (size_t i = 0; i < f.eligible.size(); ++i) {
      if (plan.events.events[i].kind == kind && f.eligible[i])
        edges[at[f.context[i]]++] = static_cast<int32_t>(i);
    }
  }
  std::map<int32_t, int64_t> group;  // owner → best member (root: -1)
  for (size_t c = 0; c < contexts.size(); ++c) {
    int64_t& g = group[contexts.owner[c]];
    g = std::max(g, OverlapBound(f, std::span<const int32_t>(edges).subspan(
                                        first[c], first[c + 1] - first[c])));
  }
  for (const auto& [owner, b] : group) bound += b;
  return bound;
}

}  // namespace

IdAllocation MinimumIdAllocation(const Plan& plan, ExactLimits limits) {
  const auto& evs = plan.events.events;
  SyncView view(plan, /*physical=*/false);
  const RunContexts contexts = ComputeRunContexts(plan);
  const EdgeFacts f = CollectFacts(plan, view, contexts);
  ReuseOrder order(plan, view, contexts, f);
  Matching match = ChainCover(plan, f, order, limits).Run();
  IdAllocation out;
  out.id.assign(evs.size(), -1);
  for (const SyncKind kind : {SyncKind::kEvent, SyncKind::kNotify}) {
    IdAllocationStats& st = kind == SyncKind::kEvent ? out.events : out.notifies;
    // Chains: (smallest previous id, head), per context.
    std::map<int32_t, std::vector<std::pair<int32_t, uint32_t>>> chains;
    for (size_t i = 0; i < evs.size(); ++i) {
      if (evs[i].kind != kind) continue;
      ++st.edges;
      if (match.pred[i] >= 0) continue;
      int32_t smallest = evs[i].id;
      for (int32_t e = match.succ[i]; e >= 0; e = match.succ[e])
        smallest = std::min(smallest, evs[e].id);
      chains[f.eligible[i] ? f.context[i] : -1].emplace_back(smallest, static_cast<uint32_t>(i));
    }
    // Units that share one id: a chain; or, across sibling branches, the j-th
    // chain of each. Numbered in order of their smallest previous id (then
    // head), so a plan where nothing is shared keeps its ids.
    std::map<std::pair<int32_t, size_t>, std::vector<uint32_t>>
        sibling_units;  // (owner, j) → heads
    std::vector<std::pair<std::pair<int32_t, uint32_t>, std::vector<uint32_t>>> units;
    for (auto& [c, list] : chains) {
      std::sort(list.begin(), list.end());
      const bool branch = c > 0 && !contexts.repeats[c];
      for (size_t j = 0; j < list.size(); ++j) {
        if (branch) {
          sibling_units[{contexts.owner[c], j}].push_back(list[j].second);
        } else {
          units.push_back({list[j], {list[j].second}});
        }
      }
    }
    for (auto& [key, heads] : sibling_units) {
      std::pair<int32_t, uint32_t> first{INT32_MAX, 0};
      for (uint32_t h : heads) {
        for (int32_t e = static_cast<int32_t>(h); e >= 0; e = match.succ[e]) {
          first = std::min(first, std::pair<int32_t, uint32_t>(evs[e].id, h));
        }
      }
      units.push_back({first, heads});
    }
    std::sort(units.begin(), units.end());
    for (size_t u = 0; u < units.size(); ++u) {
      for (uint32_t h : units[u].second) {
        for (int32_t e = static_cast<int32_t>(h); e >= 0; e = match.succ[e])
          out.id[e] = static_cast<int32_t>(u);
      }
    }
    st.ids = static_cast<int64_t>(units.size());
    st.shared = st.edges - st.ids;
    st.exact = match.exact[KindIndex(kind)];
    st.lower_bound = LowerBound(plan, contexts, f, kind);
  }
  return out;
}

IdAllocation IdLowerBounds(const Plan& plan) {
  SyncView view(plan, /*physical=*/false);
  const RunContexts contexts = ComputeRunContexts(plan);
  const EdgeFacts f = CollectFacts(plan, view, contexts);
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
    st.lower_bound = LowerBound(plan, contexts, f, kind);
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
    return absl::FailedPreconditionError(StrCat(
        "[", name(),
        "] Send/Recv nodes already carry the ids: allocate them before sync-node-generation"));
  }
  NPUPLAN_ASSIGN_OR_RETURN(const events::EventOptions opts, events::ReadEventOptions(ctx.options));
  const events::EventIdReuse reuse = opts.id_reuse;
  const std::string_view mode = events::EventIdReuseName(reuse);
  if (reuse == events::EventIdReuse::kGe) return false;  // GE's ids, byte for byte
  events::IdAllocation a;
  bool changed = false;
  if (reuse == events::EventIdReuse::kMin) {
    a = events::MinimumIdAllocation(plan, {opts.id_exact_limit, opts.id_exact_entries});
    auto& evs = plan.events.events;
    for (size_t i = 0; i < evs.size(); ++i) {
      changed |= evs[i].id != a.id[i];
      evs[i].id = a.id[i];
    }
    auto by_kind_id = [](const SyncEvent& x, const SyncEvent& y) {
      return x.kind != y.kind ? x.kind < y.kind : x.id < y.id;
    };
    if (!std::is_sorted(evs.begin(), evs.end(), by_kind_id))
      std::stable_sort(evs.begin(), evs.end(), by_kind_id);
    events::RecountIds(plan.events);
  } else {
    a = events::IdLowerBounds(plan);
  }
  WriteCounts(plan, a);
  for (const auto* st : {&a.events, &a.notifies}) {
    if (st->edges == 0) continue;
    const bool notify = st == &a.notifies;
    ctx.log.Record(name(), "EventIdsAllocated", "", Field("kind", notify ? "notify" : "event"),
                   Field("mode", mode), Field("edges", st->edges), Field("ids", st->ids),
                   Field("lower_bound", st->lower_bound), Field("exact", st->exact ? 1 : 0),
                   Field("shared", st->shared));
  }
  ctx.stats.Set(name(), "event_edges", a.events.edges);
  ctx.stats.Set(name(), "event_ids", a.events.ids);
  ctx.stats.Set(name(), "event_ids_lower_bound", a.events.lower_bound);
  ctx.stats.Set(name(), "notify_ids", a.notifies.ids);
  // Budgets, when set (unset they are the device limits, which
  // device-limit-check enforces as the hard check).
  const int64_t max_events = opts.budget_event_ids;
  const int64_t max_notifies = opts.budget_notify_ids;
  if (a.events.ids > max_events) {
    return absl::ResourceExhaustedError(StrCat(
        "[", name(), "] the plan needs ", a.events.ids, " device event ids for ", a.events.edges,
        " sync edges (eventIdReuse=", mode, "; at least ", a.events.lower_bound,
        " edges overlap) but the budget is ", max_events,
        " (npuplan.maxEventIds / npuplan.device.maxEvents); use ",
        reuse == events::EventIdReuse::kMin ? "" : "npuplan.eventIdReuse=min, ",
        "fewer streams (npuplan.maxStreams, ge.enableSingleStream=true) or ge.event=notify"));
  }
  if (a.notifies.ids > max_notifies) {
    return absl::ResourceExhaustedError(
        StrCat("[", name(), "] the plan needs ", a.notifies.ids, " device notify ids for ",
               a.notifies.edges, " sync edges (eventIdReuse=", mode, "; at least ",
               a.notifies.lower_bound, " edges overlap) but the budget is ", max_notifies,
               " (npuplan.maxNotifyIds / npuplan.device.maxNotifies); use ge.event=event or fewer "
               "streams"));
  }
  return changed;
}

}  // namespace npuplan
