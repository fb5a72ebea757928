#include "npuplan/events/sync_event_fast_path.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace npuplan::events {

bool FastPathApplies(const InsertionState& st) {
  return st.activators_of.empty() && st.view.order().size() == st.m.num_nodes();
}

absl::Status FastEdgeEvents(InsertionState& st, FoundEvents& out) {
  const Model& m = st.m;
  const SyncView& view = st.view;
  const size_t n = m.num_nodes();
  BigVector<EdgeEntry>& edge_events = out.edges;
  BigVector<uint32_t>& per_sender = out.per_sender;
  BigVector<int32_t>& by_name = out.by_name;
  // GE's sender order first, over every node with a stream (a superset of
  // the senders: only the relative order of senders matters), so that the
  // sort's key arrays are freed before the edge list is built and the
  // scratch cache hands their pages on to it.
  by_name.reserve(n);
  for (size_t u = 0; u < n; ++u) {
    if (view.stream(static_cast<int32_t>(u)) >= 0 ||
        view.num_attached(NodeId(static_cast<int32_t>(u))) > 0) {
      by_name.push_back(static_cast<int32_t>(u));
    }
  }
  {
    BigVector<uint64_t> prefixes = st.view.TakeNamePrefixes();
    SortSendersByName(m, by_name, prefixes);
  }
  const bool check_enter = view.any_flag(SyncView::kEnter);
  per_sender.assign(n, 0);
  edge_events.reserve(2 * n);
  auto valid_src = [&](NodeId x) { return x.valid() && x.index() < n; };
  bool simple = true;
  BigVector<int32_t> mark;  // for consumers with many producers: mark[u] = consumer
  for (const Graph& g : m.graphs()) {
    if (st.in_ffts(GraphId(static_cast<int32_t>(&g - m.graphs().data())))) continue;
    for (size_t gi = 0; gi < g.nodes.size(); ++gi) {
      // Prefetch ahead: the Node (its input vectors), then its inputs' array.
      if (gi + kNodePrefetch < g.nodes.size()) {
        __builtin_prefetch(&m.node(g.nodes[gi + kNodePrefetch]).inputs);
      }
      if (gi + kNodePrefetch / 2 < g.nodes.size()) {
        __builtin_prefetch(m.node(g.nodes[gi + kNodePrefetch / 2]).inputs.data());
      }
      const NodeId consumer = g.nodes[gi];
      const Node& node = m.node(consumer);
      const int32_t t = view.stream(consumer.value);
      const size_t first = edge_events.size();
      const bool many = node.inputs.size() + node.control_inputs.size() > 32;
      if (many && mark.empty()) mark.assign(n, -1);
      // False on a rule-4 error.
      auto offer = [&](NodeId u, uint32_t ctrl) {
        if (!valid_src(u)) return true;
        const int32_t su = view.stream(u.value);
        if (su < 0 || su == t) return true;  // rules 1, 2
        if (check_enter && view.has_flag(u, SyncView::kEnter) && node.type != "StreamActive")
          return true;                                              // rule 3
        if (t < 0) return HasAttr(node.attrs, "_thread_scope_id");  // rule 4
        if (many) {                                                 // one event per pair
          if (mark[u.index()] == consumer.value) return true;
          mark[u.index()] = consumer.value;
        } else {
          for (size_t k = first; k < edge_events.size(); ++k) {
            if (edge_events[k].from == u.value) return true;
          }
        }
        edge_events.push_back({u.value, static_cast<uint32_t>(consumer.value) | ctrl});
        ++per_sender[u.index()];
        out.any_ctrl |= ctrl != 0;
        return true;
      };
      for (const OutputRef& in : node.inputs) simple = simple && offer(in.node, 0);
      for (NodeId c : node.control_inputs) simple = simple && offer(c, kCtrlEdge);
      if (!simple) break;
    }
    if (!simple) break;
  }
  if (!simple) {
    FreeStorage(edge_events);
    FreeStorage(per_sender);
    FreeStorage(by_name);
    out.any_ctrl = false;
    return GeneralEdgeEvents(st, out);
  }
  out.fast = true;
  return absl::OkStatus();
}

void NumberFastEvents(FoundEvents& found, TableWriter& w) {
  const SyncView& view = w.view;
  BigVector<Candidate>& cands = found.cands;
  BigVector<uint32_t>& per_sender = found.per_sender;
  // Edge events all fall in one group (main → main: events, or notifies);
  // the extra candidates (subgraph / attached) anywhere. The extras'
  // sender nodes are marked by the top bit of their count; `by_name`
  // holds every node with a stream, senders or not (rank gaps are
  // harmless: only the order matters).
  constexpr uint32_t kExtraSender = uint32_t{1} << 31;
  for (const Candidate& c : cands) per_sender[view.node_of(c.from).index()] |= kExtraSender;
  const BigVector<int32_t>& senders = found.by_name;
  // Extra candidates by (group, sender rank, candidate index).
  struct Placed {
    uint32_t group;
    int32_t rank;
    uint32_t index;
  };
  std::vector<Placed> placed;
  if (!cands.empty()) {
    std::unordered_map<int32_t, int32_t> rank_of;  // extra sender node → rank
    for (size_t r = 0; r < senders.size(); ++r) {
      if (per_sender[senders[r]] & kExtraSender)
        rank_of.emplace(senders[r], static_cast<int32_t>(r));
    }
    placed.reserve(cands.size());
    for (size_t i = 0; i < cands.size(); ++i) {
      placed.push_back({w.GroupOf(cands[i].from, cands[i].to),
                        rank_of.at(view.node_of(cands[i].from).value), static_cast<uint32_t>(i)});
    }
    std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
      return std::tie(a.group, a.rank, a.index) < std::tie(b.group, b.rank, b.index);
    });
  }
  // Positions: per group, per sender rank, the sender's edge events (its
  // per_sender entry becomes its cursor), then its extras.
  const uint32_t edge_group = w.notify ? 2 : 0;
  std::vector<uint32_t> extra_pos(cands.size());
  size_t running = 0, xi = 0;
  for (uint32_t g = 0; g < 4; ++g) {
    if (g == 2) w.num_events = running;
    if (g == edge_group) {
      for (size_t r = 0; r < senders.size(); ++r) {
        uint32_t& c = per_sender[senders[r]];
        const uint32_t edges_of = c & ~kExtraSender;
        c = static_cast<uint32_t>(running);
        running += edges_of;
        for (; xi < placed.size() && placed[xi].group == g &&
               placed[xi].rank == static_cast<int32_t>(r);
             ++xi) {
          extra_pos[placed[xi].index] = static_cast<uint32_t>(running++);
        }
      }
    }
    for (; xi < placed.size() && placed[xi].group == g; ++xi)
      extra_pos[placed[xi].index] = static_cast<uint32_t>(running++);
  }
  FreeStorage(found.by_name);
  // Data edges first, then control edges: each sender's events in walk order.
  for (const EdgeEntry& e : found.edges) {
    if (!(e.to & kCtrlEdge))
      w.Put(per_sender[e.from]++, e.from, static_cast<int32_t>(e.to), SyncReason::kDataEdge);
  }
  if (found.any_ctrl) {
    for (const EdgeEntry& e : found.edges) {
      if (e.to & kCtrlEdge) {
        w.Put(per_sender[e.from]++, e.from, static_cast<int32_t>(e.to & kIdMask),
              SyncReason::kControlEdge);
      }
    }
  }
  for (size_t i = 0; i < cands.size(); ++i)
    w.Put(extra_pos[i], cands[i].from, cands[i].to, cands[i].reason);
}

}  // namespace npuplan::events
