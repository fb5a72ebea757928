#include "npuplan/kernel/scheduler.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"

namespace npuplan::kernel {
namespace {

// Incremental emission state shared by the schedulers: scheduled flags,
// remaining-predecessor counters and the eager-FREE cascade.
class Emitter {
 public:
  explicit Emitter(const KernelGraph& g) : g_(g), scheduled_(g.num_nodes(), 0), rem_(g.num_nodes()) {
    for (int v = 0; v < g.num_nodes(); ++v) rem_[v] = static_cast<int>(g.pred[v].size());
    order_.reserve(g.num_nodes());
  }
  bool scheduled(int v) const { return scheduled_[v] != 0; }
  int remaining(int v) const { return rem_[v]; }
  // Appends v (all its predecessors must be scheduled), then every FREE that
  // became ready. `on_emit` sees each emitted node.
  template <typename F>
  void Emit(int v, F&& on_emit) {
    work_.push_back(v);
    while (!work_.empty()) {
      int x = work_.back();
      work_.pop_back();
      if (scheduled_[x]) continue;
      scheduled_[x] = 1;
      order_.push_back(x);
      on_emit(x);
      for (int s : g_.succ[x]) {
        if (--rem_[s] == 0 && g_.nodes[s].kind == NodeKind::kFree) work_.push_back(s);
      }
    }
  }
  void Emit(int v) {
    Emit(v, [](int) {});
  }
  // Emits v after pulling its unscheduled predecessors (smallest Id first).
  template <typename F>
  void Pull(int v, F&& on_emit) {
    if (scheduled_[v]) return;
    std::vector<std::pair<int, size_t>> stack = {{v, 0}};
    while (!stack.empty()) {
      auto& [x, i] = stack.back();
      if (scheduled_[x]) {
        stack.pop_back();
        continue;
      }
      const auto& preds = g_.pred[x];
      while (i < preds.size() && scheduled_[preds[i]]) ++i;
      if (i < preds.size()) {
        stack.emplace_back(preds[i], 0);
      } else {
        int node = x;
        stack.pop_back();
        Emit(node, on_emit);
      }
    }
  }
  std::vector<int>& order() { return order_; }

 private:
  const KernelGraph& g_;
  std::vector<char> scheduled_;
  std::vector<int> rem_;
  std::vector<int> order_;
  std::vector<int> work_;
};

}  // namespace

Q1Result MinResidencySchedule(const KernelGraph& g, const CacheConfig& config) {
  const int n = g.num_nodes();
  Q1Result result;
  Emitter em(g);
  std::vector<char> counts(config.levels.size(), 0);
  for (const std::string& name : config.vstay_levels) {
    if (int l = config.Find(name); l >= 0) counts[l] = 1;
  }
  std::vector<int> live(config.levels.size(), 0);
  std::vector<int> nonalloc_rem(n, 0), emitted_at(n, -1);
  std::vector<int> candidates;
  for (int v = 0; v < n; ++v) {
    if (g.nodes[v].kind != NodeKind::kOp) continue;
    for (int p : g.pred[v]) nonalloc_rem[v] += g.nodes[p].kind != NodeKind::kAlloc;
    if (nonalloc_rem[v] == 0) candidates.push_back(v);
  }
  auto on_emit = [&](int x) {
    emitted_at[x] = static_cast<int>(em.order().size()) - 1;
    const KernelNode& node = g.nodes[x];
    if (node.kind != NodeKind::kOp) {
      live[g.buffer(node.buf_id).level] += node.kind == NodeKind::kAlloc ? 1 : -1;
    }
    if (node.kind == NodeKind::kAlloc) return;
    for (int s : g.succ[x]) {
      if (g.nodes[s].kind == NodeKind::kOp && --nonalloc_rem[s] == 0) candidates.push_back(s);
    }
  };
  // Emit ALLOC-only-fed FREEs etc. are handled by the cascade.
  std::vector<int> l0_new(config.levels.size(), 0);
  while (!candidates.empty()) {
    size_t best = 0;
    std::tuple<int, int64_t, int, int> best_key{1 << 30, 0, 0, 0};
    for (size_t i = 0; i < candidates.size(); ++i) {
      const int v = candidates[i];
      int infeasible = 0;
      int64_t score = 0;
      int recency = -1;
      std::fill(l0_new.begin(), l0_new.end(), 0);
      for (int p : g.pred[v]) {
        const KernelNode& pn = g.nodes[p];
        if (pn.kind == NodeKind::kAlloc && !em.scheduled(p)) {
          const KernelBuffer& b = g.buffer(pn.buf_id);
          if (counts[b.level]) score += b.size;
          if (config.levels[b.level].is_l0 && (live[b.level] + ++l0_new[b.level]) > 1) infeasible = 1;
        } else if (em.scheduled(p)) {
          recency = std::max(recency, emitted_at[p]);
        }
      }
      for (int bid : g.nodes[v].bufs) {
        const KernelBuffer& b = g.buffer(bid);
        if (!counts[b.level]) continue;
        const int f = b.free_node;
        if (em.remaining(f) == 1 && std::binary_search(g.pred[f].begin(), g.pred[f].end(), v)) score -= b.size;
      }
      std::tuple<int, int64_t, int, int> key{infeasible, score, -recency, v};
      if (i == 0 || key < best_key) {
        best_key = key;
        best = i;
      }
    }
    const int v = candidates[best];
    candidates[best] = candidates.back();
    candidates.pop_back();
    if (std::get<0>(best_key)) result.l0_rule_relaxed = true;
    em.Pull(v, on_emit);
  }
  for (int v = 0; v < n; ++v) em.Pull(v, on_emit);
  result.order = std::move(em.order());
  return result;
}

ResidencyProfile ProfileOrder(const KernelGraph& g, const CacheConfig& config,
                              const std::vector<int>& order) {
  ResidencyProfile p;
  std::vector<char> counts(config.levels.size(), 0);
  for (const std::string& name : config.vstay_levels) {
    if (int l = config.Find(name); l >= 0) counts[l] = 1;
  }
  std::vector<int64_t> cur(config.levels.size(), 0);
  std::vector<int> live(config.levels.size(), 0);
  int64_t combined = 0;
  for (int v : order) {
    const KernelNode& node = g.nodes[v];
    if (node.kind == NodeKind::kOp) continue;
    const int l = g.buffer(node.buf_id).level;
    const int64_t d = node.kind == NodeKind::kAlloc ? node.size : -node.size;
    live[l] += d > 0 ? 1 : -1;
    if (config.levels[l].is_l0 && live[l] > 1) p.l0_single = false;
    if (!counts[l]) continue;
    cur[l] += d;
    combined += d;
    p.combined_peak = std::max(p.combined_peak, combined);
    p.worst_level_peak = std::max(p.worst_level_peak, cur[l]);
  }
  return p;
}

Q1Result BestQ1Schedule(const KernelGraph& g, const CacheConfig& config, int max_band_width) {
  // The greedy is O(N * ready); beyond kGreedyLimit nodes only unit orders run.
  constexpr int kGreedyLimit = 12000;
  Q1Result best;
  if (g.num_nodes() <= kGreedyLimit) {
    best = MinResidencySchedule(g, config);
  } else {
    best.order = DemandDrivenOrder(g, {});
  }
  auto key = [&](const std::vector<int>& order) {
    ResidencyProfile p = ProfileOrder(g, config, order);
    return std::make_tuple(p.l0_single ? 0 : 1, p.combined_peak, p.worst_level_peak);
  };
  auto best_key = key(best.order);
  UnitPartition parts = PartitionUnits(g, config);
  for (const UnitOrder& uo : CandidateUnitOrders(g, parts, max_band_width)) {
    std::vector<int> order = DemandDrivenOrder(g, TargetsFromUnits(parts, uo.units));
    auto k = key(order);
    if (k < best_key) {
      best_key = k;
      best.order = std::move(order);
    }
  }
  best.l0_rule_relaxed = std::get<0>(best_key) != 0;
  return best;
}

std::vector<int> DemandDrivenOrder(const KernelGraph& g, const std::vector<int>& targets) {
  Emitter em(g);
  auto noop = [](int) {};
  for (int t : targets) em.Pull(t, noop);
  for (int v = 0; v < g.num_nodes(); ++v) em.Pull(v, noop);
  return std::move(em.order());
}

UnitPartition PartitionUnits(const KernelGraph& g, const CacheConfig& config) {
  const int n = g.num_nodes();
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const KernelBuffer& b : g.buffers) {
    if (!config.levels[b.level].is_l0) continue;
    for (size_t i = 1; i < b.users.size(); ++i) {
      int a = find(b.users[0]), c = find(b.users[i]);
      if (a != c) parent[std::max(a, c)] = std::min(a, c);
    }
  }
  UnitPartition p;
  p.unit_of.assign(n, -1);
  std::vector<int> root_unit(n, -1);
  for (int v = 0; v < n; ++v) {
    const KernelNode& node = g.nodes[v];
    if (node.kind != NodeKind::kOp) continue;
    bool uses_l0 = false;
    for (int b : node.bufs) uses_l0 |= config.levels[g.buffer(b).level].is_l0;
    bool source = true;
    for (int q : g.pred[v]) source &= g.nodes[q].kind == NodeKind::kAlloc;
    if (source && !uses_l0) continue;  // pulled on demand by its consumers
    int r = find(v);
    if (root_unit[r] < 0) {
      root_unit[r] = static_cast<int>(p.units.size());
      p.units.emplace_back();
    }
    p.unit_of[v] = root_unit[r];
    p.units[root_unit[r]].push_back(v);
  }
  return p;
}

std::vector<int> TargetsFromUnits(const UnitPartition& p, const std::vector<int>& unit_order) {
  std::vector<int> t;
  for (int u : unit_order) t.insert(t.end(), p.units[u].begin(), p.units[u].end());
  return t;
}

std::vector<int> PairInterleavedTargets(const KernelGraph& g, const CacheConfig& config,
                                        const UnitPartition& p,
                                        const std::vector<int>& unit_order) {
  // Chunks of a unit: its ops up to and including each use of its most used L0 buffer.
  auto chunks = [&](int u) {
    std::map<int, int> uses;
    for (int v : p.units[u]) {
      for (int b : g.nodes[v].bufs) {
        if (config.levels[g.buffer(b).level].is_l0) ++uses[b];
      }
    }
    int acc = -1, best = 0;
    for (auto [b, c] : uses) {
      if (c > best) {
        best = c;
        acc = b;
      }
    }
    std::vector<std::vector<int>> out(1);
    for (int v : p.units[u]) {
      out.back().push_back(v);
      const auto& bufs = g.nodes[v].bufs;
      if (std::find(bufs.begin(), bufs.end(), acc) != bufs.end()) out.emplace_back();
    }
    if (out.back().empty()) out.pop_back();
    return out;
  };
  std::vector<int> t;
  for (size_t i = 0; i < unit_order.size(); i += 2) {
    if (i + 1 == unit_order.size()) {
      t.insert(t.end(), p.units[unit_order[i]].begin(), p.units[unit_order[i]].end());
      break;
    }
    auto a = chunks(unit_order[i]), b = chunks(unit_order[i + 1]);
    for (size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
      if (k < a.size()) t.insert(t.end(), a[k].begin(), a[k].end());
      if (k < b.size()) t.insert(t.end(), b[k].begin(), b[k].end());
    }
  }
  return t;
}

std::vector<UnitOrder> CandidateUnitOrders(const KernelGraph& g, const UnitPartition& p, int max_width) {
  const int num_units = static_cast<int>(p.units.size());
  std::vector<UnitOrder> out;
  std::vector<int> natural(num_units);
  std::iota(natural.begin(), natural.end(), 0);
  out.push_back({"natural", natural});

  // Shared buffers grouped by their set of user units.
  std::map<std::vector<int>, int> group_of_key;
  std::vector<std::vector<int>> unit_groups(num_units);
  for (const KernelBuffer& b : g.buffers) {
    std::vector<int> us;
    for (int v : b.users) {
      if (p.unit_of[v] >= 0) us.push_back(p.unit_of[v]);
    }
    std::sort(us.begin(), us.end());
    us.erase(std::unique(us.begin(), us.end()), us.end());
    if (us.size() < 2) continue;
    auto [it, inserted] = group_of_key.emplace(us, static_cast<int>(group_of_key.size()));
    if (!inserted) continue;
    for (int u : us) unit_groups[u].push_back(it->second);
  }
  const int num_groups = static_cast<int>(group_of_key.size());
  if (num_groups < 4) return out;
  // 2-colour the group graph formed by units that read exactly two groups.
  std::vector<std::vector<int>> adj(num_groups);
  std::vector<int> grid_units;
  for (int u = 0; u < num_units; ++u) {
    if (unit_groups[u].size() != 2) continue;
    grid_units.push_back(u);
    adj[unit_groups[u][0]].push_back(unit_groups[u][1]);
    adj[unit_groups[u][1]].push_back(unit_groups[u][0]);
  }
  if (grid_units.size() < 4) return out;
  std::vector<int> color(num_groups, -1);
  for (int s = 0; s < num_groups; ++s) {
    if (color[s] >= 0 || adj[s].empty()) continue;
    color[s] = 0;
    std::vector<int> q = {s};
    for (size_t i = 0; i < q.size(); ++i) {
      for (int t : adj[q[i]]) {
        if (color[t] < 0) {
          color[t] = 1 - color[q[i]];
          q.push_back(t);
        } else if (color[t] == color[q[i]]) {
          return out;  // not bipartite: no grid structure
        }
      }
    }
  }
  // Rank groups of each colour by the first unit that reads them.
  std::vector<int> first_unit(num_groups, num_units);
  for (int u : grid_units) for (int gr : unit_groups[u]) first_unit[gr] = std::min(first_unit[gr], u);
  std::vector<int> axis[2];
  for (int gr = 0; gr < num_groups; ++gr) if (color[gr] >= 0) axis[color[gr]].push_back(gr);
  std::vector<int> rank(num_groups, -1);
  for (auto& a : axis) {
    std::sort(a.begin(), a.end(), [&](int x, int y) { return std::make_pair(first_unit[x], x) < std::make_pair(first_unit[y], y); });
    for (size_t i = 0; i < a.size(); ++i) rank[a[i]] = static_cast<int>(i);
  }
  std::map<std::pair<int, int>, std::vector<int>> cell;  // (rank axis0, rank axis1) -> units
  for (int u : grid_units) {
    int g0 = unit_groups[u][0], g1 = unit_groups[u][1];
    if (color[g0] == 1) std::swap(g0, g1);
    cell[{rank[g0], rank[g1]}].push_back(u);
  }
  for (int orient = 0; orient < 2; ++orient) {
    const int rows = static_cast<int>(axis[orient].size());
    const int cols = static_cast<int>(axis[1 - orient].size());
    for (int w = 1; w <= std::min(max_width, rows); ++w) {
      std::vector<int> seq;
      for (int band = 0; band * w < rows; ++band) {
        for (int j = 0; j < cols; ++j) {
          const int c = band % 2 == 0 ? j : cols - 1 - j;
          for (int i = 0; i < w && band * w + i < rows; ++i) {
            const int r = band * w + (j % 2 == 0 ? i : std::min(w, rows - band * w) - 1 - i);
            auto it = cell.find(orient == 0 ? std::make_pair(r, c) : std::make_pair(c, r));
            if (it != cell.end()) seq.insert(seq.end(), it->second.begin(), it->second.end());
          }
        }
      }
      // Grid units take the natural slots of grid units, in band order.
      std::vector<int> order = natural;
      std::vector<char> is_grid(num_units, 0);
      for (int u : grid_units) is_grid[u] = 1;
      size_t k = 0;
      for (int& u : order) if (is_grid[u]) u = seq[k++];
      out.push_back({absl::StrCat("band", orient == 0 ? "-rows" : "-cols", "-w", w), std::move(order)});
    }
  }
  return out;
}

}  // namespace npuplan::kernel
