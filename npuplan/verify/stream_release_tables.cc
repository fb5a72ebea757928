// The tables StreamAwareReuse answers release times F_t(a) from: per
// stream, the ranks of plan positions (PositionRanks); per stream pair, the
// first node of one stream whose clock covers each position of the other
// (ReleaseSearch).
#include <algorithm>
#include <limits>

#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/stream_aware_reuse_internal.h"

namespace npuplan::memory {

using reuse_internal::PartitionFrom;

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

StreamAwareReuse::ReleaseSearch StreamAwareReuse::MakeReleaseSearch(size_t buffers) const {
  const size_t k = static_cast<size_t>(hb_.num_lanes());
  ReleaseSearch search;
  size_t nodes = 0;
  const std::vector<std::vector<NodeId>>& stream_nodes = StreamNodes();
  for (const std::vector<NodeId>& on : stream_nodes) nodes += on.size();
  if (k == 0 || (k - 1) * nodes + k * k > 4 * buffers + 1024) {
    search.hints.assign(k * k, 0);
    return search;
  }
  search.cover.resize(k * k);
  search.positions.resize(k);
  std::vector<size_t> next(k);  // per stream s: the first p not yet answered
  for (size_t t = 0; t < k; ++t) {
    const std::vector<NodeId>& on_t = stream_nodes[t];
    for (size_t s = 0; s < k; ++s) {
      if (s != t) search.cover[t * k + s].resize(stream_nodes[s].size() + 1);
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
  const size_t k = static_cast<size_t>(hb_.num_lanes());
  std::fill(out, out + k, std::numeric_limits<int64_t>::max());
  const std::vector<std::vector<NodeId>>& stream_nodes = StreamNodes();
  for (size_t t = 0; t < k; ++t) {
    const std::vector<NodeId>& nodes = stream_nodes[t];
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
  // (Its own stream's lane is that stream inside the loop: streams that
  // share a loop never share a lane.)
  if (lt_.buffers[a].iteration_loop >= 0) {
    const int64_t loop_end = loop_end_.at(lt_.buffers[a].iteration_loop);
    const int64_t own_lane = hb_.lane_of_stream(only_stream_[a]);
    for (size_t t = 0; t < k; ++t) {
      if (static_cast<int64_t>(t) != own_lane && out[t] != std::numeric_limits<int64_t>::max()) {
        out[t] = std::max(out[t], loop_end);
      }
    }
  }
}

}  // namespace npuplan::memory
