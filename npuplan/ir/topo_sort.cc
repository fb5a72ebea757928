#include "npuplan/ir/topo_sort.h"

#include <algorithm>
#include <vector>

#include "npuplan/support/big_vector.h"
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

namespace {

// One graph's nodes with local indices and its in-graph successor lists (CSR
// over local indices): for each producer the data consumers first, then the
// control consumers, each in the graph's current node order, duplicates kept
// (the order Adjacency gives, restricted to the graph). Built per graph, so
// the sort touches only the graph's own nodes and small local arrays instead
// of a whole-model successor table.
struct LocalGraph {
  std::vector<uint32_t> offsets;  // size m + 1
  std::vector<int32_t> succ;
  std::vector<int32_t> indeg;     // in-graph predecessors (data + control, duplicates kept)
  // Scratch: the in-graph edges in consumer order, read once from the nodes
  // (producer local index, or ~index for a control edge), and the per-producer
  // count of data successors / fill cursors.
  std::vector<int32_t> edges, consumer_end, data_count, data_cursor, ctrl_cursor;

  // `local[id]` is the node's position in `nodes` for this graph's nodes and
  // -1 otherwise; `graph_of[id]` is Node::graph of every node.
  void Build(const Model& model, const std::vector<NodeId>& nodes, int32_t g, const BigVector<int32_t>& local,
             const BigVector<int32_t>& graph_of) {
    const size_t m = nodes.size();
    const size_t n = model.num_nodes();
    offsets.assign(m + 1, 0);
    indeg.assign(m, 0);
    data_count.assign(m, 0);
    edges.clear();
    consumer_end.resize(m);
    // Predecessors in the graph; one listed outside `nodes` (malformed) counts
    // towards the in-degree (the node never becomes ready: a cycle error) but
    // has no successor list.
    // (Node::graph of the consumer, as ForEachPred compares; equal to g in a
    // well-formed model.)
    int32_t consumer_graph = g;
    auto in_graph = [&](NodeId p) { return p.valid() && p.index() < n && graph_of[p.index()] == consumer_graph; };
    // One read of the nodes (they are scattered over the node store; the
    // second and third passes over them were most of the sort's cost).
    for (size_t i = 0; i < m; ++i) {
      // A subgraph's members are scattered over the node store (ascending
      // but sparse ids): each node and its input list are prefetched a few
      // nodes ahead.
      if (i + 8 < m) __builtin_prefetch(&model.node(nodes[i + 8]));
      if (i + 4 < m) __builtin_prefetch(model.node(nodes[i + 4]).inputs.data());
      const Node& node = model.node(nodes[i]);
      consumer_graph = graph_of[nodes[i].index()];
      for (const OutputRef& in : node.inputs) {
        if (!in_graph(in.node)) continue;
        ++indeg[i];
        const int32_t p = local[in.node.index()];
        if (consumer_graph == g && p >= 0) {
          ++offsets[p + 1];
          ++data_count[p];
          edges.push_back(p);
        }
      }
      for (NodeId c : node.control_inputs) {
        if (!in_graph(c)) continue;
        ++indeg[i];
        const int32_t p = local[c.index()];
        if (consumer_graph == g && p >= 0) {
          ++offsets[p + 1];
          edges.push_back(~p);
        }
      }
      consumer_end[i] = static_cast<int32_t>(edges.size());
    }
    for (size_t i = 0; i < m; ++i) offsets[i + 1] += offsets[i];
    succ.resize(offsets[m]);
    // Each producer's data successors first, then its control successors,
    // each in consumer order (as two passes over the nodes gave).
    data_cursor.assign(offsets.begin(), offsets.end() - 1);
    ctrl_cursor.resize(m);
    for (size_t i = 0; i < m; ++i) ctrl_cursor[i] = static_cast<int32_t>(offsets[i]) + data_count[i];
    size_t e = 0;
    for (size_t i = 0; i < m; ++i) {
      for (; e < static_cast<size_t>(consumer_end[i]); ++e) {
        const int32_t p = edges[e];
        if (p >= 0) {
          succ[data_cursor[p]++] = static_cast<int32_t>(i);
        } else {
          succ[ctrl_cursor[~p]++] = static_cast<int32_t>(i);
        }
      }
    }
  }
  size_t begin(int32_t v) const { return offsets[v]; }
  size_t end(int32_t v) const { return offsets[v + 1]; }
};

}  // namespace

absl::Status TopologicalSort(Model& model, TopoSortMode mode) {
  const size_t num_nodes = model.num_nodes();
  // Node-sized arrays on huge pages (page faults dominate at 1M nodes).
  BigVector<int32_t> graph_of(num_nodes);
  for (size_t i = 0; i < num_nodes; ++i) graph_of[i] = model.node(NodeId(static_cast<int32_t>(i))).graph.value;
  BigVector<int32_t> local(num_nodes, -1);
  BigVector<int64_t> pos;
  if (mode == TopoSortMode::kStableRdfs) pos.assign(num_nodes, -1);
  LocalGraph lg;
  std::vector<int32_t> order_local;
  // Names the cycle among the nodes never made ready (indeg > 0 after Kahn).
  auto cycle_error = [&](const Graph& graph) {
    BigVector<int32_t> indeg(num_nodes, 0);
    std::vector<NodeId> left;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      indeg[graph.nodes[i].index()] = lg.indeg[i];
      if (lg.indeg[i] > 0) left.push_back(graph.nodes[i]);
    }
    return CycleError(model, graph, indeg, left);
  };
  for (size_t g = 0; g < model.num_graphs(); ++g) {
    Graph& graph = model.graph(GraphId(static_cast<int32_t>(g)));
    if (mode == TopoSortMode::kStableRdfs && IsTopological(model, graph, pos)) {
      for (size_t i = 0; i < graph.nodes.size(); ++i) model.node(graph.nodes[i]).topo_id = static_cast<int64_t>(i);
      continue;
    }
    const std::vector<NodeId>& nodes = graph.nodes;
    const int32_t m = static_cast<int32_t>(nodes.size());
    for (int32_t i = 0; i < m; ++i) local[nodes[i].index()] = i;
    lg.Build(model, nodes, static_cast<int32_t>(g), local, graph_of);
    order_local.clear();
    order_local.reserve(m);
    if (mode == TopoSortMode::kBfs || mode == TopoSortMode::kDfs) {
      // BFS: a FIFO over order_local itself (ready nodes are appended in the
      // order they become ready). DFS: a stack of ready nodes.
      if (mode == TopoSortMode::kBfs) {
        for (int32_t i = 0; i < m; ++i) {
          if (lg.indeg[i] == 0) order_local.push_back(i);
        }
        for (size_t head = 0; head < order_local.size(); ++head) {
          const int32_t v = order_local[head];
          for (size_t k = lg.begin(v); k < lg.end(v); ++k) {
            if (--lg.indeg[lg.succ[k]] == 0) order_local.push_back(lg.succ[k]);
          }
        }
      } else {
        std::vector<int32_t> ready;
        for (int32_t i = 0; i < m; ++i) {
          if (lg.indeg[i] == 0) ready.push_back(i);
        }
        std::vector<int32_t> newly;
        while (!ready.empty()) {
          const int32_t v = ready.back();
          ready.pop_back();
          order_local.push_back(v);
          newly.clear();
          for (size_t k = lg.begin(v); k < lg.end(v); ++k) {
            if (--lg.indeg[lg.succ[k]] == 0) newly.push_back(lg.succ[k]);
          }
          // The first successor readied should run first: push in reverse.
          for (auto it = newly.rbegin(); it != newly.rend(); ++it) ready.push_back(*it);
        }
      }
      if (static_cast<int32_t>(order_local.size()) != m) {
        absl::Status err = cycle_error(graph);
        for (NodeId id : nodes) local[id.index()] = -1;
        return err;
      }
    } else {
      // Reverse DFS: post-order over inputs starting from sinks (in node order).
      std::vector<int32_t> sinks;
      for (int32_t i = 0; i < m; ++i) {
        if (lg.begin(i) == lg.end(i)) sinks.push_back(i);
      }
      // state: 0 new, 1 on stack, 2 done
      std::vector<uint8_t> state(m, 0);
      std::vector<std::pair<int32_t, std::vector<int32_t>>> stack;
      bool cycle = false;
      auto preds_of = [&](int32_t v) {
        std::vector<int32_t> preds;
        ForEachPred(model, model.node(nodes[v]), [&](NodeId p) { preds.push_back(local[p.index()]); });
        std::reverse(preds.begin(), preds.end());  // pop_back visits input 0 first
        return preds;
      };
      for (int32_t s : sinks) {
        if (state[s] != 0) continue;
        state[s] = 1;
        stack.emplace_back(s, preds_of(s));
        while (!stack.empty()) {
          auto& [v, preds] = stack.back();
          if (preds.empty()) {
            state[v] = 2;
            order_local.push_back(v);
            stack.pop_back();
            continue;
          }
          const int32_t p = preds.back();
          preds.pop_back();
          if (p < 0) {
            cycle = true;  // a predecessor not listed in the graph never completes
          } else if (state[p] == 0) {
            state[p] = 1;
            stack.emplace_back(p, preds_of(p));
          } else if (state[p] == 1) {
            cycle = true;
          }
        }
      }
      if (cycle || static_cast<int32_t>(order_local.size()) != m) {
        // Kahn on fresh in-degrees to name the cycle.
        lg.Build(model, nodes, static_cast<int32_t>(g), local, graph_of);
        std::vector<int32_t> ready;
        for (int32_t i = 0; i < m; ++i) {
          if (lg.indeg[i] == 0) ready.push_back(i);
        }
        for (size_t head = 0; head < ready.size(); ++head) {
          const int32_t v = ready[head];
          for (size_t k = lg.begin(v); k < lg.end(v); ++k) {
            if (--lg.indeg[lg.succ[k]] == 0) ready.push_back(lg.succ[k]);
          }
        }
        absl::Status err = cycle_error(graph);
        for (NodeId id : nodes) local[id.index()] = -1;
        return err;
      }
    }
    // The new order, and each node's topo_id while the graph's nodes are
    // still in cache (a separate RenumberTopoIds pass read them all again).
    std::vector<NodeId> order(m);
    for (int32_t i = 0; i < m; ++i) {
      order[i] = nodes[order_local[i]];
      model.node(order[i]).topo_id = i;
    }
    for (NodeId id : nodes) local[id.index()] = -1;
    graph.nodes = std::move(order);
  }
  return absl::OkStatus();
}

}  // namespace npuplan
