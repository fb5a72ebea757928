#include "npuplan/events/reuse_order.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "npuplan/ir/attached_streams.h"

namespace npuplan::events {
namespace {

constexpr int64_t kInfRank = std::numeric_limits<int64_t>::max();

bool IsBranchOwner(const Node& n) {
  return n.type == "If" || n.type == "StatelessIf" || n.type == "Case" || n.type == "StatelessCase";
}

// A plan whose root iterates (GE's loop structures, or loop events).
bool PlanLoops(const Plan& plan) {
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason == SyncReason::kLoop) return true;
  }
  const Model& m = plan.model;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (i + kNodePrefetch < m.num_nodes()) __builtin_prefetch(&m.nodes()[i + kNodePrefetch].type);
    const Node& n = m.nodes()[i];
    const std::string_view t = n.type;
    if (t == "StreamSwitch" || t == "Enter" || t == "RefEnter" || t == "NextIteration" ||
        t == "LoopCond")
      return true;
  }
  return false;
}

// Physical stream of a slot (the logical one before the split).
int64_t PhysicalStream(const Plan& plan, const SyncView& view, int32_t slot, bool split) {
  if (!split) return view.stream(slot);
  const NodeId n = view.node_of(slot);
  const int32_t a = view.attached_of(slot);
  if (a < 0) return plan.physical_stream[n.index()];
  if (auto it = plan.streams.attached_physical.find(n.value);
      it != plan.streams.attached_physical.end() && static_cast<size_t>(a) < it->second.size()) {
    return it->second[a];
  }
  return view.stream(slot);
}

}  // namespace

// Vector clocks of live slots; a clock is freed after its last reader.
class ReuseOrder::Clocks {
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
  // Between contexts (every clock has been released by then).
  void Reset(size_t k) {
    k_ = k;
    data_.clear();
    free_.clear();
  }
  void Unref(int32_t slot) {
    if (--refs_[slot] <= 0 && handle_[slot] >= 0) Release(slot);
  }
  void ReleaseIfUnused(int32_t slot) {
    if (refs_[slot] <= 0 && handle_[slot] >= 0) Release(slot);
  }
  bool Referenced(int32_t slot) const { return refs_[slot] > 0; }

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

RunContexts ComputeRunContexts(const Plan& plan) {
  const Model& m = plan.model;
  RunContexts c;
  c.of_graph.assign(m.num_graphs(), 0);
  c.repeats.push_back(PlanLoops(plan) ? 1 : 0);
  c.owner.push_back(-1);
  c.branch.push_back(0);
  for (GraphId g : m.GraphsPreOrder()) {  // owners' graphs before their subgraphs
    const Graph& graph = m.graph(g);
    if (!graph.parent_node.valid()) continue;
    const Node& owner = m.node(graph.parent_node);
    const int32_t up = c.of_graph[owner.graph.index()];
    if (owner.type == "PartitionedCall" || owner.type == "StatefulPartitionedCall") {
      c.of_graph[g.index()] = up;
      continue;
    }
    c.of_graph[g.index()] = static_cast<int32_t>(c.repeats.size());
    c.repeats.push_back(c.repeats[up] || !IsBranchOwner(owner) ? 1 : 0);
    c.owner.push_back(graph.parent_node.value);
    c.branch.push_back(static_cast<int32_t>(
        std::find(owner.subgraphs.begin(), owner.subgraphs.end(), g) - owner.subgraphs.begin()));
  }
  return c;
}

EdgeFacts CollectFacts(const Plan& plan, const SyncView& view, const RunContexts& contexts) {
  const Model& m = plan.model;
  const auto& evs = plan.events.events;
  const size_t n = evs.size();
  EdgeFacts f;
  f.context.assign(n, -1);
  f.eligible.assign(n, 0);
  f.has_pred.assign(n, 0);
  f.own.assign(n, -1);
  f.sendslot.assign(n, -1);
  f.recv.assign(n, -1);
  f.before_recv.assign(n, -1);
  f.start.assign(n, -1);
  f.end.assign(n, kInfRank);
  // The slot before each slot on its physical stream within its context
  // (Send/Recv nodes of a materialised plan skipped).
  const bool split = Has(plan.established, IrProperty::kPhysicalStreams) &&
                     plan.physical_stream.size() >= view.num_nodes();
  std::vector<int32_t> prev(view.num_slots(), -1);
  // (context, physical stream) → last slot: a table per context indexed by
  // the stream (ids are small and dense), a map for any other id.
  constexpr int64_t kDenseStreams = int64_t{1} << 20;
  std::vector<std::vector<int32_t>> last_dense(contexts.size());
  std::unordered_map<uint64_t, int32_t> last;
  const SyncView::SlotOrder slot_order = view.slot_order();
  // One graph: every slot is in context of_graph[0], and the view's flags
  // tell the Send/Recv nodes, so the walk reads no Node.
  const bool one_graph = m.num_graphs() == 1;
  for (size_t k = 0; k < slot_order.size(); ++k) {
    if (!one_graph && k + kNodePrefetch < slot_order.size())
      __builtin_prefetch(&m.node(view.node_of(slot_order[k + kNodePrefetch])).graph);
    const int32_t slot = slot_order[k];
    const NodeId id = view.node_of(slot);
    if (view.stream(slot) < 0 || view.has_flag(id, SyncView::kSync)) continue;
    const int32_t context = contexts.of_graph[one_graph ? 0 : m.node(id).graph.index()];
    const int64_t stream = PhysicalStream(plan, view, slot, split);
    int32_t* at;
    if (stream >= 0 && stream < kDenseStreams) {
      std::vector<int32_t>& table = last_dense[context];
      if (static_cast<size_t>(stream) >= table.size()) table.resize(stream + 1, -1);
      at = &table[stream];
    } else {
      const uint64_t key = (static_cast<uint64_t>(context) << 32) | static_cast<uint32_t>(stream);
      at = &last.try_emplace(key, -1).first->second;
    }
    prev[slot] = *at;
    *at = slot;
  }
  SendSlots send_slots(m, view);
  auto context_of = [&](NodeId id) { return contexts.of_graph[m.node(id).graph.index()]; };
  for (size_t i = 0; i < n; ++i) {
    const SyncEvent& e = evs[i];
    if (!e.send.valid() || !e.recv.valid() || e.send.index() >= m.num_nodes() ||
        e.recv.index() >= m.num_nodes())
      continue;
    if (e.send_attached >= view.num_attached(e.send) ||
        e.recv_attached >= view.num_attached(e.recv))
      continue;
    const int32_t own = view.slot(e.send, e.send_attached),
                  recv = view.slot(e.recv, e.recv_attached);
    if (view.stream(own) < 0 || view.stream(recv) < 0 || view.rank(own) < 0 ||
        view.rank(own) >= view.rank(recv))
      continue;
    const int32_t sendslot = send_slots.ForEvent(e);
    if (view.stream(sendslot) < 0 || view.rank(sendslot) >= view.rank(recv)) continue;
    const int32_t c = context_of(e.send);
    if (c != context_of(e.recv) || OrdersNextIteration(e)) continue;
    f.context[i] = c;
    f.own[i] = own;
    f.sendslot[i] = context_of(view.node_of(sendslot)) == c ? sendslot : own;
    f.recv[i] = recv;
    f.before_recv[i] = prev[recv];
    if (contexts.repeats[c]) continue;
    f.eligible[i] = 1;
    f.has_pred[i] = prev[recv] >= 0 && e.reason != SyncReason::kSplit;
    f.end[i] = view.rank(recv);
    f.start[i] = f.has_pred[i]
                     ? std::min({view.rank(own), view.rank(f.sendslot[i]), view.rank(prev[recv])})
                     : -1;
  }
  return f;
}

ReuseOrder::~ReuseOrder() = default;

ReuseOrder::ReuseOrder(const Plan& plan, const SyncView& view, const RunContexts& contexts,
                       const EdgeFacts& facts)
    : view_(view), f_(facts) {
  const Model& m = plan.model;
  const size_t slots = view.num_slots();
  clocks_ = std::make_unique<Clocks>(slots, 1);
  local_pos_.assign(slots, -1);
  pred_.assign(slots, -1);
  dim_.assign(slots, -1);
  physical_.assign(slots, -1);
  const bool split = Has(plan.established, IrProperty::kPhysicalStreams) &&
                     plan.physical_stream.size() >= view.num_nodes();
  for (size_t s = 0; s < slots; ++s) {
    if (view.stream(static_cast<int32_t>(s)) >= 0)
      physical_[s] = PhysicalStream(plan, view, static_cast<int32_t>(s), split);
  }
  for (size_t i = 0; i < plan.events.events.size(); ++i) {
    const SyncEvent& e = plan.events.events[i];
    if (e.reason != SyncReason::kSplit || !e.send.valid() || !e.recv.valid() ||
        e.send.index() >= m.num_nodes() || e.recv.index() >= m.num_nodes() ||
        e.send_attached >= view.num_attached(e.send) ||
        e.recv_attached >= view.num_attached(e.recv)) {
      continue;
    }
    const int32_t from = view.slot(e.send, e.send_attached),
                  to = view.slot(e.recv, e.recv_attached);
    splits_.push_back({view.stream(from), view.rank(from), view.rank(to), f_.context[i]});
  }
  // A piece boundary whose split event event-minimization dropped is ordered
  // by other events, maybe through another context: counted as a split from
  // no context, so a context spanning it takes physical positions. In a plan
  // of one context those events are all in it, so the boundary is ordered
  // there and the logical positions stay (physical ones would make the
  // clocks as wide as the split made streams: ~1 per 1,000 nodes).
  const int32_t dropped_split_context = contexts.size() == 1 ? 0 : -1;
  if (split) {
    std::set<std::pair<int64_t, int64_t>> opened;  // (sender rank, receiver rank)
    for (const Split& sp : splits_) opened.insert({sp.send_rank, sp.recv_rank});
    for (int64_t ls = 0; ls < view.num_streams(); ++ls) {
      const auto ss = view.stream_slots(ls);
      for (size_t p = 1; p < ss.size(); ++p) {
        if (physical_[ss[p - 1]] != physical_[ss[p]] &&
            !opened.count({view.rank(ss[p - 1]), view.rank(ss[p])})) {
          splits_.push_back({ls, view.rank(ss[p - 1]), view.rank(ss[p]), dropped_split_context});
        }
      }
    }
  }
  const auto& evs = plan.events.events;
  // Slots by context, each in execution order (a counting sort).
  context_of_slot_.assign(slots, -1);
  bucket_begin_.assign(contexts.size() + 1, 0);
  const bool one_graph = m.num_graphs() == 1;  // one context: no Node to read
  for (int32_t slot : view.slot_order()) {
    if (view.stream(slot) < 0) continue;
    context_of_slot_[slot] =
        contexts.of_graph[one_graph ? 0 : m.node(view.node_of(slot)).graph.index()];
    ++bucket_begin_[context_of_slot_[slot] + 1];
  }
  for (size_t c = 0; c < contexts.size(); ++c) bucket_begin_[c + 1] += bucket_begin_[c];
  bucket_.resize(bucket_begin_.back());
  {
    std::vector<uint32_t> cursor(bucket_begin_.begin(), bucket_begin_.end() - 1);
    for (int32_t slot : view.slot_order()) {
      if (context_of_slot_[slot] >= 0) bucket_[cursor[context_of_slot_[slot]]++] = slot;
    }
  }
  // Edges that order inside their context, by receiving slot.
  in_begin_.assign(slots + 1, 0);
  for (size_t i = 0; i < evs.size(); ++i) {
    if (f_.context[i] >= 0) ++in_begin_[f_.recv[i] + 1];
  }
  for (size_t s = 0; s < slots; ++s) in_begin_[s + 1] += in_begin_[s];
  in_edges_.resize(in_begin_[slots]);
  {
    std::vector<uint32_t> cursor(in_begin_.begin(), in_begin_.end() - 1);
    for (size_t i = 0; i < evs.size(); ++i) {
      if (f_.context[i] >= 0) in_edges_[cursor[f_.recv[i]]++] = static_cast<uint32_t>(i);
    }
  }
  // Activation inside a context: activator → first slot of each activated stream after it.
  std::vector<std::pair<int32_t, int32_t>> act;  // (target, activator)
  const ActivationInfo info = ComputeActivation(m, view);
  for (const auto& [a, streams] : info.activated) {
    const int32_t from = view.slot(NodeId(a), -1);
    if (view.stream(from) < 0) continue;
    for (int64_t s : streams) {
      int64_t logical = s;
      if (s >= view.num_streams()) {  // a physical id the split opened
        auto it = plan.streams.split_to_logical.find(s);
        if (it == plan.streams.split_to_logical.end()) continue;
        logical = it->second;
      }
      const int32_t to = view.FirstSlotAfter(logical, NodeId(a));
      if (to >= 0 && view.stream(to) != view.stream(from) &&
          context_of_slot_[to] == context_of_slot_[from]) {
        act.emplace_back(to, from);
      }
    }
  }
  std::sort(act.begin(), act.end());
  act_begin_.assign(slots + 1, 0);
  for (const auto& [to, from] : act) ++act_begin_[to + 1];
  for (size_t s = 0; s < slots; ++s) act_begin_[s + 1] += act_begin_[s];
  for (const auto& [to, from] : act) act_from_.push_back(from);
  std::vector<uint8_t> busy(contexts.size(), 0);
  for (size_t i = 0; i < evs.size(); ++i) {
    if (f_.eligible[i]) busy[f_.context[i]] = 1;
  }
  for (size_t c = 0; c < busy.size(); ++c) {
    if (busy[c]) busy_.push_back(static_cast<int32_t>(c));
  }
}

size_t ReuseOrder::Prepare(int32_t context) {
  const std::span<const int32_t> slots(bucket_.data() + bucket_begin_[context],
                                       bucket_.data() + bucket_begin_[context + 1]);
  // The context's span (first and last rank) on each logical stream (a
  // slot's stream is in [0, num_streams)).
  std::vector<std::pair<int64_t, int64_t>> span(view_.num_streams(), {-1, -1});
  for (int32_t slot : slots) {
    std::pair<int64_t, int64_t>& sp = span[view_.stream(slot)];
    if (sp.first < 0) sp.first = view_.rank(slot);
    sp.second = view_.rank(slot);
  }
  bool logical = true;
  for (const Split& sp : splits_) {
    if (sp.context != context && sp.stream >= 0 && sp.stream < view_.num_streams() &&
        span[sp.stream].first >= 0 && span[sp.stream].first < sp.recv_rank &&
        sp.send_rank < span[sp.stream].second) {
      logical = false;
      break;
    }
  }
  // Physical stream → dimension, numbered by first appearance: a table for
  // the usual small ids, a map for any other.
  constexpr int64_t kDenseStreams = int64_t{1} << 20;
  std::vector<int32_t> dense;
  std::unordered_map<int64_t, int32_t> index;
  int32_t dims = 0;
  for (int32_t slot : slots) {
    if (logical) {
      dim_[slot] = static_cast<int32_t>(view_.stream(slot));
      continue;
    }
    const int64_t p = physical_[slot];
    int32_t* at;
    if (p >= 0 && p < kDenseStreams) {
      if (static_cast<size_t>(p) >= dense.size()) dense.resize(p + 1, -1);
      at = &dense[p];
    } else {
      at = &index.try_emplace(p, -1).first->second;
    }
    if (*at < 0) *at = dims++;
    dim_[slot] = *at;
  }
  k_ = logical ? static_cast<size_t>(std::max<int64_t>(view_.num_streams(), 1))
               : std::max<size_t>(static_cast<size_t>(dims), 1);
  prepared_ = context;
  clocks_->Reset(k_);
  return k_;
}

void ReuseOrder::Sweep(int32_t context, ReuseVisitor& visitor) {
  if (prepared_ != context) Prepare(context);
  const std::span<const int32_t> slots(bucket_.data() + bucket_begin_[context],
                                       bucket_.data() + bucket_begin_[context + 1]);
  const size_t k = k_;
  // Positions within the context, and each slot's predecessor on its stream
  // there (a slot belongs to one context: the arrays need no reset).
  // Also a row of running clocks per dimension that has slots here (a
  // context of few streams among many needs few rows).
  std::vector<int32_t> row(k, -1);
  size_t rows = 0;
  {
    std::vector<int32_t> count(k, 0), last(k, -1);
    for (int32_t slot : slots) {
      const int64_t s = dim_[slot];
      local_pos_[slot] = count[s]++;
      pred_[slot] = last[s];
      last[s] = slot;
      if (row[s] < 0) row[s] = static_cast<int32_t>(rows++);
    }
  }
  Clocks& clocks = *clocks_;
  for (int32_t slot : slots) {
    for (uint32_t j = in_begin_[slot]; j < in_begin_[slot + 1]; ++j) {
      const uint32_t i = in_edges_[j];
      clocks.Ref(f_.own[i]);
      clocks.Ref(f_.sendslot[i]);
      if (f_.eligible[i] && f_.has_pred[i]) clocks.Ref(f_.before_recv[i]);
    }
    for (uint32_t b = act_begin_[slot]; b < act_begin_[slot + 1]; ++b) clocks.Ref(act_from_[b]);
  }
  std::vector<int32_t> ready(k);
  // The clock of each dimension's last slot, updated in place: a slot's
  // clock starts as its predecessor's, so only slots that others read (an
  // edge's ends, activators) are copied out — k ints per sync edge, not
  // per slot.
  std::vector<int32_t> running(rows * k, -1);
  for (int32_t v : slots) {
    const int64_t s = dim_[v];
    int32_t* c = running.data() + static_cast<size_t>(row[s]) * k;
    // An event releases its receiver after its record, which follows both the
    // sender's slot (plan program) and the slot its Send runs after
    // (materialised): what both know.
    for (uint32_t j = in_begin_[v]; j < in_begin_[v + 1]; ++j) {
      const uint32_t i = in_edges_[j];
      const int32_t* o1 = clocks.get(f_.own[i]);
      const int32_t* o2 = clocks.get(f_.sendslot[i]);
      for (size_t x = 0; x < k; ++x) c[x] = std::max(c[x], std::min(o1[x], o2[x]));
    }
    for (uint32_t b = act_begin_[v]; b < act_begin_[v + 1]; ++b) {
      const int32_t* o = clocks.get(act_from_[b]);
      for (size_t x = 0; x < k; ++x) c[x] = std::max(c[x], o[x]);
    }
    c[s] = local_pos_[v];
    for (uint32_t j = in_begin_[v]; j < in_begin_[v + 1]; ++j) {
      const uint32_t i = in_edges_[j];
      if (!f_.eligible[i] || !f_.has_pred[i]) continue;
      const int32_t* o1 = clocks.get(f_.own[i]);
      const int32_t* o2 = clocks.get(f_.sendslot[i]);
      const int32_t* o3 = clocks.get(f_.before_recv[i]);
      for (size_t x = 0; x < k; ++x) ready[x] = std::min({o1[x], o2[x], o3[x]});
      visitor.Right(i, ready.data());
    }
    for (uint32_t j = in_begin_[v]; j < in_begin_[v + 1]; ++j) {
      const uint32_t i = in_edges_[j];
      if (f_.eligible[i]) visitor.Left(i, static_cast<int32_t>(s), c[s]);
    }
    if (clocks.Referenced(v)) std::copy(c, c + k, clocks.Alloc(v));
    for (uint32_t j = in_begin_[v]; j < in_begin_[v + 1]; ++j) {
      const uint32_t i = in_edges_[j];
      clocks.Unref(f_.own[i]);
      clocks.Unref(f_.sendslot[i]);
      if (f_.eligible[i] && f_.has_pred[i]) clocks.Unref(f_.before_recv[i]);
    }
    for (uint32_t b = act_begin_[v]; b < act_begin_[v + 1]; ++b) clocks.Unref(act_from_[b]);
  }
}

}  // namespace npuplan::events
