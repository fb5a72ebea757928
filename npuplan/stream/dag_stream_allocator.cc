// MiniDAG in four stages: build the DAG with costs; minimum path cover of the
// residual DAG (Hopcroft–Karp) and scored merge of the routes into ≤ N
// streams (both in dag_stream_routes.cc); serial-label streams and write-back.
// Also the estimates the auto modes compare.
#include "npuplan/stream/dag_stream_allocator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/sim/control_flow.h"
#include "npuplan/stream/dynamic_stream_allocator.h"
#include "npuplan/stream/engine_partition.h"
#include "npuplan/stream/logical_stream_pass.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/str_util.h"

namespace npuplan::stream {
namespace {

// Fills pred CSR from succ CSR.
void BuildPreds(StreamDag& d) {
  const size_t n = d.size();
  d.pred_offsets.assign(n + 1, 0);
  for (int32_t v : d.succ) ++d.pred_offsets[v + 1];
  for (size_t i = 0; i < n; ++i) d.pred_offsets[i + 1] += d.pred_offsets[i];
  d.pred.resize(d.succ.size());
  std::vector<uint32_t> pos(d.pred_offsets.begin(), d.pred_offsets.end() - 1);
  for (size_t u = 0; u < n; ++u) {
    for (uint32_t e = d.succ_offsets[u]; e < d.succ_offsets[u + 1]; ++e) d.pred[pos[d.succ[e]]++] = static_cast<int32_t>(u);
  }
}

}  // namespace

StreamCostModel::StreamCostModel(const sim::SimOptions& sim, bool sync_nodes) : node_costs(sim.cost) {
  auto ns = [](double us) { return static_cast<int64_t>(std::llround(us * 1000.0)); };
  launch = ns(sim.launch_overhead_us);
  // A Send / Recv node (DNN_VM_RTS, no tensors) costs its engine's fixed time
  // in the simulator, plus one launch per task: Send 1, Recv 2 (wait + reset).
  auto it = sim.cost.engines.find("DNN_VM_RTS");
  const int64_t rts = ns((it != sim.cost.engines.end() ? it->second : sim.cost.default_engine).fixed_us);
  event_record = ns(sim.record_us) + (sync_nodes ? rts + launch : 0);  // + the Send task
  event_latency = ns(sim.wait_latency_us);
  event_recv = sync_nodes ? rts + 2 * launch : 0;  // the Recv task
}

int64_t StreamCostModel::Cost(const Model& m, NodeId id) const {
  const Node& node = m.node(id);
  if (node.stream_id < 0) return 0;
  const int64_t tasks = NodeTasks(node, m.engine_table);
  if (tasks <= 0) return 0;  // launches nothing: no stream time (as in the simulator)
  const double us = sim::NodeCost(m, id, node_costs);
  if (us <= 0) return 0;  // `_cost` 0: GE's zero-cost node (split out of the path cover)
  // `_cost` and the task count are input values: a node's cost is capped so
  // that the estimates' sums over every node of the model stay within int64
  // (a `_cost` of 1e300 or 2^62 tasks wrapped them). The cap is far above any
  // real node for any model the readers accept (2^61 / (nodes + 1) ns).
  const int64_t cap = MaxNodeCost(m);
  if (!(us * 1000.0 < static_cast<double>(cap))) return cap;
  const std::optional<int64_t> launches = CheckedMul(tasks, launch);
  const std::optional<int64_t> ns =
      launches ? CheckedAdd(static_cast<int64_t>(std::llround(us * 1000.0)), *launches)
               : std::nullopt;
  return ns ? std::min(*ns, cap) : cap;
}

int64_t StreamCostModel::MaxNodeCost(const Model& m) {
  return (int64_t{1} << 61) / (static_cast<int64_t>(m.num_nodes()) + 1);
}

StreamDag BuildStreamDag(const Model& m, GraphId g, const StreamCostModel& costs) {
  StreamDag d;
  d.graph = g;
  const Graph& graph = m.graph(g);
  d.nodes = graph.nodes;
  const size_t n = d.nodes.size();
  d.cost.resize(n);
  d.serial.resize(n);
  d.writable.resize(n);
  d.constant.resize(n);
  d.succ_offsets.assign(n + 1, 0);
  // Predecessor lists from inputs (same graph only), deduplicated, then flipped.
  std::vector<std::vector<int32_t>> preds(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = m.node(d.nodes[i]);
    d.cost[i] = costs.Cost(m, d.nodes[i]);
    d.serial[i] = EffectiveStreamLabel(node);
    d.writable[i] = node.stream_id >= 0 && node.type != "NetOutput" && !HasAttr(node.attrs, kAttrRtsLabelNode);
    d.constant[i] = IsDataOrConst(node) && node.type != "Data" && node.type != "RefData" && node.type != "AippData";
    auto add = [&](NodeId p) {
      const Node& pn = m.node(p);
      if (pn.graph != g || pn.topo_id < 0) return;
      preds[i].push_back(static_cast<int32_t>(pn.topo_id));
    };
    for (const OutputRef& in : node.inputs) add(in.node);
    for (NodeId c : node.control_inputs) add(c);
    std::sort(preds[i].begin(), preds[i].end());
    preds[i].erase(std::unique(preds[i].begin(), preds[i].end()), preds[i].end());
  }
  for (size_t i = 0; i < n; ++i) {
    for (int32_t p : preds[i]) ++d.succ_offsets[p + 1];
  }
  for (size_t i = 0; i < n; ++i) d.succ_offsets[i + 1] += d.succ_offsets[i];
  d.succ.resize(d.succ_offsets[n]);
  std::vector<uint32_t> pos(d.succ_offsets.begin(), d.succ_offsets.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t p : preds[i]) d.succ[pos[p]++] = static_cast<int32_t>(i);
  }
  BuildPreds(d);
  return d;
}

StreamDag PermuteStreamDag(const StreamDag& d, const std::vector<int32_t>& order) {
  const size_t n = d.size();
  std::vector<int32_t> pos(n);
  for (size_t k = 0; k < n; ++k) pos[order[k]] = static_cast<int32_t>(k);
  StreamDag p;
  p.graph = d.graph;
  p.nodes.resize(n), p.cost.resize(n), p.serial.resize(n), p.writable.resize(n), p.constant.resize(n);
  p.succ_offsets.assign(n + 1, 0);
  p.succ.reserve(d.succ.size());
  for (size_t k = 0; k < n; ++k) {
    const int32_t v = order[k];
    p.nodes[k] = d.nodes[v], p.cost[k] = d.cost[v], p.serial[k] = d.serial[v];
    p.writable[k] = d.writable[v], p.constant[k] = d.constant[v];
    const size_t first = p.succ.size();
    for (uint32_t e = d.succ_offsets[v]; e < d.succ_offsets[v + 1]; ++e) p.succ.push_back(pos[d.succ[e]]);
    std::sort(p.succ.begin() + static_cast<std::ptrdiff_t>(first), p.succ.end());
    p.succ_offsets[k + 1] = static_cast<uint32_t>(p.succ.size());
  }
  BuildPreds(p);
  return p;
}

StreamDag BuildStreamDagFromEdges(std::vector<int64_t> cost, const std::vector<std::pair<int32_t, int32_t>>& edges) {
  StreamDag d;
  const size_t n = cost.size();
  d.cost = std::move(cost);
  d.serial.assign(n, "");
  d.writable.assign(n, 1);
  d.constant.assign(n, 0);
  d.nodes.resize(n);
  for (size_t i = 0; i < n; ++i) d.nodes[i] = NodeId(static_cast<int32_t>(i));
  d.succ_offsets.assign(n + 1, 0);
  for (auto [u, v] : edges) ++d.succ_offsets[u + 1];
  for (size_t i = 0; i < n; ++i) d.succ_offsets[i + 1] += d.succ_offsets[i];
  d.succ.resize(edges.size());
  std::vector<uint32_t> pos(d.succ_offsets.begin(), d.succ_offsets.end() - 1);
  for (auto [u, v] : edges) d.succ[pos[u]++] = v;
  for (size_t u = 0; u < n; ++u) {
    auto b = d.succ.begin() + d.succ_offsets[u], e = d.succ.begin() + d.succ_offsets[u + 1];
    std::sort(b, e);
  }
  BuildPreds(d);
  return d;
}

// ---------------------------------------------------------------------------
// Estimates.

int64_t EstimateMakespan(const StreamDag& d, const std::vector<int32_t>& stream_of, int64_t lat) {
  const size_t n = d.size();
  std::vector<int64_t> finish(n, 0);
  std::vector<int64_t> stream_free;
  int64_t makespan = 0;
  for (size_t v = 0; v < n; ++v) {
    const int32_t s = stream_of[v];
    int64_t ready = 0;
    for (uint32_t e = d.pred_offsets[v]; e < d.pred_offsets[v + 1]; ++e) {
      int32_t p = d.pred[e];
      ready = std::max(ready, finish[p] + (stream_of[p] >= 0 && s >= 0 && stream_of[p] != s ? lat : 0));
    }
    if (s >= 0) {
      if (static_cast<size_t>(s) >= stream_free.size()) stream_free.resize(s + 1, 0);
      ready = std::max(ready, stream_free[s]);
      finish[v] = ready + d.cost[v];
      stream_free[s] = finish[v];
    } else {
      finish[v] = ready + d.cost[v];
    }
    makespan = std::max(makespan, finish[v]);
  }
  return makespan;
}

int64_t EstimateMakespan(const StreamDag& d, const std::vector<int32_t>& stream_of, const StreamCostModel& costs) {
  const size_t n = d.size();
  // 1. The events the plan keeps: streams run in order, so once stream t has
  //    waited for node q of stream s it needs no event from any node of s
  //    up to q; of several producers of v on one stream only the last needs one.
  int32_t k = 0;
  for (int32_t x : stream_of) k = std::max(k, x + 1);
  // Last node of stream s that stream t waited for: a dense table for the
  // usual few streams, a map when serial labels make thousands.
  constexpr int32_t kDense = 1024;
  std::vector<int32_t> dense(k <= kDense ? static_cast<size_t>(k) * k : 0, -1);
  std::map<std::pair<int32_t, int32_t>, int32_t> sparse;
  auto synced_of = [&](int32_t t, int32_t s) -> int32_t& {
    if (k <= kDense) return dense[static_cast<size_t>(t) * k + s];
    return sparse.try_emplace({t, s}, -1).first->second;
  };
  std::vector<uint8_t> needed(d.pred.size(), 0);                 // per pred edge: waits for an event
  std::vector<std::vector<int32_t>> records(n);                  // per node: streams it records for
  std::vector<std::pair<int32_t, uint32_t>> last;                // scratch: (stream, edge of its last producer)
  for (size_t v = 0; v < n; ++v) {
    const int32_t t = stream_of[v];
    if (t < 0) continue;
    last.clear();
    for (uint32_t e = d.pred_offsets[v]; e < d.pred_offsets[v + 1]; ++e) {
      const int32_t p = d.pred[e];
      const int32_t s = stream_of[p];
      if (d.constant[p] || s < 0 || s == t) continue;
      auto it = std::find_if(last.begin(), last.end(), [&](const auto& x) { return x.first == s; });
      if (it == last.end()) {
        last.emplace_back(s, e);
      } else if (p > d.pred[it->second]) {
        it->second = e;
      }
    }
    for (auto [s, e] : last) {
      const int32_t p = d.pred[e];
      int32_t& sync = synced_of(t, s);
      if (p <= sync) continue;  // implied by an earlier wait of t
      sync = p;
      needed[e] = 1;
      if (std::find(records[p].begin(), records[p].end(), t) == records[p].end()) records[p].push_back(t);
    }
  }
  // 2. Times: task end and "records done" per node; readiness passes through
  //    nodes without a stream; an implied producer finished before the node
  //    its stream already waited for.
  std::vector<int64_t> end(n, 0), recorded(n, 0);
  std::vector<int64_t> stream_free(static_cast<size_t>(k), 0);
  int64_t makespan = 0;
  for (size_t v = 0; v < n; ++v) {
    const int32_t s = stream_of[v];
    int64_t ready = 0, recvs = 0;
    for (uint32_t e = d.pred_offsets[v]; e < d.pred_offsets[v + 1]; ++e) {
      const int32_t p = d.pred[e];
      if (d.constant[p]) continue;  // ready before the model starts
      if (needed[e]) {
        ready = std::max(ready, recorded[p] + costs.event_latency);
        ++recvs;
      } else if (s < 0 || stream_of[p] < 0 || stream_of[p] == s) {
        ready = std::max(ready, end[p]);
      }
    }
    if (s < 0) {
      end[v] = recorded[v] = ready + d.cost[v];
      makespan = std::max(makespan, end[v]);
      continue;
    }
    const int64_t recv_done = stream_free[s] + costs.event_recv * recvs;
    end[v] = std::max(ready, recv_done) + d.cost[v];
    recorded[v] = end[v] + costs.event_record * static_cast<int64_t>(records[v].size());
    stream_free[s] = recorded[v];
    makespan = std::max(makespan, recorded[v]);
  }
  return makespan;
}

int64_t CriticalPathLength(const StreamDag& d) {
  std::vector<int64_t> f(d.size(), 0);
  int64_t best = 0;
  for (size_t v = 0; v < d.size(); ++v) {
    int64_t r = 0;
    for (uint32_t e = d.pred_offsets[v]; e < d.pred_offsets[v + 1]; ++e) r = std::max(r, f[d.pred[e]]);
    f[v] = r + d.cost[v];
    best = std::max(best, f[v]);
  }
  return best;
}

int64_t TotalWork(const StreamDag& d) { return std::accumulate(d.cost.begin(), d.cost.end(), int64_t{0}); }

// ---------------------------------------------------------------------------
// Stage 4 and the driver.

DagAssignment AssignDag(const StreamDag& d, MergeAlgorithm algo, int64_t limit) {
  const size_t n = d.size();
  DagAssignment a;
  a.stream_of.assign(n, -1);
  std::vector<uint8_t> keep(n, 0);
  for (size_t i = 0; i < n; ++i) keep[i] = d.writable[i] && d.cost[i] > 0 && d.serial[i].empty();
  PathCover pc = MinimumPathCover(d, keep);
  a.routes = static_cast<int64_t>(pc.routes.size());
  a.matching = pc.matching;
  std::vector<int32_t> unit_stream = MergeRoutes(d, pc, algo, limit);
  for (size_t u = 0; u < pc.routes.size(); ++u) {
    for (int32_t x : pc.routes[u]) a.stream_of[x] = unit_stream[u];
    a.streams = std::max<int64_t>(a.streams, unit_stream[u] + 1);
  }
  // Serial labels: one stream each, after the residual streams.
  std::map<std::string, int32_t> serial_stream;
  std::vector<std::string> serial_order;
  for (size_t i = 0; i < n; ++i) {
    if (!d.writable[i] || d.serial[i].empty()) continue;
    auto [it, fresh] = serial_stream.emplace(d.serial[i], 0);
    if (fresh) {
      it->second = static_cast<int32_t>(a.streams + static_cast<int64_t>(serial_order.size()));
      serial_order.push_back(d.serial[i]);
    }
    a.stream_of[i] = it->second;
  }
  a.serial_streams = static_cast<int64_t>(serial_order.size());
  // Zero-cost writable nodes: first assigned producer, else consumer, else 0.
  for (size_t i = 0; i < n; ++i) {
    if (!d.writable[i] || a.stream_of[i] >= 0) continue;
    for (uint32_t e = d.pred_offsets[i]; e < d.pred_offsets[i + 1] && a.stream_of[i] < 0; ++e) {
      a.stream_of[i] = a.stream_of[d.pred[e]];
    }
  }
  for (size_t i = n; i-- > 0;) {
    if (!d.writable[i] || a.stream_of[i] >= 0) continue;
    for (uint32_t e = d.succ_offsets[i]; e < d.succ_offsets[i + 1] && a.stream_of[i] < 0; ++e) {
      a.stream_of[i] = a.stream_of[d.succ[e]];
    }
    if (a.stream_of[i] < 0) a.stream_of[i] = 0;
  }
  if (a.streams == 0 && a.serial_streams == 0) {
    for (size_t i = 0; i < n; ++i) {
      if (d.writable[i]) a.streams = 1;
    }
  }
  return a;
}

std::vector<uint8_t> HomePinned(const Model& m, const StreamDag& d, int64_t home) {
  std::vector<uint8_t> pinned(d.size(), 0);
  for (size_t i = 0; i < d.size() && home >= 0; ++i)
    pinned[i] = !d.writable[i] && m.node(d.nodes[i]).stream_id == home;
  return pinned;
}

std::vector<int32_t> CurrentAssignment(const Model& m, const StreamDag& d,
                                       const std::vector<uint8_t>& pinned, int64_t home) {
  const size_t n = d.size();
  bool zero_taken = home >= 0;
  for (size_t i = 0; i < n; ++i) zero_taken = zero_taken || pinned[i];
  std::map<int64_t, int32_t> index;
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = m.node(d.nodes[i]).stream_id;
    if (d.writable[i] && s >= 0 && s != home) index.emplace(s, 0);
  }
  int32_t next = zero_taken ? 1 : 0;
  for (auto& [s, k] : index) k = next++;
  std::vector<int32_t> out(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = m.node(d.nodes[i]).stream_id;
    if (pinned[i] || (d.writable[i] && s >= 0 && s == home)) {
      out[i] = 0;
    } else if (d.writable[i] && s >= 0) {
      out[i] = index.at(s);
    }
  }
  return out;
}

GuardEstimates EstimateWithoutHome(const Model& m, const StreamDag& d,
                                   const std::vector<int32_t>& stream_of, const StreamDag& own,
                                   const StreamCostModel& costs) {
  int64_t x = -1;
  for (size_t i = 0; i < own.size() && x < 0; ++i) {
    const Node& node = m.node(own.nodes[i]);
    if (node.type == "NetOutput") x = node.stream_id;
  }
  std::vector<int32_t> full = stream_of;
  int32_t top = -1;
  for (int32_t v : full) top = std::max(top, v);
  const std::vector<uint8_t> pinned = HomePinned(m, d, x);
  for (size_t i = 0; i < d.size(); ++i) {
    if (pinned[i]) full[i] = top + 1;
  }
  return {EstimateMakespan(d, full, costs),
          EstimateMakespan(own, CurrentAssignment(m, own, HomePinned(m, own, x), x), costs)};
}

int64_t EstimateModelMakespan(const Model& m, const StreamCostModel& costs) {
  // Work per graph (Σ node costs, nested subgraphs included; children after
  // parents in pre-order, so summed in reverse).
  const std::vector<GraphId> pre = m.GraphsPreOrder();
  std::vector<int64_t> work(m.num_graphs(), 0);
  auto sat = [](int64_t a, int64_t b) {
    return CheckedAdd(a, b).value_or(std::numeric_limits<int64_t>::max());
  };
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    int64_t w = 0;
    for (NodeId id : m.graph(*it).nodes) {
      w = sat(w, costs.Cost(m, id));
      for (GraphId sub : m.node(id).subgraphs) w = sat(w, work[sub.index()]);
    }
    work[it->index()] = w;
  }
  // The subgraphs that run (the simulator's default: an If/Case takes its
  // branch with the most work, lowest index on ties; loops run once).
  auto taken = [&](const Node& node) {
    std::vector<GraphId> subs = node.subgraphs;
    if (sim::IsBranchNode(node) && subs.size() > 1) {
      GraphId best = subs[0];
      for (GraphId g : subs) best = work[g.index()] > work[best.index()] ? g : best;
      subs = {best};
    }
    return subs;
  };
  // Execution order: each node followed by the nodes of its subgraphs that
  // run (explicit stack: nesting may be deep).
  std::vector<NodeId> order;
  std::vector<int32_t> local(m.num_nodes(), -1);
  struct Frame {
    GraphId g;
    size_t pos = 0;
  };
  std::vector<Frame> stack{{kRootGraph}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    const Graph& graph = m.graph(f.g);
    if (f.pos >= graph.nodes.size()) {
      stack.pop_back();
      continue;
    }
    const NodeId id = graph.nodes[f.pos++];
    local[id.index()] = static_cast<int32_t>(order.size());
    order.push_back(id);
    const std::vector<GraphId> subs = taken(m.node(id));
    for (auto it = subs.rbegin(); it != subs.rend(); ++it) stack.push_back({*it});
  }
  const size_t n = order.size();
  std::vector<int64_t> cost(n);
  std::vector<std::pair<int32_t, int32_t>> edges;
  std::vector<std::vector<int32_t>> succ(n);
  for (size_t v = 0; v < n; ++v) {
    const Node& node = m.node(order[v]);
    cost[v] = costs.Cost(m, order[v]);
    auto add = [&](NodeId p) {  // captures from an enclosing graph too
      const int32_t u = local[p.index()];
      if (u < 0 || u >= static_cast<int32_t>(v)) return;
      edges.emplace_back(u, static_cast<int32_t>(v));
      succ[u].push_back(static_cast<int32_t>(v));
    };
    for (const OutputRef& in : node.inputs) add(in.node);
    for (NodeId c : node.control_inputs) add(c);
  }
  // As the simulator's dependencies (npuplan/sim/dependencies.h): a
  // subgraph's Data node waits for the producer of its owner's input
  // `_parent_node_index`, and the owner's consumers for the subgraph's last
  // nodes.
  for (size_t v = 0; v < n; ++v) {
    const Node& owner = m.node(order[v]);
    for (GraphId sub : taken(owner)) {
      for (NodeId id : m.graph(sub).nodes) {
        const int32_t s = local[id.index()];
        if (s < 0) continue;
        const Node& node = m.node(id);
        if (node.type == "Data") {
          const std::optional<int64_t> k = GetIntAttr(node.attrs, "_parent_node_index");
          if (k && *k >= 0 && static_cast<size_t>(*k) < owner.inputs.size()) {
            const int32_t u = local[owner.inputs[*k].node.index()];
            if (u >= 0 && u < s) edges.emplace_back(u, s);
          }
        }
        if (succ[s].empty()) {
          for (int32_t c : succ[v]) edges.emplace_back(s, c);
        }
      }
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  StreamDag d = BuildStreamDagFromEdges(std::move(cost), edges);
  std::map<int64_t, int32_t> dense;
  std::vector<int32_t> stream_of(n, -1);
  for (size_t v = 0; v < n; ++v) {
    const Node& node = m.node(order[v]);
    d.constant[v] = IsDataOrConst(node) && node.type != "Data" && node.type != "RefData" &&
                    node.type != "AippData";
    if (node.stream_id < 0) continue;
    stream_of[v] = dense.emplace(node.stream_id, static_cast<int32_t>(dense.size())).first->second;
  }
  return EstimateMakespan(d, stream_of, costs);
}

absl::StatusOr<DagStreamAllocator::Result> DagStreamAllocator::Run(
    Model& m, GraphId g, const AutoMode& mode, int64_t base, DecisionLog* log,
    const StreamCostModel& costs, int64_t home_stream, bool main_pin, bool fresh_home,
    bool never_worse) {
  MergeAlgorithm algo;
  const std::string_view mode_name = AutoAlgorithmName(mode.algorithm);
  if (mode.algorithm == AutoAlgorithm::kLoadBalance) {
    algo = MergeAlgorithm::kLoadBalance;
  } else if (mode.algorithm == AutoAlgorithm::kMainStream) {
    algo = MergeAlgorithm::kMainStream;
  } else if (mode.algorithm == AutoAlgorithm::kWeightedLoadBalance) {
    algo = MergeAlgorithm::kWeightedLoadBalance;
  } else {
    return absl::InvalidArgumentError(
        StrCat("[", kName, "] ge.autoMultistreamParallelMode '", mode_name, "' is not a DAG mode"));
  }
  StreamDag d = BuildStreamDag(m, g, costs);
  DagAssignment a = AssignDag(d, algo, mode.streams);
  Result r;
  r.streams = a.streams + a.serial_streams;
  if (log) {
    log->Record(kName, "DagRoutes", "", Field("graph", m.graph(g).name), Field("nodes", d.size()),
                Field("routes", a.routes), Field("matching", a.matching));
  }
  // Index 0 shares the NetOutput's stream (static graphs); the estimates then
  // see the NetOutput there, events into it included, for this assignment
  // and for the current one.
  const std::vector<uint8_t> pinned = HomePinned(m, d, home_stream);
  std::vector<int32_t> full = a.stream_of;
  int32_t top = -1;
  for (size_t i = 0; i < d.size(); ++i) {
    if (pinned[i]) full[i] = 0;
    top = std::max(top, full[i]);
  }
  // Serial labels may add streams beyond N: work / N bounds no plan that
  // uses more, so the bound divides by the streams this assignment uses.
  const int64_t used = std::max<int64_t>(
      {static_cast<int64_t>(mode.streams), r.streams, static_cast<int64_t>(top) + 1, 1});
  r.lower_bound = std::max(CriticalPathLength(d), (TotalWork(d) + used - 1) / used);
  r.makespan = EstimateMakespan(d, full, costs);
  if (log) {
    log->Record(kName, "DagStreams", "", Field("graph", m.graph(g).name), Field("mode", mode_name),
                Field("streams", a.streams), Field("serial_streams", a.serial_streams),
                Field("makespan", r.makespan), Field("lower_bound", r.lower_bound));
  }
  if (never_worse && main_pin) {
    // A dynamic graph: the forced nodes end on the main stream, beside the
    // merged streams; the current assignment has them on its main id.
    std::vector<uint8_t> forced(d.size(), 0);
    int64_t main_id = -1;
    for (size_t i = 0; i < d.size(); ++i) {
      const Node& node = m.node(d.nodes[i]);
      forced[i] = node.stream_id < 0 || DynamicStreamAllocator::IsForcedMainStreamNode(node);
      full[i] = forced[i] ? 0 : (a.stream_of[i] >= 0 ? a.stream_of[i] + 1 : -1);
      if (forced[i] && main_id < 0 && node.stream_id >= 0) main_id = node.stream_id;
    }
    const int64_t mode_ms = EstimateMakespan(d, full, costs);
    const int64_t current = EstimateMakespan(d, CurrentAssignment(m, d, forced, main_id), costs);
    if (current < mode_ms) {
      if (log) {
        log->Record(kName, "DagStreamsKeptDefault", "", Field("graph", m.graph(g).name),
                    Field("mode", mode_name), Field("makespan", mode_ms),
                    Field("default_makespan", current));
      }
      r.streams = 0;
      r.makespan = current;
      r.lower_bound = std::min(r.lower_bound, current);  // the default may use more than N streams
      return r;
    }
  }
  if (home_stream < 0) {
    if (never_worse && !main_pin) {
      const GuardEstimates e = EstimateWithoutHome(m, d, a.stream_of, d, costs);
      if (e.current < e.mode) {
        if (log) {
          log->Record(kName, "DagStreamsKeptDefault", "", Field("graph", m.graph(g).name),
                      Field("mode", mode_name), Field("makespan", e.mode),
                      Field("default_makespan", e.current));
        }
        r.streams = 0;
        r.makespan = e.current;
        r.lower_bound =
            std::min(r.lower_bound, e.current);  // the default may use more than N streams
        return r;
      }
    }
    for (size_t i = 0; i < d.size(); ++i) {
      if (d.writable[i] && a.stream_of[i] >= 0)
        m.node(d.nodes[i]).stream_id = base + a.stream_of[i];
    }
    return r;
  }
  const int64_t current = EstimateMakespan(d, CurrentAssignment(m, d, pinned, home_stream), costs);
  if (current < r.makespan) {
    if (log) {
      log->Record(kName, "DagStreamsKeptDefault", "", Field("graph", m.graph(g).name),
                  Field("mode", mode_name), Field("makespan", r.makespan),
                  Field("default_makespan", current));
    }
    r.streams = 0;
    r.makespan = current;
    r.lower_bound = std::min(r.lower_bound, current);  // the default may use more than N streams
    return r;
  }
  if (fresh_home) {
    r.streams = top + 1;  // indices 0..top from base, the NetOutput on index 0
    for (size_t i = 0; i < d.size(); ++i) {
      if ((d.writable[i] || pinned[i]) && full[i] >= 0)
        m.node(d.nodes[i]).stream_id = base + full[i];
    }
    return r;
  }
  r.streams = std::max<int32_t>(top, 0);  // indices 1..top from base
  for (size_t i = 0; i < d.size(); ++i) {
    if (!d.writable[i] || a.stream_of[i] < 0) continue;
    m.node(d.nodes[i]).stream_id = a.stream_of[i] == 0 ? home_stream : base + a.stream_of[i] - 1;
  }
  return r;
}

}  // namespace npuplan::stream
