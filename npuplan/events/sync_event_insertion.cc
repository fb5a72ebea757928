#include "npuplan/events/sync_event_insertion.h"

#include <algorithm>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>

#include "npuplan/events/event_options.h"
#include "npuplan/events/sync_verifier.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/ir/ffts_regions.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

using events::kNodePrefetch;

[[maybe_unused]] const bool kChecks = events::RegisterEventStageChecks();

struct Candidate {
  int32_t from;
  int32_t to;
  SyncReason reason;
};

}  // namespace

absl::StatusOr<bool> SyncEventInsertion::Run(Plan& plan, PassContext& ctx) {
  const Model& m = plan.model;
  NPUPLAN_ASSIGN_OR_RETURN(const events::EventOptions opts, events::ReadEventOptions(ctx.options));
  const bool notify = opts.notify;
  if (notify && IsDynamicStreamMode(plan.streams.mode)) {
    return absl::InvalidArgumentError(StrCat("[", name(), "] option ",
                                             ctx.options.ReadableName("ge.event"),
                                             "=notify: notifies are for static-shape "
                                             "graphs only, but streams were assigned in mode '",
                                             StreamModeName(plan.streams.mode), "'"));
  }
  // Insertion needs no per-stream slot lists: they are built by the passes that read them.
  // The usual case ranks senders by name: the view's node pass keeps the
  // name prefixes for that (no second pass over the Nodes).
  events::SyncView view(plan, /*physical=*/false, /*stream_order=*/false, /*name_prefixes=*/fast_path_);
  events::ActivationInfo act = events::ComputeActivation(m, view);
  const size_t n = m.num_nodes();
  // Node ids fit in 30 bits: the edge entries below carry two flag bits.
  if (n >= (size_t{1} << 30)) {
    return absl::InvalidArgumentError(StrCat("[", name(), "] ", n, " nodes: at most 2^30 are supported"));
  }
  int64_t skipped_activation = 0;
  // Logical main streams, from the view's dense array (no Node read).
  auto stream = [&](NodeId x) { return view.stream(x.value); };

  // Rule 5 needs, per node, the activators of its `_stream_label` (none for most graphs).
  std::vector<const std::vector<NodeId>*> activators_of;
  if (!act.activators_of_label.empty()) {
    activators_of.assign(n, nullptr);
    for (size_t i = 0; i < n; ++i) {
      if (auto label = GetStringAttr(m.nodes()[i].attrs, "_stream_label"); label && !label->empty()) {
        if (auto it = act.activators_of_label.find(*label); it != act.activators_of_label.end()) {
          activators_of[i] = &it->second;
        }
      }
    }
  }

  // Rule 5: next's `_stream_label` is activated by a node A on cur's stream,
  // in cur's graph, at or after cur — and before next (npuplan's guard: the
  // activation orders only what follows the activator).
  auto SkippedByActivation = [&](NodeId cur, NodeId next) {
    if (activators_of.empty()) return false;
    const std::vector<NodeId>* activators = activators_of[next.index()];
    if (activators == nullptr) return false;
    const Node& c = m.node(cur);
    for (NodeId a : *activators) {
      if (m.node(a).graph == c.graph && stream(a) == c.stream_id && view.seq(cur) <= view.seq(a) &&
          view.seq(next) > view.seq(a)) {
        ++skipped_activation;
        ctx.log.Record(name(), "EventSkipped", "", Field("from", c.name), Field("to", m.node(next).name),
                       Field("reason", StrCat("activated-by:", m.node(a).name)));
        return true;
      }
    }
    return false;
  };

  // Dynamic path: the graphs whose subgraph boundaries get no events. An
  // owner's edge events keep the owner as sender: it carries their
  // `_send_event_ids` and records them when its subgraphs are done
  // (events::RecordSlots says where that is).
  const std::vector<bool> dynamic_graphs = events::DynamicPathGraphs(plan);
  // GE's InsertSyncEvents does not descend into FFTS / FFTS+ subgraphs: the
  // owner's FFTS task runs them, its own events stand for them.
  const std::vector<uint8_t> ffts = FftsRegionGraphs(m);
  auto in_ffts = [&](GraphId g) { return !ffts.empty() && ffts[g.index()] != 0; };

  // 1. Data and control edges (GE InsertOneEventInTwoNodes), in the order
  //    GE walks them: producers in execution order; per producer its data
  //    consumers, then its control consumers, each in graph order (graphs by
  //    index, nodes by list position). Only the order within one producer
  //    reaches the table (an event's id is its sender's name rank, then its
  //    index among the sender's candidates), so the usual case — no rule-5
  //    activation labels, no dynamic-path owners, every node in the order —
  //    takes one pass over the consumers: each cross-stream pair once
  //    (first data edge, else control edge), counted per producer, and the
  //    table is filled from that list below (no producer-ordered copy, no
  //    candidate list). A rule-4 error (an edge into a node without a
  //    stream) takes the general walk, which reports the first one in GE's
  //    order.
  constexpr uint32_t kCtrl = uint32_t{1} << 31;      // a control edge
  constexpr uint32_t kNoStream = uint32_t{1} << 30;  // the consumer has no stream (rule 4)
  constexpr uint32_t kIdMask = kNoStream - 1;
  struct Edge {
    int32_t from;
    uint32_t to;  // consumer | flags
  };
  auto valid_src = [&](NodeId x) { return x.valid() && x.index() < n; };
  BigVector<Edge> edge_events;     // simple path: the edge events, in consumer walk order
  BigVector<uint32_t> per_sender;  // simple path: edge events per producer, then table cursors
  BigVector<int32_t> by_name;      // simple path: every node that may send, in GE's sender order
  bool any_ctrl = false;
  bool simple = fast_path_ && activators_of.empty() && view.order().size() == n;
  if (simple) {
    // GE's sender order first, over every node with a stream (a superset of
    // the senders: only the relative order of senders matters), so that the
    // sort's key arrays are freed before the edge list is built and the
    // scratch cache hands their pages on to it.
    by_name.reserve(n);
    for (size_t u = 0; u < n; ++u) {
      if (view.stream(static_cast<int32_t>(u)) >= 0 || view.num_attached(NodeId(static_cast<int32_t>(u))) > 0) {
        by_name.push_back(static_cast<int32_t>(u));
      }
    }
    {
      BigVector<uint64_t> prefixes = view.TakeNamePrefixes();
      events::SortSendersByName(m, by_name, prefixes);
    }
    const bool check_enter = view.any_flag(events::SyncView::kEnter);
    per_sender.assign(n, 0);
    edge_events.reserve(2 * n);
    BigVector<int32_t> mark;  // for consumers with many producers: mark[u] = consumer
    for (const Graph& g : m.graphs()) {
      if (in_ffts(GraphId(static_cast<int32_t>(&g - m.graphs().data())))) continue;
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
          if (su < 0 || su == t) return true;                                                  // rules 1, 2
          if (check_enter && view.has_flag(u, events::SyncView::kEnter) && node.type != "StreamActive") return true;  // rule 3
          if (t < 0) return HasAttr(node.attrs, "_thread_scope_id");                           // rule 4
          if (many) {  // one event per pair
            if (mark[u.index()] == consumer.value) return true;
            mark[u.index()] = consumer.value;
          } else {
            for (size_t k = first; k < edge_events.size(); ++k) {
              if (edge_events[k].from == u.value) return true;
            }
          }
          edge_events.push_back({u.value, static_cast<uint32_t>(consumer.value) | ctrl});
          ++per_sender[u.index()];
          any_ctrl |= ctrl != 0;
          return true;
        };
        for (const OutputRef& in : node.inputs) simple = simple && offer(in.node, 0);
        for (NodeId c : node.control_inputs) simple = simple && offer(c, kCtrl);
        if (!simple) break;
      }
      if (!simple) break;
    }
    if (!simple) {
      FreeStorage(edge_events);
      FreeStorage(per_sender);
      FreeStorage(by_name);
      any_ctrl = false;
    }
  }
  BigVector<Candidate> cands;
  if (!simple) {
    BigVector<Edge> edges;
    edges.reserve(2 * n);
    for (const Graph& g : m.graphs()) {
      if (in_ffts(GraphId(static_cast<int32_t>(&g - m.graphs().data())))) continue;
      for (NodeId consumer : g.nodes) {
        const Node& node = m.node(consumer);
        const int64_t to_stream = stream(consumer);
        const uint32_t to = static_cast<uint32_t>(consumer.value) | (to_stream < 0 ? kNoStream : 0);
        for (const OutputRef& in : node.inputs) {
          if (!valid_src(in.node)) continue;
          const int64_t from_stream = stream(in.node);
          if (from_stream >= 0 && from_stream != to_stream) edges.push_back({in.node.value, to});  // rules 1, 2
        }
        for (NodeId c : node.control_inputs) {
          if (!valid_src(c)) continue;
          const int64_t from_stream = stream(c);
          if (from_stream >= 0 && from_stream != to_stream) edges.push_back({c.value, to | kCtrl});
        }
      }
    }
    // out_pos[u + 1] ends as u's first entry; entries are placed backwards
    // (control edges, then data edges) so each producer's list keeps walk order.
    BigVector<uint32_t> out_pos(n + 2, 0);
    for (const Edge& e : edges) ++out_pos[static_cast<size_t>(e.from) + 1];
    for (size_t i = 0; i < n; ++i) out_pos[i + 1] += out_pos[i];
    out_pos[n + 1] = static_cast<uint32_t>(edges.size());
    BigVector<uint32_t> out(edges.size());
    for (uint32_t ctrl : {kCtrl, 0u}) {
      for (size_t i = edges.size(); i-- > 0;) {
        const Edge& e = edges[i];
        if ((e.to & kCtrl) == ctrl) out[--out_pos[static_cast<size_t>(e.from) + 1]] = e.to;
      }
    }
    FreeStorage(edges);
    // Producer u's entries: [out_pos[u + 1], out_pos[u + 2]).
    cands.reserve(out.size() + 64);
    {
      BigVector<int32_t> seen(n, -1);  // last producer that emitted an event to the node
      for (NodeId cur : view.order()) {
        const size_t lo = out_pos[cur.index() + 1], hi = out_pos[cur.index() + 2];
        if (lo == hi) continue;  // no cross-stream edge, or no stream (rule 1)
        const bool enter = view.has_flag(cur, events::SyncView::kEnter);
        for (size_t k = lo; k < hi; ++k) {
          const uint32_t entry = out[k];
          const NodeId next(static_cast<int32_t>(entry & kIdMask));
          if (seen[next.index()] == cur.value) continue;  // one event per pair
          if (enter && m.node(next).type != "StreamActive") continue;  // rule 3
          if (entry & kNoStream) {  // rule 4
            const Node& nx = m.node(next);
            if (HasAttr(nx.attrs, "_thread_scope_id")) continue;
            const Node& c = m.node(cur);
            return absl::InvalidArgumentError(StrCat("[", name(), "] node '", nx.name, "' (successor of '", c.name,
                                                     "' on stream ", c.stream_id,
                                                     ") has no stream: every node that receives an edge needs one"));
          }
          if (SkippedByActivation(cur, next)) continue;  // rule 5
          seen[next.index()] = cur.value;
          cands.push_back({cur.value, next.value, (entry & kCtrl) ? SyncReason::kControlEdge : SyncReason::kDataEdge});
        }
      }
    }
    FreeStorage(out);
    FreeStorage(out_pos);
  }
  // Every successor of a node, for the subgraph-end rule (graphs with subgraphs only).
  std::optional<Adjacency> adj;
  if (m.num_graphs() > 1) adj.emplace(m);

  const size_t edge_candidates = cands.size();

  // 2. Subgraph entry and end (GE InsertEventsForSubgraph).
  std::vector<NodeId> end_of(m.num_graphs());  // per subgraph: its end node (for 2b)
  // (Only subgraphs have a parent: GraphsPreOrder walks every node, skip it for one graph.)
  for (GraphId g : m.num_graphs() > 1 ? m.GraphsPreOrder() : std::vector<GraphId>()) {
    const Graph& graph = m.graph(g);
    if (!graph.parent_node.valid()) continue;
    const Node& p = m.node(graph.parent_node);
    if (HasAttr(p.attrs, "_thread_scope_id") || in_ffts(g)) continue;  // GE skips FFTS / thread-scope parents
    // GE's dynamic InsertEvents: no boundary events; the owner's waits precede
    // its subgraph and its records follow it. Its outputs leave through the
    // NetOutput (the end for 2b).
    if (events::DynamicSubgraphBoundary(m, dynamic_graphs, g)) {
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
      if (n.stream_id >= 0 && n.inputs.empty() && n.control_inputs.empty()) {
        for (NodeId x : parent_in) {
          if (stream(x) >= 0 && stream(x) != n.stream_id) cands.push_back({x.value, id.value, SyncReason::kSubgraphEntry});
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
    if (end.valid() && stream(end) >= 0) {
      for (size_t k = adj->begin(graph.parent_node); k < adj->end(graph.parent_node); ++k) {
        NodeId y = adj->succ[k];
        if (stream(y) >= 0 && stream(y) != stream(end)) cands.push_back({end.value, y.value, SyncReason::kSubgraphEnd});
      }
    }
  }

  // 2b. Subgraph inputs: a node reading a value through producers without a
  //     stream (a subgraph's Data node, and what sits between) waits for the
  //     producers with a stream behind them — for a Data node with
  //     `_parent_node_index` i, the producer of the parent's input i — and,
  //     when such a producer owns subgraphs, for their end nodes (it produces
  //     its outputs there; the subgraph-end rule above only reaches the
  //     parent's direct successors). GE's rule (a) only reaches subgraph
  //     nodes with no inputs; GE orders the others by the subgraph's
  //     first-active StreamActive, which npuplan's graphs need not have
  //     (docs/events.md).
  //     In(u), per stream-less u: what u's producers stand for. A producer
  //     (and its subgraphs) precedes its consumer in execution order (a
  //     parent's inputs precede the parent, which precedes its subgraphs), so
  //     one sweep in that order finds every producer's In ready.
  std::unordered_map<int32_t, std::vector<NodeId>> in_of;
  // Out(w): the nodes with a stream that w's output stands for.
  auto out_of = [&](NodeId w, std::vector<NodeId>& acc, auto&& self) -> void {
    if (stream(w) >= 0) {
      acc.push_back(w);
    } else if (auto it = in_of.find(w.value); it != in_of.end()) {
      acc.insert(acc.end(), it->second.begin(), it->second.end());
    }
    for (GraphId sg : m.node(w).subgraphs) {
      if (NodeId e = end_of[sg.index()]; e.valid()) self(e, acc, self);
    }
  };
  auto sorted_unique = [&](std::vector<NodeId>& v) {
    std::sort(v.begin(), v.end(), [&](NodeId a, NodeId b) { return view.seq(a) < view.seq(b); });
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  bool look_through = false;
  for (NodeId u : view.order()) {
    if (stream(u) >= 0) continue;  // the dense array: most nodes have a stream
    const Node& n = m.node(u);
    look_through |= !n.subgraphs.empty();
    std::vector<NodeId> acc;
    for (const OutputRef& in : n.inputs) out_of(in.node, acc, out_of);
    for (NodeId c : n.control_inputs) out_of(c, acc, out_of);
    const Graph& g = m.graph(n.graph);
    if (n.type == "Data" && g.parent_node.valid() && !HasAttr(m.node(g.parent_node).attrs, "_thread_scope_id")) {
      const Node& p = m.node(g.parent_node);
      if (auto idx = GetIntAttr(n.attrs, "_parent_node_index");
          idx && *idx >= 0 && static_cast<size_t>(*idx) < p.inputs.size()) {
        out_of(p.inputs[*idx].node, acc, out_of);
      }
    }
    if (acc.empty()) continue;
    sorted_unique(acc);
    in_of.emplace(u.value, std::move(acc));
  }
  if (look_through || !in_of.empty()) {
    std::vector<NodeId> acc;
    for (NodeId v : view.order()) {
      if (stream(v) < 0) continue;
      const Node& n = m.node(v);
      if (in_ffts(n.graph)) continue;
      const bool active = n.type == "StreamActive";
      acc.clear();
      for (const OutputRef& in : n.inputs) {
        if (stream(in.node) < 0) out_of(in.node, acc, out_of);
      }
      for (NodeId c : n.control_inputs) {
        if (stream(c) < 0) out_of(c, acc, out_of);
      }
      if (acc.empty()) continue;
      sorted_unique(acc);
      for (NodeId x : acc) {
        const Node& xn = m.node(x);
        if (stream(x) == n.stream_id) continue;                                 // rule 2
        if ((xn.type == "Enter" || xn.type == "RefEnter") && !active) continue;  // rule 3
        if (SkippedByActivation(x, v)) continue;                                // rule 5
        cands.push_back({x.value, v.value, SyncReason::kSubgraphInput});
      }
    }
  }

  // 3. Attached streams (GE InsertSyncEventsWithAttachedStream, CoverAllStreamByNetoutput).
  std::map<int64_t, int32_t> last_user;
  for (NodeId id : view.any_attached() ? std::span<const NodeId>(view.order()) : std::span<const NodeId>()) {
    if (view.num_attached(id) == 0) continue;
    const Node& n = m.node(id);
    for (int32_t a = 0; a < view.num_attached(id); ++a) {
      last_user[n.attached_stream_ids[a]] = view.slot(id, a);
      if (in_ffts(n.graph)) continue;  // GE's attached-stream insertion skips FFTS subgraphs too
      for (int64_t idx : events::AttachedDependIndices(n, a)) {
        if (idx < 0 || static_cast<size_t>(idx) >= n.inputs.size()) continue;
        NodeId src = n.inputs[idx].node;
        if (events::IsDataOrConst(m.node(src))) continue;
        int32_t from = view.slot(src, view.num_attached(src) > 0 ? 0 : -1);
        int32_t to = view.slot(id, a);
        if (view.stream(from) >= 0 && view.stream(from) != view.stream(to)) cands.push_back({from, to, SyncReason::kAttached});
      }
    }
  }
  for (const auto& [att, slot] : last_user) {
    NodeId id = view.node_of(slot);
    for (NodeId o : m.graph(m.node(id).graph).nodes) {
      if (m.node(o).type == "NetOutput" && view.seq(o) > view.seq(id) && stream(o) >= 0 &&
          stream(o) != view.stream(slot)) {
        cands.push_back({slot, o.value, SyncReason::kAttachedEnd});
      }
    }
  }

  // 4. One event per distinct pair, then GE's continuous numbering. The edge
  //    candidates are distinct already (`seen` / the per-consumer check
  //    above); only the few subgraph/attached candidates can repeat a pair,
  //    so only they are hashed.
  auto key = [](int32_t from, int32_t to) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32) | static_cast<uint32_t>(to);
  };
  std::unordered_map<uint64_t, bool> extra_emitted;  // extra candidate pair → already has an event
  for (size_t i = edge_candidates; i < cands.size(); ++i) extra_emitted.emplace(key(cands[i].from, cands[i].to), false);
  if (!extra_emitted.empty()) {
    auto mark_emitted = [&](uint64_t k) {
      if (auto it = extra_emitted.find(k); it != extra_emitted.end()) it->second = true;
    };
    for (size_t i = 0; i < edge_candidates; ++i) mark_emitted(key(cands[i].from, cands[i].to));
    for (const Edge& e : edge_events) mark_emitted(key(e.from, static_cast<int32_t>(e.to & kIdMask)));
  }
  // Drop the repeated extra candidates in place: cands[j] becomes event j
  // (after the edge events in the simple path).
  size_t distinct = edge_candidates;
  for (size_t i = edge_candidates; i < cands.size(); ++i) {
    bool& emitted = extra_emitted[key(cands[i].from, cands[i].to)];
    if (emitted) continue;
    emitted = true;
    cands[distinct++] = cands[i];
  }
  cands.resize(distinct);
  // GE's ids (sender name order, main before attached, events and notifies
  // numbered separately; GeOrder's order), with the table built directly in
  // (kind, id) order: buckets (kind, sent from an attached stream, sender
  // rank), within a bucket by candidate index (the old id GE breaks ties
  // with); an event's id is its position within its kind.
  const size_t count = edge_events.size() + cands.size();
  auto group_of = [&](int32_t from, int32_t to) {  // is_notify * 2 + from_attached
    const bool from_attached = view.attached_of(from) >= 0;
    const bool is_notify = notify && !from_attached && view.attached_of(to) < 0;
    return static_cast<uint32_t>(is_notify) * 2 + static_cast<uint32_t>(from_attached);
  };
  EventTable table;
  table.counts = plan.events.counts;
  table.events.resize(count);  // on 2 MiB pages (BigVector)
  size_t num_events = 0;  // events, then notifies
  auto put = [&](size_t p, int32_t from, int32_t to, SyncReason reason) {
    SyncEvent& e = table.events[p];
    const bool is_notify = p >= num_events;
    e.id = static_cast<int32_t>(is_notify ? p - num_events : p);
    if (is_notify) e.kind = SyncKind::kNotify;
    e.send = view.node_of(from);
    e.recv = view.node_of(to);
    e.send_attached = view.attached_of(from);
    e.recv_attached = view.attached_of(to);
    e.reason = reason;
  };
  if (simple) {
    // Edge events all fall in one group (main → main: events, or notifies);
    // the extra candidates (subgraph / attached) anywhere. The extras'
    // sender nodes are marked by the top bit of their count; `by_name`
    // holds every node with a stream, senders or not (rank gaps are
    // harmless: only the order matters).
    constexpr uint32_t kExtraSender = uint32_t{1} << 31;
    for (const Candidate& c : cands) per_sender[view.node_of(c.from).index()] |= kExtraSender;
    const BigVector<int32_t>& senders = by_name;
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
        if (per_sender[senders[r]] & kExtraSender) rank_of.emplace(senders[r], static_cast<int32_t>(r));
      }
      placed.reserve(cands.size());
      for (size_t i = 0; i < cands.size(); ++i) {
        placed.push_back({group_of(cands[i].from, cands[i].to), rank_of.at(view.node_of(cands[i].from).value),
                          static_cast<uint32_t>(i)});
      }
      std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
        return std::tie(a.group, a.rank, a.index) < std::tie(b.group, b.rank, b.index);
      });
    }
    // Positions: per group, per sender rank, the sender's edge events (its
    // per_sender entry becomes its cursor), then its extras.
    const uint32_t edge_group = notify ? 2 : 0;
    std::vector<uint32_t> extra_pos(cands.size());
    size_t running = 0, xi = 0;
    for (uint32_t g = 0; g < 4; ++g) {
      if (g == 2) num_events = running;
      if (g == edge_group) {
        for (size_t r = 0; r < senders.size(); ++r) {
          uint32_t& c = per_sender[senders[r]];
          const uint32_t edges_of = c & ~kExtraSender;
          c = static_cast<uint32_t>(running);
          running += edges_of;
          for (; xi < placed.size() && placed[xi].group == g && placed[xi].rank == static_cast<int32_t>(r); ++xi) {
            extra_pos[placed[xi].index] = static_cast<uint32_t>(running++);
          }
        }
      }
      for (; xi < placed.size() && placed[xi].group == g; ++xi) extra_pos[placed[xi].index] = static_cast<uint32_t>(running++);
    }
    FreeStorage(by_name);
    // Data edges first, then control edges: each sender's events in walk order.
    for (const Edge& e : edge_events) {
      if (!(e.to & kCtrl)) put(per_sender[e.from]++, e.from, static_cast<int32_t>(e.to), SyncReason::kDataEdge);
    }
    if (any_ctrl) {
      for (const Edge& e : edge_events) {
        if (e.to & kCtrl) put(per_sender[e.from]++, e.from, static_cast<int32_t>(e.to & kIdMask), SyncReason::kControlEdge);
      }
    }
    for (size_t i = 0; i < cands.size(); ++i) put(extra_pos[i], cands[i].from, cands[i].to, cands[i].reason);
  } else {
    const size_t count_c = cands.size();
    BigVector<int32_t> rank(n, -1);
    BigVector<int32_t> senders;
    senders.reserve(std::min(count_c, n));
    for (const Candidate& c : cands) {
      const NodeId s = view.node_of(c.from);
      if (rank[s.index()] < 0) {
        rank[s.index()] = 0;
        senders.push_back(s.value);
      }
    }
    events::RankSendersByName(m, senders, rank);
    const size_t num_senders = senders.size();
    FreeStorage(senders);
    auto bucket = [&](const Candidate& c) {
      return group_of(c.from, c.to) * num_senders + static_cast<size_t>(rank[view.node_of(c.from).index()]);
    };
    BigVector<uint32_t> start((notify ? 4 : 2) * num_senders + 1, 0);
    for (const Candidate& c : cands) ++start[bucket(c) + 1];
    for (size_t b = 0; b + 1 < start.size(); ++b) start[b + 1] += start[b];
    num_events = start[2 * num_senders];
    for (const Candidate& c : cands) put(start[bucket(c)]++, c.from, c.to, c.reason);
  }
  FreeStorage(edge_events);
  FreeStorage(per_sender);
  table.event_count = static_cast<int64_t>(num_events);
  table.notify_count = static_cast<int64_t>(count - num_events);
  bool changed = table.events.size() != plan.events.events.size() || !plan.events.events.empty();
  plan.events = std::move(table);
  if (ctx.log.enabled()) {
    for (const SyncEvent& e : plan.events.events) {
      ctx.log.Record(name(), "EventInserted", "", Field("event", e.id), Field("kind", SyncKindName(e.kind)),
                     Field("from", StrCat("s", view.stream(view.slot(e.send, e.send_attached)), ":", m.node(e.send).name)),
                     Field("to", StrCat("s", view.stream(view.slot(e.recv, e.recv_attached)), ":", m.node(e.recv).name)),
                     Field("reason", SyncReasonName(e.reason)));
    }
  }
  plan.events.counts["naive"] = static_cast<int64_t>(plan.events.events.size());
  ctx.stats.Set(name(), "events_inserted", static_cast<int64_t>(plan.events.events.size()));
  ctx.stats.Set(name(), "skipped_by_activation", skipped_activation);
  return changed || !plan.events.events.empty();
}

}  // namespace npuplan
