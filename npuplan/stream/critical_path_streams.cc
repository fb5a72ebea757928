// CriticalPath:N — the per-graph choice among candidate assignments (and,
// with reorder, execution orders) by estimated makespan, the local search,
// and the write-back. The list schedulers are in critical_path_schedules.cc.
#include "npuplan/stream/critical_path_streams.h"

#include <algorithm>
#include <limits>
#include <map>

#include "npuplan/stream/dynamic_stream_allocator.h"

namespace npuplan::stream {
namespace {

// Dynamic-level scheduling costs O(n · 64 · degree · N): larger graphs keep
// the priority orders only.
constexpr size_t kDynamicLevelMaxNodes = 100'000;

// Streams used by an assignment (max index + 1).
int64_t CountStreams(const std::vector<int32_t>& s) {
  int32_t mx = -1;
  for (int32_t v : s) mx = std::max(mx, v);
  return mx + 1;
}

// Local search: move single nodes between the streams in use (never a
// pinned or serial-label node, never onto a serial stream), keeping a move
// when the estimate drops; passes in topological order until none helps or
// the budget (estimate evaluations × graph size) is spent. True when a move
// was kept; `makespan` is then the new estimate.
bool LocalSearch(const StreamDag& d, const std::vector<uint8_t>& pinned, bool pin, const StreamCostModel& costs,
                 std::vector<int32_t>& cur, int64_t& makespan) {
  const size_t n = d.size();
  std::vector<uint8_t> movable(n, 0);
  std::vector<int32_t> targets;
  for (size_t i = 0; i < n; ++i) {
    movable[i] = d.writable[i] && d.serial[i].empty() && !pinned[i] && cur[i] >= 0;
    if (movable[i] && std::find(targets.begin(), targets.end(), cur[i]) == targets.end()) targets.push_back(cur[i]);
  }
  if (pin && std::find(targets.begin(), targets.end(), 0) == targets.end()) targets.push_back(0);
  std::sort(targets.begin(), targets.end());
  constexpr int64_t kBudget = 20'000'000;  // ≈ node + edge visits of all evaluations
  const int64_t per_eval = static_cast<int64_t>(n + d.pred.size()) + 1;
  int64_t evals_left = targets.size() > 1 ? kBudget / per_eval : 0;
  bool improved = true, moved = false;
  while (improved && evals_left > 0) {
    improved = false;
    for (size_t i = 0; i < n && evals_left > 0; ++i) {
      if (!movable[i]) continue;
      const int32_t from = cur[i];
      for (int32_t t : targets) {
        if (t == from || evals_left-- <= 0) continue;
        cur[i] = t;
        const int64_t ms = EstimateMakespan(d, cur, costs);
        if (ms < makespan) {
          makespan = ms;
          improved = moved = true;
          break;
        }
        cur[i] = from;
      }
    }
  }
  return moved;
}

// The per-graph choice: candidate assignments (index 0 = the main stream when
// pinned) and the one with the best estimated makespan.
struct Choice {
  StreamDag dag;
  std::vector<uint8_t> pinned;
  std::vector<int32_t> stream_of;
  // The stream index 0 is written to when it is not a dynamic graph's main
  // stream: the static graph's home stream (-1 = none).
  int64_t home = -1;
  // Reorder: `dag` (and `pinned`, `stream_of`) are in another execution
  // order than the graph's, which Run then writes back.
  bool reordered = false;
  int64_t makespan = 0;
  int64_t lower_bound = 0;
  int64_t path_bound = 0;  // the critical-path part of lower_bound
  int64_t work = 0;
  std::string name;
};

// Builds one graph's Choice: the candidates (in the graph's own order and,
// with reorder, in other execution orders), then the best by estimate.
class Chooser {
 public:
  // `main_pin`: a dynamic graph's forced-main-stream nodes are pinned to
  // index 0; otherwise (static graphs) the nodes left on the home stream are.
  // `never_worse` (npuplan.autoStreams.neverWorse): the graph's current
  // assignment is a candidate too.
  Chooser(const Model& m, int64_t limit, const StreamCostModel& costs, bool main_pin)
      : m_(m), limit_(limit), costs_(costs), main_pin_(main_pin) {}

  Choice Choose(GraphId g, int64_t home, const CriticalPathStreams::Subtree* subtree, bool reorder,
                bool never_worse) {
    PinAndBound(g, home, subtree);
    Generate(c_.dag, c_.pinned, -1);
    if (never_worse) AddCurrentAssignment();
    if (reorder) AddReorderedCandidates();
    PickBest();
    return std::move(c_);
  }

 private:
  // A candidate assignment in the graph's own order or in orders_[order].
  struct Candidate {
    std::string name;
    std::vector<int32_t> stream_of;
    int order = -1;  // index into `orders_`; -1 = the graph's own order
  };
  // Another execution order: the positions of the graph's own order in it,
  // and the DAG and pins renumbered to it.
  struct Order {
    std::vector<int32_t> positions;
    StreamDag dag;
    std::vector<uint8_t> pinned;
  };

  // The DAG, the pinned nodes, and the lower bound max(critical path, work / N)
  // with subgraph owners at their subgraphs' bounds.
  void PinAndBound(GraphId g, int64_t home, const CriticalPathStreams::Subtree* subtree) {
    c_.dag = BuildStreamDag(m_, g, costs_);
    StreamDag& d = c_.dag;
    n_ = d.size();
    c_.pinned.assign(n_, 0);
    std::vector<int64_t> bound_cost = d.cost;  // owners at their subgraphs' bounds
    c_.work = TotalWork(d);
    if (!main_pin_) {
      c_.home = home;
      c_.pinned = HomePinned(m_, d, c_.home);
    }
    pin_ = main_pin_ || c_.home >= 0;
    if (main_pin_) PinMainStreamNodes(subtree, bound_cost);
    const int64_t lim = std::max<int64_t>(limit_, 1);
    std::swap(d.cost, bound_cost);
    c_.path_bound = CriticalPathLength(d);
    c_.lower_bound = std::max(c_.path_bound, (c_.work + lim - 1) / lim);
    std::swap(d.cost, bound_cost);
  }

  void PinMainStreamNodes(const CriticalPathStreams::Subtree* subtree,
                          std::vector<int64_t>& bound_cost) {
    StreamDag& d = c_.dag;
    for (size_t i = 0; i < n_; ++i) {
      const Node& node = m_.node(d.nodes[i]);
      // On the main stream every pinned node is a queue item: it takes no
      // time when it launches no task (Const, Data, GE_LOCAL ops), but the
      // stream still runs it in order (its waits hold the stream).
      c_.pinned[i] = node.stream_id < 0 || DynamicStreamAllocator::IsForcedMainStreamNode(node);
      // A subgraph owner's subgraphs run on the main stream right after it
      // (execution order): until their NetOutput is done the main stream is
      // held and the owner's consumers wait, so it costs their makespan.
      if (!c_.pinned[i] || subtree == nullptr) continue;
      for (GraphId sub : node.subgraphs) {
        if (sub.index() >= subtree->makespan.size()) continue;
        d.cost[i] += subtree->makespan[sub.index()];
        bound_cost[i] += subtree->lower_bound[sub.index()];
        c_.work += subtree->work[sub.index()];
      }
    }
  }

  // With a main stream, index 0 is it: pinned nodes go there (also when not
  // written back, so that the estimate sees where they run).
  std::vector<int32_t> WithMain(std::vector<int32_t> s, const std::vector<uint8_t>& pinned,
                                int32_t shift) const {
    if (!pin_) return s;
    for (size_t i = 0; i < n_; ++i) {
      if (pinned[i]) {
        s[i] = 0;
      } else if (s[i] >= 0) {
        s[i] += shift;
      }
    }
    return s;
  }

  // One stream (serial labels still apart, as in every candidate).
  std::vector<int32_t> SingleStream(const StreamDag& dd) const {
    std::vector<int32_t> single(n_, -1);
    std::map<std::string, int32_t> serial;
    bool any = pin_;
    for (size_t i = 0; i < n_; ++i) any = any || (dd.writable[i] && dd.serial[i].empty());
    for (size_t i = 0; i < n_; ++i) {
      if (!dd.writable[i]) continue;
      if (dd.serial[i].empty()) {
        single[i] = 0;
      } else {
        auto [it, fresh] =
            serial.emplace(dd.serial[i], static_cast<int32_t>(serial.size()) + (any ? 1 : 0));
        single[i] = it->second;
      }
    }
    return single;
  }

  void Add(std::string name, std::vector<int32_t> s, int order) {
    cands_.push_back(Candidate{std::move(name), std::move(s), order});
  }

  // The candidates over `dd` (the graph's own order when order < 0).
  void Generate(const StreamDag& dd, const std::vector<uint8_t>& pinned, int order) {
    const std::vector<uint8_t>* pins_or_null = pin_ ? &pinned : nullptr;
    const int64_t edge = costs_.EdgeLatency();
    // In another order one stream is the same plan: only in the graph's own.
    if (order < 0) Add("single", WithMain(SingleStream(dd), pinned, 0), order);
    Add("critical-path",
        WithMain(CriticalPathStreams::Schedule(dd, limit_, edge, pins_or_null), pinned, 0), order);
    if (limit_ > 1) {
      Add("critical-chain",
          WithMain(CriticalPathStreams::Schedule(dd, limit_, edge, pins_or_null, true), pinned, 0),
          order);
    }
    // Fewer streams can mean fewer events: the same two schedules with 2, 4, ...
    // streams below the limit (halving), each kept only if its estimate wins.
    for (int64_t k = limit_ / 2; k >= 2; k /= 2) {
      Add("critical-path",
          WithMain(CriticalPathStreams::Schedule(dd, k, edge, pins_or_null), pinned, 0), order);
      Add("critical-chain",
          WithMain(CriticalPathStreams::Schedule(dd, k, edge, pins_or_null, true), pinned, 0),
          order);
    }
    if (limit_ > 1) {
      // GE's merges beside a dynamic graph's main stream; on a static graph
      // their stream 0 shares the home stream, as DagStreamAllocator writes it.
      const int32_t shift = main_pin_ ? 1 : 0;
      Add("LoadBalance",
          WithMain(AssignDag(dd, MergeAlgorithm::kLoadBalance, limit_).stream_of, pinned, shift),
          order);
      Add("MainStream",
          WithMain(AssignDag(dd, MergeAlgorithm::kMainStream, limit_).stream_of, pinned, shift),
          order);
    }
  }

  // The graph's current assignment (default chain or dynamic allocator), so
  // that the choice is never worse than it under the cost model. A dynamic
  // graph's forced nodes sit on its main stream (the lowest id).
  void AddCurrentAssignment() {
    const StreamDag& d = c_.dag;
    int64_t current_home = c_.home;
    for (size_t i = 0; i < n_ && main_pin_ && current_home < 0; ++i) {
      if (c_.pinned[i] && m_.node(d.nodes[i]).stream_id >= 0)
        current_home = m_.node(d.nodes[i]).stream_id;
    }
    cands_.push_back(Candidate{"default", CurrentAssignment(m_, d, c_.pinned, current_home), -1});
  }

  // Index of `positions` in `orders_`, added when new (`fresh`); -1 when it
  // is the graph's own order.
  int OrderIndex(std::vector<int32_t> positions, bool& fresh) {
    fresh = false;
    bool own = true;
    for (size_t i = 0; i < n_ && own; ++i) own = positions[i] == static_cast<int32_t>(i);
    if (own) return -1;
    const auto it = std::find_if(orders_.begin(), orders_.end(),
                                 [&](const Order& o) { return o.positions == positions; });
    if (it != orders_.end()) return static_cast<int>(it - orders_.begin());
    std::vector<uint8_t> p(n_);
    for (size_t i = 0; i < n_; ++i) p[i] = c_.pinned[positions[i]];
    StreamDag dag = PermuteStreamDag(c_.dag, positions);
    orders_.push_back(Order{std::move(positions), std::move(dag), std::move(p)});
    fresh = true;
    return static_cast<int>(orders_.size()) - 1;
  }

  void AddReorderedCandidates() {
    const StreamDag& d = c_.dag;
    bool fresh = false;
    // Priority orders: bottom level without and with the event charge on
    // every edge (the latter favours long chains of small nodes); every
    // candidate above again in each.
    for (int64_t edge : {int64_t{0}, costs_.EdgeLatency()}) {
      const int o = OrderIndex(CriticalPathStreams::PriorityOrder(d, edge), fresh);
      if (fresh) Generate(orders_[o].dag, orders_[o].pinned, o);
    }
    // Dynamic-level schedules choose the order and the streams together;
    // with N, N/2, ... ≥ 2 streams, on graphs of up to kDynamicLevelMaxNodes.
    for (int64_t k = limit_; k >= 2 && n_ <= kDynamicLevelMaxNodes; k /= 2) {
      std::vector<int32_t> order;
      std::vector<int32_t> by_node = CriticalPathStreams::DynamicLevelSchedule(
          d, k, costs_.EdgeLatency(), pin_ ? &c_.pinned : nullptr, order);
      std::vector<int32_t> by_position(n_);
      for (size_t i = 0; i < n_; ++i) by_position[i] = by_node[order[i]];
      const int o = OrderIndex(std::move(order), fresh);
      cands_.push_back(
          Candidate{"dynamic-level", o < 0 ? std::move(by_node) : std::move(by_position), o});
    }
  }

  // Per order, the best candidate by estimate, improved by the local search;
  // then the best of those (ties: the graph's own order).
  void PickBest() {
    int64_t best_ms = std::numeric_limits<int64_t>::max();
    int chosen_order = -1;
    for (int o = -1; o < static_cast<int>(orders_.size()); ++o) {
      const StreamDag& dd = o < 0 ? c_.dag : orders_[o].dag;
      const std::vector<uint8_t>& pinned = o < 0 ? c_.pinned : orders_[o].pinned;
      size_t best = cands_.size();
      int64_t ms = std::numeric_limits<int64_t>::max();
      for (size_t k = 0; k < cands_.size(); ++k) {
        if (cands_[k].order != o) continue;
        const int64_t e = EstimateMakespan(dd, cands_[k].stream_of, costs_);
        if (e < ms) ms = e, best = k;
      }
      if (best == cands_.size()) continue;
      const bool moved = LocalSearch(dd, pinned, pin_, costs_, cands_[best].stream_of, ms);
      if (ms >= best_ms) continue;
      best_ms = ms;
      chosen_order = o;
      c_.stream_of = std::move(cands_[best].stream_of);
      c_.makespan = ms;
      c_.name = cands_[best].name + (o >= 0 ? "+reorder" : "") + (moved ? "+search" : "");
    }
    // The default assignment may use more than N streams.
    if (c_.name.rfind("default", 0) == 0) c_.lower_bound = std::min(c_.lower_bound, c_.makespan);
    // So may every candidate: serial labels keep streams apart, and the main
    // stream holds the pinned nodes. work / N bounds N streams only; with
    // more, the chosen plan's own count divides the work (property seed
    // 693: CriticalPath:2 on a labelled graph chose 6 streams and estimated
    // under work / 2).
    const int64_t used = CountStreams(c_.stream_of);
    if (used > limit_ && c_.work > 0) {
      c_.lower_bound =
          std::min(c_.lower_bound, std::max(c_.path_bound, (c_.work + used - 1) / used));
    }
    if (chosen_order >= 0) {
      c_.reordered = true;
      c_.dag = std::move(orders_[chosen_order].dag);
      c_.pinned = std::move(orders_[chosen_order].pinned);
    }
  }

  const Model& m_;
  const int64_t limit_;
  const StreamCostModel& costs_;
  const bool main_pin_;
  bool pin_ = false;  // index 0 is a main or home stream
  size_t n_ = 0;
  Choice c_;
  std::vector<Candidate> cands_;
  std::vector<Order> orders_;
};

Choice Choose(const Model& m, GraphId g, int64_t limit, const StreamCostModel& costs, bool main_pin,
              int64_t home, const CriticalPathStreams::Subtree* subtree, bool reorder,
              bool never_worse) {
  return Chooser(m, limit, costs, main_pin).Choose(g, home, subtree, reorder, never_worse);
}

}  // namespace

void CriticalPathStreams::Estimate(const Model& m, GraphId g, int64_t limit,
                                   const StreamCostModel& costs, bool pin_main, Subtree& out,
                                   bool reorder, int64_t home, bool /*fresh_home*/,
                                   bool never_worse) {
  const size_t k = m.num_graphs();
  out.makespan.resize(k, 0), out.lower_bound.resize(k, 0), out.work.resize(k, 0);
  Choice c = Choose(m, g, limit, costs, pin_main, home, &out, reorder, never_worse);
  out.makespan[g.index()] = c.makespan;
  out.lower_bound[g.index()] = c.lower_bound;
  out.work[g.index()] = c.work;
}

CriticalPathStreams::Result CriticalPathStreams::Run(Model& m, GraphId g, int64_t limit,
                                                     int64_t base, DecisionLog* log,
                                                     const StreamCostModel& costs,
                                                     int64_t main_stream, const Subtree* subtree,
                                                     bool reorder, int64_t home, bool fresh_home,
                                                     bool never_worse) {
  Choice c = Choose(m, g, limit, costs, main_stream >= 0, home, subtree, reorder, never_worse);
  if (never_worse && main_stream < 0 && c.home < 0) {
    // A static graph without a home stream: the NetOutput stays where it is,
    // on a stream of its own beside the choice; keep the current assignment
    // when that estimates lower.
    const StreamDag own = BuildStreamDag(m, g, costs);
    const GuardEstimates e = EstimateWithoutHome(m, c.dag, c.stream_of, own, costs);
    if (e.current < e.mode) {
      Result r;
      r.makespan = e.current;
      r.chosen = "default";
      r.lower_bound =
          std::min(c.lower_bound, e.current);  // the default may use more than N streams
      if (log) {
        log->Record(kName, "CriticalPathStreams", "", Field("graph", m.graph(g).name),
                    Field("chosen", r.chosen), Field("streams", r.streams),
                    Field("makespan", r.makespan), Field("lower_bound", r.lower_bound));
      }
      return r;
    }
  }
  // Index 0: a dynamic graph's main stream, else a static graph's home
  // stream (a fresh one for a static subgraph: then the NetOutput moves too).
  const bool fresh = main_stream < 0 && c.home >= 0 && fresh_home;
  if (main_stream < 0 && !fresh) main_stream = c.home;
  const bool pin = main_stream >= 0;
  const StreamDag& d = c.dag;
  const size_t n = d.size();
  const std::vector<int32_t>& chosen = c.stream_of;
  for (size_t i = 0; i < n; ++i) {
    if (fresh && c.pinned[i]) m.node(d.nodes[i]).stream_id = base;
    if (!d.writable[i] || chosen[i] < 0) continue;
    if (!pin) {
      m.node(d.nodes[i]).stream_id = base + chosen[i];
    } else if (!c.pinned[i]) {
      m.node(d.nodes[i]).stream_id = chosen[i] == 0 ? main_stream : base + chosen[i] - 1;
    }
  }
  if (c.reordered) {
    // The schedule's order becomes the graph's execution order.
    Graph& graph = m.graph(g);
    int64_t moved = 0;
    for (size_t k = 0; k < n; ++k) {
      moved += graph.nodes[k] != d.nodes[k];
      graph.nodes[k] = d.nodes[k];
      m.node(d.nodes[k]).topo_id = static_cast<int64_t>(k);
    }
    if (log) {
      log->Record(kName, "CriticalPathOrder", "", Field("graph", graph.name), Field("moved", moved),
                  Field("nodes", static_cast<int64_t>(n)));
    }
  }
  Result r;
  r.streams = pin ? std::max<int64_t>(CountStreams(chosen) - 1, 0) : CountStreams(chosen);
  r.makespan = c.makespan;
  r.chosen = c.name;
  r.lower_bound = c.lower_bound;
  if (log) {
    log->Record(kName, "CriticalPathStreams", "", Field("graph", m.graph(g).name), Field("chosen", r.chosen),
                Field("streams", r.streams), Field("makespan", r.makespan), Field("lower_bound", r.lower_bound));
  }
  return r;
}

}  // namespace npuplan::stream
