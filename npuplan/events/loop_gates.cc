#include "npuplan/events/loop_gates.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "npuplan/events/ge_order.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/loop_order.h"
#include "npuplan/support/str_util.h"

namespace npuplan::events {
namespace {

using Side = LoopGateSide;

// Per side (in LoopGateSide order): the `loop_gate` attribute and the name infix.
struct SideText {
  std::string_view attr, infix;
};
constexpr SideText kSideText[] = {{"entry", "_LoopEntry_"},
                                  {"exit", "_LoopExit_"},
                                  {"tail", "_LoopTail_"},
                                  {"head", "_LoopHead_"}};
const SideText& TextOf(Side side) { return kSideText[static_cast<size_t>(side)]; }

}  // namespace

NodeId LoopGateNodes::For(NodeId loop, Side side, NodeId end, GraphId run) {
  const int64_t stream = plan_.physical_stream[end.index()];
  const bool in_run = side == Side::kTail || side == Side::kHead;
  const auto key =
      std::make_tuple(loop.value, static_cast<int>(side), stream, in_run ? run.value : -1);
  if (auto it = gates_.find(key); it != gates_.end()) return it->second;
  Model& m = plan_.model;
  // A branch's gates say so in their names.
  const std::string_view infix = !IsBranchNode(m.node(loop)) ? TextOf(side).infix
                                 : side == Side::kEntry      ? "_BranchEntry_"
                                 : side == Side::kExit       ? "_BranchExit_"
                                 : side == Side::kHead       ? "_BranchHead_"
                                                             : "_BranchTail_";
  const std::string stem = StrCat(m.node(loop).name, infix, stream);
  std::string name = stem;
  for (int k = 1; m.FindNode(name).valid(); ++k) name = StrCat(stem, "_", k);
  Node gate;
  gate.name = std::move(name);
  gate.type = std::string(kLoopGateType);
  gate.engine = "DNN_VM_RTS";
  gate.stream_id = m.node(end).stream_id;
  gate.attrs["loop_gate"] = std::string(TextOf(side).attr);
  const GraphId graph = in_run ? run : m.node(loop).graph;
  const NodeId id = m.AddNode(graph, std::move(gate));
  m.graph(graph).nodes.pop_back();  // placed by Place()
  plan_.EnsureNodeVectors();
  plan_.physical_stream[id.index()] = stream;
  plan_.tasks[id.index()] = 0;
  gates_.emplace(key, id);
  if (in_run) (side == Side::kTail ? tails_ : heads_)[graph.value].push_back(id);
  return id;
}

void LoopGateNodes::Place() {
  if (gates_.empty()) return;
  Model& m = plan_.model;
  // Per loop owner: its entry and exit gates, each side by stream.
  std::map<int32_t, std::pair<std::vector<NodeId>, std::vector<NodeId>>> by_loop;
  std::set<int32_t> graphs;
  for (const auto& [key, id] : gates_) {
    const auto side = static_cast<Side>(std::get<1>(key));
    if (side == Side::kEntry || side == Side::kExit) {
      auto& [entries, exits] = by_loop[std::get<0>(key)];
      (side == Side::kEntry ? entries : exits).push_back(id);
    }
    graphs.insert(m.node(id).graph.value);
  }
  for (int32_t g : graphs) {
    std::vector<NodeId>& nodes = m.graph(GraphId(g)).nodes;
    std::vector<NodeId> placed;
    placed.reserve(nodes.size() + gates_.size());
    if (auto it = heads_.find(g); it != heads_.end())
      placed.insert(placed.end(), it->second.begin(), it->second.end());
    for (NodeId id : nodes) {
      const auto it = by_loop.find(id.value);
      if (it == by_loop.end()) {
        placed.push_back(id);
        continue;
      }
      placed.insert(placed.end(), it->second.first.begin(), it->second.first.end());
      placed.push_back(id);
      placed.insert(placed.end(), it->second.second.begin(), it->second.second.end());
    }
    if (auto it = tails_.find(g); it != tails_.end())
      placed.insert(placed.end(), it->second.begin(), it->second.end());
    nodes = std::move(placed);
  }
  gates_.clear();
  tails_.clear();
  heads_.clear();
  RenumberTopoIds(m);
}

namespace {

// The loops an event leaves on its way (invalid: none), and the node on
// whose stream each gate goes: the end itself, or for an end on an attached
// stream the loop's hub (its head or tail gate).
struct LoopMove {
  NodeId into;    // the outermost loop around the receiver, not the sender
  NodeId out_of;  // the outermost loop around the sender, not the receiver
  NodeId into_stream_of, out_stream_of;
};

// The physical stream of attached slot `a` of `n` (as the views read it).
int64_t AttachedPhysical(const Plan& plan, NodeId n, int32_t a) {
  auto phys = plan.streams.attached_physical.find(static_cast<int64_t>(n.index()));
  const auto& ids = plan.model.node(n).attached_stream_ids;
  if (phys != plan.streams.attached_physical.end() && static_cast<size_t>(a) < phys->second.size())
    return phys->second[a];
  return static_cast<size_t>(a) < ids.size() ? ids[a] : -1;
}

// Per loop owner, the hub's gates of its loop-order barrier (loop_order.h):
// the tail gate the last tasks' events wait at, and the head gate with the
// attached streams its events reach. Read from the events, before the
// loop-boundary moves.
struct HubGates {
  NodeId head, tail;
  std::set<int64_t> headed;  // physical attached streams the head gate's events enter
};
std::map<int32_t, HubGates> HubGatesOf(const Plan& plan) {
  const Model& m = plan.model;
  std::map<int32_t, HubGates> out;
  auto loop_of = [&](NodeId gate) { return m.graph(m.node(gate).graph).parent_node.value; };
  for (const SyncEvent& e : plan.events.events) {
    if (e.reason != SyncReason::kLoopNext ||
        !IsLoopGate(m.node(e.send)) == !IsLoopGate(m.node(e.recv))) {
      continue;  // the hub's gates: a gate at exactly one end
    }
    if (IsLoopGate(m.node(e.recv))) {
      out[loop_of(e.recv)].tail = e.recv;
      continue;
    }
    if (GetStringAttr(m.node(e.send).attrs, "loop_gate") != "head" || e.recv_attached < 0) continue;
    HubGates& hub = out[loop_of(e.send)];
    hub.head = e.send;
    hub.headed.insert(AttachedPhysical(plan, e.recv, e.recv_attached));
  }
  return out;
}

// The subgraph of `loop` that holds `n` (its run), invalid when none.
GraphId RunGraphOf(const Model& m, NodeId n, NodeId loop) {
  GraphId g = m.node(n).graph;
  for (size_t steps = 0; g.valid() && steps <= m.num_graphs(); ++steps) {
    const NodeId owner = m.graph(g).parent_node;
    if (!owner.valid()) return GraphId();
    if (owner == loop) return g;
    g = m.node(owner).graph;
  }
  return GraphId();
}

// Entries made unnecessary by the loop's own order: an event into the second
// run of a loop (a While's body) from a sender that also enters the first run
// at the gate of a stream with a task at that run's top level. That gate ⇒
// (its stream's queue) the first run's last task there ⇒ (a loop-fork event,
// or the queue) the second run's first task on every stream. Per event, the
// index of the event whose gate implies it; -1 when none. Sketch:
//   x → gate(s4) ⇒ c_less (cond, s4) → loop-fork → b_relu (body, s5)
// makes x → gate(s5) for b_relu redundant. (The device runs the cond once
// more after the last body, so exits get no such treatment.)
std::vector<int32_t> ImpliedEntries(const Plan& plan, const std::vector<OrderedLoop>& ordered,
                                    const std::vector<LoopMove>& moves) {
  const auto& events = plan.events.events;
  std::vector<int32_t> out(events.size(), -1);
  std::map<int32_t, const OrderedLoop*> loops;
  for (const OrderedLoop& l : ordered) loops.emplace(l.owner.value, &l);
  if (loops.empty()) return out;
  const Model& m = plan.model;
  // Per event, its run index in the loop it enters (-1: none or not ordered).
  std::vector<int32_t> run(events.size(), -1);
  // The sender as the gated event will have it: (sending node or -1 for an
  // exit gate, its attached index or the gate's stream, the exit gate's loop,
  // the loop entered).
  using Sender = std::tuple<int32_t, int64_t, int32_t, int32_t>;
  auto sender = [&](size_t i) {
    const SyncEvent& e = events[i];
    if (moves[i].out_of.valid()) {
      return Sender{-1, plan.physical_stream[moves[i].out_stream_of.index()], moves[i].out_of.value,
                    moves[i].into.value};
    }
    return Sender{e.send.value, e.send_attached, -1, moves[i].into.value};
  };
  // Sender → an event entering run 0 at a top-level stream, and that stream.
  std::map<Sender, std::pair<int32_t, int64_t>> first_run_entry;
  for (size_t i = 0; i < events.size(); ++i) {
    const NodeId loop = moves[i].into;
    if (!loop.valid() || events[i].recv_attached >= 0) continue;  // an attached end: at the hub
    auto it = loops.find(loop.value);
    if (it == loops.end()) continue;
    const OrderedLoop& l = *it->second;
    const GraphId g = RunGraphOf(m, events[i].recv, loop);
    for (size_t r = 0; r < l.runs.size(); ++r) {
      if (l.runs[r].graph == g) run[i] = static_cast<int32_t>(r);
    }
    if (run[i] != 0) continue;
    const int64_t s = plan.physical_stream[events[i].recv.index()];
    const bool top_level =
        std::any_of(l.runs[0].ends.begin(), l.runs[0].ends.end(), [&](const LoopRegionEnds& end) {
          return end.region == static_cast<int32_t>(g.index()) && end.stream == s;
        });
    if (top_level) first_run_entry.try_emplace(sender(i), static_cast<int32_t>(i), s);
  }
  for (size_t i = 0; i < events.size(); ++i) {
    if (run[i] != 1) continue;
    auto it = first_run_entry.find(sender(i));
    if (it == first_run_entry.end()) continue;
    if (plan.physical_stream[events[i].recv.index()] == it->second.second) continue;  // one gate
    out[i] = it->second.first;
  }
  return out;
}

}  // namespace

BranchGate BranchGateVia(const Model& m, const StaticLoopNesting& nesting,
                         const std::function<const ActivationInfo&()>& activation,
                         std::span<const int64_t> stream, NodeId end, NodeId other,
                         int32_t attached) {
  if (!end.valid() || !other.valid() || end.index() >= m.num_nodes() ||
      other.index() >= m.num_nodes() || end.index() >= stream.size() || stream[end.index()] < 0) {
    return {};
  }
  const NodeId owner = nesting.OutermostLoopLeft(end, other);
  if (!owner.valid() || !IsBranchNode(m.node(owner))) return {};
  const GraphId branch = RunGraphOf(m, end, owner);
  if (!branch.valid()) return {};
  if (attached >= 0) return {end, owner, branch};
  const ActivationInfo& act = activation();
  const auto it = act.activators_of_stream.find(stream[end.index()]);
  if (it == act.activators_of_stream.end()) return {};
  NodeId in_branch;
  for (NodeId a : it->second) {
    const NodeId around = nesting.OutermostLoopLeft(a, owner);
    if (!around.valid() || !IsBranchNode(m.node(around))) return {};  // active anyway
    if (!in_branch.valid() && RunGraphOf(m, a, owner) == branch && a.index() < stream.size() &&
        stream[a.index()] >= 0 && stream[a.index()] != stream[end.index()]) {
      in_branch = a;
    }
  }
  return {in_branch, owner, branch};
}

namespace {

// An event into or out of an attached slot inside a static branch: no gate
// sits on an attached stream, and a branch has no hub. A gate in the branch
// on the node's main stream takes the attached end's place across the
// boundary: a head gate, first in the branch, records for an attached wait;
// a tail gate, last in the branch, waits for an attached record. The rest of
// the event is then a main-stream end, gated at the If's entry or exit gate
// on that stream like any other, whose queue orders it with the branch gate:
//   x → n[a] (n in a branch)   becomes   x → n (→ entry gate)  and  head gate → n[a]
//   n[a] → y                   becomes   n[a] → tail gate      and  n (→ exit gate) → y
// The attached task then waits for the head gate's stream (not for its own
// main task), and y for that stream's queue after the branch.
// The same for an end on a stream the branch activates (a
// `subgraph_first_active` node A of the branch lists it in its
// `active_stream_list`, and nothing outside a branch does): on a device that
// stream runs only when the branch does, so a gate on it outside the branch
// would never run when the branch is not taken. Its gates go on A's stream,
// and A stands for n:
//   x → n (n on such a stream)  becomes   x → A (→ entry gate)  and  head gate → n
//   n → y                       becomes   n → tail gate         and  A (→ exit gate) → y
// Returns how many ends were split.
size_t SplitAttachedBranchEnds(std::string_view pass, Plan& plan, PassContext& ctx,
                               const StaticLoopNesting& nesting, LoopGateNodes& gates) {
  const Model& m = plan.model;  // gates.For adds nodes: read it, never hold a Node
  auto& events = plan.events.events;
  size_t split = 0;
  // Who activates which physical stream (the lists stream-activation just
  // wrote; the verifier reads the same definition), read on first need.
  std::optional<ActivationInfo> activation;
  const std::function<const ActivationInfo&()> activation_of = [&]() -> const ActivationInfo& {
    if (!activation)
      activation = ComputeActivation(m, m.ExecutionOrder(), &plan.streams.split_to_logical);
    return *activation;
  };
  // Receivers first, then senders: an event may be split at both ends.
  for (const bool at_recv : {true, false}) {
    std::vector<SyncEvent> added;
    for (size_t i = 0; i < events.size(); ++i) {
      SyncEvent& e = events[i];
      const NodeId end = at_recv ? e.recv : e.send, other = at_recv ? e.send : e.recv;
      const int32_t attached = at_recv ? e.recv_attached : e.send_attached;
      if (e.reason == SyncReason::kLoop) continue;
      // A fresh view each time: a gate added below grows the node vectors.
      const auto [via, owner, branch] =
          BranchGateVia(m, nesting, activation_of, plan.physical_stream, end, other, attached);
      if (!via.valid()) continue;
      const NodeId gate = gates.For(owner, at_recv ? Side::kHead : Side::kTail, via, branch);
      ctx.log.Record(pass, "LoopGate", "", Field("loop", m.node(owner).name),
                     Field("side", at_recv ? "head" : "tail"), Field("gate", m.node(gate).name),
                     Field("from", m.node(e.send).name), Field("to", m.node(e.recv).name));
      SyncEvent across = e;  // the end on `via`'s stream, across the boundary
      if (at_recv) {
        across.recv = via;
        across.recv_attached = -1;
        e.send = gate;
        e.send_attached = -1;
      } else {
        across.send = via;
        across.send_attached = -1;
        e.recv = gate;
        e.recv_attached = -1;
      }
      added.push_back(across);
    }
    for (SyncEvent& f : added) {
      f.id = static_cast<int32_t>(NextId(plan.events, f.kind));
      events.push_back(f);
    }
    split += added.size();
  }
  return split;
}

}  // namespace

bool AddLoopGates(std::string_view pass, Plan& plan, PassContext& ctx,
                  const std::vector<OrderedLoop>& loops) {
  const StaticLoopNesting nesting(plan, NestingScopes::kLoopsAndBranches);
  if (nesting.empty()) return false;
  LoopGateNodes gates(plan);
  const bool split = SplitAttachedBranchEnds(pass, plan, ctx, nesting, gates) > 0;
  Model& m = plan.model;
  auto& events = plan.events.events;
  // Where each event's ends go, decided before the model changes.
  std::vector<LoopMove> moves(events.size());
  std::map<int32_t, HubGates> hubs;  // read on the first attached end
  bool any = false, hubs_read = false;
  auto hub_of = [&](NodeId loop) -> const HubGates* {
    if (!hubs_read) hubs = HubGatesOf(plan);
    hubs_read = true;
    auto it = hubs.find(loop.value);
    return it != hubs.end() ? &it->second : nullptr;
  };
  for (size_t i = 0; i < events.size(); ++i) {
    const SyncEvent& e = events[i];
    if (e.reason == SyncReason::kLoop || !e.send.valid() || !e.recv.valid() ||
        e.send.index() >= m.num_nodes() || e.recv.index() >= m.num_nodes()) {
      continue;
    }
    if (const NodeId into = nesting.OutermostLoopLeft(e.recv, e.send); into.valid()) {
      if (e.recv_attached < 0 && plan.physical_stream[e.recv.index()] >= 0) {
        moves[i] = {into, NodeId(), e.recv, NodeId()};
      } else if (const HubGates* hub = hub_of(into);
                 e.recv_attached >= 0 && hub != nullptr && hub->head.valid() &&
                 hub->headed.count(AttachedPhysical(plan, e.recv, e.recv_attached))) {
        // Into an attached stream: at the hub's entry gate, which its head
        // gate (and the head gate's event into that stream) follows.
        moves[i] = {into, NodeId(), hub->head, NodeId()};
      }
    }
    if (const NodeId out_of = nesting.OutermostLoopLeft(e.send, e.recv); out_of.valid()) {
      if (e.send_attached < 0 && plan.physical_stream[e.send.index()] >= 0) {
        moves[i].out_of = out_of;
        moves[i].out_stream_of = e.send;
      } else if (const HubGates* hub = hub_of(out_of);
                 e.send_attached >= 0 && hub != nullptr && hub->tail.valid()) {
        // Out of an attached stream: at the hub's exit gate, after its tail
        // gate, which every stream's last task of the loop reaches.
        moves[i].out_of = out_of;
        moves[i].out_stream_of = hub->tail;
      }
    }
    any = any || moves[i].into.valid() || moves[i].out_of.valid();
  }
  if (!any && !split) return false;
  const std::vector<int32_t> implied_by = ImpliedEntries(plan, loops, moves);

  std::vector<uint8_t> moved(events.size(), 0), drop(events.size(), 0);
  for (size_t i = 0; i < events.size(); ++i) {
    SyncEvent& e = events[i];
    const NodeId from = e.send, to = e.recv;
    if (const NodeId into = moves[i].into; into.valid()) {
      const bool implied = implied_by[i] >= 0;
      const NodeId gate = implied ? gates.For(into, Side::kEntry, events[implied_by[i]].recv)
                                  : gates.For(into, Side::kEntry, moves[i].into_stream_of);
      ctx.log.Record(pass, "LoopGate", "", Field("loop", m.node(into).name),
                     Field("side", implied ? "implied" : "entry"), Field("gate", m.node(gate).name),
                     Field("from", m.node(from).name), Field("to", m.node(to).name));
      if (implied) {
        drop[i] = 1;
        continue;
      }
      e.recv = gate;
      e.recv_attached = -1;
      moved[i] = 1;
    }
    if (const NodeId out_of = moves[i].out_of; out_of.valid()) {
      e.send = gates.For(out_of, Side::kExit, moves[i].out_stream_of);
      e.send_attached = -1;
      ctx.log.Record(pass, "LoopGate", "", Field("loop", m.node(out_of).name),
                     Field("side", "exit"), Field("gate", m.node(e.send).name),
                     Field("from", m.node(from).name), Field("to", m.node(to).name));
      moved[i] = 1;
    }
  }
  gates.Place();  // every move made a gate
  // A moved event that now joins the same two slots as another is one with it
  // (several values into one loop from one producer): the first is kept. An
  // event of the next pass (GE's FpBp loop event) stays apart.
  using Key = std::tuple<int32_t, int32_t, int32_t, int32_t, SyncKind, bool>;
  auto key = [](const SyncEvent& e) {
    return Key{e.send.value,    e.send_attached, e.recv.value,
               e.recv_attached, e.kind,          OrdersNextIteration(e)};
  };
  std::set<Key> seen;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!moved[i] && !drop[i]) seen.insert(key(events[i]));
  }
  size_t kept = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (drop[i] || (moved[i] && !seen.insert(key(events[i])).second)) continue;
    events[kept++] = events[i];
  }
  const bool merged = kept != events.size();
  events.resize(kept);
  if (merged || split) {
    CompactIds(plan.events);
  } else {
    RecountIds(plan.events);
  }
  return true;
}

}  // namespace npuplan::events
