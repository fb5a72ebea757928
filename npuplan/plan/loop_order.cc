#include "npuplan/plan/loop_order.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/ffts_regions.h"
#include "npuplan/plan/execution_semantics.h"

namespace npuplan {
namespace {

bool Encloses(const Node& owner) { return IsBranchNode(owner) || IsLoopNode(owner); }

// The subgraphs `owner` enters (it is their parent), in subgraph order, once each.
std::vector<GraphId> OwnedGraphs(const Model& m, NodeId owner) {
  std::vector<GraphId> out;
  for (GraphId g : m.node(owner).subgraphs) {
    if (!g.valid() || g.index() >= m.num_graphs() || g == kRootGraph) continue;
    if (m.graph(g).parent_node != owner || std::find(out.begin(), out.end(), g) != out.end())
      continue;
    out.push_back(g);
  }
  return out;
}

// The run graph's slots: rank range and first/last slot per (region, stream).
// FFTS region graphs are skipped: their owner's slot stands for them.
LoopRun CollectRun(const Model& m, const SyncView& view, const std::vector<uint8_t>& ffts,
                   GraphId run) {
  LoopRun r;
  r.graph = run;
  std::map<std::pair<int32_t, int64_t>, std::pair<int32_t, int32_t>> ends;  // → (first, last) slot
  std::vector<std::pair<GraphId, int32_t>> stack = {{run, static_cast<int32_t>(run.index())}};
  std::set<int32_t> seen = {
      static_cast<int32_t>(run.index())};  // a malformed model may list a graph twice
  while (!stack.empty()) {
    const auto [g, region] = stack.back();
    stack.pop_back();
    for (NodeId id : m.graph(g).nodes) {
      // Send/Recv nodes carry the events between tasks, and tail gates the
      // barrier's: inside the rank range, but no task of a region.
      const bool sync = view.has_flag(id, SyncView::kSync) || IsLoopGate(m.node(id));
      const int32_t attached = view.num_attached(id);
      for (int32_t a = -1; a < attached; ++a) {
        const int32_t slot = view.slot(id, a);
        const int64_t s = view.stream(slot);
        const int32_t rank = view.rank(slot);
        if (s < 0 || rank < 0) continue;
        r.first_rank = r.first_rank < 0 ? rank : std::min(r.first_rank, rank);
        r.last_rank = std::max(r.last_rank, rank);
        if (sync) continue;
        auto [it, fresh] = ends.try_emplace({region, s}, slot, slot);
        if (!fresh) {
          if (rank < view.rank(it->second.first)) it->second.first = slot;
          if (rank > view.rank(it->second.second)) it->second.second = slot;
        }
      }
      const Node& node = m.node(id);
      for (GraphId sg : OwnedGraphs(m, id)) {
        if ((!ffts.empty() && ffts[sg.index()]) ||
            !seen.insert(static_cast<int32_t>(sg.index())).second)
          continue;
        stack.emplace_back(sg, Encloses(node) ? static_cast<int32_t>(sg.index()) : region);
      }
    }
  }
  for (const auto& [key, slots] : ends)
    r.ends.push_back({key.first, key.second, slots.first, slots.second});
  return r;
}

// The loops LoopsToOrder and the loop gates consider: a loop owner whose
// subgraphs all run on the device as one graph each (not on the dynamic
// path, not FFTS, not under a thread scope), as sync-event-insertion treats
// them.
class StaticLoopFilter {
 public:
  explicit StaticLoopFilter(const Plan& plan)
      : m_(plan.model), dynamic_(DynamicPathGraphs(plan)), ffts_(FftsRegionGraphs(m_)) {}
  // A static loop owner; with `branches`, a static If/Case owner too.
  bool operator()(NodeId owner, bool branches = false) const {
    const Node& node = m_.node(owner);
    if (node.subgraphs.empty() || !(IsLoopNode(node) || (branches && IsBranchNode(node))) ||
        IsFftsOwner(node) || InFfts(node.graph) || HasAttr(node.attrs, "_thread_scope_id")) {
      return false;
    }
    const std::vector<GraphId> graphs = OwnedGraphs(m_, owner);
    return !graphs.empty() && std::none_of(graphs.begin(), graphs.end(), [&](GraphId g) {
      return (g.index() < dynamic_.size() && dynamic_[g.index()]) || InFfts(g);
    });
  }
  const std::vector<uint8_t>& ffts() const { return ffts_; }

 private:
  bool InFfts(GraphId g) const { return !ffts_.empty() && ffts_[g.index()]; }
  const Model& m_;
  const std::vector<bool> dynamic_;
  const std::vector<uint8_t> ffts_;
};

}  // namespace

bool HasBranchSubgraph(const Model& m) {
  for (size_t g = 1; g < m.num_graphs(); ++g) {
    const NodeId owner = m.graph(GraphId(static_cast<int32_t>(g))).parent_node;
    if (owner.valid() && owner.index() < m.num_nodes() && IsBranchNode(m.node(owner))) return true;
  }
  return false;
}

bool HasLoopSubgraph(const Model& m) {
  for (size_t g = 1; g < m.num_graphs(); ++g) {
    const NodeId owner = m.graph(GraphId(static_cast<int32_t>(g))).parent_node;
    if (owner.valid() && owner.index() < m.num_nodes() && IsLoopNode(m.node(owner))) return true;
  }
  return false;
}

namespace {

// Per GraphId, the innermost (or outermost) loop owner around the graph.
std::vector<int32_t> LoopOwners(const Model& m, bool outermost) {
  std::vector<int32_t> out;
  if (!HasLoopSubgraph(m)) return out;
  out.assign(m.num_graphs(), -1);
  for (GraphId g : m.GraphsPreOrder()) {  // a graph after its parent's graph
    const NodeId owner = m.graph(g).parent_node;
    if (!owner.valid() || owner.index() >= m.num_nodes()) continue;
    const Node& p = m.node(owner);
    const int32_t around = out[p.graph.index()];
    out[g.index()] = (outermost && around >= 0) || !IsLoopNode(p) ? around : owner.value;
  }
  return out;
}

}  // namespace

std::vector<int32_t> InnermostLoopOwners(const Model& m) { return LoopOwners(m, false); }

std::vector<int32_t> OutermostLoopOwners(const Model& m) { return LoopOwners(m, true); }

bool HasLoopOrderEvents(const Plan& plan) {
  return std::any_of(plan.events.events.begin(), plan.events.events.end(), [](const SyncEvent& e) {
    return e.reason == SyncReason::kLoopFork || e.reason == SyncReason::kLoopNext;
  });
}

namespace {

// The loops `keep` selects (in execution order of their owners) whose runs
// use more than one stream.
template <typename Keep>
std::vector<OrderedLoop> CollectLoops(const Model& m, const SyncView& view,
                                      const std::vector<uint8_t>& ffts, const Keep& keep) {
  std::vector<OrderedLoop> out;
  for (NodeId owner : view.order()) {
    if (!keep(owner)) continue;
    const std::vector<GraphId> graphs = OwnedGraphs(m, owner);
    OrderedLoop loop{owner, {}};
    std::set<int64_t> streams;
    for (GraphId g : graphs) {
      LoopRun run = CollectRun(m, view, ffts, g);
      if (run.ends.empty()) continue;  // no task (at most Send/Recv nodes): orders nothing
      for (const LoopRegionEnds& e : run.ends) streams.insert(e.stream);
      loop.runs.push_back(std::move(run));
    }
    // The runs in execution order (subgraph order, as ExecutionOrder enters them).
    std::sort(loop.runs.begin(), loop.runs.end(),
              [](const LoopRun& a, const LoopRun& b) { return a.first_rank < b.first_rank; });
    if (streams.size() > 1) out.push_back(std::move(loop));
  }
  return out;
}

}  // namespace

std::vector<OrderedLoop> LoopsToOrder(const Plan& plan, const SyncView& view) {
  const Model& m = plan.model;
  if (!HasLoopSubgraph(m)) return {};
  const StaticLoopFilter is_static(plan);
  return CollectLoops(m, view, is_static.ffts(), is_static);
}

bool RunsOnHost(const Plan& plan, const std::vector<bool>& dynamic_graphs, NodeId owner) {
  const Node& node = plan.model.node(owner);
  return IsLoopNode(node) && !node.subgraphs.empty() &&
         node.graph.index() < dynamic_graphs.size() && dynamic_graphs[node.graph.index()];
}

std::vector<OrderedLoop> HostRunLoops(const Plan& plan, const SyncView& view) {
  const Model& m = plan.model;
  if (!HasLoopSubgraph(m) || !IsDynamicStreamMode(plan.streams.mode)) return {};
  const std::vector<bool> dynamic = DynamicPathGraphs(plan);
  return CollectLoops(m, view, FftsRegionGraphs(m),
                      [&](NodeId owner) { return RunsOnHost(plan, dynamic, owner); });
}

namespace {

SyncEvent LoopEvent(const SyncView& view, int32_t from, int32_t to, SyncReason reason) {
  SyncEvent e;
  e.kind = SyncKind::kEvent;
  e.send = view.node_of(from);
  e.send_attached = view.attached_of(from);
  e.recv = view.node_of(to);
  e.recv_attached = view.attached_of(to);
  e.reason = reason;
  return e;
}

// The barrier into the next iteration (the header's "Loop order").
void AddBarrier(const OrderedLoop& loop, const SyncView& view,
                std::set<std::pair<int32_t, int32_t>>& seen, std::vector<LoopOrderEvent>& out) {
  const LoopRun& last = loop.runs.back();
  const LoopRun& first = loop.runs.front();
  auto main_slot = [&](int32_t slot) { return view.attached_of(slot) < 0; };
  // Per stream of the last run, its latest main slot there (the hub's gate
  // stands in for it until it exists); the hub: the stream whose last task
  // ends the run, ties to the lower stream.
  std::map<int64_t, int32_t> tail_slot;
  int64_t hub = -1;
  for (const LoopRegionEnds& end : last.ends) {
    if (!main_slot(end.last)) continue;
    auto [it, fresh] = tail_slot.try_emplace(end.stream, end.last);
    if (!fresh && view.rank(end.last) > view.rank(it->second)) it->second = end.last;
    if (hub < 0 || view.rank(it->second) > view.rank(tail_slot[hub]) ||
        (view.rank(it->second) == view.rank(tail_slot[hub]) && end.stream < hub)) {
      hub = end.stream;
    }
  }
  // Per stream of the first run, its first slot there (for a gated stream, a
  // stand-in for its gate).
  std::map<int64_t, int32_t> head_slot;
  std::set<int64_t> gated;  // streams with a main slot there: they can hold a gate
  for (const LoopRegionEnds& end : first.ends) {
    auto [it, fresh] = head_slot.try_emplace(end.stream, end.first);
    if (!fresh && view.rank(end.first) < view.rank(it->second)) it->second = end.first;
    if (main_slot(end.first)) gated.insert(end.stream);
  }
  // One per (region, stream) end and one per other stream: never two alike.
  auto add = [&](int32_t from, int32_t to, bool send_tail, bool recv_tail, bool send_head = false) {
    out.push_back({LoopEvent(view, from, to, SyncReason::kLoopNext), loop.owner, send_tail,
                   recv_tail, last.graph, send_head, first.graph});
  };
  if (hub >= 0) {
    const int32_t hub_gate = tail_slot[hub];
    for (const LoopRegionEnds& from : last.ends) {
      if (from.stream != hub) add(from.last, hub_gate, false, true);
    }
    for (const auto& [stream, slot] : head_slot) {
      if (stream == hub || !gated.count(stream)) continue;
      // The gate's stand-in: the stream's latest main slot in the last run,
      // else its first in the first run.
      auto t = tail_slot.find(stream);
      add(hub_gate, t != tail_slot.end() ? t->second : slot, true, true);
    }
  }
  // A stream reached only through attached slots cannot hold a gate (the
  // header's "Loop order"). Into its first slot at the first run's top
  // level: from the hub's head gate (stand-in: the hub gate's). In a nested
  // region, whose tasks run a different number of times: from the earliest
  // first main slot of a gated stream before it there, not the slot's own
  // owner; without one, in a nested loop's subgraph or an If/Case branch,
  // from the head gate too (the loop gates move its wait to that loop's
  // entry; into a branch, to the branch's head gate, whose stream waits at
  // the If's entry: events/loop_gates.h). Without a hub: backward events
  // from each last task, which verifier[happens-before] refuses (a
  // wait-reset device blocks on the first).
  const int32_t top = static_cast<int32_t>(first.graph.index());
  for (const LoopRegionEnds& to : first.ends) {
    if (hub >= 0 && gated.count(to.stream)) continue;
    int32_t via = -1;
    bool at_head = false;
    if (hub >= 0 && to.region != top) {
      for (const LoopRegionEnds& p : first.ends) {
        if (p.region == to.region && p.stream != to.stream && main_slot(p.first) &&
            view.node_of(p.first) != view.node_of(to.first) &&
            view.rank(p.first) < view.rank(to.first) &&
            (via < 0 || view.rank(p.first) < view.rank(via))) {
          via = p.first;
        }
      }
    }
    if (hub >= 0 && via < 0) {
      via = tail_slot[hub];
      at_head = true;
    }
    if (via >= 0) {
      if (seen.insert({via, to.first}).second) add(via, to.first, false, false, at_head);
      continue;
    }
    for (const LoopRegionEnds& from : last.ends) {
      if (from.stream != to.stream && seen.insert({from.last, to.first}).second)
        add(from.last, to.first, false, false);
    }
  }
}

}  // namespace

std::vector<LoopOrderEvent> LoopOrderEvents(const std::vector<OrderedLoop>& loops,
                                            const SyncView& view) {
  std::vector<LoopOrderEvent> out;
  std::set<std::pair<int32_t, int32_t>> seen;
  for (const OrderedLoop& loop : loops) {
    for (size_t j = 0; j + 1 < loop.runs.size(); ++j) {
      for (const LoopRegionEnds& from : loop.runs[j].ends) {
        for (const LoopRegionEnds& to : loop.runs[j + 1].ends) {
          if (from.stream == to.stream) continue;  // the queue orders them
          if (!seen.insert({from.last, to.first}).second) continue;
          out.push_back({LoopEvent(view, from.last, to.first, SyncReason::kLoopFork), loop.owner,
                         false, false, GraphId(), false, GraphId()});
        }
      }
    }
    AddBarrier(loop, view, seen, out);
  }
  return out;
}

StaticLoopNesting::StaticLoopNesting(const Plan& plan, NestingScopes scopes) : model_(&plan.model) {
  const Model& m = plan.model;
  const bool branches = scopes == NestingScopes::kLoopsAndBranches;
  if (!HasLoopSubgraph(m) && !(branches && HasBranchSubgraph(m))) return;
  const StaticLoopFilter is_static(plan);
  innermost_.assign(m.num_graphs(), -1);
  std::map<int32_t, int32_t> loop_scope;  // loop owner → its one scope
  for (GraphId g : m.GraphsPreOrder()) {  // a graph after its parent's graph
    const NodeId owner = m.graph(g).parent_node;
    if (!owner.valid() || owner.index() >= m.num_nodes()) continue;
    const int32_t around = innermost_[m.node(owner).graph.index()];
    int32_t scope = around;
    if (is_static(owner, branches)) {
      const auto fresh = static_cast<int32_t>(owner_.size());
      // A loop's subgraphs share its scope; each branch is one of its own.
      scope = IsLoopNode(m.node(owner)) ? loop_scope.try_emplace(owner.value, fresh).first->second
                                        : fresh;
      if (scope == fresh) {
        owner_.push_back(owner);
        up_.push_back(around);
        depth_.push_back(Depth(around) + 1);
      }
    }
    innermost_[g.index()] = scope;
  }
  if (owner_.empty()) innermost_.clear();
}

int32_t StaticLoopNesting::Innermost(NodeId n) const {
  if (empty() || !n.valid() || n.index() >= model_->num_nodes()) return -1;
  const GraphId g = model_->node(n).graph;
  return g.valid() && g.index() < innermost_.size() ? innermost_[g.index()] : -1;
}

NodeId StaticLoopNesting::OutermostLoopLeft(NodeId inside, NodeId outside) const {
  int32_t x = Innermost(inside), y = Innermost(outside), below = -1;
  while (Depth(x) > Depth(y)) {
    below = x;
    x = Up(x);
  }
  while (Depth(y) > Depth(x)) y = Up(y);
  while (x != y) {  // the same depth: climb both to the scope around both
    below = x;
    x = Up(x);
    y = Up(y);
  }
  return below < 0 ? NodeId() : owner_[static_cast<size_t>(below)];
}

bool StaticLoopNesting::MayOpenAcrossLoops(NodeId pre, NodeId open) const {
  if (empty()) return false;
  const Model& m = *model_;
  // The loop and branch owners around n, false when one is not a static loop.
  auto owners = [&](NodeId n, std::vector<int32_t>& out) {
    GraphId g = m.node(n).graph;
    for (size_t steps = 0; g.valid() && steps <= m.num_graphs(); ++steps) {  // bound: no cycle
      const NodeId owner = m.graph(g).parent_node;
      if (!owner.valid()) return true;
      if (Encloses(m.node(owner))) {
        const int32_t scope = innermost_[g.index()];
        if (scope < 0 || owner_[static_cast<size_t>(scope)] != owner ||
            !IsLoopNode(m.node(owner))) {
          return false;  // a branch, or a loop that is not static
        }
        out.push_back(owner.value);
      }
      g = m.node(owner).graph;
    }
    return false;
  };
  std::vector<int32_t> around_pre, around_open;
  if (!owners(pre, around_pre) || !owners(open, around_open)) return false;
  if (around_pre.empty() && around_open.empty()) return false;  // no loop: not this rule's case
  return std::none_of(around_open.begin(), around_open.end(), [&](int32_t loop) {
    return std::find(around_pre.begin(), around_pre.end(), loop) != around_pre.end();
  });
}

StreamOpening MayOpenStreamAfter(const Enclosure& encloses, const StaticLoopNesting& loops,
                                 NodeId pre, NodeId open, bool main_stream) {
  if (encloses.MayOpenAfter(pre, open)) return StreamOpening::kYes;
  return main_stream && !encloses(pre, open) && loops.MayOpenAcrossLoops(pre, open)
             ? StreamOpening::kAcrossLoops
             : StreamOpening::kNo;
}

int32_t LoopRegionOf(const Model& m, NodeId n, GraphId run) {
  if (!n.valid() || n.index() >= m.num_nodes()) return -1;
  int32_t region = -1;
  GraphId g = m.node(n).graph;
  // Walk up to `run`; the innermost enclosing subgraph is the first met. The
  // bound stops a malformed ownership cycle.
  for (size_t steps = 0; g.valid() && g.index() < m.num_graphs() && steps <= m.num_graphs();
       ++steps) {
    if (g == run) return region < 0 ? static_cast<int32_t>(run.index()) : region;
    const NodeId owner = m.graph(g).parent_node;
    if (!owner.valid() || owner.index() >= m.num_nodes()) return -1;
    if (region < 0 && Encloses(m.node(owner))) region = static_cast<int32_t>(g.index());
    g = m.node(owner).graph;
  }
  return -1;
}

}  // namespace npuplan
