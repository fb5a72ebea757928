// DagStreamAllocator's routes: the minimum path cover of the residual DAG
// (Hopcroft–Karp on the split bipartite graph) and GE's scored merge of the
// routes into at most N streams (dag_stream_allocator.h, stages 2 and 3).
#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "npuplan/stream/dag_stream_allocator.h"

namespace npuplan::stream {

// ---------------------------------------------------------------------------
// Stage 2: path cover.

namespace {

// Residual CSR over all local indices (non-kept nodes have no edges).
struct Residual {
  std::vector<uint32_t> off;
  std::vector<int32_t> adj;
};

Residual BuildResidual(const StreamDag& d, const std::vector<uint8_t>& keep, size_t cap) {
  const size_t n = d.size();
  // bridge(v) for removed v: kept nodes reachable through removed nodes only.
  std::vector<std::vector<int32_t>> bridge(n);
  for (size_t k = n; k-- > 0;) {
    if (keep[k]) continue;
    std::vector<int32_t>& b = bridge[k];
    for (uint32_t e = d.succ_offsets[k]; e < d.succ_offsets[k + 1] && b.size() < cap; ++e) {
      int32_t w = d.succ[e];
      if (keep[w]) {
        b.push_back(w);
      } else {
        for (int32_t x : bridge[w]) {
          if (b.size() >= cap) break;
          b.push_back(x);
        }
      }
    }
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
  }
  Residual r;
  r.off.assign(n + 1, 0);
  std::vector<int32_t> tmp;
  for (size_t u = 0; u < n; ++u) {
    if (keep[u]) {
      tmp.clear();
      for (uint32_t e = d.succ_offsets[u]; e < d.succ_offsets[u + 1]; ++e) {
        int32_t w = d.succ[e];
        if (keep[w]) {
          tmp.push_back(w);
        } else {
          tmp.insert(tmp.end(), bridge[w].begin(), bridge[w].end());
        }
      }
      std::sort(tmp.begin(), tmp.end());
      tmp.erase(std::unique(tmp.begin(), tmp.end()), tmp.end());
      r.adj.insert(r.adj.end(), tmp.begin(), tmp.end());
    }
    r.off[u + 1] = static_cast<uint32_t>(r.adj.size());
    // Free bridge sets of removed nodes no longer needed is not possible in
    // this order (predecessors come later in reverse); they are kept.
  }
  return r;
}

// Hopcroft–Karp maximum matching on left u → right v (v in r.adj[u]).
int64_t HopcroftKarp(const Residual& r, size_t n, std::vector<int32_t>& match_l,
                     std::vector<int32_t>& match_r) {
  match_l.assign(n, -1);
  match_r.assign(n, -1);
  int64_t matching = 0;
  // Greedy start, in topological order.
  for (size_t u = 0; u < n; ++u) {
    for (uint32_t e = r.off[u]; e < r.off[u + 1]; ++e) {
      int32_t v = r.adj[e];
      if (match_r[v] < 0) {
        match_l[u] = v;
        match_r[v] = static_cast<int32_t>(u);
        ++matching;
        break;
      }
    }
  }
  constexpr int32_t kInf = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> dist(n), queue;
  std::vector<uint32_t> it(n);
  std::vector<int32_t> stack;
  queue.reserve(n);
  while (true) {
    queue.clear();
    for (size_t u = 0; u < n; ++u) {
      if (match_l[u] < 0 && r.off[u] != r.off[u + 1]) {
        dist[u] = 0;
        queue.push_back(static_cast<int32_t>(u));
      } else {
        dist[u] = kInf;
      }
    }
    bool found = false;
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      int32_t u = queue[qi];
      for (uint32_t e = r.off[u]; e < r.off[u + 1]; ++e) {
        int32_t w = match_r[r.adj[e]];
        if (w < 0) {
          found = true;
        } else if (dist[w] == kInf) {
          dist[w] = dist[u] + 1;
          queue.push_back(w);
        }
      }
    }
    if (!found) break;
    for (size_t u = 0; u < n; ++u) it[u] = r.off[u];
    int64_t gained = 0;
    for (size_t root = 0; root < n; ++root) {
      if (match_l[root] >= 0 || dist[root] != 0) continue;
      stack.assign(1, static_cast<int32_t>(root));
      while (!stack.empty()) {
        int32_t u = stack.back();
        if (it[u] == r.off[u + 1]) {
          dist[u] = kInf;
          stack.pop_back();
          if (!stack.empty()) ++it[stack.back()];
          continue;
        }
        int32_t v = r.adj[it[u]];
        int32_t w = match_r[v];
        if (w < 0) {
          for (int32_t x : stack) {
            int32_t vv = r.adj[it[x]];
            match_l[x] = vv;
            match_r[vv] = x;
          }
          ++gained;
          break;
        }
        if (dist[w] == dist[u] + 1) {
          stack.push_back(w);
        } else {
          ++it[u];
        }
      }
    }
    if (gained == 0) break;
    matching += gained;
  }
  return matching;
}

}  // namespace

PathCover MinimumPathCover(const StreamDag& d, const std::vector<uint8_t>& keep,
                           size_t bridge_cap) {
  const size_t n = d.size();
  Residual r = BuildResidual(d, keep, bridge_cap);
  PathCover pc;
  pc.residual_edges = static_cast<int64_t>(r.adj.size());
  std::vector<int32_t> match_l, match_r;
  pc.matching = HopcroftKarp(r, n, match_l, match_r);
  for (size_t u = 0; u < n; ++u) {
    if (!keep[u]) continue;
    ++pc.residual_nodes;
    if (match_r[u] >= 0) continue;  // not a route head
    std::vector<int32_t> route;
    for (int32_t x = static_cast<int32_t>(u); x >= 0; x = match_l[x]) route.push_back(x);
    pc.routes.push_back(std::move(route));
  }
  return pc;
}

// ---------------------------------------------------------------------------
// Stage 3: merge.

namespace {

constexpr int kWindow = 6;
constexpr size_t kMaxCandidates = 6;

// GE's scored merge, one route ("unit") at a time in UnitOrder: each goes to
// the candidate stream of lowest score (MergeRoutes).
class RouteMerger {
 public:
  RouteMerger(const StreamDag& d, const PathCover& pc, MergeAlgorithm algo, int64_t limit)
      : d_(d),
        pc_(pc),
        n_(d.size()),
        limit_(limit),
        weighted_(algo == MergeAlgorithm::kWeightedLoadBalance),
        main_mode_(algo == MergeAlgorithm::kMainStream) {}

  std::vector<int32_t> Merge() {
    const size_t units = pc_.routes.size();
    std::vector<int32_t> unit_stream(units, -1);
    if (units == 0) return unit_stream;
    ComputeLevels();
    if (weighted_) ComputeMeanCost();
    ComputeGlobalHistogram();
    node_stream_.assign(n_, -1);
    unit_window_.assign(kWindow, 0.0);
    for (int32_t u : UnitOrder()) unit_stream[u] = PlaceRoute(pc_.routes[u]);
    return unit_stream;
  }

 private:
  struct Stream {
    std::vector<float> hist;
    double size = 0;
  };
  // What one route brings: its size, its histogram over the window from its
  // first level, and its mass on levels with one node.
  struct RouteProfile {
    int32_t l0 = 0;
    double usize = 0;
    double solo_mass = 0;
    bool all_solo = true;
    int64_t total_edges = 0;  // edges to nodes already on a stream
  };

  double Weight(int32_t x) const {
    return weighted_ ? static_cast<double>(d_.cost[x]) / mean_cost_ : 1.0;
  }

  // Unit of each node, levels (longest path over the routes' nodes, original
  // edges bridged by plain longest path over all nodes).
  void ComputeLevels() {
    unit_of_.assign(n_, -1);
    for (size_t u = 0; u < pc_.routes.size(); ++u) {
      for (int32_t x : pc_.routes[u]) unit_of_[x] = static_cast<int32_t>(u);
    }
    level_.assign(n_, 0);
    int32_t max_level = 0;
    for (size_t u = 0; u < n_; ++u) {
      const int32_t step = unit_of_[u] >= 0 ? 1 : 0;  // removed nodes do not add a level
      for (uint32_t e = d_.succ_offsets[u]; e < d_.succ_offsets[u + 1]; ++e) {
        int32_t v = d_.succ[e];
        level_[v] = std::max(level_[v], level_[u] + step);
      }
      if (unit_of_[u] >= 0) max_level = std::max(max_level, level_[u]);
    }
    levels_ = static_cast<size_t>(max_level) + 1 + kWindow;
  }

  void ComputeMeanCost() {
    double total = 0;
    int64_t cnt = 0;
    for (size_t u = 0; u < n_; ++u) {
      if (unit_of_[u] >= 0) total += static_cast<double>(d_.cost[u]), ++cnt;
    }
    mean_cost_ = cnt > 0 && total > 0 ? total / cnt : 1;
  }

  void ComputeGlobalHistogram() {
    global_hist_.assign(levels_, 0);
    for (size_t u = 0; u < n_; ++u) {
      if (unit_of_[u] >= 0) ++global_hist_[level_[u]];
    }
  }

  // Unit order: earliest level, larger first, more interacting first, head.
  std::vector<int32_t> UnitOrder() const {
    const size_t units = pc_.routes.size();
    std::vector<int64_t> interaction(units, 0);
    for (size_t u = 0; u < n_; ++u) {
      if (unit_of_[u] < 0) continue;
      for (uint32_t e = d_.succ_offsets[u]; e < d_.succ_offsets[u + 1]; ++e) {
        int32_t v = d_.succ[e];
        if (unit_of_[v] >= 0 && unit_of_[v] != unit_of_[u])
          ++interaction[unit_of_[u]], ++interaction[unit_of_[v]];
      }
    }
    std::vector<int32_t> order(units);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      const auto& ra = pc_.routes[a];
      const auto& rb = pc_.routes[b];
      if (level_[ra[0]] != level_[rb[0]]) return level_[ra[0]] < level_[rb[0]];
      if (ra.size() != rb.size()) return ra.size() > rb.size();
      if (interaction[a] != interaction[b]) return interaction[a] > interaction[b];
      return ra[0] < rb[0];
    });
    return order;
  }

  // The route's profile (unit_window_ holds its window histogram) and its
  // edges to each stream (edges_to_).
  RouteProfile Profile(const std::vector<int32_t>& route) {
    RouteProfile p;
    p.l0 = level_[route[0]];
    std::fill(unit_window_.begin(), unit_window_.end(), 0.0);
    for (int32_t x : route) {
      p.usize += Weight(x);
      if (level_[x] - p.l0 < kWindow) unit_window_[level_[x] - p.l0] += Weight(x);
      if (global_hist_[level_[x]] == 1) {
        p.solo_mass += Weight(x);
      } else {
        p.all_solo = false;
      }
    }
    edges_to_.assign(streams_.size(), 0);
    for (int32_t x : route) {
      auto count = [&](int32_t y) {
        if (node_stream_[y] >= 0) ++edges_to_[node_stream_[y]], ++p.total_edges;
      };
      for (uint32_t e = d_.succ_offsets[x]; e < d_.succ_offsets[x + 1]; ++e) count(d_.succ[e]);
      for (uint32_t e = d_.pred_offsets[x]; e < d_.pred_offsets[x + 1]; ++e) count(d_.pred[e]);
    }
    return p;
  }

  double WindowLoad(int32_t s, int32_t l0) const {
    double w = 0;
    for (int k = 0; k < kWindow; ++k) w += streams_[s].hist[l0 + k];
    return w;
  }

  double Conflict(int32_t s, int32_t l0) const {
    if (s == static_cast<int32_t>(streams_.size())) return 0.0;
    double c = 0;
    for (int k = 0; k < kWindow; ++k) c += unit_window_[k] * streams_[s].hist[l0 + k];
    return c;
  }

  // Stream 0 (MainStream), the three streams with most edges to the route,
  // the three lightest in its window, and a new stream while fewer than N.
  std::vector<int32_t> Candidates(const RouteProfile& p) const {
    const int32_t kNew = static_cast<int32_t>(streams_.size());
    const bool can_open = static_cast<int64_t>(streams_.size()) < limit_;
    std::vector<int32_t> cands;
    auto add = [&](int32_t s) {
      if (std::find(cands.begin(), cands.end(), s) == cands.end()) cands.push_back(s);
    };
    const bool forced_zero = main_mode_ && (global_hist_[p.l0] == 1 || p.all_solo);
    if (forced_zero) return {0};  // kNew when no stream exists yet
    if (main_mode_ && !streams_.empty()) add(0);
    std::vector<int32_t> adjacent;
    for (int32_t s = 0; s < kNew; ++s) {
      if (edges_to_[s] > 0) adjacent.push_back(s);
    }
    std::sort(adjacent.begin(), adjacent.end(), [&](int32_t a, int32_t b) {
      if (edges_to_[a] != edges_to_[b]) return edges_to_[a] > edges_to_[b];
      if (streams_[a].size != streams_[b].size) return streams_[a].size < streams_[b].size;
      return a < b;
    });
    for (int32_t s : adjacent) {
      if (cands.size() >= 3) break;
      add(s);
    }
    std::vector<std::pair<double, int32_t>> light;
    for (int32_t s = 0; s < kNew; ++s)
      light.emplace_back(main_mode_ ? Conflict(s, p.l0) : WindowLoad(s, p.l0), s);
    std::sort(light.begin(), light.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      if (streams_[a.second].size != streams_[b.second].size)
        return streams_[a.second].size < streams_[b.second].size;
      return a.second < b.second;
    });
    for (size_t i = 0; i < light.size() && i < 3; ++i) add(light[i].second);
    if (cands.size() >= kMaxCandidates) cands.resize(kMaxCandidates - 1);
    if (can_open) add(kNew);
    return cands;
  }

  // GE's score of putting the route on stream s (kNew: a new one).
  double Score(int32_t s, const RouteProfile& p) const {
    const bool fresh = s == static_cast<int32_t>(streams_.size());
    const double cross = static_cast<double>(p.total_edges - (fresh ? 0 : edges_to_[s]));
    if (main_mode_) {
      return 3 * cross + 4 * Conflict(s, p.l0) + 2 * (fresh ? 1 : 0) -
             4 * p.solo_mass * (s == 0 ? 1 : 0);
    }
    double peak = 0, sum = 0, h[kWindow];
    for (int k = 0; k < kWindow; ++k) {
      h[k] = (fresh ? 0.0 : streams_[s].hist[p.l0 + k]) + unit_window_[k];
      peak = std::max(peak, h[k]);
      sum += h[k];
    }
    double mean = sum / kWindow, var = 0;
    for (double v : h) var += (v - mean) * (v - mean);
    var /= kWindow;
    return 3 * cross + 4 * (peak + var) + 1 * ((fresh ? 0 : streams_[s].size) + p.usize) +
           2 * (fresh ? 1 : 0);
  }

  // Puts the route on its best candidate; returns that stream.
  int32_t PlaceRoute(const std::vector<int32_t>& route) {
    const RouteProfile p = Profile(route);
    double best_score = std::numeric_limits<double>::infinity();
    int32_t best = -1;
    for (int32_t s : Candidates(p)) {
      const double score = Score(s, p);
      if (score < best_score) best_score = score, best = s;
    }
    if (best == static_cast<int32_t>(streams_.size()))
      streams_.push_back({std::vector<float>(levels_, 0.f), 0});
    Stream& st = streams_[best];
    for (int32_t x : route) {
      st.hist[level_[x]] += static_cast<float>(Weight(x));
      node_stream_[x] = best;
    }
    st.size += p.usize;
    return best;
  }

  const StreamDag& d_;
  const PathCover& pc_;
  const size_t n_;
  const int64_t limit_;
  const bool weighted_;
  const bool main_mode_;
  double mean_cost_ = 1;
  std::vector<int32_t> unit_of_;
  std::vector<int32_t> level_;
  size_t levels_ = 0;
  std::vector<int32_t> global_hist_;
  std::vector<Stream> streams_;
  std::vector<int32_t> node_stream_;
  std::vector<int64_t> edges_to_;    // per stream, scratch
  std::vector<double> unit_window_;  // the current route's window histogram
};

}  // namespace

std::vector<int32_t> MergeRoutes(const StreamDag& d, const PathCover& pc, MergeAlgorithm algo,
                                 int64_t limit) {
  return RouteMerger(d, pc, algo, std::max<int64_t>(limit, 1)).Merge();
}

}  // namespace npuplan::stream
