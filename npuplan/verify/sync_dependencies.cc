// CollectDeps (sync_verifier.h): the verifier's own list of what the events
// must order, apart from the insertion's rules (events/sync_event_rules.h).
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/ffts_regions.h"
#include "npuplan/ir/node_prefetch.h"
#include "npuplan/ir/owner_control_inputs.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {
namespace {

// The slot of node n on stream s (main or attached), else its main slot.
int32_t SlotOnStream(const SyncView& view, NodeId n, int64_t s) {
  for (int32_t a = 0; a < view.num_attached(n); ++a) {
    if (view.stream(view.slot(n, a)) == s && view.stream(view.slot(n, -1)) != s)
      return view.slot(n, a);
  }
  return view.slot(n, -1);
}

// What a node's output stands for, as nodes with a stream (Out): the node
// itself when it has a stream; otherwise — it has no task — what its own
// producers stand for, looked through recursively, a subgraph Data node with
// `_parent_node_index` i standing for the parent's input i; plus, for a node
// that owns subgraphs, what each subgraph's end node stands for (the owner
// produces its outputs there). Written apart from the insertion's sweep
// (depth first, memoised, explicit stack) so the two cannot share a mistake.
class StreamSources {
 public:
  StreamSources(const Model& m, const SyncView& view, const std::vector<bool>& dynamic_graphs,
                const OwnerControlInputs& owner_controls)
      : m_(m), view_(view), dynamic_graphs_(dynamic_graphs), owner_controls_(owner_controls) {}

  const std::vector<NodeId>& Out(NodeId u) {
    // Per node: kNew, kOpen (on the walk's stack) or its entry in out_.
    if (state_.empty()) state_.assign(m_.num_nodes(), kNew);
    if (state_[u.index()] >= 0) return out_[state_[u.index()]];
    std::vector<std::pair<NodeId, bool>> stack{{u, false}};
    while (!stack.empty()) {
      auto [x, expanded] = stack.back();
      if (state_[x.index()] >= 0) {
        stack.pop_back();
        continue;
      }
      if (!expanded) {
        stack.back().second = true;
        state_[x.index()] = kOpen;
        for (NodeId w : Children(x)) {
          if (state_[w.index()] == kNew) stack.push_back({w, false});
        }
        continue;
      }
      std::set<NodeId> acc;
      if (HasStream(x)) acc.insert(x);
      for (NodeId w : Children(x)) {
        if (state_[w.index()] >= 0)
          acc.insert(out_[state_[w.index()]].begin(), out_[state_[w.index()]].end());
      }
      state_[x.index()] = static_cast<int32_t>(out_.size());
      out_.emplace_back(acc.begin(), acc.end());
      stack.pop_back();
    }
    return out_[state_[u.index()]];
  }

 private:
  bool HasStream(NodeId n) const { return view_.stream(view_.slot(n, -1)) >= 0; }
  // The nodes whose Out makes up x's: producers (only without a stream), subgraph ends.
  std::vector<NodeId> Children(NodeId x) const {
    const Node& n = m_.node(x);
    std::vector<NodeId> out;
    if (!HasStream(x)) {
      for (const OutputRef& in : n.inputs) out.push_back(in.node);
      for (NodeId c : n.control_inputs) out.push_back(c);
      const Graph& g = m_.graph(n.graph);
      if (n.type == "Data" && g.parent_node.valid()) {
        const Node& p = m_.node(g.parent_node);
        auto idx = GetIntAttr(n.attrs, "_parent_node_index");
        if (!HasAttr(p.attrs, "_thread_scope_id") && idx && *idx >= 0 &&
            static_cast<size_t>(*idx) < p.inputs.size()) {
          out.push_back(p.inputs[*idx].node);
        }
      }
      // A subgraph's source runs after its owners' control inputs.
      if (owner_controls_.any() && IsGraphSource(m_, n)) {
        for (NodeId c : owner_controls_.Of(n.graph)) out.push_back(c);
      }
    }
    // A thread-scope or FFTS owner runs its subgraphs inside its own task.
    if (!HasAttr(n.attrs, "_thread_scope_id") && !IsFftsOwner(n)) {
      for (GraphId sg : n.subgraphs) {
        if (NodeId e = EndOf(sg); e.valid()) out.push_back(e);
      }
    }
    return out;
  }
  // The subgraph-end node: the first `_subgraph_end_node`, else the NetOutput
  // (on the dynamic path always the NetOutput: GE's dynamic executor).
  NodeId EndOf(GraphId g) const {
    const Graph& graph = m_.graph(g);
    for (NodeId id :
         DynamicSubgraphBoundary(m_, dynamic_graphs_, g) ? std::vector<NodeId>{} : graph.nodes) {
      const Node& n = m_.node(id);
      if (!IsSyncNode(n) && GetBoolAttr(n.attrs, "_subgraph_end_node").value_or(false)) return id;
    }
    for (NodeId id : graph.nodes) {
      if (m_.node(id).type == "NetOutput") return id;
    }
    return NodeId();
  }

  const Model& m_;
  const SyncView& view_;
  const std::vector<bool>& dynamic_graphs_;
  const OwnerControlInputs& owner_controls_;
  static constexpr int32_t kNew = -1, kOpen = -2;
  std::vector<int32_t> state_;           // by node, sized at the first Out
  std::deque<std::vector<NodeId>> out_;  // memoised Outs (references stay valid)
};

// Per stream of a subgraph root: the parent's inputs (slots) that
// CollectDeps keeps for it (on another stream), in order, listed once per
// stream. Trying every input for every root costs roots × inputs even when
// nothing is kept: a dynamic subgraph has a Data root per input.
class EntrySources {
 public:
  EntrySources(const SyncView& view, const std::vector<NodeId>& parent_in)
      : view_(view), parent_in_(parent_in) {}
  const std::vector<int32_t>& For(int64_t s) {
    auto [it, fresh] = by_stream_.try_emplace(s);
    if (!fresh) return it->second;
    for (NodeId x : parent_in_) {
      const int32_t slot = view_.slot(x, -1);
      if (view_.stream(slot) >= 0 && view_.stream(slot) != s) it->second.push_back(slot);
    }
    return it->second;
  }

 private:
  const SyncView& view_;
  const std::vector<NodeId>& parent_in_;
  std::map<int64_t, std::vector<int32_t>> by_stream_;
};

}  // namespace

// The verifier's own enumeration of what must be ordered (docs/events.md, "Dependencies").
std::vector<Dep> CollectDeps(const Plan& plan, const SyncView& view, const SyncView* logical,
                             const NodeTypes& types, const std::vector<bool>& dynamic_paths) {
  const Model& m = plan.model;
  std::vector<Dep> deps;
  auto add = [&](int32_t from, int32_t to, const char* why) {
    if (view.stream(from) < 0 || view.stream(to) < 0 || view.stream(from) == view.stream(to))
      return;
    deps.push_back({from, to, why});
  };
  const OwnerControlInputs owner_controls(m);
  StreamSources sources(m, view, dynamic_paths, owner_controls);
  // Per graph: what its owners' control inputs stand for (a dependency's
  // name in messages: "owner-control" rather than "subgraph-input").
  std::map<int32_t, std::set<NodeId>> owner_out_of;
  auto owner_out = [&](GraphId g) -> const std::set<NodeId>* {
    if (owner_controls.Of(g).empty()) return nullptr;
    auto [it, fresh] = owner_out_of.try_emplace(g.value);
    if (fresh) {
      for (NodeId c : owner_controls.Of(g)) {
        for (NodeId x : sources.Out(c)) it->second.insert(x);
      }
    }
    return &it->second;
  };
  // FFTS / FFTS+ subgraphs: their nodes run inside the owner's FFTS task,
  // which orders them; the owner's own dependencies are checked as usual.
  const std::vector<uint8_t> ffts = FftsRegionGraphs(m);
  auto in_ffts = [&](GraphId g) { return !ffts.empty() && ffts[g.index()] != 0; };
  // The type facts tested on both ends of every edge come from the run's
  // NodeTypes: an edge then reads no producer Node.
  constexpr uint8_t kEnterNode = NodeTypes::kEnter, kSwitchNode = NodeTypes::kStreamSwitch,
                    kSyncNode = NodeTypes::kSend | NodeTypes::kRecv,
                    kActiveNode = NodeTypes::kStreamActive;
  auto is = [&types](NodeId n, uint8_t k) { return types.is(n, k); };
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    PrefetchNode(m, i + kNodePrefetch);
    const Node& v = m.nodes()[i];
    NodeId vid(static_cast<int32_t>(i));
    if (in_ffts(v.graph)) continue;
    const bool v_active = is(vid, kActiveNode), v_sync = is(vid, kSyncNode);
    auto edge = [&](NodeId u, const char* why) {
      if (is(u, kEnterNode) && !v_active) return;  // loop entry: ordered by the loop's activation
      if (is(u, kSwitchNode)) return;              // the switch activates what follows it
      if (view.stream(view.slot(u, -1)) < 0 && view.stream(view.slot(vid, -1)) >= 0 && !v_sync) {
        // No task behind u: v reads what u's producers made (a subgraph's Data: the parent's
        // input).
        const std::set<NodeId>* controls = owner_out(v.graph);
        for (NodeId x : sources.Out(u)) {
          if ((is(x, kEnterNode) && !v_active) || is(x, kSwitchNode)) continue;
          add(view.slot(x, -1), view.slot(vid, -1),
              controls != nullptr && controls->count(x) ? "owner-control" : "subgraph-input");
        }
        return;
      }
      int32_t from = view.slot(u, -1), to = view.slot(vid, -1);
      // A node's own Send/Recv nodes sit on the stream of the slot they serve
      // (an attached stream for attached events): the edge orders that slot.
      if (v_sync) from = SlotOnStream(view, u, view.stream(to));
      if (is(u, kSyncNode)) to = SlotOnStream(view, vid, view.stream(from));
      add(from, to, why);
    };
    for (const OutputRef& in : v.inputs) edge(in.node, "data-edge");
    for (NodeId c : v.control_inputs) edge(c, "control-edge");
    for (int32_t a = 0; a < view.num_attached(vid); ++a) {
      for (int64_t idx : AttachedDependIndices(v, a)) {
        if (idx < 0 || static_cast<size_t>(idx) >= v.inputs.size()) continue;
        NodeId src = v.inputs[idx].node;
        if (IsDataOrConst(m.node(src))) continue;  // no task to wait for
        // A producer with an attached stream produces the value there (GE's attached→attached
        // case).
        add(view.slot(src, view.num_attached(src) > 0 ? 0 : -1), view.slot(vid, a),
            "attached-value");
      }
    }
  }
  // Subgraph boundaries (the successor lists only when there are subgraphs).
  std::optional<Adjacency> adj;
  if (m.num_graphs() > 1) adj.emplace(m);
  const std::vector<bool>& dynamic_graphs = dynamic_paths;
  for (size_t g = 1; g < m.num_graphs(); ++g) {
    const Graph& graph = m.graphs()[g];
    if (!graph.parent_node.valid() || in_ffts(GraphId(static_cast<int32_t>(g)))) continue;
    const Node& p = m.node(graph.parent_node);
    // Dynamic path (GE's dynamic executor): the parent's inputs reach the
    // subgraph through its Data nodes (`_parent_node_index`), its outputs
    // leave through the NetOutput; a subgraph node that reads no parent input
    // is not ordered after the parent's inputs.
    const bool dynamic =
        DynamicSubgraphBoundary(m, dynamic_graphs, GraphId(static_cast<int32_t>(g)));
    // The parent's own Send/Recv nodes (control edges Recv→parent,
    // parent→Send) are not boundary dependencies: GE inserts the subgraph
    // events before they exist, and the events they carry are checked on
    // their own.
    std::vector<NodeId> parent_in;
    for (const OutputRef& in : p.inputs) parent_in.push_back(in.node);
    for (NodeId c : p.control_inputs) {
      if (!IsSyncNode(m.node(c))) parent_in.push_back(c);
    }
    EntrySources entry_from(view, parent_in);
    NodeId end;
    for (NodeId id : graph.nodes) {
      const Node& n = m.node(id);
      if (CarriesOnlyOrder(n)) continue;  // reads nothing of the parent
      const bool root =
          n.inputs.empty() && std::all_of(n.control_inputs.begin(), n.control_inputs.end(),
                                          [&](NodeId c) { return IsSyncNode(m.node(c)); });
      const int32_t to = view.slot(id, -1);
      if (root && (!dynamic || HasAttr(n.attrs, "_parent_node_index")) && view.stream(to) >= 0) {
        for (int32_t from : entry_from.For(view.stream(to))) add(from, to, "subgraph-entry");
      }
      // A source with a stream waits for its owners' control inputs itself
      // (a source without one passes them on: StreamSources).
      if (owner_controls.any() && view.stream(to) >= 0 && IsGraphSource(m, n)) {
        for (NodeId c : owner_controls.Of(GraphId(static_cast<int32_t>(g)))) {
          for (NodeId x : sources.Out(c)) {
            if ((is(x, kEnterNode) && !is(id, kActiveNode)) || is(x, kSwitchNode)) continue;
            add(view.slot(x, -1), to, "owner-control");
          }
        }
      }
      if (!dynamic && !end.valid() && GetBoolAttr(n.attrs, "_subgraph_end_node").value_or(false))
        end = id;
    }
    if (!end.valid()) {
      for (NodeId id : graph.nodes) {
        if (m.node(id).type == "NetOutput") {
          end = id;
          break;
        }
      }
    }
    if (end.valid()) {
      for (size_t k = adj->begin(graph.parent_node); k < adj->end(graph.parent_node); ++k) {
        const NodeId y = adj->succ[k];
        if (IsSyncNode(m.node(y))) continue;
        add(view.slot(end, -1), view.slot(y, -1), "subgraph-end");
        // An attached task reading the parent's output waits for it too (the
        // owner's slot runs before its subgraphs).
        for (int32_t a : AttachedReadersOf(m.node(y), graph.parent_node)) {
          if (a < view.num_attached(y)) add(view.slot(end, -1), view.slot(y, a), "subgraph-end");
        }
      }
    }
  }
  // Attached streams end before their graph's NetOutput (GE CoverAllStreamByNetoutput).
  std::map<int64_t, int32_t> last_user;  // logical attached id → last slot
  for (NodeId id : view.order()) {
    if (view.num_attached(id) == 0) continue;  // (the view counts each node's attached ids)
    const Node& n = m.node(id);
    for (size_t a = 0; a < n.attached_stream_ids.size(); ++a) {
      last_user[n.attached_stream_ids[a]] = view.slot(id, static_cast<int32_t>(a));
    }
  }
  std::map<int32_t, std::vector<NodeId>> net_outputs;  // by graph, in its node order
  for (const auto& [att, slot] : last_user) {
    NodeId id = view.node_of(slot);
    const GraphId g = m.node(id).graph;
    auto [outs, fresh] = net_outputs.try_emplace(g.value);
    if (fresh) {
      for (NodeId o : m.graph(g).nodes) {
        if (m.node(o).type == "NetOutput") outs->second.push_back(o);
      }
    }
    for (NodeId o : outs->second) {
      if (view.seq(o) > view.seq(id)) add(slot, view.slot(o, -1), "attached-end");
    }
  }
  // Logical stream order survives the split — the order of its computing
  // slots: a Send only records and a Recv only waits (what they order is
  // checked through their events), so after a split event that others imply
  // is gone, the old piece's last Sends need not precede the new piece.
  if (logical != nullptr) {
    for (int64_t s = 0; s < logical->num_streams(); ++s) {
      int32_t prev = -1;
      for (int32_t slot : logical->stream_slots(s)) {
        if (is(logical->node_of(slot), kSyncNode)) continue;
        if (prev >= 0) add(prev, slot, "split-order");
        prev = slot;
      }
    }
  }
  return deps;
}

}  // namespace npuplan::verify
