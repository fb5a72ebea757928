#include "npuplan/verify/sync_verifier.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/plan/branch_chains.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/clock_store.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {
namespace {

absl::Status Fail(std::string_view rule, std::string_view what) {
  return absl::InternalError(StrCat("verifier[", rule, "]: ", what));
}

// The pool's clocks as BranchChains reads them.
class PoolChainClocks : public ChainClocks {
 public:
  explicit PoolChainClocks(ClockPool& pool) : pool_(pool) {}
  void Read(int32_t slot, int32_t* out) override { pool_.ReadInto(slot, out); }
  void Release(int32_t slot) override { pool_.Unref(slot); }

 private:
  ClockPool& pool_;
};

std::string SlotName(const Model& m, const SyncView& view, int32_t slot) {
  const Node& n = m.node(view.node_of(slot));
  int32_t a = view.attached_of(slot);
  return StrCat("'", n.name, "'", a >= 0 ? StrCat(" (attached ", a, ")") : std::string(),
                " on stream ", view.stream(slot));
}

}  // namespace

absl::Status VerifyHappensBefore(const Plan& plan) {
  Verification run(plan);
  return VerifyHappensBefore(run);
}

absl::Status VerifyHappensBefore(Verification& run) {
  const Plan& plan = run.plan();
  const Model& m = plan.model;
  const bool physical = Has(plan.established, IrProperty::kPhysicalStreams);
  const SyncView& view = run.View(physical);
  const SyncView* logical = physical ? &run.View(false) : nullptr;
  const size_t slots = view.num_slots();
  const size_t k = static_cast<size_t>(std::max<int64_t>(view.num_streams(), 1));

  // Once materialised, an event is recorded by its Send node and awaited by its Recv node.
  const SyncNodeIndex& sync = run.SyncNodes();
  // Incoming order edges per slot: events and activations (CSR).
  std::vector<std::pair<int32_t, int32_t>> in_edges;  // (to, from)
  RecordSlots record_slot(plan, view);  // a dynamic-path owner records after its subgraphs
  for (const SyncEvent& e : plan.events.events) {
    if (!e.send.valid() || !e.recv.valid() || e.send.index() >= m.num_nodes() ||
        e.recv.index() >= m.num_nodes()) {
      return Fail("happens-before", StrCat("event ", e.id, " names no node"));
    }
    if (e.reason == SyncReason::kLoop) {  // loop-carried: orders the next iteration, not this one
      if (m.node(e.recv).type != "StreamSwitch") {
        return Fail("happens-before",
                    StrCat("loop event ", e.id, " must wait on a StreamSwitch, not '",
                           m.node(e.recv).name, "'"));
      }
      continue;
    }
    if (e.send_attached >= view.num_attached(e.send) ||
        e.recv_attached >= view.num_attached(e.recv)) {
      return Fail("happens-before",
                  StrCat("event ", e.id, " names an attached stream the node does not have"));
    }
    const auto [from, to] = sync.EventSlots(view, e, record_slot.ForEvent(e));
    if (view.stream(from) < 0 || view.stream(to) < 0) {
      return Fail("happens-before",
                  StrCat("event ", e.id, " between '", m.node(e.send).name, "' and '",
                         m.node(e.recv).name, "' touches a node without a stream"));
    }
    if (view.rank(from) >= view.rank(to)) {
      return Fail("happens-before",
                  StrCat("event ", e.id, " from ", SlotName(m, view, from), " to ",
                         SlotName(m, view, to), " runs backwards in execution order",
                         e.reason == SyncReason::kLoopNext
                             ? " (a loop-next event waited before it is recorded: on a "
                               "wait-reset device the first iteration's wait blocks)"
                             : ""));
    }
    in_edges.emplace_back(to, from);
  }
  const ActivationInfo& act = run.Activation(physical);
  for (const auto& [from, to] : ActivationEdges(view, act)) in_edges.emplace_back(to, from);
  // In the sweep's order (the target's rank, then the sender), read with a
  // cursor as the sweep reaches each target: tens of thousands of edges,
  // where an offset table per slot was megabytes of fresh memory.
  std::sort(in_edges.begin(), in_edges.end(), [&view](const auto& a, const auto& b) {
    const int32_t ra = view.rank(a.first), rb = view.rank(b.first);
    return ra != rb ? ra < rb : a < b;
  });

  std::vector<Dep> deps = CollectDeps(plan, view, logical, run.Types(), run.DynamicGraphs());
  std::sort(deps.begin(), deps.end(), [](const Dep& a, const Dep& b) { return a.to < b.to; });

  ClockPool pool(slots, k);
  // A run takes one branch of each If/Case: stream order and edges out of a
  // branch as BranchChains gives them (docs/events.md, "Branches in the sweeps").
  BranchChains chains(m, view, k);
  PoolChainClocks chain_clocks(pool);
  for (const auto& [to, from] : in_edges) {
    ++pool.refs(from);
    chains.ExpectSender(from, to);
  }
  for (int64_t s = 0; s < view.num_streams(); ++s) {
    for (int32_t slot : chains.ChainRead(view.stream_slots(s))) ++pool.refs(slot);
  }
  // Sweep in execution order; deps are sorted by target slot id, so index them by slot.
  std::vector<uint32_t> dep_begin(slots + 1, 0);
  for (const Dep& d : deps) ++dep_begin[d.to + 1];
  for (size_t i = 0; i < slots; ++i) dep_begin[i + 1] += dep_begin[i];
  size_t in_end = 0;  // in_edges[in_begin, in_end) target v
  while (in_end < in_edges.size() && view.rank(in_edges[in_end].first) < 0)
    ++in_end;  // never swept
  for (int32_t v : view.slot_order()) {
    const size_t in_begin = in_end;
    while (in_end < in_edges.size() && in_edges[in_end].first == v) ++in_end;
    int64_t s = view.stream(v);
    if (s < 0) continue;
    int32_t p = view.pos(v);
    // v's clock is its stream's state (its predecessor's clock without
    // branches), joined with its incoming edges' clocks.
    if (const BranchChains::Source chain = chains.Before(v, chain_clocks); chain.slot >= 0) {
      pool.CopyOf(v, chain.slot);
    } else if (chain.flat != nullptr) {
      pool.FromFlat(v, chain.flat);
    } else {
      pool.Fresh(v);
    }
    for (size_t j = in_begin; j < in_end; ++j) {
      const int32_t u = in_edges[j].second;
      if (const BranchChains::Source from = chains.Sender(u, v); from.slot >= 0) {
        pool.Join(v, from.slot);
      } else if (from.flat != nullptr) {
        pool.JoinFlat(v, from.flat);
      }
    }
    pool.Set(v, static_cast<size_t>(s), p);
    chains.After(v);
    for (uint32_t j = dep_begin[v]; j < dep_begin[v + 1]; ++j) {
      const Dep& d = deps[j];
      if (pool.Get(v, static_cast<size_t>(view.stream(d.from))) < view.pos(d.from)) {
        return Fail("happens-before",
                    StrCat(d.why, " dependency ", SlotName(m, view, d.from), " -> ",
                           SlotName(m, view, d.to),
                           " is not ordered by same-stream order, events or stream activation"));
      }
    }
    for (size_t j = in_begin; j < in_end; ++j) pool.Unref(in_edges[j].second);
    if (pool.refs(v) == 0) {
      ++pool.refs(v);
      pool.Unref(v);
    }
  }
  chains.Finish(chain_clocks);
  if (plan.events.counts.count("minimum")) {
    return VerifyEventMinimum(plan, view, physical ? *logical : view, act, deps, run.Types());
  }
  return absl::OkStatus();
}

absl::Status VerifyEventIds(const Plan& plan) {
  int64_t events = 0, notifies = 0;
  if (!IdsContinuous(plan.events, &events, &notifies)) {
    return Fail("event-ids",
                "event/notify ids are not continuous from 0 (GE's runtime rejects holes)");
  }
  if (events != plan.events.event_count || notifies != plan.events.notify_count) {
    return Fail("event-ids", StrCat("the table has ", events, " event ids and ", notifies,
                                    " notify ids but records event_count=", plan.events.event_count,
                                    " notify_count=", plan.events.notify_count));
  }
  // GE checks the limit once the split is done; earlier stages may still remove notifies.
  if (Has(plan.established, IrProperty::kPhysicalStreams) && notifies > kMaxNotifies) {
    return Fail("event-ids",
                StrCat(notifies, " notifies exceed the device limit of ", kMaxNotifies));
  }
  // What event-id-allocation recorded must be what the table holds.
  for (const auto& [key, count] :
       {std::pair<const char*, int64_t>{"device_event_ids", events},
        std::pair<const char*, int64_t>{"device_notify_ids", notifies}}) {
    auto it = plan.events.counts.find(key);
    if (it == plan.events.counts.end()) continue;
    if (it->second != count) {
      return Fail("event-ids", StrCat("event_counts.", key, " is ", it->second,
                                      " but the table uses ", count, " ids"));
    }
    auto lb = plan.events.counts.find(StrCat(key, "_lower_bound"));
    if (lb != plan.events.counts.end() && (lb->second < 0 || lb->second > count)) {
      return Fail("event-ids", StrCat("event_counts.", key, "_lower_bound is ", lb->second,
                                      " but the table uses ", count, " ids"));
    }
  }
  for (const SyncEvent& e : plan.events.events) {
    if (e.kind != SyncKind::kEvent && e.kind != SyncKind::kNotify) {
      return Fail("event-ids",
                  StrCat("event ", e.id, " has unknown kind ", static_cast<int>(e.kind)));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyActiveStreams(const Plan& plan) {
  Verification run(plan);
  return VerifyActiveStreams(run);
}

absl::Status VerifyActiveStreams(Verification& run) {
  const Plan& plan = run.plan();
  const Model& m = plan.model;
  // Only a node with attributes can carry a list: the view's per-node flag
  // spares reading the others.
  const SyncView& view = run.View(Has(plan.established, IrProperty::kPhysicalStreams));
  int64_t streams = plan.streams.physical;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (!view.has_flag(NodeId(static_cast<int32_t>(i)), SyncView::kHasAttrs)) continue;
    const Node& n = m.nodes()[i];
    const AttrValue* v = FindAttr(n.attrs, "active_stream_list");
    if (v == nullptr) continue;
    const auto* list = v->as<AttrValue::IntList>();
    if (list == nullptr)
      return Fail("active-streams",
                  StrCat("node '", n.name, "': active_stream_list is not an int list"));
    int64_t own = i < plan.physical_stream.size() && plan.physical_stream[i] >= 0
                      ? plan.physical_stream[i]
                      : n.stream_id;
    for (int64_t s : *list) {
      if (s < 0 || (streams > 0 && s >= streams)) {
        return Fail("active-streams",
                    StrCat("node '", n.name, "' activates stream ", s, " which does not exist"));
      }
      if (s == own)
        return Fail("active-streams", StrCat("node '", n.name, "' activates its own stream ", s));
    }
  }
  return absl::OkStatus();
}

namespace {

// Every node's `_send_event_ids` / `_recv_event_ids` are exactly its
// dynamic-path events (`want_send` / `want_recv`, by node).
absl::Status CheckDynamicEventAttrs(const Model& m, const SyncView& view,
                                    const std::map<int32_t, std::set<int64_t>>& want_send,
                                    const std::map<int32_t, std::set<int64_t>>& want_recv) {
  // The wanted lists are walked along with the nodes (keys ascend); a node
  // without attributes (the view's per-node flag: its Node is not read) and
  // without wanted ids has nothing to compare.
  auto next_send = want_send.begin(), next_recv = want_recv.begin();
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const bool has_attrs = view.has_flag(NodeId(static_cast<int32_t>(i)), SyncView::kHasAttrs);
    for (const auto* want : {&want_send, &want_recv}) {
      const char* attr = want == &want_send ? "_send_event_ids" : "_recv_event_ids";
      auto& it = want == &want_send ? next_send : next_recv;
      while (it != want->end() && it->first < static_cast<int64_t>(i)) ++it;
      const bool wanted = it != want->end() && it->first == static_cast<int64_t>(i);
      if (!wanted && !has_attrs) continue;
      const Node& n = m.nodes()[i];
      std::vector<int64_t> expect;
      if (wanted) expect.assign(it->second.begin(), it->second.end());
      std::vector<int64_t> got;
      if (const AttrValue* v = FindAttr(n.attrs, attr); v != nullptr) {
        const auto* list = v->as<AttrValue::IntList>();
        if (list == nullptr)
          return Fail("sync-nodes", StrCat("node '", n.name, "': ", attr, " is not an int list"));
        got = *list;
      }
      if (got != expect) {
        return Fail("sync-nodes",
                    StrCat("node '", n.name, "' has ", attr, " [", StrJoin(got, ","),
                           "] but its dynamic-path events are [", StrJoin(expect, ","), "]"));
      }
    }
  }
  return absl::OkStatus();
}

// Send (or Recv) nodes counted by key (peer node, kind, id, stream), each
// key with the first node that claimed it: what a std::map incremented in
// claim order holds, as one sorted table (tens of thousands of keys at 1M
// nodes; a tree node per key cost more than the rest of the check).
class KeyCounts {
 public:
  using Key = std::tuple<int32_t, SyncKind, int64_t, int64_t>;
  void Add(const Key& key, NodeId node) { claims_.push_back({key, node}); }
  // Sorts the claims (stably: the first claim of a key stays first) into counts.
  void Finish() {
    std::stable_sort(claims_.begin(), claims_.end(),
                     [](const Claim& a, const Claim& b) { return a.key < b.key; });
    for (size_t i = 0; i < claims_.size(); ++i) {
      if (i > 0 && claims_[i].key == claims_[i - 1].key) {
        ++counts_.back();
      } else {
        keys_.push_back(claims_[i]);
        counts_.push_back(1);
      }
    }
    claims_.clear();
    claims_.shrink_to_fit();
  }
  // Uses one claim of `key`; false when none is left (a map's count would go below 0).
  bool Take(const Key& key) {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), key,
                               [](const Claim& c, const Key& k) { return c.key < k; });
    if (it == keys_.end() || it->key != key) return false;
    return --counts_[it - keys_.begin()] >= 0;
  }
  // The smallest key with claims left, and its first claimant.
  std::optional<std::pair<Key, NodeId>> FirstLeft() const {
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (counts_[i] > 0) return std::pair(keys_[i].key, keys_[i].node);
    }
    return std::nullopt;
  }

 private:
  struct Claim {
    Key key;
    NodeId node;
  };
  std::vector<Claim> claims_;  // before Finish
  std::vector<Claim> keys_;    // after: one per key, its first claimant
  std::vector<int64_t> counts_;
};

}  // namespace

absl::Status VerifySyncNodes(const Plan& plan) {
  Verification run(plan);
  return VerifySyncNodes(run);
}

absl::Status VerifySyncNodes(Verification& run) {
  const Plan& plan = run.plan();
  const Model& m = plan.model;
  const SyncView& view = run.View(Has(plan.established, IrProperty::kPhysicalStreams));
  // (peer node, kind, id, stream) → count, for generated Send and Recv nodes.
  using Key = KeyCounts::Key;
  KeyCounts sends, recvs;
  std::vector<bool> awaited(m.num_nodes(), false);  // Recv nodes some node waits for
  int64_t send_nodes = 0, recv_nodes = 0;
  const NodeTypes& types = run.Types();  // only Send/Recv nodes are read below
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const NodeId nid(static_cast<int32_t>(i));
    const bool is_send = types.is(nid, NodeTypes::kSend);
    const bool is_recv = types.is(nid, NodeTypes::kRecv);
    if (!is_send && !is_recv) continue;
    const Node& n = m.nodes()[i];
    SyncKind kind = types.is(nid, NodeTypes::kNotify) ? SyncKind::kNotify : SyncKind::kEvent;
    auto id = types.sync_id(nid);
    if (!id)
      return Fail("sync-nodes",
                  StrCat("node '", n.name, "' has no ", SyncKindName(kind), "_id attribute"));
    int64_t stream = view.stream(static_cast<int32_t>(i));
    if (is_send) {
      ++send_nodes;
      if (n.control_inputs.size() != 1) {
        return Fail("sync-nodes", StrCat("Send node '", n.name,
                                         "' must have exactly one control input (its sender)"));
      }
      sends.Add(Key{n.control_inputs[0].value, kind, *id, stream}, NodeId(static_cast<int32_t>(i)));
    } else {
      ++recv_nodes;
    }
  }
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    PrefetchNode(m, i + kNodePrefetch);
    for (NodeId c : m.nodes()[i].control_inputs) {
      if (!types.is(c, NodeTypes::kRecv)) continue;
      SyncKind kind = types.is(c, NodeTypes::kNotify) ? SyncKind::kNotify : SyncKind::kEvent;
      auto id = types.sync_id(c);
      recvs.Add(Key{static_cast<int32_t>(i), kind, id.value_or(-1), view.stream(c.value)}, c);
      awaited[c.index()] = true;
    }
  }
  sends.Finish();
  recvs.Finish();
  // Dynamic path: events as `_send_event_ids` / `_recv_event_ids`, exactly.
  const std::vector<bool>& dynamic_graphs = run.DynamicGraphs();
  std::map<int32_t, std::set<int64_t>> want_send, want_recv;
  int64_t node_events = 0;
  for (const SyncEvent& e : plan.events.events) {
    if (OnDynamicPath(plan, dynamic_graphs, e)) {
      want_send[DynamicAttrNode(m, e.send, e.recv).value].insert(e.id);
      want_recv[e.recv.value].insert(e.id);
    } else {
      ++node_events;
    }
  }
  NPUPLAN_RETURN_IF_ERROR(CheckDynamicEventAttrs(m, view, want_send, want_recv));
  SendSlots send_slot(
      m, view);  // a subgraph owner's Send runs on the piece current after its subgraphs
  for (const SyncEvent& e : plan.events.events) {
    if (OnDynamicPath(plan, dynamic_graphs, e)) continue;
    Key sk{e.send.value, e.kind, e.id, view.stream(send_slot.ForEvent(e))};
    Key rk{e.recv.value, e.kind, e.id, view.stream(view.slot(e.recv, e.recv_attached))};
    if (!sends.Take(sk)) {
      return Fail("sync-nodes",
                  StrCat(SyncKindName(e.kind), " ", e.id, " from '", m.node(e.send).name,
                         "' has no Send node on its stream after the sender"));
    }
    if (!recvs.Take(rk)) {
      return Fail("sync-nodes",
                  StrCat(SyncKindName(e.kind), " ", e.id, " to '", m.node(e.recv).name,
                         "' has no Recv node on its stream before the receiver"));
    }
  }
  // Send/Recv nodes no event accounts for (written by hand into the graph, or
  // left by a pass): named, with what they claim.
  for (const KeyCounts* table : {&sends, &recvs}) {
    const bool send = table == &sends;
    if (const auto left = table->FirstLeft()) {
      const auto& [key, node] = *left;
      const Node& n = m.node(node);
      const Node& peer = m.node(NodeId(std::get<0>(key)));
      return Fail("sync-nodes", StrCat(send ? "Send" : "Recv", " node '", EchoName(n.name), "' (",
                                       SyncKindName(std::get<1>(key)), "_id ", std::get<2>(key),
                                       ", ", send ? "after" : "before", " '", EchoName(peer.name),
                                       "' on stream ", std::get<3>(key), ") matches no ",
                                       SyncKindName(std::get<1>(key)), " of the plan"));
    }
  }
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (types.is(NodeId(static_cast<int32_t>(i)), NodeTypes::kRecv) && !awaited[i]) {
      const Node& n = m.nodes()[i];
      return Fail("sync-nodes",
                  StrCat("Recv node '", EchoName(n.name), "' is a control input of no node"));
    }
  }
  if (send_nodes != recv_nodes || send_nodes != node_events) {
    return Fail("sync-nodes",
                StrCat("the graph has ", send_nodes, " Send and ", recv_nodes,
                       " Recv nodes but the plan lists ", node_events, " events that need them"));
  }
  return absl::OkStatus();
}

absl::Status VerifyDynamicSenders(const Plan& plan) {
  Verification run(plan);
  return VerifyDynamicSenders(run);
}

absl::Status VerifyDynamicSenders(Verification& run) {
  const Plan& plan = run.plan();
  const Model& m = plan.model;
  const std::vector<bool>& dynamic_graphs = run.DynamicGraphs();
  for (const SyncEvent& e : plan.events.events) {
    if (!e.send.valid() || e.send.index() >= m.num_nodes() || !e.recv.valid() ||
        e.recv.index() >= m.num_nodes()) {
      continue;  // [happens-before] names these
    }
    if (!OnDynamicPath(plan, dynamic_graphs, e)) continue;
    const Node& sender = m.node(e.send);
    const AttrValue* v = FindAttr(sender.attrs, "_send_event_ids");
    const auto* ids = v != nullptr ? v->as<AttrValue::IntList>() : nullptr;
    if (ids == nullptr || std::find(ids->begin(), ids->end(), e.id) == ids->end()) {
      return Fail("dynamic-senders",
                  StrCat("event ", e.id, " lists '", sender.name,
                         "' as its sender, but that node's _send_event_ids do not carry it"));
    }
  }
  return absl::OkStatus();
}

}  // namespace npuplan::verify
