#include "npuplan/ir/topo_sort.h"

#include <algorithm>
#include <deque>
#include <vector>

#include "npuplan/ir/big_vector.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

// Predecessors of n inside its own graph (data then control, duplicates kept).
template <typename Fn>
void ForEachPred(const Model& model, const Node& node, Fn&& fn) {
  for (const OutputRef& in : node.inputs) {
    if (in.node.valid() && in.node.index() < model.num_nodes() && model.node(in.node).graph == node.graph) {
      fn(in.node);
    }
  }
  for (NodeId c : node.control_inputs) {
    if (c.valid() && c.index() < model.num_nodes() && model.node(c).graph == node.graph) fn(c);
  }
}

// Finds and names one cycle among `left` (nodes never made ready).
absl::Status CycleError(const Model& model, const Graph& graph, const BigVector<int32_t>& indeg,
                        const std::vector<NodeId>& left) {
  // Walk backwards through unreleased predecessors until a node repeats.
  std::vector<int> seen_at(model.num_nodes(), -1);
  std::vector<NodeId> path;
  NodeId cur = left.front();
  while (seen_at[cur.index()] < 0) {
    seen_at[cur.index()] = static_cast<int>(path.size());
    path.push_back(cur);
    NodeId next;
    ForEachPred(model, model.node(cur), [&](NodeId p) {
      if (!next.valid() && indeg[p.index()] > 0) next = p;
    });
    if (!next.valid()) break;  // cannot happen for a real cycle
    cur = next;
  }
  std::vector<std::string> names;
  for (size_t i = seen_at[cur.index()]; i < path.size(); ++i) names.push_back(model.node(path[i]).name);
  std::reverse(names.begin(), names.end());
  names.push_back(names.front());
  return absl::InvalidArgumentError(StrCat("graph '", graph.name, "' has a cycle: ",
                                                 StrJoin(names, " -> ")));
}

bool IsTopological(const Model& model, const Graph& graph, BigVector<int64_t>& pos) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) pos[graph.nodes[i].index()] = static_cast<int64_t>(i);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    bool ok = true;
    ForEachPred(model, model.node(graph.nodes[i]), [&](NodeId p) {
      if (pos[p.index()] >= static_cast<int64_t>(i)) ok = false;
    });
    if (!ok) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<TopoSortMode> ParseTopoSortMode(std::string_view value) {
  if (value.empty() || value == "0") return TopoSortMode::kBfs;
  if (value == "1") return TopoSortMode::kDfs;
  if (value == "2") return TopoSortMode::kRdfs;
  if (value == "3") return TopoSortMode::kStableRdfs;
  return absl::InvalidArgumentError(
      StrCat("option ge.topoSortingMode: '", value, "' is not one of 0 (BFS), 1 (DFS), 2 (RDFS), 3 (stable RDFS)"));
}

void RenumberTopoIds(Model& model) {
  for (size_t g = 0; g < model.num_graphs(); ++g) {
    Graph& graph = model.graph(GraphId(static_cast<int32_t>(g)));
    for (size_t i = 0; i < graph.nodes.size(); ++i) model.node(graph.nodes[i]).topo_id = static_cast<int64_t>(i);
  }
}

absl::Status TopologicalSort(Model& model, TopoSortMode mode) {
  const Adjacency adj(model);
  // Node-sized arrays on huge pages (page faults dominate at 1M nodes).
  BigVector<int32_t> indeg(model.num_nodes(), 0);
  BigVector<int64_t> pos(model.num_nodes(), -1);
  for (size_t g = 0; g < model.num_graphs(); ++g) {
    Graph& graph = model.graph(GraphId(static_cast<int32_t>(g)));
    if (mode == TopoSortMode::kStableRdfs && IsTopological(model, graph, pos)) continue;
    for (NodeId n : graph.nodes) {
      indeg[n.index()] = 0;
      ForEachPred(model, model.node(n), [&](NodeId) { ++indeg[n.index()]; });
    }
    std::vector<NodeId> order;
    order.reserve(graph.nodes.size());
    if (mode == TopoSortMode::kBfs || mode == TopoSortMode::kDfs) {
      std::deque<NodeId> ready;
      for (NodeId n : graph.nodes) {
        if (indeg[n.index()] == 0) ready.push_back(n);
      }
      std::vector<NodeId> newly;
      while (!ready.empty()) {
        NodeId n;
        if (mode == TopoSortMode::kBfs) {
          n = ready.front();
          ready.pop_front();
        } else {
          n = ready.back();
          ready.pop_back();
        }
        order.push_back(n);
        newly.clear();
        for (size_t i = adj.begin(n); i < adj.end(n); ++i) {
          NodeId s = adj.succ[i];
          if (model.node(s).graph.index() != g) continue;
          if (--indeg[s.index()] == 0) newly.push_back(s);
        }
        if (mode == TopoSortMode::kBfs) {
          for (NodeId s : newly) ready.push_back(s);
        } else {
          // The first successor readied should run first: push in reverse.
          for (auto it = newly.rbegin(); it != newly.rend(); ++it) ready.push_back(*it);
        }
      }
    } else {
      // Reverse DFS: post-order over inputs starting from sinks (in node order).
      std::vector<NodeId> sinks;
      for (NodeId n : graph.nodes) {
        bool has_succ = false;
        for (size_t i = adj.begin(n); i < adj.end(n); ++i) {
          if (model.node(adj.succ[i]).graph.index() == g) has_succ = true;
        }
        if (!has_succ) sinks.push_back(n);
      }
      // 0 = new, 1 = on stack, 2 = done (tracked in pos: -1 new, -2 on stack, >=0 done)
      for (NodeId n : graph.nodes) pos[n.index()] = -1;
      std::vector<std::pair<NodeId, std::vector<NodeId>>> stack;
      bool cycle = false;
      auto preds_of = [&](NodeId n) {
        std::vector<NodeId> preds;
        ForEachPred(model, model.node(n), [&](NodeId p) { preds.push_back(p); });
        std::reverse(preds.begin(), preds.end());  // pop_back visits input 0 first
        return preds;
      };
      for (NodeId s : sinks) {
        if (pos[s.index()] != -1) continue;
        pos[s.index()] = -2;
        stack.emplace_back(s, preds_of(s));
        while (!stack.empty()) {
          auto& [n, preds] = stack.back();
          if (preds.empty()) {
            pos[n.index()] = static_cast<int64_t>(order.size());
            order.push_back(n);
            stack.pop_back();
            continue;
          }
          NodeId p = preds.back();
          preds.pop_back();
          if (pos[p.index()] == -1) {
            pos[p.index()] = -2;
            stack.emplace_back(p, preds_of(p));
          } else if (pos[p.index()] == -2) {
            cycle = true;
          }
        }
      }
      if (cycle || order.size() != graph.nodes.size()) {
        // Recompute in-degrees with Kahn to name the cycle.
        for (NodeId n : graph.nodes) {
          indeg[n.index()] = 0;
          ForEachPred(model, model.node(n), [&](NodeId) { ++indeg[n.index()]; });
        }
        std::deque<NodeId> ready;
        for (NodeId n : graph.nodes) {
          if (indeg[n.index()] == 0) ready.push_back(n);
        }
        while (!ready.empty()) {
          NodeId n = ready.front();
          ready.pop_front();
          for (size_t i = adj.begin(n); i < adj.end(n); ++i) {
            NodeId s = adj.succ[i];
            if (model.node(s).graph.index() == g && --indeg[s.index()] == 0) ready.push_back(s);
          }
        }
        std::vector<NodeId> left;
        for (NodeId n : graph.nodes) {
          if (indeg[n.index()] > 0) left.push_back(n);
        }
        return CycleError(model, graph, indeg, left);
      }
    }
    if (order.size() != graph.nodes.size()) {
      std::vector<NodeId> left;
      for (NodeId n : graph.nodes) {
        if (indeg[n.index()] > 0) left.push_back(n);
      }
      return CycleError(model, graph, indeg, left);
    }
    graph.nodes = std::move(order);
  }
  RenumberTopoIds(model);
  return absl::OkStatus();
}

}  // namespace npuplan
