#include "npuplan/kernel/bounds.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <set>
#include <tuple>

#include "npuplan/support/union_find.h"

namespace npuplan::kernel {
namespace {

// Integer bound from an LP value: the true value is an integer >= v; the
// epsilon absorbs rounding of the double sums (values stay far below 2^52).
int64_t CeilBound(double v) {
  if (v <= 0) return 0;
  return static_cast<int64_t>(std::ceil(v - 1e-6 * std::max(1.0, v)));
}

std::vector<int> TopoOrder(const KernelGraph& g) {
  const int n = g.num_nodes();
  std::vector<int> indeg(n), order;
  order.reserve(n);
  for (int v = 0; v < n; ++v) indeg[v] = static_cast<int>(g.pred[v].size());
  for (int v = 0; v < n; ++v) {
    if (indeg[v] == 0) order.push_back(v);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (int s : g.succ[order[i]]) {
      if (--indeg[s] == 0) order.push_back(s);
    }
  }
  return order;
}

int64_t Cycles(const KernelNode& v) { return v.kind == NodeKind::kOp ? v.cycles : 0; }

// Jackson's preemptive schedule for one machine with heads r, tails q and
// processing times p: the optimum of max(C_j + q_j) when jobs may be split,
// a lower bound for the non-preemptive pipe.
int64_t JacksonPreemptive(std::vector<std::tuple<int64_t, int64_t, int64_t>> jobs) {  // (r, p, q)
  std::sort(jobs.begin(), jobs.end());
  std::priority_queue<std::pair<int64_t, int64_t>> avail;  // (q, remaining p)
  int64_t t = 0, best = 0;
  size_t i = 0;
  while (i < jobs.size() || !avail.empty()) {
    if (avail.empty()) t = std::max(t, std::get<0>(jobs[i]));
    while (i < jobs.size() && std::get<0>(jobs[i]) <= t) {
      avail.emplace(std::get<2>(jobs[i]), std::get<1>(jobs[i]));
      ++i;
    }
    auto [q, p] = avail.top();
    avail.pop();
    const int64_t next_release = i < jobs.size() ? std::get<0>(jobs[i]) : INT64_MAX;
    const int64_t run = std::min(p, next_release - t);
    t += run;
    if (run < p) {
      avail.emplace(q, p - run);
    } else {
      best = std::max(best, t + q);
    }
  }
  return best;
}

}  // namespace

double CoverLpDualBound(const std::vector<CoverRow>& rows, const std::vector<int64_t>& size,
                        const std::vector<double>& weight) {
  // Reduced cost r_b = w_b - s_b * (sum of y over rows holding b); a variable
  // with r_b <= 0 is saturated and its cap z_b <= 1 charges s_b per unit of y.
  std::vector<double> reduced(weight);
  std::vector<size_t> idx(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) idx[k] = k;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return rows[a].demand > rows[b].demand; });
  double value = 0;
  std::vector<int> vars;
  for (size_t k : idx) {
    if (rows[k].demand <= 0) break;
    vars = rows[k].vars;
    std::sort(vars.begin(), vars.end());
    vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
    double rate = static_cast<double>(rows[k].demand);
    std::vector<std::pair<double, int>> room;  // y this row can still take before b saturates
    for (int b : vars) {
      if (reduced[b] <= 0) {
        rate -= static_cast<double>(size[b]);
      } else {
        room.emplace_back(reduced[b] / static_cast<double>(size[b]), b);
      }
    }
    if (rate <= 0) continue;
    std::sort(room.begin(), room.end());
    double y = 0;
    for (const auto& [r, b] : room) {
      value += rate * (r - y);
      y = r;
      rate -= static_cast<double>(size[b]);
      if (rate <= 0) break;
    }
    // Rate still positive after every variable saturated: the row cannot be
    // covered at all (the caller's demand exceeds what can be spilled);
    // the LP is infeasible, no finite bound is claimed beyond this point.
    for (int b : vars) {
      if (reduced[b] > 0) reduced[b] -= static_cast<double>(size[b]) * y;
    }
  }
  return value;
}

namespace {

// What ComputeKernelBounds' steps share.
struct BoundsState {
  BoundsState(const KernelGraph& g, const CacheConfig& config, const BoundOptions& options,
              KernelBounds& out)
      : g(g), config(config), options(options), out(out) {}
  const KernelGraph& g;
  const CacheConfig& config;
  const BoundOptions& options;
  KernelBounds& out;
  int n = 0;
  int nb = 0;
  int levels = 0;
  std::vector<int> topo, tpos;
  std::vector<std::vector<int>> must;  // must-live buffer indices, per op
  std::vector<int64_t> user_span;      // time b is resident at least (area bound)
  std::vector<int64_t> head, tail;
};

// Users inside [ALLOC, FREE] by reachability (desc_stamp == bi) run while b
// is resident: their execution intervals are disjoint per pipe and along
// direct edges.
int64_t UserSpan(const BoundsState& st, int bi, const std::vector<int>& desc_stamp) {
  const KernelGraph& g = st.g;
  const KernelBuffer& b = g.buffers[bi];
  std::map<std::string, int64_t> per_pipe;
  std::vector<int> users;
  for (int u : b.users) {
    if (desc_stamp[u] == bi) users.push_back(u);
  }
  std::sort(users.begin(), users.end(), [&](int a, int c) { return st.tpos[a] < st.tpos[c]; });
  std::map<int, int64_t> chain;
  int64_t span = 0;
  for (int u : users) {
    per_pipe[g.nodes[u].pipe] += g.nodes[u].cycles;
    int64_t best = 0;
    for (int p : g.pred[u]) {
      if (auto it = chain.find(p); it != chain.end()) best = std::max(best, it->second);
    }
    chain[u] = best + g.nodes[u].cycles;
    span = std::max(span, chain[u]);
  }
  for (const auto& [pipe, c] : per_pipe) span = std::max(span, c);
  return span;
}

// Must-live sets: b is live at op v in every order iff ALLOC(b) reaches v
// and v reaches FREE(b). Walk 1 marks FREE(b)'s ancestors after ALLOC(b) in
// topological order, walk 2 the descendants of ALLOC(b) among them.
void ComputeMustLive(BoundsState& st) {
  const KernelGraph& g = st.g;
  const std::vector<int>& tpos = st.tpos;
  st.must.assign(st.n, {});
  st.user_span.assign(st.nb, 0);
  std::vector<int> anc_stamp(st.n, -1), desc_stamp(st.n, -1);
  std::vector<int> stack;
  int64_t steps = 0;
  for (int bi = 0; bi < st.nb && st.out.complete; ++bi) {
    const KernelBuffer& b = g.buffers[bi];
    const int lo = tpos[b.alloc_node];
    stack.assign(1, b.free_node);
    anc_stamp[b.free_node] = bi;
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      for (int p : g.pred[v]) {
        ++steps;
        if (tpos[p] > lo && anc_stamp[p] != bi) {
          anc_stamp[p] = bi;
          stack.push_back(p);
        }
      }
    }
    stack.assign(1, b.alloc_node);
    desc_stamp[b.alloc_node] = bi;
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      if (g.nodes[v].kind == NodeKind::kOp) st.must[v].push_back(bi);
      for (int s : g.succ[v]) {
        ++steps;
        if (anc_stamp[s] == bi && desc_stamp[s] != bi) {
          desc_stamp[s] = bi;
          stack.push_back(s);
        }
      }
    }
    if (steps > st.options.max_reach_steps) st.out.complete = false;
    st.user_span[bi] = UserSpan(st, bi, desc_stamp);
  }
}

// Q1 and the covering rows of the free-order traffic LP.
std::vector<CoverRow> Q1AndCoverRows(BoundsState& st) {
  const KernelGraph& g = st.g;
  const CacheConfig& config = st.config;
  const int levels = st.levels;
  std::vector<char> in_vstay(levels, 0);
  for (const std::string& name : config.vstay_levels) {
    if (int l = config.Find(name); l >= 0) in_vstay[l] = 1;
  }
  std::vector<int64_t> vstay(levels, 0);
  std::vector<CoverRow> rows;
  std::vector<int64_t> level_sum(levels);
  for (int v = 0; v < st.n; ++v) {
    if (st.must[v].empty()) continue;
    std::fill(level_sum.begin(), level_sum.end(), 0);
    for (int bi : st.must[v]) level_sum[g.buffers[bi].level] += g.buffers[bi].size;
    int64_t combined = 0;
    for (int l = 0; l < levels; ++l) {
      if (in_vstay[l]) {
        vstay[l] = std::max(vstay[l], level_sum[l]);
        combined += level_sum[l];
      }
      const int64_t demand = level_sum[l] - config.levels[l].capacity;
      if (demand <= 0) continue;
      CoverRow row{demand, {}};
      for (int bi : st.must[v]) {
        const KernelBuffer& b = g.buffers[bi];
        if (b.level != l) continue;
        if (std::find(g.nodes[v].bufs.begin(), g.nodes[v].bufs.end(), b.buf_id) != g.nodes[v].bufs.end()) {
          continue;  // v uses b: resident while v runs
        }
        row.vars.push_back(bi);
      }
      rows.push_back(std::move(row));
    }
    st.out.vstay_combined = std::max(st.out.vstay_combined, combined);
  }
  for (int l = 0; l < levels; ++l) {
    if (in_vstay[l]) st.out.vstay[config.levels[l].name] = vstay[l];
  }
  return rows;
}

// ------------------------------------------------ product (Loomis-Whitney) bound
//
// docs/kernel.md, "Reload bound for product-shaped graphs", has the proof.
// An anchor is an operation with three buffers; each buffer is either used
// directly (its label is the buffer itself) or fed: its only other user is a
// feeder f -> anchor with exactly two buffers, and its label is the feeder's
// other buffer. Anchors whose labels, projected on the three coordinate
// classes found by union-find, form a product set, cannot run more than
// mu * sqrt(|A||B||C|) per schedule window touching |A|, |B|, |C| labels.

int64_t FitCount(std::vector<int64_t> sizes, int64_t capacity) {
  std::sort(sizes.begin(), sizes.end());
  int64_t used = 0, k = 0;
  for (int64_t s : sizes) {
    if (used + s > capacity) break;
    used += s;
    ++k;
  }
  return k;
}

// ------------------------------------------------ cut bound (one instant)
//
// docs/kernel.md, "Cut bound for full matmul grids", has the proof. At the
// instant just after the s-th output tile's last anchor, the done tiles D
// (s of them), the started ones W (an anchor done, not all: their output
// buffer is live) and the rest F: a label of a row or column holding a D and
// an F tile is live (read before, read after, or its fed buffer is live), so
// k * (split lines) - x0 of them are reloaded after the instant, and W beyond
// the output buffers L0C holds besides the s-th's are reloaded output tiles.
// With a (b) rows holding no F (no D) tile and a2, b2 the same for columns,
// every solution satisfies s <= (m-b)(n-b2), |W| >= a*b2 + b*a2 and
// |F| = mn - s - |W| <= (m-a)(n-a2); the bound is the largest over s of the
// least cost over such (a, b, a2, b2, |W|).
struct CutGrid {
  int m = 0, n = 0;
  int64_t k = 0;       // labels per line
  int64_t x0 = 0;      // labels and fed buffers resident at once
  int64_t free_c = 0;  // output tiles resident besides the s-th's
};
constexpr int64_t kMaxCutCells = 576;

double CutBound(const CutGrid& c, double w_label, double w_out) {
  const int64_t m = c.m, n = c.n, mn = m * n;
  double best = 0;
  for (int64_t s = 1; s < mn; ++s) {
    double low = 1e300;
    for (int64_t a = 0; a <= m; ++a) {
      for (int64_t b = 0; a + b <= m; ++b) {
        for (int64_t a2 = 0; a2 <= n; ++a2) {
          for (int64_t b2 = 0; a2 + b2 <= n; ++b2) {
            if (s > (m - b) * (n - b2)) continue;
            const int64_t t = std::max({a * b2 + b * a2, mn - s - (m - a) * (n - a2), int64_t{0}});
            if (t > mn - s) continue;
            const int64_t live = c.k * ((m - a - b) + (n - a2 - b2));
            const double v = w_label * static_cast<double>(std::max<int64_t>(0, live - c.x0)) +
                             w_out * static_cast<double>(std::max<int64_t>(0, t - c.free_c));
            low = std::min(low, v);
          }
        }
      }
    }
    if (low < 1e300) best = std::max(best, low);
  }
  return best;
}

}  // namespace

int64_t MatmulCutReloads(int m, int n, int64_t k, int64_t x0, int64_t free_c) {
  if (static_cast<int64_t>(m) * n > kMaxCutCells) return 0;
  return CeilBound(CutBound(CutGrid{m, n, k, x0, free_c}, 1.0, 1.0));
}

namespace {

struct ProductAnchor {
  int label[3];
  int fed[3];  // fed buffer index, or -1 when the label is used directly
};

// One pool: the roles whose labels share a cache level. X0 = labels plus fed
// buffers resident at a window's start at most; N = labels (first ALLOCs).
struct ProductPool {
  int roles = 0;  // exponent in the Hoelder product
  int64_t x0 = 0, labels = 0;
  double w_traffic = 0, w_cycles = 0;
};

// min sum_q w_q R_q  s.t. for every window length T (P = W / T full windows):
// prod_q ((P X0_q + N_q + R_q) / e_q)^{e_q} >= P^3 T^2 / mu^2.
double SolveProductPools(const std::vector<ProductPool>& pools, int64_t anchors, int64_t mu,
                         bool traffic) {
  std::vector<int64_t> ts;
  for (int64_t t = 1; t <= anchors; t = std::max(t + 1, t * 33 / 32)) ts.push_back(t);
  auto w = [&](const ProductPool& q) { return traffic ? q.w_traffic : q.w_cycles; };
  // Smallest integer R >= 0 with (base + R) >= v, v computed in long double.
  auto need = [](long double v, long double base) -> int64_t {
    const long double r = v - base;
    if (!(r > 0)) return 0;
    // Saturate before the conversion: a smaller R keeps the bound valid.
    if (r >= 1e18L) return int64_t{1'000'000'000'000'000'000};
    return static_cast<int64_t>(
        std::ceil(static_cast<double>(r - 1e-9L * std::max<long double>(1, v))));
  };
  const long double mu2 = static_cast<long double>(mu) * static_cast<long double>(mu);
  if (pools.size() == 1) {
    const ProductPool& q = pools[0];
    int64_t r = 0;
    for (int64_t t : ts) {
      const long double p = static_cast<long double>(anchors / t);
      const long double rhs =
          p * p * p * static_cast<long double>(t) * static_cast<long double>(t) / mu2;
      // (x / 3)^3 >= rhs: x >= 3 rhs^(1/3).
      r = std::max(r, need(3 * std::cbrt(rhs), p * static_cast<long double>(q.x0) +
                                                   static_cast<long double>(q.labels)));
    }
    return w(q) * static_cast<double>(r);
  }
  // Two pools: the pair (exponent 2) and the single (exponent 1); scan R_a.
  const ProductPool& a = pools[0].roles == 2 ? pools[0] : pools[1];
  const ProductPool& b = pools[0].roles == 2 ? pools[1] : pools[0];
  constexpr int64_t kMaxScan = 200'000;
  double best = w(a) * static_cast<double>(kMaxScan);  // every R_a >= kMaxScan costs at least this
  for (int64_t ra = 0; ra < kMaxScan; ++ra) {
    int64_t rb = 0;
    for (int64_t t : ts) {
      const long double p = static_cast<long double>(anchors / t);
      const long double rhs =
          4 * p * p * p * static_cast<long double>(t) * static_cast<long double>(t) / mu2;
      const long double xa = p * static_cast<long double>(a.x0) +
                             static_cast<long double>(a.labels) + static_cast<long double>(ra);
      rb = std::max(rb, need(rhs / (xa * xa), p * static_cast<long double>(b.x0) +
                                                  static_cast<long double>(b.labels)));
    }
    best = std::min(best, w(a) * static_cast<double>(ra) + w(b) * static_cast<double>(rb));
    if (rb == 0) break;
  }
  return best;
}

void ProductBound(BoundsState& st) {
  const KernelGraph& g = st.g;
  const CacheConfig& config = st.config;
  std::vector<std::vector<int>> must_sorted(st.must);
  for (auto& m : must_sorted) std::sort(m.begin(), m.end());
  auto must = [&](int v, int bi) {
    return std::binary_search(must_sorted[v].begin(), must_sorted[v].end(), bi);
  };
  auto has_edge = [&](int u, int v) {
    return std::find(g.pred[v].begin(), g.pred[v].end(), u) != g.pred[v].end();
  };
  // Group anchors by the levels of their roles.
  std::map<std::vector<int>, std::vector<ProductAnchor>> groups;
  for (int m = 0; m < st.n; ++m) {
    const KernelNode& node = g.nodes[m];
    if (node.kind != NodeKind::kOp || node.bufs.size() != 3) continue;
    std::vector<int> bis;
    for (int id : node.bufs) bis.push_back(g.buf_index[id]);
    if (bis[0] == bis[1] || bis[0] == bis[2] || bis[1] == bis[2]) continue;
    // Role key: (label level, fed level or -1, position in Bufs).
    std::vector<std::tuple<int, int, int, int, int>> roles;  // key..., label, fed
    bool ok = true;
    for (int pos = 0; pos < 3 && ok; ++pos) {
      const int x = bis[pos];
      const KernelBuffer& xb = g.buffers[x];
      int label = x, fed = -1;
      if (xb.users.size() == 2) {
        const int f = xb.users[0] == m ? xb.users[1] : xb.users[0];
        const KernelNode& fn = g.nodes[f];
        if (f != m && fn.bufs.size() == 2 && has_edge(f, m)) {
          const int s = g.buf_index[fn.bufs[0] == xb.buf_id ? fn.bufs[1] : fn.bufs[0]];
          if (s != x && must(f, x) && must(f, s) && must(m, x)) {
            label = s;
            fed = x;
          }
        }
      }
      if (fed < 0 && !must(m, x)) ok = false;  // not provably resident at m
      roles.emplace_back(g.buffers[label].level, fed < 0 ? -1 : g.buffers[fed].level, pos, label,
                         fed);
    }
    if (!ok) continue;
    std::sort(roles.begin(), roles.end());
    std::vector<int> sig;
    ProductAnchor a{};
    for (int r = 0; r < 3; ++r) {
      sig.push_back(std::get<0>(roles[r]));
      sig.push_back(std::get<1>(roles[r]));
      a.label[r] = std::get<3>(roles[r]);
      a.fed[r] = std::get<4>(roles[r]);
    }
    groups[sig].push_back(a);
  }
  for (const auto& [sig, anchors] : groups) {
    // Labels of different roles must be distinct buffers (each label is
    // counted once per window), and so must fed buffers.
    std::vector<int> role_of(st.nb, -1);
    bool ok = true;
    std::vector<std::vector<int>> labels(3), feds(3);
    for (const ProductAnchor& a : anchors) {
      for (int r = 0; r < 3 && ok; ++r) {
        for (int bi : {a.label[r], a.fed[r]}) {
          if (bi < 0) continue;
          const int tag = bi == a.label[r] ? r : 3 + r;
          if (role_of[bi] == -1) {
            role_of[bi] = tag;
            (tag < 3 ? labels[r] : feds[r]).push_back(bi);
          } else if (role_of[bi] != tag) {
            ok = false;
          }
        }
      }
    }
    if (!ok) continue;
    // Coordinates: role 0 and 1 share k, 0 and 2 share i, 1 and 2 share j.
    UnionFind uf01(static_cast<size_t>(st.nb)), uf02(static_cast<size_t>(st.nb)),
        uf12(static_cast<size_t>(st.nb));
    for (const ProductAnchor& a : anchors) {
      uf01.Union(a.label[0], a.label[1]);
      uf02.Union(a.label[0], a.label[2]);
      uf12.Union(a.label[1], a.label[2]);
    }
    std::map<std::tuple<int, int, int>, int64_t> mult;
    int64_t mu = 0;
    for (const ProductAnchor& a : anchors) {
      mu = std::max(mu,
                    ++mult[{uf02.Find(a.label[0]), uf12.Find(a.label[1]), uf01.Find(a.label[0])}]);
    }
    // Pools by label level; three distinct levels: roles 0 and 1 merge
    // (x1 x2 <= ((x1 + x2) / 2)^2).
    const int l0 = sig[0], l1 = sig[2], l2 = sig[4];
    std::vector<std::vector<int>> pool_roles;
    if (l0 == l1 && l1 == l2) {
      pool_roles = {{0, 1, 2}};
    } else if (l0 == l1) {
      pool_roles = {{0, 1}, {2}};
    } else if (l1 == l2) {
      pool_roles = {{1, 2}, {0}};
    } else if (l0 == l2) {
      pool_roles = {{0, 2}, {1}};
    } else {
      pool_roles = {{0, 1}, {2}};
    }
    std::vector<ProductPool> pools;
    for (const std::vector<int>& rs : pool_roles) {
      ProductPool q;
      q.roles = static_cast<int>(rs.size());
      q.w_traffic = q.w_cycles = 1e300;
      auto weigh = [&](int bi) {
        const int id = g.buffers[bi].buf_id;
        q.w_traffic = std::min(q.w_traffic, static_cast<double>(g.SpillTraffic(id)));
        q.w_cycles = std::min(q.w_cycles, static_cast<double>(g.SpillInCycles(id, config)));
      };
      // Labels per cache level (merged roles may sit in different levels).
      std::map<int, std::vector<int64_t>> label_sizes;
      for (int r : rs) {
        for (int bi : labels[r]) {
          label_sizes[g.buffers[bi].level].push_back(g.buffers[bi].size);
          weigh(bi);
        }
        q.labels += static_cast<int64_t>(labels[r].size());
        std::map<int, std::vector<int64_t>> fed_sizes;
        for (int bi : feds[r]) {
          fed_sizes[g.buffers[bi].level].push_back(g.buffers[bi].size);
          weigh(bi);
        }
        for (const auto& [l, sizes] : fed_sizes) q.x0 += FitCount(sizes, config.levels[l].capacity);
      }
      for (const auto& [l, sizes] : label_sizes) q.x0 += FitCount(sizes, config.levels[l].capacity);
      pools.push_back(q);
    }
    const int64_t w = static_cast<int64_t>(anchors.size());
    if (pools.size() == 2 && pool_roles[1] == std::vector<int>{2} && mu == 1) {
      // The cut bound needs a full grid: every (i, j, k) once, one label per
      // (i, k), (k, j), (i, j), and output labels used directly.
      std::set<int> is, js, ks;
      bool direct = true;
      for (const ProductAnchor& a : anchors) {
        is.insert(uf02.Find(a.label[0]));
        js.insert(uf12.Find(a.label[1]));
        ks.insert(uf01.Find(a.label[0]));
        direct = direct && a.fed[2] < 0;
      }
      const int64_t gi = static_cast<int64_t>(is.size()), gj = static_cast<int64_t>(js.size()),
                    gk = static_cast<int64_t>(ks.size());
      if (direct && w == gi * gj * gk && static_cast<int64_t>(labels[0].size()) == gi * gk &&
          static_cast<int64_t>(labels[1].size()) == gk * gj &&
          static_cast<int64_t>(labels[2].size()) == gi * gj && gi * gj <= kMaxCutCells) {
        const CutGrid grid{static_cast<int>(gi), static_cast<int>(gj), gk, pools[0].x0,
                           pools[1].x0 - 1};
        st.out.traffic_cut = std::max(
            st.out.traffic_cut, CeilBound(CutBound(grid, pools[0].w_traffic, pools[1].w_traffic)));
        st.out.spill_in_cycles_cut =
            std::max(st.out.spill_in_cycles_cut,
                     CeilBound(CutBound(grid, pools[0].w_cycles, pools[1].w_cycles)));
      }
    }
    const int64_t traffic = CeilBound(SolveProductPools(pools, w, mu, true));
    const int64_t cycles = CeilBound(SolveProductPools(pools, w, mu, false));
    st.out.traffic_product = std::max(st.out.traffic_product, traffic);
    st.out.spill_in_cycles_product = std::max(st.out.spill_in_cycles_product, cycles);
  }
}

// The LP bounds on traffic and on the spill pipes' cycles.
void SpillBounds(BoundsState& st, const std::vector<CoverRow>& rows) {
  const KernelGraph& g = st.g;
  std::vector<int64_t> size(st.nb);
  std::vector<double> w_traffic(st.nb), w_in(st.nb), w_out(st.nb);
  for (int bi = 0; bi < st.nb; ++bi) {
    const int id = g.buffers[bi].buf_id;
    size[bi] = g.buffers[bi].size;
    w_traffic[bi] = static_cast<double>(g.SpillTraffic(id));
    w_in[bi] = static_cast<double>(g.SpillInCycles(id, st.config));
    w_out[bi] = static_cast<double>(g.SpillOutCycles(id, st.config));
  }
  st.out.traffic_free_order = CeilBound(CoverLpDualBound(rows, size, w_traffic));
  st.out.spill_in_cycles = CeilBound(CoverLpDualBound(rows, size, w_in));
  // Each is a lower bound on its own: the larger one counts.
  ProductBound(st);
  st.out.traffic_free_order =
      std::max({st.out.traffic_free_order, st.out.traffic_product, st.out.traffic_cut});
  st.out.spill_in_cycles = std::max(
      {st.out.spill_in_cycles, st.out.spill_in_cycles_product, st.out.spill_in_cycles_cut});
  st.out.spill_out_cycles = CeilBound(CoverLpDualBound(rows, size, w_out));
}

// Heads and tails along edges (longest paths before and after each node).
void PropagateHeadsTails(BoundsState& st) {
  const KernelGraph& g = st.g;
  for (int v : st.topo) {
    for (int p : g.pred[v]) st.head[v] = std::max(st.head[v], st.head[p] + Cycles(g.nodes[p]));
  }
  for (int i = st.n - 1; i >= 0; --i) {
    const int v = st.topo[i];
    for (int s : g.succ[v]) st.tail[v] = std::max(st.tail[v], st.tail[s] + Cycles(g.nodes[s]));
  }
}

// Pipe contention before and after each node: every ancestor of v ends
// before v starts, and those on one pipe run one at a time from time 0, so
// v starts no earlier than the largest per-pipe work of its ancestors
// (descendants and tails likewise). Ancestor sets as bitsets.
void RaiseHeadsTailsByPipeWork(BoundsState& st) {
  const KernelGraph& g = st.g;
  const int n = st.n;
  std::vector<int64_t>& head = st.head;
  std::vector<int64_t>& tail = st.tail;
  std::map<std::string, int> pipe_index;
  std::vector<int> pipe_of(n, -1);
  for (int v = 0; v < n; ++v) {
    if (g.nodes[v].kind != NodeKind::kOp) continue;
    pipe_of[v] =
        pipe_index.emplace(g.nodes[v].pipe, static_cast<int>(pipe_index.size())).first->second;
  }
  const size_t words = (static_cast<size_t>(n) + 63) / 64;
  std::vector<uint64_t> bits(words * n);
  std::vector<int64_t> per_pipe(pipe_index.size());
  auto pipe_bound = [&](int v) {
    std::fill(per_pipe.begin(), per_pipe.end(), 0);
    const uint64_t* row = &bits[words * v];
    for (size_t w = 0; w < words; ++w) {
      for (uint64_t x = row[w]; x != 0; x &= x - 1) {
        const int u = static_cast<int>(w * 64 + __builtin_ctzll(x));
        if (pipe_of[u] >= 0) per_pipe[pipe_of[u]] += g.nodes[u].cycles;
      }
    }
    return per_pipe.empty() ? int64_t{0} : *std::max_element(per_pipe.begin(), per_pipe.end());
  };
  for (int v : st.topo) {  // ancestors
    uint64_t* row = &bits[words * v];
    for (int p : g.pred[v]) {
      const uint64_t* pr = &bits[words * p];
      for (size_t w = 0; w < words; ++w) row[w] |= pr[w];
      row[p / 64] |= uint64_t{1} << (p % 64);
    }
    head[v] = std::max(head[v], pipe_bound(v));
  }
  std::fill(bits.begin(), bits.end(), 0);
  for (int i = n - 1; i >= 0; --i) {  // descendants
    const int v = st.topo[i];
    uint64_t* row = &bits[words * v];
    for (int s : g.succ[v]) {
      const uint64_t* sr = &bits[words * s];
      for (size_t w = 0; w < words; ++w) row[w] |= sr[w];
      row[s / 64] |= uint64_t{1} << (s % 64);
    }
    tail[v] = std::max(tail[v], pipe_bound(v));
  }
}

// Per pipe: its total work, and Jackson's bound with heads and tails.
void PipeBounds(BoundsState& st) {
  const KernelGraph& g = st.g;
  KernelBounds& out = st.out;
  std::map<std::string, std::vector<std::tuple<int64_t, int64_t, int64_t>>> jobs;
  std::map<std::string, int64_t> work;
  for (int v = 0; v < st.n; ++v) {
    const KernelNode& node = g.nodes[v];
    if (node.kind != NodeKind::kOp) continue;
    jobs[node.pipe].emplace_back(st.head[v], node.cycles, st.tail[v]);
    work[node.pipe] += node.cycles;
  }
  // Spill nodes run on MTE2 (SPILL_IN) and MTE3 (SPILL_OUT): a block of the
  // unavoidable cycles with head and tail 0 (preemptive, so one block is the
  // relaxation of any number of spills).
  for (auto [pipe, extra] : {std::make_pair("MTE2", out.spill_in_cycles), std::make_pair("MTE3", out.spill_out_cycles)}) {
    if (extra <= 0) continue;
    jobs[pipe].emplace_back(0, extra, 0);
    work[pipe] += extra;
  }
  for (const auto& [pipe, w] : work) {
    if (w > out.pipe_work) {
      out.pipe_work = w;
      out.pipe_work_pipe = pipe;
    }
    const int64_t jps = JacksonPreemptive(jobs[pipe]);
    if (jps > out.pipe_heads_tails) {
      out.pipe_heads_tails = jps;
      out.pipe_heads_tails_pipe = pipe;
    }
  }
}

// Cache area: resident bytes x time <= capacity x makespan.
void CacheAreaBound(BoundsState& st) {
  const KernelGraph& g = st.g;
  std::vector<double> area(st.levels, 0);
  for (int bi = 0; bi < st.nb; ++bi) {
    area[g.buffers[bi].level] +=
        static_cast<double>(g.buffers[bi].size) * static_cast<double>(st.user_span[bi]);
  }
  for (int l = 0; l < st.levels; ++l) {
    const int64_t t = CeilBound(area[l] / static_cast<double>(st.config.levels[l].capacity));
    if (t > st.out.cache_area) {
      st.out.cache_area = t;
      st.out.cache_area_cache = st.config.levels[l].name;
    }
  }
}

}  // namespace

KernelBounds ComputeKernelBounds(const KernelGraph& g, const CacheConfig& config,
                                 const BoundOptions& options) {
  KernelBounds out;
  BoundsState st(g, config, options, out);
  st.n = g.num_nodes();
  st.nb = static_cast<int>(g.buffers.size());
  st.levels = static_cast<int>(config.levels.size());
  st.topo = TopoOrder(g);
  st.tpos.resize(st.n);
  for (int i = 0; i < st.n; ++i) st.tpos[st.topo[i]] = i;

  ComputeMustLive(st);
  SpillBounds(st, Q1AndCoverRows(st));

  // Pipe work, heads and tails.
  st.head.assign(st.n, 0);
  st.tail.assign(st.n, 0);
  PropagateHeadsTails(st);
  for (int v = 0; v < st.n; ++v) {
    out.critical_path = std::max(out.critical_path, st.head[v] + Cycles(g.nodes[v]) + st.tail[v]);
  }
  // Ancestor bitsets only for graphs up to max_bitset_nodes.
  if (st.n <= options.max_bitset_nodes) {
    RaiseHeadsTailsByPipeWork(st);
    // Heads and tails only grew: propagate along edges once more.
    PropagateHeadsTails(st);
  }
  PipeBounds(st);
  CacheAreaBound(st);
  out.makespan = out.pipe_work;
  out.makespan_by = "pipe_work";
  for (auto [v, name] : {std::make_pair(out.critical_path, "critical_path"),
                         std::make_pair(out.pipe_heads_tails, "pipe_heads_tails"),
                         std::make_pair(out.cache_area, "cache_area")}) {
    if (v > out.makespan) {
      out.makespan = v;
      out.makespan_by = name;
    }
  }
  return out;
}

int64_t FixedOrderTrafficBound(const KernelGraph& g, const CacheConfig& config,
                               const std::vector<int>& schedule) {
  const int n = g.num_nodes();
  const int nb = static_cast<int>(g.buffers.size());
  std::vector<int> order;
  for (int v : schedule) {
    if (v >= 0 && v < n) order.push_back(v);
  }
  // Variables: one per (buffer, gap between consecutive requests). A buffer
  // is requested at its ALLOC, at every user and at its FREE.
  std::vector<int> gap_var(nb, -1);  // current variable of each live buffer
  std::vector<char> live(nb, 0);
  std::vector<std::vector<int>> live_list(config.levels.size());
  std::vector<int64_t> live_bytes(config.levels.size(), 0);
  std::vector<int64_t> size;
  std::vector<double> weight;
  std::vector<CoverRow> rows;
  auto new_gap = [&](int bi) {
    gap_var[bi] = static_cast<int>(size.size());
    size.push_back(g.buffers[bi].size);
    weight.push_back(static_cast<double>(g.SpillTraffic(g.buffers[bi].buf_id)));
  };
  std::vector<int> req;
  for (int v : order) {
    const KernelNode& node = g.nodes[v];
    req.clear();
    if (node.kind == NodeKind::kOp) {
      for (int id : node.bufs) req.push_back(g.buf_index[id]);
    } else {
      req.push_back(g.buf_index[node.buf_id]);
    }
    if (node.kind == NodeKind::kAlloc) {
      const int bi = req[0];
      live[bi] = 1;
      live_list[g.buffers[bi].level].push_back(bi);
      live_bytes[g.buffers[bi].level] += g.buffers[bi].size;
    }
    // Check point at v: the live buffers not requested here share the cache
    // with the requested ones.
    for (size_t l = 0; l < live_list.size(); ++l) {
      const int64_t demand = live_bytes[l] - config.levels[l].capacity;
      if (demand <= 0) continue;
      CoverRow row{demand, {}};
      for (int bi : live_list[l]) {
        if (std::find(req.begin(), req.end(), bi) == req.end()) row.vars.push_back(gap_var[bi]);
      }
      rows.push_back(std::move(row));
    }
    // Requests close the current gap of each requested buffer.
    for (int bi : req) {
      if (live[bi]) new_gap(bi);
    }
    if (node.kind == NodeKind::kFree) {
      const int bi = req[0];
      live[bi] = 0;
      auto& ll = live_list[g.buffers[bi].level];
      ll.erase(std::find(ll.begin(), ll.end(), bi));
      live_bytes[g.buffers[bi].level] -= g.buffers[bi].size;
    }
  }
  return CeilBound(CoverLpDualBound(rows, size, weight));
}

}  // namespace npuplan::kernel
