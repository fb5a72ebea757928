#include "npuplan/stream/optimize_ineffective_multi_stream_pass.h"

#include <algorithm>
#include <climits>

#include "npuplan/ir/node_prefetch.h"

namespace npuplan::stream {
namespace {

constexpr uint8_t kExempt = kNodeLabelled | kNodeNewStreamId | kNodeParallelGroup;

}  // namespace

absl::StatusOr<bool> OptimizeIneffectiveMultiStreamPass::Run(GraphState& gs, AssignContext& ctx) {
  const std::vector<NodeId>& nodes = gs.g(ctx.model).nodes;
  const GraphEdges& edges = gs.edges;
  const int32_t n = static_cast<int32_t>(nodes.size());
  // The stream ids in use, ascending; every node's stream as an index into
  // them (-1 = none), kept current on every move (neighbours are nodes of the
  // same graph). Index order is id order, so comparisons and the ascending
  // walk over neighbour streams are unchanged.
  std::vector<int64_t> used;
  std::vector<int32_t> of(n, -1);
  {
    int64_t max_id = -1;
    // One cache miss per node struct: fetched ahead.
    for (int32_t i = 0; i < n; ++i) {
      if (i + static_cast<int32_t>(kNodePrefetch) < n)
        __builtin_prefetch(&ctx.model.node(nodes[i + kNodePrefetch]).stream_id);
      const int64_t s = ctx.model.node(nodes[i]).stream_id;
      max_id = std::max(max_id, s);
      of[i] = s < 0 ? -1 : static_cast<int32_t>(std::min<int64_t>(s, INT32_MAX));
    }
    if (max_id < 0) return false;
    if (max_id <= 4 * static_cast<int64_t>(n) + 1024) {
      std::vector<int32_t> index(static_cast<size_t>(max_id + 1), -1);
      for (int32_t s : of) {
        if (s >= 0) index[s] = 0;
      }
      for (int64_t s = 0; s <= max_id; ++s) {
        if (index[s] == 0) {
          index[s] = static_cast<int32_t>(used.size());
          used.push_back(s);
        }
      }
      for (int32_t& s : of) {
        if (s >= 0) s = index[s];
      }
    } else {  // sparse ids (never from the passes): look each one up
      for (int32_t i = 0; i < n; ++i) {
        if (of[i] >= 0) used.push_back(ctx.model.node(nodes[i]).stream_id);
      }
      std::sort(used.begin(), used.end());
      used.erase(std::unique(used.begin(), used.end()), used.end());
      for (int32_t i = 0; i < n; ++i) {
        if (of[i] < 0) continue;
        const int64_t s = ctx.model.node(nodes[i]).stream_id;
        of[i] = static_cast<int32_t>(std::lower_bound(used.begin(), used.end(), s) - used.begin());
      }
    }
  }
  if (used.size() < 2) return false;
  // Per stream: whether a labelled node is on it, and its nodes as a doubly
  // linked list in topo order (next / prev topo index on the same stream,
  // -1 at the ends). A move puts a node between `inp` and `out`, which are
  // adjacent on the target stream, so both updates are O(1) and the list
  // stays sorted; "the next node of s after inp" is next[inp].
  const int32_t k = static_cast<int32_t>(used.size());
  std::vector<uint8_t> labelled(k, 0);
  std::vector<int32_t> next(n, -1), prev(n, -1);
  {
    std::vector<int32_t> last(k, -1);
    for (int32_t i = 0; i < n; ++i) {
      const int32_t s = of[i];
      if (s < 0) continue;
      if (gs.node_flags[i] & kNodeLabelled) labelled[s] = 1;
      prev[i] = last[s];
      if (last[s] >= 0) next[last[s]] = i;
      last[s] = i;
    }
  }

  bool changed = false;
  int64_t moved = 0;
  std::vector<int32_t> neighbour_streams;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t c = of[i];
    if (c == -1 || (gs.node_flags[i] & kExempt)) continue;
    const ConstRange<int32_t> ins = edges.Preds(i);
    const ConstRange<int32_t> outs = edges.Succs(i);
    bool touches_own = false;
    for (int32_t x : ins) touches_own |= of[x] == c;
    for (int32_t x : outs) touches_own |= of[x] == c;
    if (touches_own) continue;
    neighbour_streams.clear();
    for (int32_t x : ins) {
      if (of[x] != -1) neighbour_streams.push_back(of[x]);
    }
    for (int32_t x : outs) {
      if (of[x] != -1) neighbour_streams.push_back(of[x]);
    }
    std::sort(neighbour_streams.begin(), neighbour_streams.end());
    neighbour_streams.erase(std::unique(neighbour_streams.begin(), neighbour_streams.end()), neighbour_streams.end());
    for (int32_t s : neighbour_streams) {
      if (labelled[s]) continue;
      int64_t inp = -1, out = -1;  // last producer on s, first consumer on s (topo indices)
      for (int32_t x : ins) {
        if (of[x] == s) inp = std::max<int64_t>(inp, x);
      }
      for (int32_t x : outs) {
        if (of[x] == s && (out == -1 || x < out)) out = x;
      }
      if (inp == -1 || out == -1) continue;
      if (next[inp] != out) continue;  // inp is on s: its successor there
      // Move node i from its stream to s, between inp and out.
      if (prev[i] >= 0) next[prev[i]] = next[i];
      if (next[i] >= 0) prev[next[i]] = prev[i];
      prev[i] = static_cast<int32_t>(inp);
      next[i] = static_cast<int32_t>(out);
      next[inp] = i;
      prev[out] = i;
      Node& node = ctx.model.node(nodes[i]);
      ctx.log.Record(kName, "IneffectiveStreamMoved", "", Field("node", node.name), Field("from", used[of[i]]),
                     Field("to", used[s]));
      of[i] = s;
      node.stream_id = used[s];
      changed = true;
      ++moved;
    }
  }
  if (moved > 0) ctx.stats.Add(kName, "nodes_moved", moved);
  return changed;
}

}  // namespace npuplan::stream
