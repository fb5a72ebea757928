#include "npuplan/events/sync_event_rules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>

#include "npuplan/events/sync_event_fast_path.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/ffts_regions.h"
#include "npuplan/ir/owner_control_inputs.h"
#include "npuplan/support/str_util.h"

namespace npuplan::events {

InsertionState::InsertionState(const Plan& p, DecisionLog& l, std::string_view pass_name,
                               bool name_prefixes)
    : plan(p),
      m(p.model),
      log(l),
      pass(pass_name),
      // Insertion needs no per-stream slot lists: they are built by the passes that read them.
      view(p, /*physical=*/false, /*stream_order=*/false, name_prefixes),
      act(ComputeActivation(p.model, view)) {
  if (!act.activators_of_label.empty()) {
    const size_t n = m.num_nodes();
    activators_of.assign(n, nullptr);
    for (size_t i = 0; i < n; ++i) {
      if (auto label = GetStringAttr(m.nodes()[i].attrs, "_stream_label");
          label && !label->empty()) {
        if (auto it = act.activators_of_label.find(*label); it != act.activators_of_label.end()) {
          activators_of[i] = &it->second;
        }
      }
    }
  }
  // An owner's edge events keep the owner as sender: it carries their
  // `_send_event_ids` and records them when its subgraphs are done
  // (RecordSlots says where that is).
  dynamic_graphs = DynamicPathGraphs(plan);
  // GE's InsertSyncEvents does not descend into FFTS / FFTS+ subgraphs: the
  // owner's FFTS task runs them, its own events stand for them.
  ffts = FftsRegionGraphs(m);
}

bool InsertionState::SkippedByActivation(NodeId cur, NodeId next) {
  if (activators_of.empty()) return false;
  const std::vector<NodeId>* activators = activators_of[next.index()];
  if (activators == nullptr) return false;
  const Node& c = m.node(cur);
  for (NodeId a : *activators) {
    if (m.node(a).graph == c.graph && stream(a) == c.stream_id && view.seq(cur) <= view.seq(a) &&
        view.seq(next) > view.seq(a)) {
      ++skipped_activation;
      log.Record(pass, "EventSkipped", "", Field("from", c.name), Field("to", m.node(next).name),
                 Field("reason", StrCat("activated-by:", m.node(a).name)));
      return true;
    }
  }
  return false;
}

absl::Status GeneralEdgeEvents(InsertionState& st, FoundEvents& out) {
  const Model& m = st.m;
  const SyncView& view = st.view;
  const size_t n = m.num_nodes();
  auto valid_src = [&](NodeId x) { return x.valid() && x.index() < n; };
  BigVector<EdgeEntry> edges;
  edges.reserve(2 * n);
  for (const Graph& g : m.graphs()) {
    if (st.in_ffts(GraphId(static_cast<int32_t>(&g - m.graphs().data())))) continue;
    for (NodeId consumer : g.nodes) {
      const Node& node = m.node(consumer);
      const int64_t to_stream = st.stream(consumer);
      const uint32_t to = static_cast<uint32_t>(consumer.value) | (to_stream < 0 ? kNoStream : 0);
      for (const OutputRef& in : node.inputs) {
        if (!valid_src(in.node)) continue;
        const int64_t from_stream = st.stream(in.node);
        if (from_stream >= 0 && from_stream != to_stream)
          edges.push_back({in.node.value, to});  // rules 1, 2
      }
      for (NodeId c : node.control_inputs) {
        if (!valid_src(c)) continue;
        const int64_t from_stream = st.stream(c);
        if (from_stream >= 0 && from_stream != to_stream)
          edges.push_back({c.value, to | kCtrlEdge});
      }
    }
  }
  // out_pos[u + 1] ends as u's first entry; entries are placed backwards
  // (control edges, then data edges) so each producer's list keeps walk order.
  BigVector<uint32_t> out_pos(n + 2, 0);
  for (const EdgeEntry& e : edges) ++out_pos[static_cast<size_t>(e.from) + 1];
  for (size_t i = 0; i < n; ++i) out_pos[i + 1] += out_pos[i];
  out_pos[n + 1] = static_cast<uint32_t>(edges.size());
  BigVector<uint32_t> by_producer(edges.size());
  for (uint32_t ctrl : {kCtrlEdge, 0u}) {
    for (size_t i = edges.size(); i-- > 0;) {
      const EdgeEntry& e = edges[i];
      if ((e.to & kCtrlEdge) == ctrl)
        by_producer[--out_pos[static_cast<size_t>(e.from) + 1]] = e.to;
    }
  }
  FreeStorage(edges);
  // Producer u's entries: [out_pos[u + 1], out_pos[u + 2]).
  BigVector<Candidate>& cands = out.cands;
  cands.reserve(by_producer.size() + 64);
  {
    BigVector<int32_t> seen(n, -1);  // last producer that emitted an event to the node
    for (NodeId cur : view.order()) {
      const size_t lo = out_pos[cur.index() + 1], hi = out_pos[cur.index() + 2];
      if (lo == hi) continue;  // no cross-stream edge, or no stream (rule 1)
      const bool enter = view.has_flag(cur, SyncView::kEnter);
      for (size_t k = lo; k < hi; ++k) {
        const uint32_t entry = by_producer[k];
        const NodeId next(static_cast<int32_t>(entry & kIdMask));
        if (seen[next.index()] == cur.value) continue;               // one event per pair
        if (enter && m.node(next).type != "StreamActive") continue;  // rule 3
        if (entry & kNoStream) {                                     // rule 4
          const Node& nx = m.node(next);
          if (HasAttr(nx.attrs, "_thread_scope_id")) continue;
          const Node& c = m.node(cur);
          return absl::InvalidArgumentError(
              StrCat("[", st.pass, "] node '", nx.name, "' (successor of '", c.name, "' on stream ",
                     c.stream_id, ") has no stream: every node that receives an edge needs one"));
        }
        if (st.SkippedByActivation(cur, next)) continue;  // rule 5
        seen[next.index()] = cur.value;
        cands.push_back({cur.value, next.value,
                         (entry & kCtrlEdge) ? SyncReason::kControlEdge : SyncReason::kDataEdge});
      }
    }
  }
  out.edge_candidates = cands.size();
  return absl::OkStatus();
}

std::vector<NodeId> SubgraphEntryAndEndEvents(InsertionState& st, FoundEvents& out) {
  const Model& m = st.m;
  std::vector<NodeId> end_of(m.num_graphs());  // per subgraph: its end node (for 2b)
  if (m.num_graphs() <= 1) return end_of;      // (only subgraphs have a parent)
  const Adjacency adj(m);                      // every successor of a node, for the subgraph end
  BigVector<Candidate>& cands = out.cands;
  for (GraphId g : m.GraphsPreOrder()) {
    const Graph& graph = m.graph(g);
    if (!graph.parent_node.valid()) continue;
    const Node& p = m.node(graph.parent_node);
    if (HasAttr(p.attrs, "_thread_scope_id") || st.in_ffts(g))
      continue;  // GE skips FFTS / thread-scope parents
    // GE's dynamic InsertEvents: no boundary events; the owner's waits precede
    // its subgraph and its records follow it. Its outputs leave through the
    // NetOutput (the end for 2b).
    if (DynamicSubgraphBoundary(m, st.dynamic_graphs, g)) {
      for (NodeId id : graph.nodes) {
        if (m.node(id).type == "NetOutput") {
          end_of[g.index()] = id;
          break;
        }
      }
      continue;
    }
    std::vector<NodeId> parent_in;
    for (const OutputRef& in : p.inputs) parent_in.push_back(in.node);
    for (NodeId c : p.control_inputs) parent_in.push_back(c);
    NodeId end;
    for (NodeId id : graph.nodes) {
      const Node& n = m.node(id);
      if (n.stream_id >= 0 && n.inputs.empty() && n.control_inputs.empty() && !IsLoopGate(n)) {
        for (NodeId x : parent_in) {
          if (st.stream(x) >= 0 && st.stream(x) != n.stream_id) {
            cands.push_back({x.value, id.value, SyncReason::kSubgraphEntry});
          }
        }
      }
      if (!end.valid() && GetBoolAttr(n.attrs, "_subgraph_end_node").value_or(false)) end = id;
    }
    if (!end.valid()) {
      for (NodeId id : graph.nodes) {
        if (m.node(id).type == "NetOutput") {
          end = id;
          break;
        }
      }
    }
    end_of[g.index()] = end;
    if (end.valid() && st.stream(end) >= 0) {
      for (size_t k = adj.begin(graph.parent_node); k < adj.end(graph.parent_node); ++k) {
        NodeId y = adj.succ[k];
        if (st.stream(y) >= 0 && st.stream(y) != st.stream(end)) {
          cands.push_back({end.value, y.value, SyncReason::kSubgraphEnd});
        }
        // An attached task of y that reads the parent's output: the owner
        // records before its subgraphs run, so the end orders it too
        // (npuplan's; GE orders only the main task: docs/events.md).
        for (int32_t a : AttachedReadersOf(m.node(y), graph.parent_node)) {
          const int32_t to = st.view.slot(y, a);
          if (st.view.stream(to) >= 0 && st.view.stream(to) != st.stream(end))
            cands.push_back({end.value, to, SyncReason::kSubgraphEnd});
        }
      }
    }
  }
  return end_of;
}

// A node reading a value through producers without a stream (a subgraph's
// Data node, and what sits between) waits for the producers with a stream
// behind them — for a Data node with `_parent_node_index` i, the producer of
// the parent's input i — and, when such a producer owns subgraphs, for their
// end nodes (it produces its outputs there; the subgraph-end rule only
// reaches the parent's direct successors). GE's rule (a) only reaches
// subgraph nodes with no inputs; GE orders the others by the subgraph's
// first-active StreamActive, which npuplan's graphs need not have
// (docs/events.md). A subgraph's sources also wait for the control inputs
// of its owners (ir/owner_control_inputs.h): a source without a stream
// passes them on to its readers like a producer, a source with a stream
// waits for them itself (rule (a) gives it only its direct owner's, with a
// stream) — "owner-control" events.
void SubgraphInputEvents(InsertionState& st, const std::vector<NodeId>& end_of, FoundEvents& out) {
  const Model& m = st.m;
  const SyncView& view = st.view;
  const OwnerControlInputs owner_controls(m);
  // What a node without a stream stands for: nodes with a stream, each
  // marked when it comes from an owner's control input.
  struct Behind {
    NodeId node;
    bool owner_control;
  };
  // In(u), per stream-less u: what u's producers stand for. A producer (and
  // its subgraphs) precedes its consumer in execution order (a parent's
  // inputs precede the parent, which precedes its subgraphs), so one sweep in
  // that order finds every producer's In ready.
  std::unordered_map<int32_t, std::vector<Behind>> in_of;
  // Out(w): the nodes with a stream that w's output stands for.
  auto out_of = [&](NodeId w, bool control, std::vector<Behind>& acc, auto&& self) -> void {
    if (st.stream(w) >= 0) {
      acc.push_back({w, control});
    } else if (auto it = in_of.find(w.value); it != in_of.end()) {
      for (const Behind& b : it->second) acc.push_back({b.node, control || b.owner_control});
    }
    for (GraphId sg : m.node(w).subgraphs) {
      if (NodeId e = end_of[sg.index()]; e.valid()) self(e, control, acc, self);
    }
  };
  auto owner_control_of = [&](const Node& n, std::vector<Behind>& acc) {
    if (!owner_controls.any() || !IsGraphSource(m, n)) return;
    for (NodeId c : owner_controls.Of(n.graph)) out_of(c, true, acc, out_of);
  };
  // In execution order, each node once: a data edge's mark wins over a
  // control input's (the reason names the data flow when both order it).
  auto sorted_unique = [&](std::vector<Behind>& v) {
    std::sort(v.begin(), v.end(), [&](const Behind& a, const Behind& b) {
      return std::make_pair(view.seq(a.node), a.owner_control) <
             std::make_pair(view.seq(b.node), b.owner_control);
    });
    v.erase(std::unique(v.begin(), v.end(),
                        [](const Behind& a, const Behind& b) { return a.node == b.node; }),
            v.end());
  };
  bool look_through = false;
  for (NodeId u : view.order()) {
    if (st.stream(u) >= 0) continue;  // the dense array: most nodes have a stream
    const Node& n = m.node(u);
    look_through |= !n.subgraphs.empty();
    std::vector<Behind> acc;
    for (const OutputRef& in : n.inputs) out_of(in.node, false, acc, out_of);
    for (NodeId c : n.control_inputs) out_of(c, false, acc, out_of);
    const Graph& g = m.graph(n.graph);
    if (n.type == "Data" && g.parent_node.valid() &&
        !HasAttr(m.node(g.parent_node).attrs, "_thread_scope_id")) {
      const Node& p = m.node(g.parent_node);
      if (auto idx = GetIntAttr(n.attrs, "_parent_node_index");
          idx && *idx >= 0 && static_cast<size_t>(*idx) < p.inputs.size()) {
        out_of(p.inputs[*idx].node, false, acc, out_of);
      }
    }
    owner_control_of(n, acc);
    if (acc.empty()) continue;
    sorted_unique(acc);
    in_of.emplace(u.value, std::move(acc));
  }
  if (!look_through && in_of.empty() && !owner_controls.any()) return;
  std::vector<Behind> acc;
  for (NodeId v : view.order()) {
    if (st.stream(v) < 0) continue;
    const Node& n = m.node(v);
    if (st.in_ffts(n.graph)) continue;
    const bool active = n.type == "StreamActive";
    acc.clear();
    for (const OutputRef& in : n.inputs) {
      if (st.stream(in.node) < 0) out_of(in.node, false, acc, out_of);
    }
    for (NodeId c : n.control_inputs) {
      if (st.stream(c) < 0) out_of(c, false, acc, out_of);
    }
    owner_control_of(n, acc);
    if (acc.empty()) continue;
    sorted_unique(acc);
    for (const Behind& b : acc) {
      const NodeId x = b.node;
      const Node& xn = m.node(x);
      if (st.stream(x) == n.stream_id) continue;                               // rule 2
      if ((xn.type == "Enter" || xn.type == "RefEnter") && !active) continue;  // rule 3
      if (st.SkippedByActivation(x, v)) continue;                              // rule 5
      out.cands.push_back(
          {x.value, v.value,
           b.owner_control ? SyncReason::kOwnerControl : SyncReason::kSubgraphInput});
    }
  }
}

void AttachedStreamEvents(InsertionState& st, FoundEvents& out) {
  const Model& m = st.m;
  const SyncView& view = st.view;
  std::map<int64_t, int32_t> last_user;
  for (NodeId id :
       view.any_attached() ? std::span<const NodeId>(view.order()) : std::span<const NodeId>()) {
    if (view.num_attached(id) == 0) continue;
    const Node& n = m.node(id);
    for (int32_t a = 0; a < view.num_attached(id); ++a) {
      last_user[n.attached_stream_ids[a]] = view.slot(id, a);
      if (st.in_ffts(n.graph)) continue;  // GE's attached-stream insertion skips FFTS subgraphs too
      for (int64_t idx : AttachedDependIndices(n, a)) {
        if (idx < 0 || static_cast<size_t>(idx) >= n.inputs.size()) continue;
        NodeId src = n.inputs[idx].node;
        if (IsDataOrConst(m.node(src))) continue;
        int32_t from = view.slot(src, view.num_attached(src) > 0 ? 0 : -1);
        int32_t to = view.slot(id, a);
        if (view.stream(from) >= 0 && view.stream(from) != view.stream(to)) {
          out.cands.push_back({from, to, SyncReason::kAttached});
        }
      }
    }
  }
  for (const auto& [att, slot] : last_user) {
    NodeId id = view.node_of(slot);
    for (NodeId o : m.graph(m.node(id).graph).nodes) {
      if (m.node(o).type == "NetOutput" && view.seq(o) > view.seq(id) && st.stream(o) >= 0 &&
          st.stream(o) != view.stream(slot)) {
        out.cands.push_back({slot, o.value, SyncReason::kAttachedEnd});
      }
    }
  }
}

void DropRepeatedPairs(FoundEvents& out) {
  BigVector<Candidate>& cands = out.cands;
  const size_t edge_candidates = out.edge_candidates;
  // Only the few subgraph/attached candidates can repeat a pair, so only they
  // are hashed.
  auto key = [](int32_t from, int32_t to) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32) | static_cast<uint32_t>(to);
  };
  std::unordered_map<uint64_t, bool> extra_emitted;  // extra candidate pair → already has an event
  for (size_t i = edge_candidates; i < cands.size(); ++i)
    extra_emitted.emplace(key(cands[i].from, cands[i].to), false);
  if (!extra_emitted.empty()) {
    auto mark_emitted = [&](uint64_t k) {
      if (auto it = extra_emitted.find(k); it != extra_emitted.end()) it->second = true;
    };
    for (size_t i = 0; i < edge_candidates; ++i) mark_emitted(key(cands[i].from, cands[i].to));
    for (const EdgeEntry& e : out.edges)
      mark_emitted(key(e.from, static_cast<int32_t>(e.to & kIdMask)));
  }
  // Drop the repeated extra candidates in place: cands[j] becomes event j
  // (after the edge events in the fast path).
  size_t distinct = edge_candidates;
  for (size_t i = edge_candidates; i < cands.size(); ++i) {
    bool& emitted = extra_emitted[key(cands[i].from, cands[i].to)];
    if (emitted) continue;
    emitted = true;
    cands[distinct++] = cands[i];
  }
  cands.resize(distinct);
}

namespace {

// The general numbering: a counting sort of the candidates over (group,
// sender rank) buckets.
void NumberGeneralEvents(const InsertionState& st, FoundEvents& found, TableWriter& w) {
  const Model& m = st.m;
  const SyncView& view = st.view;
  const BigVector<Candidate>& cands = found.cands;
  BigVector<int32_t> rank(m.num_nodes(), -1);
  BigVector<int32_t> senders;
  senders.reserve(std::min(cands.size(), m.num_nodes()));
  for (const Candidate& c : cands) {
    const NodeId s = view.node_of(c.from);
    if (rank[s.index()] < 0) {
      rank[s.index()] = 0;
      senders.push_back(s.value);
    }
  }
  RankSendersByName(m, senders, rank);
  const size_t num_senders = senders.size();
  FreeStorage(senders);
  auto bucket = [&](const Candidate& c) {
    return w.GroupOf(c.from, c.to) * num_senders +
           static_cast<size_t>(rank[view.node_of(c.from).index()]);
  };
  BigVector<uint32_t> start((w.notify ? 4 : 2) * num_senders + 1, 0);
  for (const Candidate& c : cands) ++start[bucket(c) + 1];
  for (size_t b = 0; b + 1 < start.size(); ++b) start[b + 1] += start[b];
  w.num_events = start[2 * num_senders];
  for (const Candidate& c : cands) w.Put(start[bucket(c)]++, c.from, c.to, c.reason);
}

}  // namespace

// The table in (kind, id) order: buckets (kind, sent from an attached stream,
// sender rank), within a bucket by candidate index (the old id GE breaks ties
// with); an event's id is its position within its kind.
EventTable NumberEvents(const InsertionState& st, FoundEvents& found, bool notify,
                        const std::vector<int32_t>& loop_of_graph) {
  const size_t count = found.edges.size() + found.cands.size();
  EventTable table;
  table.counts = st.plan.events.counts;
  table.events.resize(count);  // on 2 MiB pages (BigVector)
  TableWriter w{st.view, table, notify};
  w.model = &st.m;
  w.loop_of_graph = &loop_of_graph;
  if (found.fast) {
    NumberFastEvents(found, w);
  } else {
    NumberGeneralEvents(st, found, w);
  }
  FreeStorage(found.edges);
  FreeStorage(found.per_sender);
  table.event_count = static_cast<int64_t>(w.num_events);
  table.notify_count = static_cast<int64_t>(count - w.num_events);
  return table;
}

}  // namespace npuplan::events
