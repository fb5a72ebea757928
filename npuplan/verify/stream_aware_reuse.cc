// StreamAwareReuse (stream_aware_reuse.h): the per-buffer use tables, the
// pairwise Ordered test and the stream sweep's input. The happens-before
// relation is in happens_before.cc, the planning conflicts in
// stream_aware_conflicts.cc, the release-time tables in
// stream_release_tables.cc.
#include "npuplan/verify/stream_aware_reuse.h"

#include <algorithm>
#include <limits>

namespace npuplan::memory {

namespace {

// Plan position just past each loop with iteration-local buffers: the loop
// node and its subgraphs are contiguous in plan order (pre-order).
std::map<int32_t, int64_t> LoopEnds(const Model& model, const TensorLifetimes& lt) {
  std::map<int32_t, int64_t> loop_end;
  // An iteration-local buffer lists its loop among its loops: with no loop
  // listed at all, no buffer is one (no pass over the million records).
  if (lt.loop_store.empty()) return loop_end;
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
                                   const std::function<void()>& model_read,
                                   const std::vector<bool>& dynamic_graphs)
    : lt_(lifetimes),
      loop_end_(LoopEnds(model, lifetimes)),
      hb_(model, lifetimes.order, model_read, /*lanes=*/true, dynamic_graphs) {
  const size_t k = static_cast<size_t>(hb_.num_lanes());
  const size_t nb = lt_.buffers.size();
  uses_.k = k;
  uses_.last_begin.assign(nb + 1, 0);
  uses_.last.reserve(nb);
  uses_.meet.assign(nb * k, std::numeric_limits<int32_t>::max());
  only_stream_.assign(nb, -1);
  std::vector<int32_t> last(k, -1);
  // Each use's row of the happens-before table (its stream, position and
  // clock) is a cache miss: the uses sit anywhere in the graph. The rows of
  // a buffer a few ahead are fetched meanwhile.
  constexpr size_t kAhead = 8;
  for (size_t b = 0; b < nb; ++b) {
    if (b + kAhead < nb) {
      for (NodeId u : lt_.buffers[b + kAhead].uses) __builtin_prefetch(hb_.clock(u));
    }
    std::fill(last.begin(), last.end(), -1);
    int64_t only = -2;
    int32_t* meet = uses_.meet.data() + b * k;
    for (NodeId u : lt_.buffers[b].uses) {
      const int64_t l = hb_.lane(u);
      last[l] = std::max(last[l], hb_.lane_pos(u));
      const int32_t* c = hb_.clock(u);
      for (size_t j = 0; j < k; ++j) meet[j] = std::min(meet[j], c[j]);
      const int64_t s = hb_.stream(u);
      only = only == -2 || only == s ? s : -1;
    }
    for (size_t l = 0; l < k; ++l) {
      if (last[l] >= 0) uses_.last.emplace_back(static_cast<int32_t>(l), last[l]);
    }
    uses_.last_begin[b + 1] = static_cast<int32_t>(uses_.last.size());
    only_stream_[b] = only < 0 ? -1 : static_cast<int32_t>(only);
  }
}

const std::vector<std::vector<NodeId>>& StreamAwareReuse::StreamNodes() const {
  std::call_once(stream_nodes_once_, [this] { stream_nodes_ = hb_.LaneOrders(); });
  return stream_nodes_;
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
  const size_t k = static_cast<size_t>(hb_.num_lanes());
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
      const int t = static_cast<int>(hb_.lane(u));
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
    const int64_t own_lane = hb_.lane_of_stream(only_stream_[buffers[i]]);
    for (size_t t = 0; t < k; ++t) {
      if (lt_.flat_loops && static_cast<int64_t>(t) != own_lane) continue;
      if (r[t] != std::numeric_limits<int64_t>::max()) release[t] = r[t];
    }
  }
  out.stream_begin[n] = static_cast<int32_t>(out.streams.size());
  return out;
}

}  // namespace npuplan::memory
