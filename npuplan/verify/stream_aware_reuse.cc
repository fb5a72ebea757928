#include "npuplan/verify/stream_aware_reuse.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "npuplan/ir/attached_streams.h"

namespace npuplan::memory {
using namespace std::string_view_literals;
namespace {

// Edges whose order the events stage leaves to loop/branch activation.
bool OrdersNothing(const Node& from) {
  const std::string_view t = from.type;  // string_view == checks the length first
  return t == "Enter"sv || t == "RefEnter"sv || t == "StreamSwitch"sv;
}

// The first index r < n with !below(r) (n when none), for a predicate true
// on a prefix: within the kNear indices past (or before) `hint` when two
// probes show it is there, else a binary search of all n (whose first probes
// are the same every call: cached); `hint` becomes r. The same answer as
// std::partition_point, in a few probes when the answers of consecutive
// calls are close, two more than a binary search when not.
template <typename Below>
size_t PartitionFrom(size_t n, Below below, size_t& hint) {
  constexpr size_t kNear = 16;
  size_t lo = 0, hi = n;  // the answer lies in [lo, hi]
  const size_t h = std::min(hint, n);
  if (h < n && below(h)) {
    const size_t near = std::min(n, h + 1 + kNear);
    if (near == n || !below(near)) {
      lo = h + 1;
      hi = near;
    }
  } else if (h > 0) {
    const size_t near = h > kNear ? h - kNear : 0;
    if (below(near)) {
      lo = near + 1;
      hi = h;
    }
  } else {
    hi = 0;  // h == 0 and !below(0) (or n == 0)
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (below(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  hint = lo;
  return lo;
}

}  // namespace

void PositionRanks::Build(std::span<const int64_t> positions, int64_t steps) {
  steps_ = std::max<int64_t>(steps, 0);
  below_.assign(static_cast<size_t>(steps_) + 1, 0);
  // below_[x] = entries < x: each entry p raises the counts above it.
  size_t next = 0;
  for (size_t x = 0; x <= static_cast<size_t>(steps_); ++x) {
    while (next < positions.size() && positions[next] < static_cast<int64_t>(x)) ++next;
    below_[x] = static_cast<int32_t>(next);
  }
}

HappensBefore::HappensBefore(const Model& model, const std::vector<NodeId>& order,
                             const std::function<void()>& model_read) {
  const size_t n = model.num_nodes();
  // Streams and whether each node's out-edges order anything, read here in
  // node order: the sweep meets a node's predecessors anywhere in the graph.
  BigVector<int32_t> stream(n);
  size_t edges = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = model.nodes()[i];
    k_ = std::max(k_, node.stream_id + 1);
    stream[i] = node.stream_id < 0    ? -1
                : OrdersNothing(node) ? static_cast<int32_t>(node.stream_id) | kOrdersNothing
                                      : static_cast<int32_t>(node.stream_id);
    if (node.stream_id >= 0) edges += node.inputs.size() + node.control_inputs.size();
  }
  stride_ = kClock + static_cast<size_t>(k_);
  rows_.assign(n * stride_, -1);
  for (size_t i = 0; i < n; ++i) rows_[i * stride_ + kStream] = stream[i];
  // Plan positions: only subgraph entries compare them (the sweep itself
  // tells predecessors earlier in the plan by their assigned stream position).
  BigVector<int64_t> seq;
  if (model.num_graphs() > 1) {
    seq.assign(n, -1);
    for (size_t i = 0; i < order.size(); ++i) seq[order[i].index()] = static_cast<int64_t>(i);
  }
  Predecessors preds = CollectPredecessors(model, seq);
  // A streamless predecessor never gets a stream position (the sweep would
  // skip it), nor does one whose out-edges order nothing join.
  preds.edge_begin.assign(n + 1, 0);
  preds.edges.reserve(edges);
  auto orders = [&](NodeId u) {
    return stream[u.index()] >= 0 && !(stream[u.index()] & kOrdersNothing);
  };
  for (size_t i = 0; i < n; ++i) {
    preds.edge_begin[i] = static_cast<int32_t>(preds.edges.size());
    if (stream[i] < 0) continue;
    const Node& node = model.nodes()[i];
    for (const OutputRef& in : node.inputs) {
      if (orders(in.node)) preds.edges.push_back(in.node);
    }
    for (NodeId c : node.control_inputs) {
      if (orders(c)) preds.edges.push_back(c);
    }
  }
  preds.edge_begin[n] = static_cast<int32_t>(preds.edges.size());
  FreeStorage(stream);
  if (model_read) model_read();
  Sweep(order, seq, preds);
}

// Data and control edges, subgraph end (end node → each successor of the
// parent) and subgraph entry. Entry is not listed per root: every root of
// every subgraph of a parent has all of the parent's inputs as predecessors,
// which listed per root is roots × inputs entries (a partitioned dynamic
// subgraph has one Data root per call input). The parent's inputs are listed
// once instead (`entries`) and each root names its parent's entry.
HappensBefore::Predecessors HappensBefore::CollectPredecessors(
    const Model& model, const BigVector<int64_t>& seq) const {
  const size_t n = model.num_nodes();
  Predecessors out;
  out.entry_of.assign(n, -1);
  if (model.num_graphs() <= 1) return out;
  out.ends.resize(n);
  std::vector<int32_t> entry_of_parent(n, -1);
  Adjacency adj(model);
  for (size_t g = 1; g < model.num_graphs(); ++g) {
    const Graph& graph = model.graphs()[g];
    if (!graph.parent_node.valid()) continue;
    int32_t& entry = entry_of_parent[graph.parent_node.index()];
    NodeId end;
    for (NodeId id : graph.nodes) {
      const Node& x = model.node(id);
      if (IsSyncNode(x)) continue;
      const bool root =
          x.inputs.empty() && std::all_of(x.control_inputs.begin(), x.control_inputs.end(),
                                          [&](NodeId c) { return IsSyncNode(model.node(c)); });
      if (root) {
        if (entry < 0) entry = AddEntry(model.node(graph.parent_node), seq, out.entries);
        out.entry_of[id.index()] = entry;
      }
      if (!end.valid() && GetBoolAttr(x.attrs, "_subgraph_end_node").value_or(false)) end = id;
    }
    if (!end.valid()) {
      for (NodeId id : graph.nodes) {
        if (model.node(id).type == "NetOutput") {
          end = id;
          break;
        }
      }
    }
    if (end.valid()) {
      for (size_t e = adj.begin(graph.parent_node); e < adj.end(graph.parent_node); ++e) {
        out.ends[adj.succ[e].index()].push_back(end);
      }
    }
  }
  return out;
}

// The parent's data and control inputs that can order anything (streamed, in
// the plan), by plan position: the sweep joins them in that order.
int32_t HappensBefore::AddEntry(const Node& parent, const BigVector<int64_t>& seq,
                                std::vector<Entry>& entries) const {
  Entry e;
  auto add = [&](NodeId u) {
    if (stream(u) >= 0 && seq[u.index()] >= 0) e.inputs.push_back(u);
  };
  for (const OutputRef& in : parent.inputs) add(in.node);
  for (NodeId c : parent.control_inputs) add(c);
  std::sort(e.inputs.begin(), e.inputs.end(),
            [&](NodeId a, NodeId b) { return seq[a.index()] < seq[b.index()]; });
  e.clock.assign(static_cast<size_t>(k_), -1);
  entries.push_back(std::move(e));
  return static_cast<int32_t>(entries.size() - 1);
}

// One sweep in plan order: clock(v) = join of the inclusive clocks of v's
// streamed predecessors that precede it in the plan and of its stream
// predecessor. A root's entry predecessors are the parent's inputs before it
// in the plan; the roots of one parent come in plan order, so its entry clock
// only grows: each input is joined into it once, and each root joins it once.
// A streamed node gets its stream position when the sweep reaches it: a
// predecessor with none yet (-1) is not before v in the plan (or not in it).
void HappensBefore::Sweep(const std::vector<NodeId>& order, const BigVector<int64_t>& seq,
                          Predecessors& preds) {
  const size_t k = static_cast<size_t>(k_);
  std::vector<int32_t> next_pos(k, 0);
  std::vector<NodeId> last_on_stream(k);
  // Joins u's inclusive clock into cv; false when u has no position yet.
  auto join_into = [&](int32_t* cv, NodeId u) {
    const int32_t* ru = Row(u);
    if (ru[kPos] < 0) return;
    const int32_t* cu = ru + kClock;
    for (size_t j = 0; j < k; ++j) cv[j] = std::max(cv[j], cu[j]);
    const size_t su = static_cast<size_t>(ru[kStream] & ~kOrdersNothing);
    cv[su] = std::max(cv[su], ru[kPos]);
  };
  for (NodeId v : order) {
    int32_t* rv = Row(v);
    if (rv[kStream] < 0) continue;
    const size_t s = static_cast<size_t>(rv[kStream] & ~kOrdersNothing);
    int32_t* cv = rv + kClock;
    if (last_on_stream[s].valid()) join_into(cv, last_on_stream[s]);
    for (int32_t e = preds.edge_begin[v.index()]; e < preds.edge_begin[v.index() + 1]; ++e)
      join_into(cv, preds.edges[static_cast<size_t>(e)]);
    if (!preds.ends.empty()) {
      for (NodeId u : preds.ends[v.index()]) join_into(cv, u);
    }
    if (const int32_t e = preds.entry_of[v.index()]; e >= 0) {
      Entry& entry = preds.entries[static_cast<size_t>(e)];
      for (; entry.next < entry.inputs.size() &&
             seq[entry.inputs[entry.next].index()] < seq[v.index()];
           ++entry.next) {
        join_into(entry.clock.data(), entry.inputs[entry.next]);
      }
      for (size_t j = 0; j < k; ++j) cv[j] = std::max(cv[j], entry.clock[j]);
    }
    rv[kPos] = next_pos[s]++;
    last_on_stream[s] = v;
  }
}

bool HappensBefore::Before(NodeId a, NodeId b) const {
  const int64_t sa = stream(a);
  if (sa < 0 || stream(b) < 0 || a == b) return false;
  return clock(b)[sa] >= stream_pos(a);
}

namespace {

// Plan position just past each loop with iteration-local buffers: the loop
// node and its subgraphs are contiguous in plan order (pre-order).
std::map<int32_t, int64_t> LoopEnds(const Model& model, const TensorLifetimes& lt) {
  std::map<int32_t, int64_t> loop_end;
  for (const LogicalBuffer& b : lt.buffers) {
    if (b.iteration_loop < 0 || loop_end.count(b.iteration_loop) > 0) continue;
    int64_t end = lt.position[static_cast<size_t>(b.iteration_loop)] + 1;
    std::vector<GraphId> stack(model.node(NodeId(b.iteration_loop)).subgraphs);
    while (!stack.empty()) {
      const GraphId g = stack.back();
      stack.pop_back();
      for (NodeId v : model.graph(g).nodes) {
        end = std::max(end, lt.position[v.index()] + 1);
        for (GraphId sg : model.node(v).subgraphs) stack.push_back(sg);
      }
    }
    loop_end[b.iteration_loop] = end;
  }
  return loop_end;
}

}  // namespace

StreamAwareReuse::StreamAwareReuse(const Model& model, const TensorLifetimes& lifetimes,
                                   const std::function<void()>& model_read)
    : lt_(lifetimes),
      loop_end_(LoopEnds(model, lifetimes)),
      hb_(model, lifetimes.order, model_read) {
  const size_t k = static_cast<size_t>(hb_.num_streams());
  const size_t nb = lt_.buffers.size();
  uses_.k = k;
  uses_.last_begin.assign(nb + 1, 0);
  uses_.last.reserve(nb);
  uses_.meet.assign(nb * k, std::numeric_limits<int32_t>::max());
  only_stream_.assign(nb, -1);
  std::vector<int32_t> last(k, -1);
  for (size_t b = 0; b < nb; ++b) {
    std::fill(last.begin(), last.end(), -1);
    int64_t only = -2;
    int32_t* meet = uses_.meet.data() + b * k;
    for (NodeId u : lt_.buffers[b].uses) {
      const int64_t s = hb_.stream(u);
      last[s] = std::max(last[s], hb_.stream_pos(u));
      const int32_t* c = hb_.clock(u);
      for (size_t j = 0; j < k; ++j) meet[j] = std::min(meet[j], c[j]);
      only = only == -2 || only == s ? s : -1;
    }
    for (size_t s = 0; s < k; ++s) {
      if (last[s] >= 0) uses_.last.emplace_back(static_cast<int32_t>(s), last[s]);
    }
    uses_.last_begin[b + 1] = static_cast<int32_t>(uses_.last.size());
    only_stream_[b] = only < 0 ? -1 : only;
  }
  stream_nodes_.resize(k);
  for (NodeId v : lt_.order) {
    if (hb_.stream(v) >= 0 && hb_.stream_pos(v) >= 0) stream_nodes_[hb_.stream(v)].push_back(v);
  }
}

// One is iteration-local in a loop the other touches: the same body
// position of another iteration may run concurrently on another stream.
bool SharesIterations(const LogicalBuffer& x, const LogicalBuffer& y) {
  auto in = [](std::span<const int32_t> loops, int32_t loop) {
    return std::binary_search(loops.begin(), loops.end(), loop);
  };
  return (x.iteration_loop >= 0 && in(y.loops, x.iteration_loop)) ||
         (y.iteration_loop >= 0 && in(x.loops, y.iteration_loop));
}

bool StreamAwareReuse::SameStream(int a, int b) const {
  return only_stream_[a] >= 0 && only_stream_[a] == only_stream_[b];
}

bool StreamAwareReuse::Ordered(int a, int b) const {
  const LogicalBuffer& x = lt_.buffers[a];
  const LogicalBuffer& y = lt_.buffers[b];
  if (!x.pinned.empty() || !y.pinned.empty() || x.live_to_end) return false;
  if (x.upper > y.lower) return false;  // plan order is a linear extension of H
  if (x.uses.empty() || y.uses.empty()) return false;
  if (lt_.flat_loops && !SameStream(a, b)) return false;
  if (!SameStream(a, b) && SharesIterations(x, y)) return false;
  const int32_t* meet_b = uses_.Meet(static_cast<size_t>(b));
  for (const auto& [s, p] : uses_.Last(static_cast<size_t>(a))) {
    if (meet_b[s] < p) return false;
  }
  return true;
}

std::vector<std::pair<int, int>> StreamAwareReuse::ExtraConflicts(
    const std::vector<int>& buffers) const {
  std::vector<int> by_lower(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) by_lower[i] = static_cast<int>(i);
  std::sort(by_lower.begin(), by_lower.end(), [&](int i, int j) {
    return std::make_pair(lt_.buffers[buffers[i]].lower, i) <
           std::make_pair(lt_.buffers[buffers[j]].lower, j);
  });
  std::vector<std::pair<int, int>> out;
  for (size_t ii = 0; ii < by_lower.size(); ++ii) {
    const int i = by_lower[ii];
    const LogicalBuffer& x = lt_.buffers[buffers[i]];
    if (x.size == 0) continue;
    for (size_t jj = ii + 1; jj < by_lower.size(); ++jj) {
      const int j = by_lower[jj];
      const LogicalBuffer& y = lt_.buffers[buffers[j]];
      if (y.size == 0 || y.lower < x.upper) continue;  // overlapping in time: already a conflict
      if (!Ordered(buffers[i], buffers[j])) out.emplace_back(std::min(i, j), std::max(i, j));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Counts over the positions of one stream (a Fenwick tree).
class StreamCounter {
 public:
  void Reset(size_t positions) { tree_.assign(positions + 1, 0); }
  void Add(int32_t p, int32_t delta) {
    for (size_t x = static_cast<size_t>(p) + 1; x < tree_.size(); x += x & (~x + 1))
      tree_[x] += delta;
  }
  // Entries at positions < p.
  int64_t Prefix(int64_t p) const {
    int64_t sum = 0;
    for (size_t x =
             static_cast<size_t>(std::clamp<int64_t>(p, 0, static_cast<int64_t>(tree_.size()) - 1));
         x > 0; x -= x & (~x + 1)) {
      sum += tree_[x];
    }
    return sum;
  }

 private:
  BigVector<int32_t> tree_;
};

// `items` stably sorted by key(item) in [0, max_key] (a counting sort).
template <typename Key>
BigVector<int> SortedByKey(const BigVector<int>& items, int64_t max_key, Key key) {
  BigVector<int32_t> start(static_cast<size_t>(max_key) + 2, 0);
  for (int i : items) ++start[static_cast<size_t>(key(i)) + 1];
  for (size_t x = 1; x < start.size(); ++x) start[x] += start[x - 1];
  BigVector<int> out(items.size());
  for (int i : items) out[static_cast<size_t>(start[static_cast<size_t>(key(i))]++)] = i;
  return out;
}

// What the steps of StreamAwareReuse::Conflicts share: the buffers, their
// planning lifetimes (in `out`, widened in place) and the reuse analysis's
// per-buffer and per-stream data. The rounds only ever remove buffers from
// the counts (widening), so a count at or below the limit stays there: each
// round recounts only the buffers still above it.
class ConflictRounds {
 public:
  ConflictRounds(const std::vector<int>& buffers, const TensorLifetimes& lt,
                 const HappensBefore& hb, const BufferUses& uses,
                 const std::vector<std::vector<NodeId>>& stream_nodes,
                 StreamAwareReuse::PlanningConflicts& out)
      : buffers_(buffers),
        lt_(lt),
        hb_(hb),
        uses_(uses),
        stream_nodes_(stream_nodes),
        out_(out),
        n_(buffers.size()),
        k_(static_cast<size_t>(hb.num_streams())),
        widened_up_(n_, 0),
        widened_low_(n_, 0),
        positions_(k_),
        below_(k_),
        last_first_(k_, -1),
        counters_(k_),
        kind_(n_) {
    for (size_t i = 0; i < n_; ++i) {
      const LogicalBuffer& b = Buf(i);
      const bool follow = b.size > 0 && b.pinned.empty() && !b.uses.empty();
      kind_[i] = static_cast<uint8_t>((b.size > 0 ? kSized : 0) | (follow ? kFollow : 0) |
                                      (follow && !b.live_to_end ? kPrecede : 0));
    }
  }

  // `a` may be ordered before a later buffer / `b` after an earlier one.
  bool CanPrecede(size_t i) const { return kind_[i] & kPrecede; }
  bool CanFollow(size_t i) const { return kind_[i] & kFollow; }

  void WidenUnordered();
  void set_release(BigVector<int64_t> release) { release_ = std::move(release); }
  void Prepare();
  void AtIndices();  // after Prepare
  void Rounds(int64_t limit);
  void ExactPairs(int64_t limit);

 private:
  const LogicalBuffer& Buf(size_t i) const { return lt_.buffers[buffers_[i]]; }
  void CountFirsts();
  // The first node of stream t at plan position >= x (index into positions_[t]).
  int32_t At(size_t t, int64_t x) const {
    if (!ranks_.empty()) return ranks_[t].Below(x);
    const BigVector<int64_t>& p = positions_[t];
    return static_cast<int32_t>(std::lower_bound(p.begin(), p.end(), x) - p.begin());
  }
  // First uses on stream t of the buffers not widened down, at plan positions
  // < release_[i][t] (ReleaseBelow) or < out_.upper[i] (UpperBelow). The
  // positions are looked up once (AtIndices, WidenUp), not in every round.
  int64_t ReleaseBelow(size_t i, size_t t) const { return below_[t][release_at_[i * k_ + t]]; }
  int64_t UpperBelow(size_t i, size_t t) const { return below_[t][upper_at_[i * k_ + t]]; }
  int64_t Forward(size_t i, int64_t& count) const;
  void AddLastUses(int a, int32_t delta);
  int64_t LaterLastUses(size_t i) const;
  void Backward(BigVector<int64_t>& count, BigVector<int64_t>& acquire);
  void BackwardAgain(const BigVector<char>& hot, BigVector<int64_t>& count);
  void WidenUp(size_t i, int64_t e) {
    if (e <= out_.upper[i]) return;
    out_.upper[i] = e;
    widened_up_[i] = 1;
    for (size_t t = 0; t < k_; ++t) upper_at_[i * k_ + t] = At(t, e);
  }
  void WidenLow(size_t i, int64_t l) {
    if (l >= out_.lower[i]) return;
    out_.lower[i] = l;
    widened_low_[i] = 1;
    firsts_changed_ = true;
  }

  const std::vector<int>& buffers_;
  const TensorLifetimes& lt_;
  const HappensBefore& hb_;
  const BufferUses& uses_;
  const std::vector<std::vector<NodeId>>& stream_nodes_;
  StreamAwareReuse::PlanningConflicts& out_;
  const size_t n_;
  const size_t k_;  // streams
  BigVector<char> widened_up_, widened_low_;
  BigVector<int64_t> release_;  // F_t(a) per buffer and stream (n x k, fixed)
  // At(t, release_) and At(t, out_.upper) per buffer that can precede and stream (n x k).
  BigVector<int32_t> release_at_, upper_at_;
  // Per stream: plan positions of its nodes; with few streams also as
  // PositionRanks (At() in one lookup), empty otherwise.
  std::vector<BigVector<int64_t>> positions_;
  std::vector<PositionRanks> ranks_;
  // Per buffer that can follow (first_begin_[i] .. [i+1]): (stream, position
  // on it) of its first use on each stream it uses.
  BigVector<int32_t> first_begin_;
  BigVector<std::pair<int32_t, int32_t>> firsts_;
  // Per stream, of the buffers not widened down: first uses at stream
  // positions < q (below_[t][q]) and the plan position of the last one (-1: none).
  std::vector<BigVector<int32_t>> below_;
  BigVector<int64_t> last_first_;
  bool firsts_changed_ = true;  // below_ and last_first_ are out of date
  // Size > 0 buffers by lower; buffers that can precede by upper (both stable).
  BigVector<int> by_lower_, by_upper_;
  BigVector<int64_t> first_back_;  // backward counts of the first round
  std::vector<StreamCounter> counters_;
  // Per buffer: kSized | kFollow | kPrecede, read in every step (the
  // buffers' fields are spread over two cache lines of each LogicalBuffer).
  enum : uint8_t { kSized = 1, kFollow = 2, kPrecede = 4 };
  BigVector<uint8_t> kind_;
};

// Buffers ordered against nothing (pinned, no uses) or that can precede
// nothing keep their whole lifetime on that side.
void ConflictRounds::WidenUnordered() {
  const int64_t end = lt_.num_steps;
  for (size_t i = 0; i < n_; ++i) {
    if (!(kind_[i] & kSized)) continue;
    if (!CanFollow(i)) out_.lower[i] = 0;  // ordered against nothing
    if (!CanPrecede(i)) out_.upper[i] = std::max(out_.upper[i], end);
  }
}

// The fixed inputs of the counts: stream positions, first uses, sort orders.
// A use outside the plan order (position -1) is no first use.
void ConflictRounds::Prepare() {
  for (size_t t = 0; t < k_; ++t) {
    positions_[t].reserve(stream_nodes_[t].size());
    for (NodeId v : stream_nodes_[t]) positions_[t].push_back(lt_.position[v.index()]);
  }
  // A table of num_steps + 1 entries per stream: only while that is no
  // larger than the n x k lookups it answers (release_at_, upper_at_).
  const int64_t steps = lt_.num_steps;
  if (static_cast<uint64_t>(steps) + 1 <= 2 * static_cast<uint64_t>(n_) + 1024) {
    ranks_.resize(k_);
    for (size_t t = 0; t < k_; ++t) ranks_[t].Build(positions_[t], steps);
  }
  first_begin_.assign(n_ + 1, 0);
  BigVector<int64_t> seen(k_, -1);  // buffer whose first use on t is listed
  BigVector<int> sized, precede;
  for (size_t i = 0; i < n_; ++i) {
    first_begin_[i] = static_cast<int32_t>(firsts_.size());
    if (kind_[i] & kSized) sized.push_back(static_cast<int>(i));
    if (CanPrecede(i)) precede.push_back(static_cast<int>(i));
    if (!CanFollow(i)) continue;
    for (NodeId u : Buf(i).uses) {  // by plan position: the first on t comes first
      const size_t t = static_cast<size_t>(hb_.stream(u));
      if (lt_.position[u.index()] < 0 || seen[t] == static_cast<int64_t>(i)) continue;
      seen[t] = static_cast<int64_t>(i);
      firsts_.emplace_back(static_cast<int32_t>(t), hb_.stream_pos(u));
    }
  }
  first_begin_[n_] = static_cast<int32_t>(firsts_.size());
  int64_t max_key = 0;
  for (int i : sized) max_key = std::max({max_key, Buf(i).lower, out_.upper[i]});
  by_lower_ = SortedByKey(sized, max_key, [&](int i) { return Buf(i).lower; });
  by_upper_ = SortedByKey(precede, max_key, [&](int i) { return out_.upper[i]; });
}

// At() for every buffer and stream, searched near the previous buffer's
// answers first (buffers come by lower: the positions looked up mostly grow).
void ConflictRounds::AtIndices() {
  release_at_.assign(n_ * k_, 0);
  upper_at_.assign(n_ * k_, 0);
  if (!ranks_.empty()) {
    for (size_t i = 0; i < n_; ++i) {
      if (!CanPrecede(i)) continue;
      for (size_t t = 0; t < k_; ++t) {
        release_at_[i * k_ + t] = At(t, release_[i * k_ + t]);
        upper_at_[i * k_ + t] = At(t, out_.upper[i]);
      }
    }
    return;
  }
  std::vector<size_t> release_hint(k_, 0), upper_hint(k_, 0);
  for (size_t i = 0; i < n_; ++i) {
    if (!CanPrecede(i)) continue;  // the only ones Forward and ExactPairs count
    for (size_t t = 0; t < k_; ++t) {
      const BigVector<int64_t>& p = positions_[t];
      const int64_t release = release_[i * k_ + t], upper = out_.upper[i];
      release_at_[i * k_ + t] = static_cast<int32_t>(PartitionFrom(
          p.size(), [&](size_t j) { return p[j] < release; }, release_hint[t]));
      upper_at_[i * k_ + t] = static_cast<int32_t>(PartitionFrom(
          p.size(), [&](size_t j) { return p[j] < upper; }, upper_hint[t]));
    }
  }
}

// Forward: a later buffer b conflicts with a (disjoint in time) iff some
// stream t has first_use_t(b) < F_t(a), the plan position of the first
// node of t whose clock covers all of a's last uses (clocks grow along a
// stream, so those nodes form a suffix of t). Per stream, prefix counts of
// the first uses of the buffers not widened down.
void ConflictRounds::CountFirsts() {
  if (!firsts_changed_) return;
  firsts_changed_ = false;
  for (size_t t = 0; t < k_; ++t) {
    below_[t].assign(stream_nodes_[t].size() + 1, 0);
    last_first_[t] = -1;
  }
  for (size_t i = 0; i < n_; ++i) {
    if (widened_low_[i]) continue;  // only buffers that can follow list first uses
    for (int32_t f = first_begin_[i]; f < first_begin_[i + 1]; ++f) {
      const auto [t, q] = firsts_[static_cast<size_t>(f)];
      ++below_[static_cast<size_t>(t)][static_cast<size_t>(q) + 1];
      last_first_[static_cast<size_t>(t)] =
          std::max(last_first_[static_cast<size_t>(t)],
                   positions_[static_cast<size_t>(t)][static_cast<size_t>(q)]);
    }
  }
  for (size_t t = 0; t < k_; ++t) {
    for (size_t q = 1; q < below_[t].size(); ++q) below_[t][q] += below_[t][q - 1];
  }
}

// Counts a's forward conflicts (an upper bound) and returns its release
// point E(a): every buffer starting at or after it is ordered after a.
int64_t ConflictRounds::Forward(size_t i, int64_t& count) const {
  count = 0;
  int64_t e = out_.upper[i];
  for (size_t t = 0; t < k_; ++t) {
    if (last_first_[t] < 0) continue;
    const int64_t r = release_[i * k_ + t];
    const int64_t c = ReleaseBelow(i, t) - UpperBelow(i, t);
    if (c > 0) count += c;
    e = std::max(e, std::min(r, last_first_[t] + 1));
  }
  return e;
}

void ConflictRounds::AddLastUses(int a, int32_t delta) {
  for (const auto& [t, p] : uses_.Last(static_cast<size_t>(buffers_[a])))
    counters_[static_cast<size_t>(t)].Add(p, delta);
}

// Buffers counted in the stream counters whose last use on some stream s is
// above meet_b[s]: not ordered before b (one count per stream).
int64_t ConflictRounds::LaterLastUses(size_t i) const {
  int64_t count = 0;
  for (size_t t = 0; t < k_; ++t) {
    const int32_t seen = uses_.Meet(static_cast<size_t>(buffers_[i]))[t];
    count += counters_[t].Prefix(static_cast<int64_t>(stream_nodes_[t].size())) -
             counters_[t].Prefix(static_cast<int64_t>(seen) + 1);
  }
  return count;
}

// Backward: an earlier buffer a (ended by b's lower) conflicts with b iff
// some stream s has a's last use on s above meet_b[s], the last position of
// s that all of b's uses have seen. Counted by a sweep in plan order with
// one counter per stream over last-use positions. The acquire point
// L(b) = the least plan position of a node just past meet_b[s]: every
// buffer ending by L(b) is ordered before b.
void ConflictRounds::Backward(BigVector<int64_t>& count, BigVector<int64_t>& acquire) {
  count.assign(n_, 0);
  acquire.assign(n_, 0);
  for (size_t t = 0; t < k_; ++t) counters_[t].Reset(stream_nodes_[t].size());
  size_t next = 0;
  for (int i : by_lower_) {
    const LogicalBuffer& y = Buf(static_cast<size_t>(i));
    for (; next < by_upper_.size() && out_.upper[by_upper_[next]] <= y.lower; ++next) {
      if (!widened_up_[by_upper_[next]]) AddLastUses(by_upper_[next], 1);
    }
    if (!CanFollow(static_cast<size_t>(i))) continue;
    acquire[i] = y.lower;
    count[i] = LaterLastUses(static_cast<size_t>(i));
    for (size_t t = 0; t < k_; ++t) {
      const std::vector<NodeId>& nodes = stream_nodes_[t];
      const int32_t seen = uses_.Meet(static_cast<size_t>(buffers_[i]))[t];
      if (seen + 1 >= 0 && static_cast<size_t>(seen + 1) < nodes.size()) {
        acquire[i] =
            std::min(acquire[i], lt_.position[nodes[static_cast<size_t>(seen + 1)].index()]);
      }
    }
  }
  first_back_ = count;
  for (size_t t = 0; t < k_; ++t) counters_[t].Reset(stream_nodes_[t].size());
}

// The backward counts of the `hot` buffers now: those of the first round
// less the buffers widened up since (their upper is the original one here,
// as `by_upper_` lists it).
void ConflictRounds::BackwardAgain(const BigVector<char>& hot, BigVector<int64_t>& count) {
  BigVector<int> removed;
  for (int a : by_upper_) {
    if (widened_up_[a]) removed.push_back(a);
  }
  size_t next = 0;
  for (int i : by_lower_) {
    if (!hot[i]) continue;
    const int64_t lower = Buf(static_cast<size_t>(i)).lower;
    for (; next < removed.size() && Buf(static_cast<size_t>(removed[next])).upper <= lower; ++next)
      AddLastUses(removed[next], 1);
    count[i] = first_back_[i] - LaterLastUses(static_cast<size_t>(i));
  }
  for (size_t x = 0; x < next; ++x) AddLastUses(removed[x], -1);
}

// Rounds, like a greedy vertex cover of the conflict pairs: count every
// buffer's conflicts forward and backward against the current lifetimes;
// widen the buffers with at least half the largest count on that side (an
// all-reduce input that no later compute waits for; a mask made from
// nothing on its own stream); repeat until no count exceeds the limit.
// Counts only fall, so a buffer at or below the limit keeps its (stale)
// count: it can neither reach the threshold nor be the largest above it.
void ConflictRounds::Rounds(int64_t limit) {
  constexpr int kMaxRounds = 24;
  BigVector<int64_t> back_count, acquire, fwd_count(n_, 0), fwd_release(n_, 0);
  BigVector<char> hot_back(n_, 0);
  BigVector<int> hot_fwd;
  for (size_t i = 0; i < n_; ++i) {
    if (CanPrecede(i)) hot_fwd.push_back(static_cast<int>(i));
  }
  bool any_hot_back = true;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (round == 0) {
      Backward(back_count, acquire);
    } else if (any_hot_back) {
      BackwardAgain(hot_back, back_count);
    }
    CountFirsts();
    for (int i : hot_fwd) fwd_release[i] = Forward(static_cast<size_t>(i), fwd_count[i]);
    int64_t most = 0;
    for (size_t i = 0; i < n_; ++i) most = std::max({most, fwd_count[i], back_count[i]});
    if (most <= limit) break;
    const int64_t threshold = std::max(limit + 1, most / 2);
    for (size_t i = 0; i < n_; ++i) {
      if (fwd_count[i] >= threshold && fwd_count[i] >= back_count[i]) {
        WidenUp(i, fwd_release[i]);
        if (widened_up_[i]) fwd_count[i] = 0;
      } else if (back_count[i] >= threshold) {
        WidenLow(i, acquire[i]);
        if (widened_low_[i]) back_count[i] = 0;
      }
    }
    std::erase_if(hot_fwd, [&](int i) { return widened_up_[i] || fwd_count[i] <= limit; });
    any_hot_back = false;
    for (size_t i = 0; i < n_; ++i) {
      hot_back[i] = !widened_low_[i] && back_count[i] > limit ? 1 : 0;
      any_hot_back = any_hot_back || hot_back[i];
    }
  }
}

// Exact pairs for the rest (widened when still above the limit). The first
// uses of each stream in (position, buffer) order: bucketed by position.
void ConflictRounds::ExactPairs(int64_t limit) {
  CountFirsts();
  std::vector<BigVector<int32_t>> by_first(k_);
  std::vector<BigVector<int32_t>> fill(below_);
  for (size_t t = 0; t < k_; ++t) by_first[t].resize(static_cast<size_t>(below_[t].back()));
  for (size_t i = 0; i < n_; ++i) {
    if (widened_low_[i]) continue;
    for (int32_t f = first_begin_[i]; f < first_begin_[i + 1]; ++f) {
      const auto [t, q] = firsts_[static_cast<size_t>(f)];
      by_first[static_cast<size_t>(t)]
              [static_cast<size_t>(fill[static_cast<size_t>(t)][static_cast<size_t>(q)]++)] =
                  static_cast<int32_t>(i);
    }
  }
  for (size_t i = 0; i < n_; ++i) {
    if (!CanPrecede(i) || widened_up_[i]) continue;
    int64_t count = 0;
    const int64_t e = Forward(i, count);
    if (count == 0) continue;
    if (count > limit) {
      WidenUp(i, e);
      continue;
    }
    for (size_t t = 0; t < k_; ++t) {
      for (int64_t x = UpperBelow(i, t); x < ReleaseBelow(i, t); ++x) {
        const int j = by_first[t][static_cast<size_t>(x)];
        if (Buf(static_cast<size_t>(j)).lower < out_.upper[i]) continue;  // overlapping in time
        out_.pairs.emplace_back(std::min<int>(static_cast<int>(i), j),
                                std::max<int>(static_cast<int>(i), j));
      }
    }
  }
  for (size_t i = 0; i < n_; ++i) out_.extended += (widened_up_[i] || widened_low_[i]) ? 1 : 0;
  std::sort(out_.pairs.begin(), out_.pairs.end());
  out_.pairs.erase(std::unique(out_.pairs.begin(), out_.pairs.end()), out_.pairs.end());
}
}  // namespace

StreamAwareReuse::PlanningConflicts StreamAwareReuse::Conflicts(
    const std::vector<int>& buffers, int64_t max_pairs_per_buffer) const {
  PlanningConflicts out;
  const size_t n = buffers.size();
  out.lower.resize(n);
  out.upper.resize(n);
  for (size_t i = 0; i < n; ++i) {
    out.lower[i] = lt_.buffers[buffers[i]].lower;
    out.upper[i] = lt_.buffers[buffers[i]].upper;
  }
  if (lt_.flat_loops) {
    out.pairs = ExtraConflicts(buffers);
    return out;
  }
  const size_t k = static_cast<size_t>(hb_.num_streams());
  ConflictRounds rounds(buffers, lt_, hb_, uses_, stream_nodes_, out);
  rounds.WidenUnordered();
  // F_t(a) per buffer and stream (fixed).
  BigVector<int64_t> release(n * k, std::numeric_limits<int64_t>::max());
  ReleaseSearch search = MakeReleaseSearch(n);
  for (size_t i = 0; i < n; ++i) {
    if (rounds.CanPrecede(i)) ReleasePositions(buffers[i], release.data() + i * k, search);
  }
  search = {};
  rounds.set_release(std::move(release));
  rounds.Prepare();
  rounds.AtIndices();
  rounds.Rounds(max_pairs_per_buffer);
  rounds.ExactPairs(max_pairs_per_buffer);
  return out;
}

StreamAwareReuse::ReleaseSearch StreamAwareReuse::MakeReleaseSearch(size_t buffers) const {
  const size_t k = static_cast<size_t>(hb_.num_streams());
  ReleaseSearch search;
  size_t nodes = 0;
  for (const std::vector<NodeId>& on : stream_nodes_) nodes += on.size();
  if (k == 0 || (k - 1) * nodes + k * k > 4 * buffers + 1024) {
    search.hints.assign(k * k, 0);
    return search;
  }
  search.cover.resize(k * k);
  search.positions.resize(k);
  std::vector<size_t> next(k);  // per stream s: the first p not yet answered
  for (size_t t = 0; t < k; ++t) {
    const std::vector<NodeId>& on_t = stream_nodes_[t];
    for (size_t s = 0; s < k; ++s) {
      if (s != t) search.cover[t * k + s].resize(stream_nodes_[s].size() + 1);
    }
    std::fill(next.begin(), next.end(), 0);
    search.positions[t].resize(on_t.size());
    for (size_t i = 0; i < on_t.size(); ++i) {
      search.positions[t][i] = lt_.position[on_t[i].index()];
      const int32_t* c = hb_.clock(on_t[i]);
      for (size_t s = 0; s < k; ++s) {
        if (s == t) continue;
        BigVector<int32_t>& cover = search.cover[t * k + s];
        // Node i is the first whose clock reaches every p <= c[s] not yet reached.
        for (; next[s] < cover.size() && static_cast<int64_t>(next[s]) <= c[s]; ++next[s])
          cover[next[s]] = static_cast<int32_t>(i);
      }
    }
    for (size_t s = 0; s < k; ++s) {
      if (s == t) continue;
      BigVector<int32_t>& cover = search.cover[t * k + s];
      for (; next[s] < cover.size(); ++next[s]) cover[next[s]] = static_cast<int32_t>(on_t.size());
    }
  }
  return search;
}

void StreamAwareReuse::ReleasePositions(int a, int64_t* out, ReleaseSearch& search) const {
  const size_t k = static_cast<size_t>(hb_.num_streams());
  std::fill(out, out + k, std::numeric_limits<int64_t>::max());
  for (size_t t = 0; t < k; ++t) {
    const std::vector<NodeId>& nodes = stream_nodes_[t];
    size_t q = 0;
    for (const auto& [s, p] : uses_.Last(static_cast<size_t>(a))) {
      if (static_cast<size_t>(s) == t) {  // on its own stream clock(v)[t] = pos(v) - 1
        q = std::max(q, static_cast<size_t>(p) + 1);
        continue;
      }
      // Clocks grow along a stream: the first node at or after q whose
      // clock covers p is the later of q and the first such node overall.
      size_t first;
      if (!search.cover.empty()) {
        // A p past stream s (never, for a use's position) is covered by no node: the last entry.
        const BigVector<int32_t>& cover = search.cover[t * k + static_cast<size_t>(s)];
        first = static_cast<size_t>(cover[std::min(static_cast<size_t>(p), cover.size() - 1)]);
      } else {
        first = PartitionFrom(
            nodes.size(), [&, s = s, p = p](size_t i) { return hb_.clock(nodes[i])[s] < p; },
            search.hints[t * k + static_cast<size_t>(s)]);
      }
      q = std::max(q, first);
    }
    if (q < nodes.size()) {
      out[t] = search.positions.empty() ? lt_.position[nodes[q].index()] : search.positions[t][q];
    }
  }
  // An iteration-local buffer's bytes go to its other streams only after the
  // loop: their nodes in the loop may belong to an earlier iteration.
  if (lt_.buffers[a].iteration_loop >= 0) {
    const int64_t loop_end = loop_end_.at(lt_.buffers[a].iteration_loop);
    for (size_t t = 0; t < k; ++t) {
      if (static_cast<int64_t>(t) != only_stream_[a] &&
          out[t] != std::numeric_limits<int64_t>::max()) {
        out[t] = std::max(out[t], loop_end);
      }
    }
  }
}

void SweepBuffers::Append(const SweepBuffer& b) {
  lower.push_back(b.lower);
  upper.push_back(b.upper);
  size.push_back(b.size);
  alignment.push_back(b.alignment);
  for (size_t s = 0; s < b.streams.size(); ++s) {
    streams.push_back(b.streams[s]);
    first_use.push_back(s < b.first_use.size() ? b.first_use[s] : 0);
  }
  stream_begin.push_back(static_cast<int32_t>(streams.size()));
  for (size_t t = 0; t < k; ++t)
    release.push_back(t < b.release.size() ? b.release[t] : SweepBuffer::kNever);
}

std::vector<SweepBuffer> StreamAwareReuse::SweepInput(const std::vector<int>& buffers,
                                                      int64_t alignment) const {
  const SweepBuffers table = SweepInputTable(buffers, alignment);
  std::vector<SweepBuffer> out(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    SweepBuffer& sb = out[i];
    sb.lower = table.lower[i];
    sb.upper = table.upper[i];
    sb.size = table.size[i];
    sb.alignment = table.alignment[i];
    for (int32_t t : table.Streams(i)) sb.streams.push_back(t);
    for (int64_t p : table.FirstUse(i)) sb.first_use.push_back(p);
    sb.release.assign(table.Release(i), table.Release(i) + table.k);
  }
  return out;
}

SweepBuffers StreamAwareReuse::SweepInputTable(const std::vector<int>& buffers,
                                               int64_t alignment) const {
  const size_t k = static_cast<size_t>(hb_.num_streams());
  const size_t n = buffers.size();
  SweepBuffers out;
  out.k = k;
  out.lower.resize(n);
  out.upper.resize(n);
  out.size.resize(n);
  out.alignment.assign(n, alignment);
  out.stream_begin.assign(n + 1, 0);
  out.release.assign(n * k, SweepBuffer::kNever);
  out.streams.reserve(n);
  out.first_use.reserve(n);
  std::vector<std::pair<int64_t, int>> firsts;  // (first use, stream)
  std::vector<int64_t> r(k);
  ReleaseSearch search = MakeReleaseSearch(n);
  for (size_t i = 0; i < n; ++i) {
    const LogicalBuffer& x = lt_.buffers[buffers[i]];
    out.lower[i] = x.lower;
    out.upper[i] = x.upper;
    out.size[i] = x.size;
    out.stream_begin[i] = static_cast<int32_t>(out.streams.size());
    if (!x.pinned.empty() || x.uses.empty()) continue;  // reuses nothing, released never
    firsts.clear();
    for (NodeId u : x.uses) {
      const int t = static_cast<int>(hb_.stream(u));
      const int64_t p = lt_.position[u.index()];
      auto it =
          std::find_if(firsts.begin(), firsts.end(), [&](const auto& f) { return f.second == t; });
      if (it == firsts.end()) {
        firsts.emplace_back(p, t);
      } else {
        it->first = std::min(it->first, p);
      }
    }
    std::sort(firsts.begin(), firsts.end());
    for (const auto& [p, t] : firsts) {
      out.streams.push_back(t);
      out.first_use.push_back(p);
    }
    // Under flat loops only a buffer of one stream may share, with that stream.
    if (lt_.flat_loops && only_stream_[buffers[i]] < 0) continue;
    if (x.live_to_end) continue;
    ReleasePositions(buffers[i], r.data(), search);
    int64_t* release = out.release.data() + i * k;
    for (size_t t = 0; t < k; ++t) {
      if (lt_.flat_loops && static_cast<int64_t>(t) != only_stream_[buffers[i]]) continue;
      if (r[t] != std::numeric_limits<int64_t>::max()) release[t] = r[t];
    }
  }
  out.stream_begin[n] = static_cast<int32_t>(out.streams.size());
  return out;
}

}  // namespace npuplan::memory
