// verifier[event-id-reuse] (issue 23): every device event / notify id that
// several sync edges share is shared safely, proved without the allocator's
// code (npuplan/events/reuse_order.*): its own contexts, its own clocks over
// the physical streams, Send/Recv nodes once they exist.
//
// Two edges may share an id when
//   (a) they lie in different branches of one If / Case — both ends of each
//       under its branch (GE's multi-gear reuse is this case) — or
//   (b) both run exactly once whenever their context runs (both ends in one
//       context that is no loop body; no loop event) and, in the order of
//       their sender slots, the first one's receiver happens before the
//       second one's sender, before its Send, and before the slot preceding
//       its receiver on that stream within the context (the second wait must
//       not be pending while the first record is set), where happens-before
//       uses only slots of that context.
// (b) is checked between consecutive edges of each context (happens-before
// is transitive). Edges that name a node with `_event_multiplexing` share by
// the user's declaration (GE trusts it) and are not checked.
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/clock_store.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {
namespace {

absl::Status Fail(std::string_view what) {
  return absl::InternalError(StrCat("verifier[event-id-reuse]: ", what));
}

bool Branches(const Node& n) {
  return n.type == "If" || n.type == "StatelessIf" || n.type == "Case" || n.type == "StatelessCase";
}

// Per graph, walking up: its context graph (the nearest graph, itself
// included, whose owner is not a PartitionedCall), whether that context may
// repeat, and the (owner, branch) pairs of the If / Case above it.
struct GraphRuns {
  std::vector<int32_t> context;
  std::vector<uint8_t> repeats;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> branches;
};

GraphRuns ComputeGraphRuns(const Model& m, bool loops) {
  GraphRuns r;
  const size_t n = m.num_graphs();
  r.context.assign(n, -1);
  r.repeats.assign(n, 0);
  r.branches.assign(n, {});
  for (size_t g0 = 0; g0 < n; ++g0) {
    std::vector<GraphId> up;  // g0 and its ancestors until one is known
    for (GraphId g(static_cast<int32_t>(g0)); r.context[g.index()] < 0;) {
      up.push_back(g);
      const Graph& graph = m.graph(g);
      if (!graph.parent_node.valid()) break;
      g = m.node(graph.parent_node).graph;
    }
    for (auto it = up.rbegin(); it != up.rend(); ++it) {  // from the top down
      const GraphId g = *it;
      const Graph& graph = m.graph(g);
      if (!graph.parent_node.valid()) {
        r.context[g.index()] = g.value;
        r.repeats[g.index()] = loops;
        continue;
      }
      const Node& owner = m.node(graph.parent_node);
      const size_t above = owner.graph.index();
      r.branches[g.index()] = r.branches[above];
      if (owner.type == "PartitionedCall" || owner.type == "StatefulPartitionedCall") {
        r.context[g.index()] = r.context[above];
        r.repeats[g.index()] = r.repeats[above];
        continue;
      }
      r.context[g.index()] = g.value;
      r.repeats[g.index()] = r.repeats[above] || !Branches(owner);
      for (size_t b = 0; b < owner.subgraphs.size(); ++b) {
        if (owner.subgraphs[b] == g)
          r.branches[g.index()].emplace_back(graph.parent_node.value, static_cast<int32_t>(b));
      }
    }
  }
  return r;
}

// The (owner, branch) pairs both ends of e lie under.
std::vector<std::pair<int32_t, int32_t>> CommonBranches(const Model& m, const GraphRuns& r,
                                                        const SyncEvent& e) {
  const auto& a = r.branches[m.node(e.send).graph.index()];
  const auto& b = r.branches[m.node(e.recv).graph.index()];
  std::vector<std::pair<int32_t, int32_t>> out;
  for (const auto& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) out.push_back(x);
  }
  return out;
}

bool Exclusive(const std::vector<std::pair<int32_t, int32_t>>& a,
               const std::vector<std::pair<int32_t, int32_t>>& b) {
  for (const auto& [owner, branch] : a) {
    for (const auto& [owner2, branch2] : b) {
      if (owner == owner2 && branch != branch2) return true;
    }
  }
  return false;
}

std::string EdgeName(const Model& m, const SyncEvent& e) {
  return StrCat("'", m.node(e.send).name, "' -> '", m.node(e.recv).name, "'");
}

// One ordering to prove inside a context: slot `from` happens before slot `to`.
struct Proof {
  int32_t from, to;
  size_t first, second;  // table entries
  const char* what;
};

// Happens-before over one context's slots (physical streams): stream order
// among them, the events between them (on Send/Recv nodes once they exist)
// and activation inside the context; then every proof, at its `to` slot.
absl::Status ProveInContext(const Plan& plan, const SyncView& view,
                            const std::vector<int32_t>& context_of_slot, int32_t context,
                            const std::vector<std::pair<int32_t, int32_t>>& order_edges,
                            std::vector<Proof> proofs) {
  const Model& m = plan.model;
  const size_t n = view.num_slots();
  const size_t k = static_cast<size_t>(std::max<int64_t>(view.num_streams(), 1));
  std::vector<int32_t> slots;  // the context's slots in execution order
  for (int32_t s : view.slot_order()) {
    if (view.stream(s) >= 0 && context_of_slot[s] == context) slots.push_back(s);
  }
  // Whether a slot is one of `slots`; those run in the view's rank order
  // (no table of places in `slots`: an array per slot is fresh memory).
  auto listed = [&](int32_t s) {
    return context_of_slot[s] == context && view.stream(s) >= 0 && view.rank(s) >= 0;
  };
  // Incoming orderings and proofs per slot (sorted lists, looked up by range).
  // An ordering from a slot that runs later (a backward event: happens-before
  // rejects the plan) orders nothing in this sweep, whose clock it has not
  // made yet.
  std::vector<std::pair<int32_t, int32_t>> in;  // (to, from)
  for (const auto& [from, to] : order_edges) {
    if (listed(from) && listed(to) && view.rank(from) < view.rank(to)) in.emplace_back(to, from);
  }
  std::sort(in.begin(), in.end());
  std::sort(proofs.begin(), proofs.end(),
            [](const Proof& a, const Proof& b) { return a.to < b.to; });
  // Where each slot's run of `in` and of `proofs` starts (-1: none): the
  // sweep visits every slot, a lookup per slot instead of two binary searches.
  std::vector<int32_t> in_first(n, -1), proof_first(n, -1);
  for (size_t j = in.size(); j-- > 0;) in_first[in[j].first] = static_cast<int32_t>(j);
  for (size_t j = proofs.size(); j-- > 0;) proof_first[proofs[j].to] = static_cast<int32_t>(j);
  // Position within the context per stream, predecessor there; readers left per slot.
  std::vector<int32_t> pos(n, -1), pred(n, -1);
  ClockPool pool(n, k);
  {
    std::vector<int32_t> last(k, -1), count(k, 0);
    for (int32_t s : slots) {
      const int64_t st = view.stream(s);
      pos[s] = count[st]++;
      pred[s] = last[st];
      last[st] = s;
      if (pred[s] >= 0) ++pool.refs(pred[s]);
    }
  }
  for (const auto& [to, from] : in) ++pool.refs(from);
  for (int32_t s : slots) {
    if (pred[s] >= 0) {
      pool.CopyOf(s, pred[s]);
    } else {
      pool.Fresh(s);
    }
    auto in_it = in_first[s] < 0 ? in.end() : in.begin() + in_first[s];
    auto in_end = in_it;
    while (in_end != in.end() && in_end->first == s) ++in_end;
    for (auto it = in_it; it != in_end; ++it) pool.Join(s, it->second);
    pool.Set(s, static_cast<size_t>(view.stream(s)), pos[s]);
    auto p = proof_first[s] < 0 ? proofs.end() : proofs.begin() + proof_first[s];
    for (; p != proofs.end() && p->to == s; ++p) {
      const int64_t fs = view.stream(p->from);
      if (context_of_slot[p->from] != context || pos[p->from] < 0 ||
          pool.Get(s, static_cast<size_t>(fs)) < pos[p->from]) {
        const SyncEvent &e1 = plan.events.events[p->first], &e2 = plan.events.events[p->second];
        return Fail(StrCat(SyncKindName(e1.kind), " id ", e1.id, " is shared by ", EdgeName(m, e1),
                           " and ", EdgeName(m, e2), ", but the wait of the first (before '",
                           m.node(view.node_of(p->from)).name, "') is not ordered before ", p->what,
                           " the second ('", m.node(view.node_of(p->to)).name,
                           "') by the slots that run whenever both run"));
      }
    }
    for (auto it = in_it; it != in_end; ++it) pool.Unref(it->second);
    if (pool.refs(s) == 0) {  // nobody reads this slot's clock: free it now
      ++pool.refs(s);
      pool.Unref(s);
    }
  }
  return absl::OkStatus();
}

// Groups of edges sharing an id (two or more).
std::map<std::pair<SyncKind, int32_t>, std::vector<size_t>> SharedIdGroups(
    const BigVector<SyncEvent>& evs) {
  std::map<std::pair<SyncKind, int32_t>, std::vector<size_t>> groups;
  for (size_t i = 0; i < evs.size(); ++i) groups[{evs[i].kind, evs[i].id}].push_back(i);
  std::erase_if(groups, [](const auto& g) { return g.second.size() < 2; });
  return groups;
}

// Whether the plan has a loop (a loop event or loop node): the root context may then repeat.
bool HasLoops(const Plan& plan, const NodeTypes& types) {
  bool loops = types.any(NodeTypes::kLoopMarker);
  for (const SyncEvent& e : plan.events.events) loops |= e.reason == SyncReason::kLoop;
  return loops;
}

absl::Status CheckEventEnds(const Model& m, const SyncView& view, const BigVector<SyncEvent>& evs) {
  for (const SyncEvent& e : evs) {
    if (!e.send.valid() || !e.recv.valid() || e.send.index() >= m.num_nodes() ||
        e.recv.index() >= m.num_nodes() || e.send_attached >= view.num_attached(e.send) ||
        e.recv_attached >= view.num_attached(e.recv)) {
      return Fail(
          StrCat(SyncKindName(e.kind), " ", e.id, " names no node or attached stream of the plan"));
    }
  }
  return absl::OkStatus();
}

// Ordering edges for the sweeps: events (not loop ones, on their Send/Recv
// nodes once they exist) and activation.
std::vector<std::pair<int32_t, int32_t>> OrderEdges(const Plan& plan, const SyncView& view,
                                                    const SyncNodeIndex& sync,
                                                    const ActivationInfo& act) {
  std::vector<std::pair<int32_t, int32_t>> order_edges;
  for (const SyncEvent& e : plan.events.events) {
    if (OrdersNextIteration(e)) continue;
    const auto [from, to] = sync.EventSlots(view, e, view.slot(e.send, e.send_attached));
    if (view.stream(from) >= 0 && view.stream(to) >= 0) order_edges.emplace_back(from, to);
  }
  const auto activation = ActivationEdges(view, act);
  order_edges.insert(order_edges.end(), activation.begin(), activation.end());
  return order_edges;
}

// What the id-sharing proofs of one group read.
struct ReuseFacts {
  const Model& m;
  const BigVector<SyncEvent>& evs;
  const GraphRuns& runs;
  const SyncView& view;
  const std::vector<int32_t>& context_of_slot;
  const SyncNodeIndex& sync;

  // The slot where e's record happens (its Send node once it exists).
  int32_t RecordSlot(const SyncEvent& e) const {
    const NodeId sn = sync.Send({e.send.value, e.id, e.kind == SyncKind::kNotify});
    return sn.valid() ? view.slot(sn, -1) : SendSlots(m, view)(e.send, e.send_attached);
  }
  bool InExclusiveBranches(size_t i, size_t j) const {
    return Exclusive(CommonBranches(m, runs, evs[i]), CommonBranches(m, runs, evs[j]));
  }
};

// (a): a `loose` edge (not in one context that runs once) shares only with
// edges of other branches, and so do the contexts of `by_context`.
absl::Status CheckAcrossContexts(const ReuseFacts& f, const std::string& what,
                                 const std::vector<size_t>& members,
                                 const std::vector<size_t>& loose,
                                 const std::map<int32_t, std::vector<size_t>>& by_context) {
  const Model& m = f.m;
  const auto& evs = f.evs;
  for (size_t i : loose) {
    for (size_t j : members) {
      if (i != j && !f.InExclusiveBranches(i, j)) {
        return Fail(StrCat(what, " is shared by ", EdgeName(m, evs[i]), " and ",
                           EdgeName(m, evs[j]), ", but ", EdgeName(m, evs[i]),
                           " may not run, or may run more than once, whenever the other runs "
                           "(its ends lie in different subgraph contexts, a loop body or a loop)"));
      }
    }
  }
  for (auto a = by_context.begin(); a != by_context.end(); ++a) {
    for (auto b = std::next(a); b != by_context.end(); ++b) {
      if (!f.InExclusiveBranches(a->second.front(), b->second.front())) {
        return Fail(StrCat(what, " is shared by ", EdgeName(m, evs[a->second.front()]), " and ",
                           EdgeName(m, evs[b->second.front()]),
                           ", which lie in different subgraphs that can both run"));
      }
    }
  }
  return absl::OkStatus();
}

// (b): the edges `list` of context `c`, in sender order; each consecutive
// pair adds its orderings to prove to `ps`.
absl::Status AddInContextProofs(const ReuseFacts& f, const std::string& what, int32_t c,
                                std::vector<size_t>& list, std::vector<Proof>& ps) {
  const Model& m = f.m;
  const auto& evs = f.evs;
  const SyncView& view = f.view;
  auto sender_rank = [&](size_t i) {
    return view.rank(view.slot(evs[i].send, evs[i].send_attached));
  };
  std::sort(list.begin(), list.end(), [&](size_t x, size_t y) {
    return std::pair(sender_rank(x), x) < std::pair(sender_rank(y), y);
  });
  for (size_t j = 1; j < list.size(); ++j) {
    const SyncEvent &e1 = evs[list[j - 1]], &e2 = evs[list[j]];
    const int32_t r1 = view.slot(e1.recv, e1.recv_attached),
                  r2 = view.slot(e2.recv, e2.recv_attached);
    // The slot before e2's receiver on its stream within the context, Send/Recv nodes skipped.
    int32_t before = -1;
    const int64_t st = view.stream(r2);
    for (int32_t p = view.pos(r2) - 1; st >= 0 && p >= 0; --p) {
      const int32_t slot = view.stream_slots(st)[p];
      if (f.context_of_slot[slot] == c && !IsSyncNode(m.node(view.node_of(slot)))) {
        before = slot;
        break;
      }
    }
    if (before < 0) {
      return Fail(StrCat(what, " is shared by ", EdgeName(m, e1), " and ", EdgeName(m, e2),
                         ", but the wait of ", EdgeName(m, e2),
                         " is the first on its stream: it is pending from the start and could "
                         "consume the record of ",
                         EdgeName(m, e1)));
    }
    ps.push_back({r1, view.slot(e2.send, e2.send_attached), list[j - 1], list[j], "the record of"});
    const int32_t rec = f.RecordSlot(e2);
    if (f.context_of_slot[rec] == c) ps.push_back({r1, rec, list[j - 1], list[j], "the Send of"});
    ps.push_back({r1, before, list[j - 1], list[j], "the start of the wait of"});
  }
  return absl::OkStatus();
}

// One group of edges sharing an id: (a) checked now, (b)'s orderings added to
// `proofs` per context.
absl::Status CheckSharedGroup(const ReuseFacts& f, std::pair<SyncKind, int32_t> key,
                              const std::vector<size_t>& members,
                              std::map<int32_t, std::vector<Proof>>& proofs) {
  const Model& m = f.m;
  const auto& evs = f.evs;
  const std::string what = StrCat(SyncKindName(key.first), " id ", key.second);
  if (std::all_of(members.begin(), members.end(), [&](size_t i) {
        return HasAttr(m.node(evs[i].send).attrs, "_event_multiplexing") ||
               HasAttr(m.node(evs[i].recv).attrs, "_event_multiplexing");
      })) {
    return absl::OkStatus();
  }
  std::map<int32_t, std::vector<size_t>> by_context;
  std::vector<size_t> loose;  // not in one context that runs once: (a) with every other edge
  for (size_t i : members) {
    const SyncEvent& e = evs[i];
    const int32_t c = f.runs.context[m.node(e.send).graph.index()];
    if (c == f.runs.context[m.node(e.recv).graph.index()] &&
        !f.runs.repeats[m.node(e.send).graph.index()] && !OrdersNextIteration(e)) {
      by_context[c].push_back(i);
    } else {
      loose.push_back(i);
    }
  }
  if (absl::Status s = CheckAcrossContexts(f, what, members, loose, by_context); !s.ok()) return s;
  for (auto& [c, list] : by_context) {
    if (list.size() < 2) continue;  // nothing to order
    if (absl::Status s = AddInContextProofs(f, what, c, list, proofs[c]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyEventIdReuse(const Plan& plan) {
  Verification run(plan);
  return VerifyEventIdReuse(run);
}

absl::Status VerifyEventIdReuse(Verification& run) {
  const Plan& plan = run.plan();
  const Model& m = plan.model;
  const auto& evs = plan.events.events;
  const auto groups = SharedIdGroups(evs);
  if (groups.empty()) return absl::OkStatus();
  const GraphRuns runs = ComputeGraphRuns(m, HasLoops(plan, run.Types()));
  const bool physical = Has(plan.established, IrProperty::kPhysicalStreams);
  const SyncView& view = run.View(physical);
  if (absl::Status s = CheckEventEnds(m, view, evs); !s.ok()) return s;
  std::vector<int32_t> context_of_slot(view.num_slots(), -1);
  const bool one_graph = m.num_graphs() == 1;  // every node in the root: no Node to read
  for (size_t s = 0; s < view.num_slots(); ++s) {
    context_of_slot[s] =
        runs.context[one_graph ? 0 : m.node(view.node_of(static_cast<int32_t>(s))).graph.index()];
  }
  const SyncNodeIndex& sync = run.SyncNodes();
  const auto order_edges = OrderEdges(plan, view, sync, run.Activation(physical));
  const ReuseFacts facts{m, evs, runs, view, context_of_slot, sync};
  std::map<int32_t, std::vector<Proof>> proofs;  // context → orderings to prove
  for (const auto& [key, members] : groups) {
    if (absl::Status s = CheckSharedGroup(facts, key, members, proofs); !s.ok()) return s;
  }
  for (auto& [c, ps] : proofs) {
    absl::Status s = ProveInContext(plan, view, context_of_slot, c, order_edges, std::move(ps));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace npuplan::verify
