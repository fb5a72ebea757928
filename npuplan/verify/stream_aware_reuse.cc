#include "npuplan/verify/stream_aware_reuse.h"

#include <algorithm>
#include <limits>

namespace npuplan::memory {
namespace {

// Edges whose order the events stage leaves to loop/branch activation.
bool OrdersNothing(const Node& from) {
  return from.type == "Enter" || from.type == "RefEnter" || from.type == "StreamSwitch";
}

bool IsSyncNode(const Node& n) {
  return n.type == "Send" || n.type == "Recv" || n.type == "SendNotify" || n.type == "RecvNotify";
}

}  // namespace

HappensBefore::HappensBefore(const Model& model, const std::vector<NodeId>& order) {
  const size_t n = model.num_nodes();
  stream_.assign(n, -1);
  pos_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    stream_[i] = model.nodes()[i].stream_id;
    k_ = std::max(k_, stream_[i] + 1);
  }
  std::vector<int64_t> seq(n, -1);
  for (size_t i = 0; i < order.size(); ++i) seq[order[i].index()] = static_cast<int64_t>(i);

  // 1. Predecessor lists: data/control edges, subgraph entry and end.
  std::vector<std::vector<NodeId>> preds(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& v = model.nodes()[i];
    for (const OutputRef& in : v.inputs) {
      if (!OrdersNothing(model.node(in.node))) preds[i].push_back(in.node);
    }
    for (NodeId c : v.control_inputs) {
      if (!OrdersNothing(model.node(c))) preds[i].push_back(c);
    }
  }
  Adjacency adj(model);
  for (size_t g = 1; g < model.num_graphs(); ++g) {
    const Graph& graph = model.graphs()[g];
    if (!graph.parent_node.valid()) continue;
    const Node& p = model.node(graph.parent_node);
    NodeId end;
    for (NodeId id : graph.nodes) {
      const Node& x = model.node(id);
      if (IsSyncNode(x)) continue;
      const bool root =
          x.inputs.empty() && std::all_of(x.control_inputs.begin(), x.control_inputs.end(),
                                          [&](NodeId c) { return IsSyncNode(model.node(c)); });
      if (root) {
        for (const OutputRef& in : p.inputs) preds[id.index()].push_back(in.node);
        for (NodeId c : p.control_inputs) preds[id.index()].push_back(c);
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
        preds[adj.succ[e].index()].push_back(end);
      }
    }
  }

  // 2. One sweep in plan order: clock(v) = join of the inclusive clocks of
  // v's streamed predecessors and of its stream predecessor.
  const size_t k = static_cast<size_t>(k_);
  clocks_.assign(n * k, -1);
  std::vector<int32_t> next_pos(k, 0);
  std::vector<NodeId> last_on_stream(k);
  for (NodeId v : order) {
    const int64_t s = stream_[v.index()];
    if (s < 0) continue;
    int32_t* cv = clocks_.data() + v.index() * k;
    auto join = [&](NodeId u) {
      const int64_t su = stream_[u.index()];
      if (su < 0 || seq[u.index()] < 0 || seq[u.index()] >= seq[v.index()]) return;
      const int32_t* cu = clocks_.data() + u.index() * k;
      for (size_t j = 0; j < k; ++j) cv[j] = std::max(cv[j], cu[j]);
      cv[su] = std::max(cv[su], pos_[u.index()]);
    };
    if (last_on_stream[s].valid()) join(last_on_stream[s]);
    for (NodeId u : preds[v.index()]) join(u);
    pos_[v.index()] = next_pos[s]++;
    last_on_stream[s] = v;
  }
}

bool HappensBefore::Before(NodeId a, NodeId b) const {
  const int64_t sa = stream_[a.index()];
  if (sa < 0 || stream_[b.index()] < 0 || a == b) return false;
  return clock(b)[sa] >= pos_[a.index()];
}

StreamAwareReuse::StreamAwareReuse(const Model& model, const TensorLifetimes& lifetimes)
    : lt_(lifetimes), hb_(model, lifetimes.order) {
  const size_t k = static_cast<size_t>(hb_.num_streams());
  const size_t nb = lt_.buffers.size();
  last_.resize(nb);
  meet_.assign(nb, std::vector<int32_t>(k, std::numeric_limits<int32_t>::max()));
  only_stream_.assign(nb, -1);
  for (size_t b = 0; b < nb; ++b) {
    std::vector<int32_t> last(k, -1);
    int64_t only = -2;
    for (NodeId u : lt_.buffers[b].uses) {
      const int64_t s = hb_.stream(u);
      last[s] = std::max(last[s], hb_.stream_pos(u));
      const int32_t* c = hb_.clock(u);
      for (size_t j = 0; j < k; ++j) meet_[b][j] = std::min(meet_[b][j], c[j]);
      only = only == -2 || only == s ? s : -1;
    }
    for (size_t s = 0; s < k; ++s) {
      if (last[s] >= 0) last_[b].emplace_back(static_cast<int64_t>(s), last[s]);
    }
    only_stream_[b] = only < 0 ? -1 : only;
  }
  // Plan position just past each loop: the loop node and its subgraphs are
  // contiguous in plan order (pre-order).
  for (const LogicalBuffer& b : lt_.buffers) {
    if (b.iteration_loop < 0 || loop_end_.count(b.iteration_loop) > 0) continue;
    int64_t end = lt_.position[static_cast<size_t>(b.iteration_loop)] + 1;
    std::vector<GraphId> stack(model.node(NodeId(b.iteration_loop)).subgraphs);
    while (!stack.empty()) {
      const GraphId g = stack.back();
      stack.pop_back();
      for (NodeId v : model.graph(g).nodes) {
        end = std::max(end, lt_.position[v.index()] + 1);
        for (GraphId sg : model.node(v).subgraphs) stack.push_back(sg);
      }
    }
    loop_end_[b.iteration_loop] = end;
  }
  stream_nodes_.resize(k);
  for (NodeId v : lt_.order) {
    if (hb_.stream(v) >= 0 && hb_.stream_pos(v) >= 0) stream_nodes_[hb_.stream(v)].push_back(v);
  }
}

// One is iteration-local in a loop the other touches: the same body
// position of another iteration may run concurrently on another stream.
bool SharesIterations(const LogicalBuffer& x, const LogicalBuffer& y) {
  auto in = [](const std::vector<int32_t>& loops, int32_t loop) {
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
  for (const auto& [s, p] : last_[a]) {
    if (meet_[b][s] < p) return false;
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

StreamAwareReuse::PlanningConflicts StreamAwareReuse::Conflicts(
    const std::vector<int>& buffers, int64_t max_pairs_per_buffer) const {
  // Long on purpose: the forward and backward counts share the per-stream release tables built
  // here.
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
  const int64_t end = lt_.num_steps;
  const size_t k = static_cast<size_t>(hb_.num_streams());
  auto buf = [&](size_t i) -> const LogicalBuffer& { return lt_.buffers[buffers[i]]; };
  // `a` may be ordered before a later buffer / `b` after an earlier one.
  auto can_precede = [&](size_t i) {
    return buf(i).size > 0 && buf(i).pinned.empty() && !buf(i).uses.empty() && !buf(i).live_to_end;
  };
  auto can_follow = [&](size_t i) {
    return buf(i).size > 0 && buf(i).pinned.empty() && !buf(i).uses.empty();
  };
  for (size_t i = 0; i < n; ++i) {
    if (buf(i).size == 0) continue;
    if (!buf(i).pinned.empty() || buf(i).uses.empty()) out.lower[i] = 0;  // ordered against nothing
    if (!can_precede(i)) out.upper[i] = std::max(out.upper[i], end);
  }
  std::vector<char> widened_up(n, 0), widened_low(n, 0);

  // Forward: a later buffer b conflicts with a (disjoint in time) iff some
  // stream t has first_use_t(b) < F_t(a), the plan position of the first
  // node of t whose clock covers all of a's last uses (clocks grow along a
  // stream, so those nodes form a suffix of t). Per stream, (first use on t,
  // position) of the buffers not widened down, sorted.
  std::vector<std::vector<std::pair<int64_t, int>>> firsts(k);
  auto build_firsts = [&] {
    for (auto& f : firsts) f.clear();
    std::vector<int64_t> first(k);
    for (size_t i = 0; i < n; ++i) {
      if (!can_follow(i) || widened_low[i]) continue;
      std::fill(first.begin(), first.end(), -1);
      for (NodeId u : buf(i).uses) {
        const int64_t t = hb_.stream(u);
        const int64_t p = lt_.position[u.index()];
        if (first[t] < 0 || p < first[t]) first[t] = p;
      }
      for (size_t t = 0; t < k; ++t) {
        if (first[t] >= 0) firsts[t].emplace_back(first[t], static_cast<int>(i));
      }
    }
    for (auto& f : firsts) std::sort(f.begin(), f.end());
  };
  // F_t(a) per buffer and stream (fixed).
  std::vector<int64_t> release(n * k, std::numeric_limits<int64_t>::max());
  for (size_t i = 0; i < n; ++i) {
    if (!can_precede(i)) continue;
    const std::vector<int64_t> r = ReleasePositions(buffers[i]);
    std::copy(r.begin(), r.end(), release.begin() + static_cast<std::ptrdiff_t>(i * k));
  }
  // Counts a's forward conflicts (an upper bound) and returns its release
  // point E(a): every buffer starting at or after it is ordered after a.
  auto forward = [&](size_t i, int64_t& count) {
    count = 0;
    int64_t e = out.upper[i];
    for (size_t t = 0; t < k; ++t) {
      const auto& f = firsts[t];
      if (f.empty()) continue;
      const int64_t r = release[i * k + t];
      auto lo = std::lower_bound(f.begin(), f.end(), std::make_pair(out.upper[i], -1));
      auto hi = std::lower_bound(f.begin(), f.end(), std::make_pair(r, -1));
      if (hi > lo) count += hi - lo;
      e = std::max(e, std::min(r, f.back().first + 1));
    }
    return e;
  };

  // Backward: an earlier buffer a (ended by b's lower) conflicts with b iff
  // some stream s has a's last use on s above meet_b[s], the last position of
  // s that all of b's uses have seen. Counted by a sweep in plan order with
  // one Fenwick tree per stream over last-use positions. The acquire point
  // L(b) = the least plan position of a node just past meet_b[s]: every
  // buffer ending by L(b) is ordered before b.
  auto backward = [&](std::vector<int64_t>& count, std::vector<int64_t>& acquire) {
    count.assign(n, 0);
    acquire.assign(n, 0);
    std::vector<std::vector<int32_t>> fenwick(k);
    for (size_t t = 0; t < k; ++t) fenwick[t].assign(stream_nodes_[t].size() + 1, 0);
    auto add = [&](size_t t, int32_t p) {
      for (size_t x = static_cast<size_t>(p) + 1; x < fenwick[t].size(); x += x & (~x + 1))
        ++fenwick[t][x];
    };
    auto prefix = [&](size_t t, int64_t p) {  // entries at positions < p
      int64_t sum = 0;
      for (size_t x = static_cast<size_t>(
               std::clamp<int64_t>(p, 0, static_cast<int64_t>(fenwick[t].size()) - 1));
           x > 0; x -= x & (~x + 1)) {
        sum += fenwick[t][x];
      }
      return sum;
    };
    std::vector<int> by_upper, by_lower;
    for (size_t i = 0; i < n; ++i) {
      if (buf(i).size == 0) continue;
      by_lower.push_back(static_cast<int>(i));
      if (can_precede(i) && !widened_up[i]) by_upper.push_back(static_cast<int>(i));
    }
    std::stable_sort(by_lower.begin(), by_lower.end(),
                     [&](int a, int b) { return buf(a).lower < buf(b).lower; });
    std::stable_sort(by_upper.begin(), by_upper.end(),
                     [&](int a, int b) { return out.upper[a] < out.upper[b]; });
    size_t next = 0;
    for (int i : by_lower) {
      const LogicalBuffer& y = buf(i);
      for (; next < by_upper.size() && out.upper[by_upper[next]] <= y.lower; ++next) {
        for (const auto& [t, p] : last_[buffers[by_upper[next]]]) add(static_cast<size_t>(t), p);
      }
      if (!can_follow(i)) continue;
      acquire[i] = y.lower;
      for (size_t t = 0; t < k; ++t) {
        const std::vector<NodeId>& nodes = stream_nodes_[t];
        const int32_t seen = meet_[buffers[i]][t];
        count[i] += prefix(t, static_cast<int64_t>(nodes.size())) -
                    prefix(t, static_cast<int64_t>(seen) + 1);
        if (seen + 1 >= 0 && static_cast<size_t>(seen + 1) < nodes.size()) {
          acquire[i] =
              std::min(acquire[i], lt_.position[nodes[static_cast<size_t>(seen + 1)].index()]);
        }
      }
    }
  };
  auto widen_up = [&](size_t i, int64_t e) {
    if (e <= out.upper[i]) return;
    out.upper[i] = e;
    widened_up[i] = 1;
  };
  auto widen_low = [&](size_t i, int64_t l) {
    if (l >= out.lower[i]) return;
    out.lower[i] = l;
    widened_low[i] = 1;
  };

  // Rounds, like a greedy vertex cover of the conflict pairs: count every
  // buffer's conflicts forward and backward against the current lifetimes;
  // widen the buffers with at least half the largest count on that side (an
  // all-reduce input that no later compute waits for; a mask made from
  // nothing on its own stream); repeat until no count exceeds the limit.
  const int64_t limit = max_pairs_per_buffer;
  constexpr int kMaxRounds = 24;
  std::vector<int64_t> back_count, acquire, fwd_count(n, 0), fwd_release(n, 0);
  for (int round = 0; round < kMaxRounds; ++round) {
    backward(back_count, acquire);
    build_firsts();
    int64_t most = 0;
    for (size_t i = 0; i < n; ++i) {
      fwd_count[i] = 0;
      if (can_precede(i) && !widened_up[i]) fwd_release[i] = forward(i, fwd_count[i]);
      if (widened_low[i]) back_count[i] = 0;
      most = std::max({most, fwd_count[i], back_count[i]});
    }
    if (most <= limit) break;
    const int64_t threshold = std::max(limit + 1, most / 2);
    for (size_t i = 0; i < n; ++i) {
      if (fwd_count[i] >= threshold && fwd_count[i] >= back_count[i]) {
        widen_up(i, fwd_release[i]);
      } else if (back_count[i] >= threshold) {
        widen_low(i, acquire[i]);
      }
    }
  }
  // Exact pairs for the rest (widened when still above the limit).
  build_firsts();
  for (size_t i = 0; i < n; ++i) {
    if (!can_precede(i) || widened_up[i]) continue;
    int64_t count = 0;
    const int64_t e = forward(i, count);
    if (count == 0) continue;
    if (count > limit) {
      widen_up(i, e);
      continue;
    }
    for (size_t t = 0; t < k; ++t) {
      const auto& f = firsts[t];
      const int64_t r = release[i * k + t];
      for (auto it = std::lower_bound(f.begin(), f.end(), std::make_pair(out.upper[i], -1));
           it != f.end() && it->first < r; ++it) {
        const int j = it->second;
        if (buf(static_cast<size_t>(j)).lower < out.upper[i]) continue;  // overlapping in time
        out.pairs.emplace_back(std::min<int>(static_cast<int>(i), j),
                               std::max<int>(static_cast<int>(i), j));
      }
    }
  }
  for (size_t i = 0; i < n; ++i) out.extended += (widened_up[i] || widened_low[i]) ? 1 : 0;
  std::sort(out.pairs.begin(), out.pairs.end());
  out.pairs.erase(std::unique(out.pairs.begin(), out.pairs.end()), out.pairs.end());
  return out;
}

std::vector<int64_t> StreamAwareReuse::ReleasePositions(int a) const {
  const size_t k = static_cast<size_t>(hb_.num_streams());
  std::vector<int64_t> out(k, std::numeric_limits<int64_t>::max());
  for (size_t t = 0; t < k; ++t) {
    const std::vector<NodeId>& nodes = stream_nodes_[t];
    size_t q = 0;
    for (const auto& [s, p] : last_[a]) {
      auto it = std::partition_point(nodes.begin() + static_cast<std::ptrdiff_t>(q), nodes.end(),
                                     [&, s = s, p = p](NodeId v) { return hb_.clock(v)[s] < p; });
      q = static_cast<size_t>(it - nodes.begin());
    }
    if (q < nodes.size()) out[t] = lt_.position[nodes[q].index()];
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
  return out;
}

std::vector<SweepBuffer> StreamAwareReuse::SweepInput(const std::vector<int>& buffers,
                                                      int64_t alignment) const {
  const size_t k = static_cast<size_t>(hb_.num_streams());
  std::vector<SweepBuffer> out(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const LogicalBuffer& x = lt_.buffers[buffers[i]];
    SweepBuffer& sb = out[i];
    sb.lower = x.lower;
    sb.upper = x.upper;
    sb.size = x.size;
    sb.alignment = alignment;
    sb.release.assign(k, SweepBuffer::kNever);
    if (!x.pinned.empty() || x.uses.empty()) continue;  // reuses nothing, released never
    std::vector<std::pair<int64_t, int>> firsts;        // (first use, stream)
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
      sb.streams.push_back(t);
      sb.first_use.push_back(p);
    }
    // Under flat loops only a buffer of one stream may share, with that stream.
    if (lt_.flat_loops && only_stream_[buffers[i]] < 0) continue;
    if (x.live_to_end) continue;
    const std::vector<int64_t> r = ReleasePositions(buffers[i]);
    for (size_t t = 0; t < k; ++t) {
      if (lt_.flat_loops && static_cast<int64_t>(t) != only_stream_[buffers[i]]) continue;
      if (r[t] != std::numeric_limits<int64_t>::max()) sb.release[t] = r[t];
    }
  }
  return out;
}

}  // namespace npuplan::memory
