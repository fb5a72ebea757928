#include "npuplan/sim/dependencies.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/ir/ffts_regions.h"
#include "npuplan/ir/owner_control_inputs.h"
#include "npuplan/sim/plan_program.h"

namespace npuplan::sim {
namespace {

// What a Data of a loop's subgraph reads from the iteration before: the body
// output passing on loop variable `variable` — the NetOutput input k whose
// _parent_output_index is `variable`, or without that list k == variable +
// unlisted_offset — or, for ONNX Loop's condition, the body output at
// `position`.
struct CarriedInput {
  std::optional<int64_t> variable;
  int64_t unlisted_offset = 0;
  std::optional<size_t> position;

  bool PassedOnBy(size_t k, const AttrValue::IntList* list) const {
    if (position) return k == *position;
    const int64_t var = list != nullptr ? (k < list->size() ? (*list)[k] : -1)
                                        : static_cast<int64_t>(k) - unlisted_offset;
    return variable && var == *variable;
  }
};

// ONNX Loop's body inputs are (iteration number, condition, v_0 … v_{N-1}),
// its outputs (condition, v_0 … v_{N-1}, scan outputs). The ONNX importer
// leaves absent optional inputs (M, cond) out of the Loop's inputs, so a body
// Data's _parent_node_index counts the present ones; the Loop's
// _onnx_absent_inputs lists the ONNX positions left out. Returns the ONNX
// body input position of `data`; nullopt for an outer value the body
// captures (_onnx_implicit_input: the same in every iteration) and for a
// position that cannot be told.
std::optional<int64_t> OnnxLoopBodyInputPosition(const Model& m, const Node& data,
                                                 const Node& loop) {
  if (GetBoolAttr(data.attrs, "_onnx_implicit_input").value_or(false)) return std::nullopt;
  std::vector<int64_t> absent;
  if (const AttrValue* a = FindAttr(loop.attrs, "_onnx_absent_inputs")) {
    if (const auto* list = a->as<AttrValue::IntList>()) {
      for (int64_t p : *list) {
        if (p >= 0) absent.push_back(p);
      }
    }
  }
  std::sort(absent.begin(), absent.end());
  absent.erase(std::unique(absent.begin(), absent.end()), absent.end());
  if (const auto compact = GetIntAttr(data.attrs, "_parent_node_index")) {
    if (*compact < 0 || *compact >= static_cast<int64_t>(loop.inputs.size())) return std::nullopt;
    int64_t position = *compact;
    for (int64_t p : absent) {
      if (p <= position) ++position;
    }
    return position;
  }
  // A Data for an absent input: once graphs are sorted their order is not
  // the ONNX order, so it is told only when it is the one absent input (with
  // M and cond both absent the condition's dependency is missed; none is
  // invented).
  if (!GetBoolAttr(data.attrs, "_onnx_absent_parent_input").value_or(false) || absent.size() != 1) {
    return std::nullopt;
  }
  size_t absent_data = 0;
  for (NodeId x : m.graph(data.graph).nodes) {
    const Node& n = m.node(x);
    if (n.type == "Data" && GetBoolAttr(n.attrs, "_onnx_absent_parent_input").value_or(false) &&
        !GetBoolAttr(n.attrs, "_onnx_implicit_input").value_or(false)) {
      ++absent_data;
    }
  }
  return absent_data == 1 ? std::optional<int64_t>(absent[0]) : std::nullopt;
}

// The loop variable a Data of loop owner `loop`'s subgraph reads, by the
// owner's numbering:
//   GE While family  Data _parent_node_index i is variable i;
//   GE For           inputs (start, limit, delta, x_0 …), body (i, x_0 …) →
//                    (x_0 …): GE's ForPass, which turns a For into a While,
//                    maps Data 0 to the counter i, Data 3 + j and body
//                    output j to x_j (limit and delta are no body inputs);
//                    the counter reads no body output;
//   ONNX Loop        the condition reads body output 0, v_j the output with
//                    _parent_output_index j (without that list, output
//                    1 + j); the iteration number reads none.
std::optional<CarriedInput> CarriedInputOf(const Model& m, const Node& data, const Node& loop) {
  constexpr int64_t kForFirstInput = 3;  // after start, limit, delta
  const std::optional<int64_t> idx = GetIntAttr(data.attrs, "_parent_node_index");
  if (loop.type == "While" || loop.type == "_While" || loop.type == "StatelessWhile") {
    if (!idx) return std::nullopt;
    return CarriedInput{*idx, 0, std::nullopt};
  }
  if (loop.type == "For") {
    if (!idx || *idx < kForFirstInput) return std::nullopt;
    return CarriedInput{*idx - kForFirstInput, 0, std::nullopt};
  }
  if (loop.type == "Loop") {
    const std::optional<int64_t> position = OnnxLoopBodyInputPosition(m, data, loop);
    if (!position || *position == 0) return std::nullopt;
    if (*position == 1) return CarriedInput{std::nullopt, 0, size_t{0}};
    return CarriedInput{*position - 2, 1, std::nullopt};
  }
  return std::nullopt;
}

class Builder {
 public:
  Builder(const Plan& plan, const ControlFlow* cf)
      : plan_(plan),
        m_(plan.model),
        ffts_(FftsRegionGraphs(plan.model)),
        owner_controls_(plan.model),
        cf_(cf) {
    const size_t n = m_.num_nodes();
    has_task_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const NodeId id(static_cast<int32_t>(i));
      has_task_[i] = MainStreamOf(plan, id) >= 0 && !InFfts(id) && (cf == nullptr || cf->runs[i] > 0);
    }
    state_.assign(n, 0);
    sources_.resize(n);
    carried_state_.assign(n, 0);
    carried_.resize(n);
  }

  bool HasTask(NodeId v) const { return has_task_[v.index()]; }

  // Loops around both a and b (common prefix of their loop chains).
  uint8_t SharedLoops(NodeId a, NodeId b) const {
    if (cf_ == nullptr) return 0;
    const auto& x = cf_->loop_chain[m_.node(a).graph.index()];
    const auto& y = cf_->loop_chain[m_.node(b).graph.index()];
    size_t k = 0;
    while (k < x.size() && k < y.size() && x[k] == y[k]) ++k;
    return static_cast<uint8_t>(std::min<size_t>(k, 255));
  }
  // Level (1 = outermost) of loop `loop` around node v, 0 when it is not.
  size_t LoopLevel(NodeId v, NodeId loop) const {
    const auto& chain = cf_->loop_chain[m_.node(v).graph.index()];
    auto it = std::find(chain.begin(), chain.end(), loop);
    return it == chain.end() ? 0 : static_cast<size_t>(it - chain.begin()) + 1;
  }

  // A node inside an FFTS / FFTS+ subgraph: it runs inside its owner's FFTS
  // task, which orders it; it is no task of its own (looked through).
  bool InFfts(NodeId v) const { return !ffts_.empty() && ffts_[m_.node(v).graph.index()] != 0; }

  // Direct producers of v with their kind.
  std::vector<std::pair<NodeId, const char*>> Direct(NodeId v) const {
    const Node& node = m_.node(v);
    std::vector<std::pair<NodeId, const char*>> out;
    for (const OutputRef& in : node.inputs) {
      if (in.node.valid()) out.emplace_back(in.node, "data-edge");
    }
    for (NodeId c : node.control_inputs) {
      if (c.valid()) out.emplace_back(c, "control-edge");
    }
    const Graph& g = m_.graph(node.graph);
    if (node.type == "Data" && g.parent_node.valid()) {
      if (auto idx = GetIntAttr(node.attrs, "_parent_node_index")) {
        const Node& p = m_.node(g.parent_node);
        if (*idx >= 0 && static_cast<size_t>(*idx) < p.inputs.size()) {
          out.emplace_back(p.inputs[*idx].node, "subgraph-input");
        }
      }
    }
    if (owner_controls_.any() && IsGraphSource(m_, node)) {
      for (NodeId c : owner_controls_.Of(node.graph)) out.emplace_back(c, "owner-control");
    }
    return out;
  }

  // Nodes with a task that a consumer of u waits for (see header).
  const std::vector<NodeId>& Sources(NodeId u) {
    int& st = state_[u.index()];
    if (st == 2) return sources_[u.index()];
    if (st == 1) return empty_;  // ownership cycle: the verifier rejects these
    st = 1;
    std::set<NodeId> acc;
    if (has_task_[u.index()]) {
      acc.insert(u);
    } else {
      for (auto [p, kind] : Direct(u)) {
        const auto& s = Sources(p);
        acc.insert(s.begin(), s.end());
      }
    }
    for (GraphId sg : m_.node(u).subgraphs) {
      for (NodeId x : m_.graph(sg).nodes) {
        if (m_.node(x).type != "NetOutput") continue;
        const auto& s = Sources(x);
        acc.insert(s.begin(), s.end());
      }
    }
    sources_[u.index()].assign(acc.begin(), acc.end());
    st = 2;
    return sources_[u.index()];
  }

  // Loop-carried sources of u itself: u is a Data of a loop's subgraph
  // standing for a loop variable (CarriedInputOf); the producers (with a
  // task, inside the loop) of the body output that passes that variable on,
  // with the loop.
  std::vector<std::pair<NodeId, NodeId>> CarriedOwn(NodeId u) {
    std::vector<std::pair<NodeId, NodeId>> out;
    const Node& node = m_.node(u);
    if (cf_ == nullptr || node.type != "Data") return out;
    const Graph& g = m_.graph(node.graph);
    if (!g.parent_node.valid()) return out;
    const Node& loop = m_.node(g.parent_node);
    if (loop.subgraphs.empty() || !loop.subgraphs.back().valid()) return out;
    const std::optional<CarriedInput> in = CarriedInputOf(m_, node, loop);
    if (!in) return out;
    for (NodeId x : m_.graph(loop.subgraphs.back()).nodes) {
      const Node& net = m_.node(x);
      if (net.type != "NetOutput") continue;
      const AttrValue* map = FindAttr(net.attrs, "_parent_output_index");
      const auto* list = map != nullptr ? map->as<AttrValue::IntList>() : nullptr;
      for (size_t k = 0; k < net.inputs.size(); ++k) {
        if (!in->PassedOnBy(k, list) || !net.inputs[k].node.valid()) continue;
        for (NodeId s : Sources(net.inputs[k].node)) {
          if (LoopLevel(s, g.parent_node) > 0) out.emplace_back(s, g.parent_node);
        }
      }
    }
    return out;
  }

  // Loop-carried sources a consumer of u reads through u (u and the nodes
  // without a task it looks through).
  const std::vector<std::pair<NodeId, NodeId>>& Carried(NodeId u) {
    int& st = carried_state_[u.index()];
    if (st == 2 || st == 1 || has_task_[u.index()]) return st == 2 ? carried_[u.index()] : empty_carried_;
    st = 1;
    std::set<std::pair<NodeId, NodeId>> acc;
    for (const auto& c : CarriedOwn(u)) acc.insert(c);
    for (auto [p, kind] : Direct(u)) {
      const auto& c = Carried(p);
      acc.insert(c.begin(), c.end());
    }
    carried_[u.index()].assign(acc.begin(), acc.end());
    st = 2;
    return carried_[u.index()];
  }

  // The attached index of p whose stream is `stream`, when that is not p's
  // main stream; else -1.
  int32_t AttachedIndexOn(NodeId p, int64_t stream) const {
    if (stream < 0 || MainStreamOf(plan_, p) == stream) return -1;
    for (int32_t a = 0; a < static_cast<int32_t>(m_.node(p).attached_stream_ids.size()); ++a) {
      if (AttachedStreamOf(plan_, p, a) == stream) return a;
    }
    return -1;
  }

  std::vector<Dependency> DepsOf(NodeId v) {
    std::vector<Dependency> out;
    std::set<NodeId> seen{v};
    const bool v_sync = IsSyncNode(m_.node(v));
    for (auto [p, kind] : Direct(v)) {
      if (std::string_view(kind) == "control-edge") {
        // A Send/Recv on an attached stream of its control neighbour belongs
        // to that neighbour's attached task, not to its main task.
        if (v_sync && has_task_[p.index()]) {
          if (int32_t a = AttachedIndexOn(p, MainStreamOf(plan_, v)); a >= 0) {
            out.push_back({p, p, kind, a, SharedLoops(v, p)});
            continue;
          }
        }
        if (IsSyncNode(m_.node(p)) && AttachedIndexOn(v, MainStreamOf(plan_, p)) >= 0) continue;
        // A Send after its sender records the event once the sender's own
        // task is done; it reads no value, so it does not wait for the
        // outputs the sender produces through its subgraphs (the event's
        // receiver does, and is checked for them itself).
        if (v_sync && has_task_[p.index()]) {
          if (seen.insert(p).second) out.push_back({p, p, kind, -1, SharedLoops(v, p)});
          continue;
        }
      }
      const bool owner = !m_.node(p).subgraphs.empty();
      for (NodeId s : Sources(p)) {  // p itself when it has a task, then what it stands for
        if (seen.insert(s).second) out.push_back({s, p, s != p && owner ? "subgraph-output" : kind, -1, SharedLoops(v, s)});
      }
      for (auto [s, loop] : Carried(p)) AddCarried(v, s, p, loop, out);
    }
    for (auto [s, loop] : CarriedOwn(v)) AddCarried(v, s, v, loop, out);
    return out;
  }

  void AddCarried(NodeId v, NodeId s, NodeId via, NodeId loop, std::vector<Dependency>& out) {
    // s == v is kept: a task reading its own previous iteration (a chain on
    // the critical path; its queue orders it anyway).
    const size_t level = LoopLevel(v, loop);
    if (level == 0) return;
    for (const Dependency& d : out) {
      if (d.loop_carried && d.producer == s) return;
    }
    out.push_back({s, via, "loop-carried", -1, static_cast<uint8_t>(std::min<size_t>(level, 255)), true});
  }

 private:
  const Plan& plan_;
  const Model& m_;
  std::vector<uint8_t> ffts_;
  OwnerControlInputs owner_controls_;
  const ControlFlow* cf_;
  std::vector<bool> has_task_;
  std::vector<int> state_;
  std::vector<std::vector<NodeId>> sources_;
  std::vector<NodeId> empty_;
  std::vector<int> carried_state_;
  std::vector<std::vector<std::pair<NodeId, NodeId>>> carried_;
  std::vector<std::pair<NodeId, NodeId>> empty_carried_;
};

}  // namespace

int64_t RequiredRuns(const ControlFlow& cf, const Dependency& d, size_t consumer_depth, size_t producer_depth,
                     int64_t run) {
  const size_t shared = std::min<size_t>({d.shared_loops, consumer_depth, producer_depth});
  const int64_t outer = run / cf.Pow(consumer_depth - shared);
  if (!d.loop_carried) return (outer + 1) * cf.Pow(producer_depth - shared);
  if (outer % cf.iterations() == 0) return 0;
  return outer * cf.Pow(producer_depth - shared);
}

std::vector<std::vector<Dependency>> BuildDependencies(const Plan& plan, const ControlFlow* control_flow) {
  Builder b(plan, control_flow);
  std::vector<std::vector<Dependency>> deps(plan.model.num_nodes());
  for (size_t i = 0; i < deps.size(); ++i) {
    NodeId v(static_cast<int32_t>(i));
    if (!b.HasTask(v)) continue;
    deps[i] = b.DepsOf(v);
  }
  return deps;
}

AttachedDependencies BuildAttachedDependencies(const Plan& plan, const ControlFlow* control_flow) {
  const Model& m = plan.model;
  Builder b(plan, control_flow);
  AttachedDependencies out;
  out.of_attached.resize(m.num_nodes());
  out.of_main.resize(m.num_nodes());
  auto has_slot = [&](NodeId v, int32_t a) { return b.HasTask(v) && AttachedStreamOf(plan, v, a) >= 0; };
  std::vector<Dependency> all_attached;  // every attached task, for attached-end
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const NodeId v(static_cast<int32_t>(i));
    const Node& node = m.node(v);
    out.of_attached[i].resize(node.attached_stream_ids.size());
    for (int32_t a = 0; a < static_cast<int32_t>(node.attached_stream_ids.size()); ++a) {
      if (!has_slot(v, a)) continue;
      all_attached.push_back({v, v, "attached-end", a});
      std::vector<Dependency>& deps = out.of_attached[i][a];
      std::set<std::pair<NodeId, int32_t>> seen;
      // A Recv placed on this attached stream before the node (control edge).
      for (NodeId c : node.control_inputs) {
        if (c.valid() && IsSyncNode(m.node(c)) && MainStreamOf(plan, c) == AttachedStreamOf(plan, v, a) &&
            MainStreamOf(plan, c) != MainStreamOf(plan, v) && seen.insert({c, -1}).second) {
          deps.push_back({c, c, "control-edge", -1, b.SharedLoops(v, c)});
        }
      }
      for (int64_t idx : b.InFfts(v) ? std::vector<int64_t>() : AttachedDependIndices(node, a)) {
        if (idx < 0 || static_cast<size_t>(idx) >= node.inputs.size() || !node.inputs[idx].node.valid()) continue;
        const NodeId p = node.inputs[idx].node;
        // A loop variable: the previous iteration's producers, as for a main task.
        for (auto [s, loop] : b.Carried(p)) b.AddCarried(v, s, p, loop, deps);
        if (IsDataOrConst(m.node(p))) continue;
        if (!m.node(p).attached_stream_ids.empty() && has_slot(p, 0)) {
          if (seen.insert({p, 0}).second) deps.push_back({p, p, "attached-value", 0, b.SharedLoops(v, p)});
          continue;
        }
        for (NodeId s : b.Sources(p)) {
          if (s != v && seen.insert({s, -1}).second) deps.push_back({s, p, "attached-value", -1, b.SharedLoops(v, s)});
        }
      }
    }
  }
  for (NodeId o : m.root().nodes) {
    if (m.node(o).type != "NetOutput" || !b.HasTask(o)) continue;
    for (const Dependency& d : all_attached) {
      if (d.producer != o) out.of_main[o.index()].push_back(d);
    }
  }
  return out;
}

}  // namespace npuplan::sim
