// The ge reduction of sync-event-optimization (sync_event_optimization.h):
// GE's OptimizeSyncEvents — OptimizeBySendEvents, OptimizeByRecvEvents,
// OptimizeByStreamActivate, then every event a StreamSwitch sends — over the
// main-stream events, in GE's order.
#include <algorithm>
#include <span>
#include <tuple>
#include <unordered_set>

#include "npuplan/events/sync_event_optimization.h"

namespace npuplan::events {

namespace {

// OptimizeBySendEvents and OptimizeByRecvEvents on their own CSRs of the
// main-stream events, by receiver and by sender, in id order (any table).
void GeSendRecvRules(const Plan& plan, const SyncView& view, BigVector<Removal>& out) {
  const Model& m = plan.model;
  const auto& evs = plan.events.events;
  // Per node: main-stream events it receives / sends, in id order (CSR).
  // The table is usually in id order already (insertion builds it so).
  const bool id_order = std::is_sorted(
      evs.begin(), evs.end(), [](const SyncEvent& a, const SyncEvent& b) { return a.id < b.id; });
  BigVector<uint32_t> by_id;
  if (!id_order) {
    by_id.resize(evs.size());
    for (size_t i = 0; i < evs.size(); ++i) by_id[i] = static_cast<uint32_t>(i);
    std::stable_sort(by_id.begin(), by_id.end(),
                     [&](uint32_t a, uint32_t b) { return evs[a].id < evs[b].id; });
  }
  const size_t n = m.num_nodes();
  BigVector<uint32_t> recv_begin(n + 1, 0), send_begin(n + 1, 0);
  constexpr size_t kAhead = 16;  // events ahead to prefetch the randomly indexed entries of
  for (size_t i = 0; i < evs.size(); ++i) {
    if (i + kAhead < evs.size()) {
      __builtin_prefetch(&recv_begin[evs[i + kAhead].recv.index() + 1]);
      __builtin_prefetch(&send_begin[evs[i + kAhead].send.index() + 1]);
    }
    const SyncEvent& e = evs[i];
    if (e.send_attached >= 0 || e.recv_attached >= 0) continue;
    ++recv_begin[e.recv.index() + 1];
    ++send_begin[e.send.index() + 1];
  }
  for (size_t i = 0; i < n; ++i) {
    recv_begin[i + 1] += recv_begin[i];
    send_begin[i + 1] += send_begin[i];
  }
  // Beside each CSR entry its peer node (sender of a received event,
  // receiver of a sent one): the rules below then walk the CSR arrays in
  // order instead of reading the table at random. Entry: (event, peer).
  // Filled with the begin entries as cursors (each ends as the next node's
  // begin), then shifted back by one entry: no cursor copies.
  BigVector<std::pair<int32_t, int32_t>> recv_of(recv_begin[n]), send_of(send_begin[n]);
  for (size_t j = 0; j < evs.size(); ++j) {
    const uint32_t i = id_order ? static_cast<uint32_t>(j) : by_id[j];
    if (id_order && j + kAhead < evs.size()) {
      __builtin_prefetch(&recv_begin[evs[j + kAhead].recv.index()]);
      __builtin_prefetch(&send_begin[evs[j + kAhead].send.index()]);
    }
    const SyncEvent& e = evs[i];
    if (e.send_attached >= 0 || e.recv_attached >= 0) continue;
    recv_of[recv_begin[e.recv.index()]++] = {static_cast<int32_t>(i), e.send.value};
    send_of[send_begin[e.send.index()]++] = {static_cast<int32_t>(i), e.recv.value};
  }
  for (size_t i = n; i > 0; --i) {
    recv_begin[i] = recv_begin[i - 1];
    send_begin[i] = send_begin[i - 1];
  }
  recv_begin[0] = send_begin[0] = 0;
  // Per-node scratch stamped with the stream being walked (no per-stream sets).
  BigVector<int32_t> stamp(n, -1);
  // The rules walk each stream's slots in order and look up their CSR
  // entries' peers at random: prefetch the entries this many slots ahead,
  // and the peers' stamps half as many.
  constexpr size_t kSlotsAhead = 8;
  auto prefetch_slots = [&](std::span<const int32_t> ss, size_t q, const BigVector<uint32_t>& begin,
                            const BigVector<std::pair<int32_t, int32_t>>& entries) {
    if (q + kSlotsAhead < ss.size() && static_cast<size_t>(ss[q + kSlotsAhead]) < n) {
      __builtin_prefetch(
          &entries[std::min<size_t>(begin[ss[q + kSlotsAhead]], entries.size() - 1)]);
    }
    if (q + kSlotsAhead / 2 < ss.size() && static_cast<size_t>(ss[q + kSlotsAhead / 2]) < n) {
      const int32_t w = ss[q + kSlotsAhead / 2];
      for (uint32_t j = begin[w]; j < begin[w + 1]; ++j)
        __builtin_prefetch(&stamp[entries[j].second]);
    }
  };
  // Events the send rule removed, one bit each (fits in cache, unlike `out`).
  std::vector<uint64_t> send_removed((evs.size() + 63) / 64, 0);
  // OptimizeBySendEvents: one wait per (sender node, receiving stream).
  // (Every main-stream event is visited once here and nothing removed any
  // before: no `out` test.)
  for (int64_t s = 0; s < view.num_streams(); ++s) {
    const auto& ss = view.stream_slots(s);
    for (size_t q = 0; q < ss.size(); ++q) {
      const int32_t slot = ss[q];
      if (view.attached_of(slot) >= 0) continue;
      if (!recv_of.empty()) prefetch_slots(ss, q, recv_begin, recv_of);
      for (uint32_t j = recv_begin[slot]; j < recv_begin[slot + 1]; ++j) {
        const auto [e, peer] = recv_of[j];
        const size_t x = static_cast<size_t>(peer);
        if (stamp[x] == s) {
          out[e] = Removal::kGeSend;
          send_removed[static_cast<size_t>(e) / 64] |= uint64_t{1} << (e % 64);
        } else {
          stamp[x] = static_cast<int32_t>(s);
        }
      }
    }
  }
  // OptimizeByRecvEvents: one signal per (sending stream, receiver node); the last one stays.
  // The receive CSR is done with: its begin array becomes `last` (only read
  // where this rule wrote it), so no fresh array.
  std::fill(stamp.begin(), stamp.end(), -1);
  FreeStorage(recv_of);
  BigVector<uint32_t> last = std::move(recv_begin);
  for (int64_t s = 0; s < view.num_streams(); ++s) {
    const auto& ss = view.stream_slots(s);
    for (size_t q = 0; q < ss.size(); ++q) {
      const int32_t slot = ss[q];
      if (view.attached_of(slot) >= 0) continue;
      if (!send_of.empty()) prefetch_slots(ss, q, send_begin, send_of);
      for (uint32_t j = send_begin[slot]; j < send_begin[slot + 1]; ++j) {
        const auto [e, peer] = send_of[j];
        if (send_removed[static_cast<size_t>(e) / 64] >> (e % 64) & 1) continue;  // out[e] != kKeep
        const size_t r = static_cast<size_t>(peer);
        if (stamp[r] == s) out[last[r]] = Removal::kGeRecv;
        stamp[r] = static_cast<int32_t>(s);
        last[r] = static_cast<uint32_t>(e);
      }
    }
  }
}

// The same two rules without CSRs of their own (index.ge_ready: the table is
// in id order, each sender's main-stream events are one run of it, and every
// main-stream event is in the receiver lists). The send rule keeps, per
// sender and receiving stream, the event first in (receiver position, id)
// order, read along the sender's run; the receive rule keeps, per receiver
// and sending stream, the event last in (sender position, id) order, read
// from the receiver's entries — what the walks over the streams' slots
// above leave.
void GeSendRecvRules(const Plan& plan, const SyncView& view, const ReceiverIndex& index,
                     BigVector<Removal>& out) {
  const size_t n = view.num_nodes();
  const auto& begin = index.begin;
  const auto& preds = index.preds;
  const auto& info = index.info;
  // Events the send rule removed, one bit each (fits in cache, unlike `out`).
  BigVector<uint64_t> send_removed((out.size() + 63) / 64, 0);
  auto removed_by_send = [&](int32_t e) {
    return (send_removed[static_cast<size_t>(e) / 64] >> (e % 64) & 1) != 0;
  };
  // OptimizeBySendEvents: one wait per (sender node, receiving stream): the
  // first in (receiver position, id) order stays — what the walk over the
  // receiving streams keeps. Read along each sender's run of the table
  // (its receivers are mostly near it: their entries are in cache), not by
  // walking every stream's slots over the whole index (k passes).
  // An event with the (stream, position) of its other end, ordered by those and then the event.
  struct End {
    int32_t stream;
    int32_t pos;
    int32_t event;
    bool operator<(const End& o) const {
      return std::tie(stream, pos, event) < std::tie(o.stream, o.pos, o.event);
    }
  };
  std::vector<End> run;
  auto send_rule = [&]() {
    if (run.size() < 2) return;
    auto remove = [&](int32_t e) {
      out[e] = Removal::kGeSend;
      send_removed[static_cast<size_t>(e) / 64] |= uint64_t{1} << (e % 64);
    };
    if (run.size() <= 16) {
      for (const End& w : run) {
        for (const End& o : run) {
          if (o.stream == w.stream && o < w) {
            remove(w.event);
            break;
          }
        }
      }
      return;
    }
    std::sort(run.begin(), run.end());
    for (size_t c = 1; c < run.size(); ++c) {
      if (run[c].stream == run[c - 1].stream) remove(run[c].event);
    }
  };
  {
    const auto& evs = plan.events.events;
    NodeId sender;
    constexpr size_t kAhead = 16;
    for (size_t i = 0; i < evs.size(); ++i) {
      if (i + kAhead < evs.size()) __builtin_prefetch(&info[evs[i + kAhead].recv.index()]);
      const SyncEvent& e = evs[i];
      if (e.send_attached >= 0 || e.recv_attached >= 0) continue;
      if (e.send != sender) {
        send_rule();
        run.clear();
        sender = e.send;
      }
      const ReceiverIndex::SlotInfo& r = info[e.recv.index()];
      run.push_back({r.stream, r.pos, static_cast<int32_t>(i)});
    }
    send_rule();
  }
  // OptimizeByRecvEvents: one signal per (sending stream, receiver node).
  // Most receivers have one or two entries: compare them pairwise; a
  // receiver with many sorts its candidates.
  std::vector<End> many;
  constexpr uint32_t kPairwiseMax = 16;
  constexpr size_t kAhead = 8;
  for (size_t v = 0; v < n; ++v) {
    if (v + kAhead < n) {
      for (uint32_t j = begin[v + kAhead]; j < begin[v + kAhead + 1]; ++j)
        __builtin_prefetch(&info[preds[j].first]);
    }
    const uint32_t lo = begin[v], hi = begin[v + 1];
    if (hi - lo < 2) continue;
    auto candidate = [&](uint32_t j) {
      const auto [u, e] = preds[j];
      return e >= 0 && static_cast<size_t>(u) < n && !removed_by_send(e);
    };
    if (hi - lo <= kPairwiseMax) {
      for (uint32_t j = lo; j < hi; ++j) {
        if (!candidate(j)) continue;
        const auto [u, e] = preds[j];
        const ReceiverIndex::SlotInfo& iu = info[u];
        for (uint32_t j2 = lo; j2 < hi; ++j2) {
          if (j2 == j || !candidate(j2)) continue;
          const auto [u2, e2] = preds[j2];
          const ReceiverIndex::SlotInfo& iu2 = info[u2];
          if (iu2.stream == iu.stream && (iu2.pos > iu.pos || (iu2.pos == iu.pos && e2 > e))) {
            out[e] = Removal::kGeRecv;
            break;
          }
        }
      }
      continue;
    }
    many.clear();
    for (uint32_t j = lo; j < hi; ++j) {
      if (candidate(j))
        many.push_back({info[preds[j].first].stream, info[preds[j].first].pos, preds[j].second});
    }
    std::sort(many.begin(), many.end());
    for (size_t c = 0; c + 1 < many.size(); ++c) {
      if (many[c].stream == many[c + 1].stream) out[many[c].event] = Removal::kGeRecv;
    }
  }
}

}  // namespace

BigVector<Removal> GeReduction(const Plan& plan, const SyncView& view, const ActivationInfo& act) {
  return GeReduction(plan, view, act, nullptr);
}

BigVector<Removal> GeReduction(const Plan& plan, const SyncView& view, const ActivationInfo& act,
                               const ReceiverIndex* index) {
  const Model& m = plan.model;
  const auto& evs = plan.events.events;
  BigVector<Removal> out(evs.size(), Removal::kKeep);
  if (index != nullptr && index->ge_ready) {
    GeSendRecvRules(plan, view, *index, out);
  } else {
    GeSendRecvRules(plan, view, out);
  }
  // OptimizeByStreamActivate (GE IsRecvNodeActivatedBySendNode).
  auto in_nodes = [&](NodeId n) {
    std::vector<NodeId> r;
    for (const OutputRef& in : m.node(n).inputs) r.push_back(in.node);
    for (NodeId c : m.node(n).control_inputs) r.push_back(c);
    return r;
  };
  auto activated_by_sender = [&](NodeId x, NodeId r) {
    const Node& rn = m.node(r);
    if (GetStringAttr(rn.attrs, "_stream_label").value_or("").empty()) return false;
    auto it = act.activators_of_stream.find(rn.stream_id);
    if (it == act.activators_of_stream.end()) return false;
    std::vector<NodeId> queue(it->second.begin(), it->second.end());
    std::unordered_set<int32_t> visited;
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      NodeId a = queue[qi];
      const Node& an = m.node(a);
      if (an.graph != m.node(x).graph) continue;
      if (!visited.insert(a.value).second) return false;
      if (GetBoolAttr(an.attrs, "is_loop_active").value_or(false)) return false;
      if (!an.control_inputs.empty() &&
          std::all_of(an.control_inputs.begin(), an.control_inputs.end(),
                      [&](NodeId c) { return m.node(c).type == "NextIteration"; })) {
        continue;
      }
      // npuplan's safety guard: the activation only orders what follows the activator.
      if (view.seq(r) <= view.seq(a)) continue;
      for (NodeId p : in_nodes(a)) {
        if (m.node(p).stream_id == m.node(x).stream_id && view.seq(p) >= view.seq(x)) return true;
        for (NodeId pp : in_nodes(p)) {
          if (pp == x) return true;
        }
      }
      if (auto next = act.activators_of_stream.find(an.stream_id);
          next != act.activators_of_stream.end()) {
        queue.insert(queue.end(), next->second.begin(), next->second.end());
      }
    }
    return false;
  };
  if (!act.activators_of_stream.empty()) {
    for (size_t i = 0; i < evs.size(); ++i) {
      const SyncEvent& e = evs[i];
      if (out[i] != Removal::kKeep || e.send_attached >= 0 || e.recv_attached >= 0) continue;
      if (activated_by_sender(e.send, e.recv)) out[i] = Removal::kGeActivation;
    }
  }
  // StreamSwitch purge.
  for (size_t i = 0; view.any_flag(SyncView::kStreamSwitch) && i < evs.size(); ++i) {
    if (out[i] == Removal::kKeep && SentBySwitch(view, evs[i])) out[i] = Removal::kStreamSwitch;
  }
  return out;
}

}  // namespace npuplan::events
