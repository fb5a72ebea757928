#include "npuplan/sim/dependencies.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/ir/ffts_regions.h"
#include "npuplan/sim/plan_program.h"

namespace npuplan::sim {
namespace {

class Builder {
 public:
  explicit Builder(const Plan& plan) : plan_(plan), m_(plan.model), ffts_(FftsRegionGraphs(plan.model)) {
    const size_t n = m_.num_nodes();
    has_task_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const NodeId id(static_cast<int32_t>(i));
      has_task_[i] = MainStreamOf(plan, id) >= 0 && !InFfts(id);
    }
    state_.assign(n, 0);
    sources_.resize(n);
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
            out.push_back({p, p, kind, a});
            continue;
          }
        }
        if (IsSyncNode(m_.node(p)) && AttachedIndexOn(v, MainStreamOf(plan_, p)) >= 0) continue;
        // A Send after its sender records the event once the sender's own
        // task is done; it reads no value, so it does not wait for the
        // outputs the sender produces through its subgraphs (the event's
        // receiver does, and is checked for them itself).
        if (v_sync && has_task_[p.index()]) {
          if (seen.insert(p).second) out.push_back({p, p, kind});
          continue;
        }
      }
      const bool owner = !m_.node(p).subgraphs.empty();
      for (NodeId s : Sources(p)) {  // p itself when it has a task, then what it stands for
        if (seen.insert(s).second) out.push_back({s, p, s != p && owner ? "subgraph-output" : kind});
      }
    }
    return out;
  }

 private:
  const Plan& plan_;
  const Model& m_;
  std::vector<uint8_t> ffts_;
  std::vector<bool> has_task_;
  std::vector<int> state_;
  std::vector<std::vector<NodeId>> sources_;
  std::vector<NodeId> empty_;
};

}  // namespace

std::vector<std::vector<Dependency>> BuildDependencies(const Plan& plan) {
  Builder b(plan);
  std::vector<std::vector<Dependency>> deps(plan.model.num_nodes());
  for (size_t i = 0; i < deps.size(); ++i) {
    NodeId v(static_cast<int32_t>(i));
    if (MainStreamOf(plan, v) < 0 || b.InFfts(v)) continue;
    deps[i] = b.DepsOf(v);
  }
  return deps;
}

AttachedDependencies BuildAttachedDependencies(const Plan& plan) {
  const Model& m = plan.model;
  Builder b(plan);
  AttachedDependencies out;
  out.of_attached.resize(m.num_nodes());
  out.of_main.resize(m.num_nodes());
  auto has_slot = [&](NodeId v, int32_t a) {
    return MainStreamOf(plan, v) >= 0 && AttachedStreamOf(plan, v, a) >= 0;
  };
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
          deps.push_back({c, c, "control-edge", -1});
        }
      }
      for (int64_t idx : b.InFfts(v) ? std::vector<int64_t>() : AttachedDependIndices(node, a)) {
        if (idx < 0 || static_cast<size_t>(idx) >= node.inputs.size() || !node.inputs[idx].node.valid()) continue;
        const NodeId p = node.inputs[idx].node;
        if (IsDataOrConst(m.node(p))) continue;
        if (!m.node(p).attached_stream_ids.empty() && has_slot(p, 0)) {
          if (seen.insert({p, 0}).second) deps.push_back({p, p, "attached-value", 0});
          continue;
        }
        for (NodeId s : b.Sources(p)) {
          if (s != v && seen.insert({s, -1}).second) deps.push_back({s, p, "attached-value", -1});
        }
      }
    }
  }
  for (NodeId o : m.root().nodes) {
    if (m.node(o).type != "NetOutput" || MainStreamOf(plan, o) < 0) continue;
    for (const Dependency& d : all_attached) {
      if (d.producer != o) out.of_main[o.index()].push_back(d);
    }
  }
  return out;
}

}  // namespace npuplan::sim
