#include "npuplan/kernel/bounds.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <unordered_map>
#include <vector>

#include "npuplan/kernel/evaluator.h"
#include "npuplan/kernel/generator.h"
#include "npuplan/kernel/matmul_exact_test_util.h"
#include "npuplan/kernel/planner.h"
#include "npuplan/testing/sanitized.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::kernel {
namespace {

// ------------------------------------------------------------ tiny cases

// A random tiny kernel graph: op i writes buffer i. The first `inputs` ops
// are COPY_INs (MTE2); each later op reads its predecessor's buffer (a chain)
// and one or two random inputs, so inputs read early and late stay live
// across the chain in every order.
KernelGraph RandomTinyGraph(uint32_t seed, int ops, const CacheConfig& config) {
  const int inputs = std::max(1, ops / 2);
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* pipes[] = {"VECTOR", "CUBE", "MTE3", "VECTOR"};
  const char* types[] = {"UB", "UB", "L1"};
  KernelGraph g;
  std::vector<std::vector<int>> reads(ops);
  std::vector<int> alloc_node(ops), op_node(ops);
  std::vector<std::string> type(ops);
  std::vector<int64_t> size(ops);
  for (int i = 0; i < ops; ++i) {
    if (i > inputs) reads[i].push_back(i - 1);
    const int nreads = i < inputs ? 0 : pick(1, 2);
    for (int r = 0; r < nreads; ++r) {
      const int j = pick(0, inputs - 1);
      if (std::find(reads[i].begin(), reads[i].end(), j) == reads[i].end()) reads[i].push_back(j);
    }
    type[i] = types[pick(0, 2)];
    size[i] = pick(1, 4);
    KernelNode a;
    a.id = g.num_nodes();
    a.kind = NodeKind::kAlloc;
    a.op = "ALLOC";
    a.buf_id = i;
    a.size = size[i];
    a.type = type[i];
    alloc_node[i] = a.id;
    g.nodes.push_back(a);
    KernelNode v;
    v.id = g.num_nodes();
    v.op = reads[i].empty() ? "COPY_IN" : "OP";
    v.pipe = reads[i].empty() ? "MTE2" : pipes[pick(0, 3)];
    v.cycles = pick(1, 20);
    v.bufs = {i};
    for (int j : reads[i]) v.bufs.push_back(j);
    op_node[i] = v.id;
    g.nodes.push_back(v);
    g.edges.emplace_back(a.id, v.id);
    for (int j : reads[i]) g.edges.emplace_back(op_node[j], v.id);
  }
  for (int i = 0; i < ops; ++i) {
    KernelNode f;
    f.id = g.num_nodes();
    f.kind = NodeKind::kFree;
    f.op = "FREE";
    f.buf_id = i;
    f.size = size[i];
    f.type = type[i];
    g.nodes.push_back(f);
    g.edges.emplace_back(alloc_node[i], f.id);
    g.edges.emplace_back(op_node[i], f.id);
    for (int k = 0; k < ops; ++k) {
      if (std::find(reads[k].begin(), reads[k].end(), i) != reads[k].end()) g.edges.emplace_back(op_node[k], f.id);
    }
  }
  g.name = "tiny" + std::to_string(seed);
  EXPECT_TRUE(FinalizeKernelGraph(g, config, g.name).ok());
  return g;
}

CacheConfig Caches(int64_t l1, int64_t ub) {
  CacheConfig c;
  for (CacheLevel& l : c.levels) {
    if (l.name == "L1") l.capacity = l1;
    if (l.name == "UB") l.capacity = ub;
  }
  return c;
}

// Every topological order of the operations, each expanded with ALLOCs just
// before their first user and FREEs as soon as they are ready.
void ForEachOpOrder(const KernelGraph& g, const std::function<void(const std::vector<int>&)>& fn) {
  const int n = g.num_nodes();
  std::vector<int> ops;
  for (int v = 0; v < n; ++v) {
    if (g.nodes[v].kind == NodeKind::kOp) ops.push_back(v);
  }
  std::vector<char> done(n, 0);
  std::vector<int> order;
  std::function<void()> rec = [&] {
    if (order.size() == ops.size()) {
      std::vector<int> full;
      std::vector<char> emitted(n, 0);
      auto emit_frees = [&] {
        for (bool again = true; again;) {
          again = false;
          for (int v = 0; v < n; ++v) {
            if (emitted[v] || g.nodes[v].kind != NodeKind::kFree) continue;
            bool ready = true;
            for (int p : g.pred[v]) ready = ready && emitted[p];
            if (ready) {
              emitted[v] = 1;
              full.push_back(v);
              again = true;
            }
          }
        }
      };
      for (int u : order) {
        for (int p : g.pred[u]) {
          if (!emitted[p] && g.nodes[p].kind == NodeKind::kAlloc) {
            emitted[p] = 1;
            full.push_back(p);
          }
        }
        for (int b : g.nodes[u].bufs) {
          const int a = g.buffer(b).alloc_node;
          if (!emitted[a]) {
            emitted[a] = 1;
            full.push_back(a);
          }
        }
        emitted[u] = 1;
        full.push_back(u);
        emit_frees();
      }
      fn(full);
      return;
    }
    for (int u : ops) {
      if (done[u]) continue;
      bool ready = true;
      for (int p : g.pred[u]) ready = ready && (g.nodes[p].kind == NodeKind::kAlloc || done[p]);
      if (!ready) continue;
      done[u] = 1;
      order.push_back(u);
      rec();
      order.pop_back();
      done[u] = 0;
    }
  };
  rec();
}

// Exact min over all topological orders of the peak running ALLOC-FREE sum
// over `levels`: a bottleneck path through the lattice of down-sets.
int64_t ExactMinPeak(const KernelGraph& g, const CacheConfig& config, const std::vector<std::string>& levels) {
  const int n = g.num_nodes();
  EXPECT_LE(n, 62);
  std::vector<int64_t> delta(n, 0);
  for (int v = 0; v < n; ++v) {
    const KernelNode& node = g.nodes[v];
    if (node.kind == NodeKind::kOp) continue;
    const KernelBuffer& b = g.buffer(node.buf_id);
    if (std::find(levels.begin(), levels.end(), config.levels[b.level].name) == levels.end()) continue;
    delta[v] = node.kind == NodeKind::kAlloc ? b.size : -b.size;
  }
  std::unordered_map<uint64_t, int64_t> memo;
  std::function<int64_t(uint64_t)> best = [&](uint64_t set) -> int64_t {
    if (set == 0) return 0;
    if (auto it = memo.find(set); it != memo.end()) return it->second;
    int64_t value = 0;
    for (int v = 0; v < n; ++v) {
      if (set >> v & 1) value += delta[v];
    }
    int64_t via = INT64_MAX;
    for (int v = 0; v < n; ++v) {
      if (!(set >> v & 1)) continue;
      bool maximal = true;
      for (int s : g.succ[v]) maximal = maximal && !(set >> s & 1);
      if (maximal) via = std::min(via, best(set & ~(uint64_t{1} << v)));
    }
    return memo[set] = std::max(value, via);
  };
  return best((n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1));
}

// Exact minimum extra movement of one fixed order when only sizes count
// (addresses and fragmentation ignored, which can only lower it): choose the
// (buffer, gap between requests) pairs that are out of the cache.
int64_t ExactFixedOrderTraffic(const KernelGraph& g, const CacheConfig& config, const std::vector<int>& order) {
  struct Gap {
    int bi;
    int from, to;  // positions of the requests around the gap
  };
  std::vector<Gap> gaps;
  const int nb = static_cast<int>(g.buffers.size());
  std::vector<int> last(nb, -1);
  std::vector<int> pos(g.num_nodes());
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<int>(i);
  auto requests = [&](int v) {
    std::vector<int> r;
    if (g.nodes[v].kind == NodeKind::kOp) {
      for (int b : g.nodes[v].bufs) r.push_back(g.buf_index[b]);
    } else {
      r.push_back(g.buf_index[g.nodes[v].buf_id]);
    }
    return r;
  };
  for (size_t i = 0; i < order.size(); ++i) {
    for (int bi : requests(order[i])) {
      if (last[bi] >= 0 && static_cast<int>(i) > last[bi] + 1) gaps.push_back({bi, last[bi], static_cast<int>(i)});
      last[bi] = static_cast<int>(i);
    }
  }
  EXPECT_LE(gaps.size(), 22u);
  int64_t best = INT64_MAX;
  for (uint32_t mask = 0; mask < (1u << gaps.size()); ++mask) {
    int64_t cost = 0;
    for (size_t k = 0; k < gaps.size(); ++k) {
      if (mask >> k & 1) cost += g.SpillTraffic(g.buffers[gaps[k].bi].buf_id);
    }
    if (cost >= best) continue;
    bool ok = true;
    for (size_t i = 0; i < order.size() && ok; ++i) {
      std::vector<int64_t> resident(config.levels.size(), 0);
      for (int bi = 0; bi < nb; ++bi) {
        const KernelBuffer& b = g.buffers[bi];
        if (pos[b.alloc_node] > static_cast<int>(i) || pos[b.free_node] < static_cast<int>(i)) continue;
        bool out = false;
        for (size_t k = 0; k < gaps.size(); ++k) {
          out = out || ((mask >> k & 1) && gaps[k].bi == bi && gaps[k].from < static_cast<int>(i) &&
                        static_cast<int>(i) < gaps[k].to);
        }
        if (!out) resident[b.level] += b.size;
      }
      for (size_t l = 0; l < resident.size(); ++l) ok = ok && resident[l] <= config.levels[l].capacity;
    }
    if (ok) best = cost;
  }
  return best;
}

// Exact minimum makespan when every buffer has its own addresses (caches
// large enough): no spill or address reuse can help, so the optimum is the
// best in-order timing over all operation orders.
int64_t ExactRoomyMakespan(const KernelGraph& g, const CacheConfig& config) {
  KernelSolution s;
  int64_t next[8] = {0};
  for (const KernelBuffer& b : g.buffers) {
    s.offsets[b.buf_id] = next[b.level];
    next[b.level] += b.size;
  }
  int64_t best = INT64_MAX;
  absl::Status first = absl::OkStatus();
  ForEachOpOrder(g, [&](const std::vector<int>& order) {
    s.schedule = order;
    auto m = EvaluateSolution(g, s, config);
    if (m.ok()) {
      best = std::min(best, m->makespan);
    } else if (first.ok()) {
      first = m.status();
    }
  });
  EXPECT_TRUE(first.ok()) << first;
  return best;
}

// ------------------------------------------------------------ tests

TEST(CoverLpDualBoundTest, NeverExceedsTheIntegerOptimum) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int vars = 1 + trial % 7;
    std::vector<int64_t> size(vars);
    std::vector<double> weight(vars);
    for (int b = 0; b < vars; ++b) {
      size[b] = 1 + rng() % 6;
      weight[b] = static_cast<double>(size[b] * (1 + rng() % 2));
    }
    std::vector<CoverRow> rows(1 + rng() % 5);
    for (CoverRow& r : rows) {
      for (int b = 0; b < vars; ++b) {
        if (rng() % 2) r.vars.push_back(b);
      }
      int64_t total = 0;
      for (int b : r.vars) total += size[b];
      r.demand = total == 0 ? 0 : 1 + static_cast<int64_t>(rng() % total);
    }
    double best = 1e18;
    for (uint32_t mask = 0; mask < (1u << vars); ++mask) {
      bool ok = true;
      for (const CoverRow& r : rows) {
        int64_t got = 0;
        for (int b : r.vars) got += (mask >> b & 1) ? size[b] : 0;
        ok = ok && got >= r.demand;
      }
      if (!ok) continue;
      double cost = 0;
      for (int b = 0; b < vars; ++b) cost += (mask >> b & 1) ? weight[b] : 0;
      best = std::min(best, cost);
    }
    EXPECT_LE(CoverLpDualBound(rows, size, weight), best + 1e-9) << "trial " << trial;
  }
}

// One operation P that needs only `a` runs after all three loads; b and c are
// read later, so all three are live at P in every order (UB 10, sizes 5):
// one of b, c (COPY_IN-backed) must be out at P.
constexpr char kMustLive[] = R"json({
  "Nodes": [
    {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 5, "Type": "UB"},
    {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
    {"Id": 2, "Op": "ALLOC", "BufId": 1, "Size": 5, "Type": "UB"},
    {"Id": 3, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [1]},
    {"Id": 4, "Op": "ALLOC", "BufId": 2, "Size": 5, "Type": "UB"},
    {"Id": 5, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [2]},
    {"Id": 6, "Op": "P", "Pipe": "VECTOR", "Cycles": 30, "Bufs": [0]},
    {"Id": 7, "Op": "Q", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [1]},
    {"Id": 8, "Op": "R", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [2]},
    {"Id": 9, "Op": "FREE", "BufId": 0, "Size": 5, "Type": "UB"},
    {"Id": 10, "Op": "FREE", "BufId": 1, "Size": 5, "Type": "UB"},
    {"Id": 11, "Op": "FREE", "BufId": 2, "Size": 5, "Type": "UB"}
  ],
  "Edges": [[0, 1], [2, 3], [4, 5], [1, 6], [3, 6], [5, 6], [6, 7], [6, 8], [3, 7], [5, 8],
            [6, 9], [0, 9], [7, 10], [2, 10], [8, 11], [4, 11]]
})json";

TEST(KernelBoundsTest, CountsTrafficThatEveryOrderNeeds) {
  CacheConfig config = Caches(4096, 10);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(kMustLive, config, "must_live"));
  KernelBounds b = ComputeKernelBounds(g, config);
  EXPECT_EQ(b.vstay.at("UB"), 15);
  EXPECT_EQ(b.traffic_free_order, 5);
  EXPECT_EQ(b.spill_in_cycles, 2 * 5 + 150);
  EXPECT_EQ(b.spill_out_cycles, 0);  // COPY_IN-backed: SPILL_OUT takes 0 cycles
  // MTE2: three loads and one reload.
  EXPECT_EQ(b.pipe_work, 30 + 160);
  EXPECT_EQ(b.pipe_work_pipe, "MTE2");
  EXPECT_EQ(b.critical_path, 10 + 30 + 10);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
  EXPECT_EQ(r.metrics.extra_movement, 5);
  EXPECT_GE(r.metrics.makespan, b.makespan);
}

TEST(KernelBoundsTest, JacksonBoundAddsHeadsAndTails) {
  CacheConfig config = Caches(4096, 100);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(kMustLive, config, "must_live"));
  KernelBounds b = ComputeKernelBounds(g, config);
  EXPECT_EQ(b.traffic_free_order, 0);
  // Pipe work alone: VECTOR 50; the longest path 50. P has three loads
  // among its ancestors, all on MTE2: its head is 30, not 10, and VECTOR
  // cannot finish P, Q, R before 30 + 50 = 80 — the optimum (loads back to
  // back, then P, Q, R).
  EXPECT_EQ(b.pipe_work, 50);
  EXPECT_EQ(b.critical_path, 50);
  EXPECT_EQ(b.pipe_heads_tails, 80);
  EXPECT_EQ(b.makespan, 80);
  EXPECT_EQ(ExactRoomyMakespan(g, config), 80);
}

TEST(KernelBoundsTest, BracketTheExactOptimaOfTinyRandomCases) {
  int positive_traffic = 0, positive_fixed = 0, planned = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    const int ops = 4 + seed % 4;
    // Capacities: what the largest operation needs per cache, plus 0-2, so
    // that every case is plannable and most need spills.
    CacheConfig config = Caches(4096, 4096);
    KernelGraph g = RandomTinyGraph(seed, ops, config);
    std::map<int, int64_t> need;
    for (const KernelNode& v : g.nodes) {
      if (v.kind != NodeKind::kOp) continue;
      std::map<int, int64_t> here;
      for (int b : v.bufs) here[g.buffer(b).level] += g.buffer(b).size;
      for (auto [l, bytes] : here) need[l] = std::max(need[l], bytes);
    }
    config = Caches(std::max<int64_t>(1, need[config.Find("L1")]) + seed % 2,
                     std::max<int64_t>(1, need[config.Find("UB")]) + (seed / 2) % 2);
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const KernelBounds b = ComputeKernelBounds(g, config);
    EXPECT_TRUE(b.complete);
    // Q1.
    EXPECT_LE(b.vstay_combined, ExactMinPeak(g, config, {"L1", "UB"}));
    EXPECT_LE(b.vstay.at("UB"), ExactMinPeak(g, config, {"UB"}));
    EXPECT_LE(b.vstay.at("L1"), ExactMinPeak(g, config, {"L1"}));
    // Traffic over all orders.
    int64_t exact = INT64_MAX;
    ForEachOpOrder(g, [&](const std::vector<int>& order) {
      const int64_t e = ExactFixedOrderTraffic(g, config, order);
      const int64_t lb = FixedOrderTrafficBound(g, config, order);
      EXPECT_LE(lb, e);
      positive_fixed += lb > 0;
      exact = std::min(exact, e);
    });
    EXPECT_LE(b.traffic_free_order, exact);
    positive_traffic += b.traffic_free_order > 0;

    auto plan = PlanKernel(g, config);
    if (!plan.ok()) continue;  // fragmentation: the allocators place whole buffers at fixed offsets
    ++planned;
    EXPECT_LE(exact, plan->metrics.extra_movement);
    EXPECT_LE(b.makespan, plan->metrics.makespan);
    EXPECT_LE(b.vstay_combined, plan->q1_metrics.max_vstay_combined);
    // Fixed order: the planner's own order.
    std::vector<int> order;
    for (int v : plan->solution.schedule) {
      if (v < g.num_nodes()) order.push_back(v);
    }
    const int64_t fixed = FixedOrderTrafficBound(g, config, plan->solution.schedule);
    EXPECT_LE(fixed, ExactFixedOrderTraffic(g, config, order));
    EXPECT_LE(ExactFixedOrderTraffic(g, config, order), plan->metrics.extra_movement);

  }
  // The bounds are not vacuous on these cases.
  EXPECT_GT(positive_traffic, 0);
  EXPECT_GT(positive_fixed, 0);
  EXPECT_GT(planned, 20);
}

TEST(KernelBoundsTest, MakespanBoundsStayBelowTheExactOptimumWithRoomyCaches) {
  for (uint32_t seed = 1; seed <= 25; ++seed) {
    CacheConfig config = Caches(4096, 4096);
    KernelGraph g = RandomTinyGraph(seed, 3 + seed % 4, config);
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const KernelBounds b = ComputeKernelBounds(g, config);
    const int64_t exact = ExactRoomyMakespan(g, config);
    EXPECT_EQ(b.traffic_free_order, 0);
    EXPECT_LE(b.makespan, exact);
    EXPECT_LE(b.cache_area, exact);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
    EXPECT_GE(r.metrics.makespan, exact);
  }
}

TEST(KernelBoundsTest, BracketTheExactOptimaOfTinyGeneratedCases) {
  CacheConfig config;
  for (CacheLevel& l : config.levels) l.capacity *= 64;  // roomy: the exact makespan is an enumeration
  for (GeneratorOptions o : {GeneratorOptions{GraphKind::kMatmul, 1, 1, 1},
                             GeneratorOptions{GraphKind::kConv, 1, 1, 1, 1, 1, 1}}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph(o, config));
    SCOPED_TRACE(g.name);
    const KernelBounds b = ComputeKernelBounds(g, config);
    const int64_t exact = ExactRoomyMakespan(g, config);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
    EXPECT_LE(b.makespan, exact);
    EXPECT_LE(exact, r.metrics.makespan);
    EXPECT_LE(b.vstay_combined, ExactMinPeak(g, config, {"L1", "UB"}));
  }
}

// A product-shaped graph without MOVEs: one operation per (i, j, k) reads
// A(i,k) (L1), B(k,j) (UB) and accumulates into C(i,j) (L0C), the k steps of
// one C chained. Sizes 1; the caller sets the capacities.
KernelGraph DirectMatmul(int m, int n, int k, const CacheConfig& config,
                         const std::string& b_type = "UB") {
  KernelGraph g;
  auto node = [&](NodeKind kind, const std::string& op, int buf, const std::string& type) {
    KernelNode v;
    v.id = g.num_nodes();
    v.kind = kind;
    v.op = op;
    if (kind == NodeKind::kOp) {
      v.pipe = "CUBE";
      v.cycles = 1;
    } else {
      v.buf_id = buf;
      v.size = 1;
      v.type = type;
    }
    g.nodes.push_back(v);
    return v.id;
  };
  int next_buf = 0;
  std::vector<int> a_buf(m * k), b_buf(k * n), c_buf(m * n);
  std::map<int, int> alloc_of;
  std::map<int, std::vector<int>> users;
  auto declare = [&](const std::string& type) {
    const int buf = next_buf++;
    alloc_of[buf] = node(NodeKind::kAlloc, "ALLOC", buf, type);
    return buf;
  };
  for (int& b : a_buf) b = declare("L1");
  for (int& b : b_buf) b = declare(b_type);
  for (int& b : c_buf) b = declare("L0C");
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      int prev = -1;
      for (int kk = 0; kk < k; ++kk) {
        const int a = a_buf[i * k + kk], b = b_buf[kk * n + j], c = c_buf[i * n + j];
        const int v = node(NodeKind::kOp, "MATMUL", -1, "");
        g.nodes[v].bufs = {c, a, b};
        for (int x : {a, b, c}) {
          users[x].push_back(v);
          if (x != c || prev < 0) g.edges.emplace_back(alloc_of[x], v);
        }
        if (prev >= 0) g.edges.emplace_back(prev, v);
        prev = v;
      }
    }
  }
  for (int buf = 0; buf < next_buf; ++buf) {
    const int f = node(NodeKind::kFree, "FREE", buf, g.nodes[alloc_of[buf]].type);
    g.edges.emplace_back(alloc_of[buf], f);
    for (int u : users[buf]) g.edges.emplace_back(u, f);
  }
  g.name = "direct_matmul";
  EXPECT_TRUE(FinalizeKernelGraph(g, config, g.name).ok());
  return g;
}

// Exact minimum number of reloads of DirectMatmul(3,3,3) over every order and
// every spill set when each operation's three tiles fill their caches (sizes
// only, addresses ignored, which can only lower it): at each operation its
// three tiles are the only residents of their caches, so a tile is reloaded once per run of
// its cache's label sequence after the first, and the state of a dynamic
// program over orders is (down-set of the C chains, last operation).
int64_t ExactDirectMatmulReloads3() {
  constexpr int kChains = 9, kSteps = 3;
  int pow4[kChains + 1] = {1};
  for (int c = 0; c < kChains; ++c) pow4[c + 1] = pow4[c] * 4;
  const int sets = pow4[kChains];
  constexpr int kInf = 1 << 20;
  // Labels changed between consecutive operations (i, j, k).
  auto changes = [](int c1, int k1, int c2, int k2) {
    const int i1 = c1 / 3, j1 = c1 % 3, i2 = c2 / 3, j2 = c2 % 3;
    return int{i1 != i2 || k1 != k2} + int{k1 != k2 || j1 != j2} + int{c1 != c2};
  };
  std::vector<int> cost(static_cast<size_t>(sets) * kChains * kSteps, kInf);
  auto at = [&](int set, int chain, int step) -> int& {
    return cost[(static_cast<size_t>(set) * kChains + chain) * kSteps + step];
  };
  // Sets in increasing digit sum are a topological order of the transitions.
  std::vector<std::vector<int>> by_sum(kChains * kSteps + 1);
  for (int set = 0; set < sets; ++set) {
    int sum = 0;
    for (int c = 0; c < kChains; ++c) sum += set / pow4[c] % 4;
    if (sum <= kChains * kSteps) by_sum[sum].push_back(set);
  }
  for (int c = 0; c < kChains; ++c) at(pow4[c], c, 0) = 3;  // first operation: three first loads
  int best = kInf;
  for (int sum = 1; sum <= kChains * kSteps; ++sum) {
    for (int set : by_sum[sum]) {
      for (int c1 = 0; c1 < kChains; ++c1) {
        const int k1 = set / pow4[c1] % 4 - 1;
        if (k1 < 0) continue;
        const int here = at(set, c1, k1);
        if (here >= kInf) continue;
        if (sum == kChains * kSteps) best = std::min(best, here);
        for (int c2 = 0; c2 < kChains; ++c2) {
          const int k2 = set / pow4[c2] % 4;
          if (k2 >= kSteps) continue;
          int& next = at(set + pow4[c2], c2, k2);
          next = std::min(next, here + changes(c1, k1, c2, k2));
        }
      }
    }
  }
  return best - 27;  // segments minus the 27 first ALLOCs
}

// A and B in three caches of one tile each (A L1, B UB, C L0C: three pools,
// two merged), or A and B sharing an L1 of two tiles (one pool of two roles):
// in both, the residents at each operation are exactly its three tiles.
class ProductBoundTinyTest : public ::testing::TestWithParam<bool> {};

TEST_P(ProductBoundTinyTest, BracketsTheExactReloadsOfATinyMatmul) {
  const bool shared_l1 = GetParam();
  CacheConfig config;
  for (CacheLevel& l : config.levels) l.capacity = l.name == "L1" && shared_l1 ? 2 : 1;
  const KernelGraph g = DirectMatmul(3, 3, 3, config, shared_l1 ? "L1" : "UB");
  const KernelBounds b = ComputeKernelBounds(g, config);
  const int64_t exact = ExactDirectMatmulReloads3();
  // Every step of an order changes at least two of the three tiles: 3 + 2 x 26
  // segments for 27 tiles.
  EXPECT_GE(exact, 28);
  EXPECT_GT(b.traffic_product, 0);          // the must-live LP sees nothing here
  EXPECT_LE(b.traffic_product, 2 * exact);  // no tile is COPY_IN-backed: 2 x Size per spill
  EXPECT_LE(b.traffic_free_order, 2 * exact);
  EXPECT_GT(b.spill_in_cycles_product, 0);
  EXPECT_LE(b.spill_in_cycles_product, (2 + 150) * exact);
  EXPECT_LE(b.spill_in_cycles, (2 + 150) * exact);
  // Planned and checked by the evaluator: the plan pays at least the exact
  // optimum and the bound.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
  EXPECT_GE(r.metrics.extra_movement, 2 * exact);
  EXPECT_GE(r.metrics.makespan, b.makespan);
}

INSTANTIATE_TEST_SUITE_P(Caches, ProductBoundTinyTest, ::testing::Bool());

// Generated tiled matmuls: anchors reach their L1 tiles through MOVEs into
// L0A/L0B. 12x12x12 and 16x16x16 need reloads in every order; 8x8x8 is too
// small for the window argument (its bound stays 0).
TEST(KernelBoundsTest, ProductBoundOnGeneratedMatmuls) {
  CacheConfig config;
  for (int size : {8, 12}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(
        KernelGraph g,
        GenerateKernelGraph(GeneratorOptions{GraphKind::kMatmul, size, size, size}, config));
    SCOPED_TRACE(g.name);
    const KernelBounds b = ComputeKernelBounds(g, config);
    if (size == 8) {
      EXPECT_EQ(b.traffic_product, 0);
    } else {
      NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
      EXPECT_LE(b.traffic_free_order, r.metrics.extra_movement);
      EXPECT_LE(b.makespan, r.metrics.makespan);
      EXPECT_GT(b.traffic_product, 0);
      EXPECT_EQ(b.traffic_free_order, b.traffic_product);
      EXPECT_GT(b.spill_in_cycles_product, 0);
      EXPECT_GE(b.spill_in_cycles, b.spill_in_cycles_product);
    }
  }
}

// The cut bound (docs/kernel.md, "Cut bound for full matmul grids") never
// exceeds the exact optimum of the relaxed tile model (cache X + 4 for the
// L0A/L0B buffers, output tiles may be spilled, every SPILL_IN one load),
// whose solutions include every plan of the generated matmul with an L1 of X
// tiles; and on generated matmuls it never exceeds the plan.
TEST(CutBoundTest, NeverExceedsTheExactOptimumOfTinyMatmuls) {
#ifdef NPUPLAN_TEST_SANITIZED
  const std::vector<int> l1_tiles = {};  // exact searches of seconds: the shapes below only
#else
  const std::vector<int> l1_tiles = {4, 6};
#endif
  for (int x : l1_tiles) {
    SCOPED_TRACE(x);
    const int64_t cut = MatmulCutReloads(3, 3, 3, x + 4, 1);
    const auto exact = testing::ExactMinLoads(testing::TinyMatmul{3, 3, 3, x + 4, 2, true});
    ASSERT_GE(exact.loads, 0);
    EXPECT_LE(cut, exact.reloads());
    // Graph and planner: the bound found in the generated graph is the same
    // cut, and the plan pays at least it.
    CacheConfig config;
    for (CacheLevel& l : config.levels) {
      if (l.name == "L1") l.capacity = 128 * x;
    }
    NPUPLAN_ASSERT_OK_AND_ASSIGN(
        KernelGraph g, GenerateKernelGraph(GeneratorOptions{GraphKind::kMatmul, 3, 3, 3}, config));
    const KernelBounds b = ComputeKernelBounds(g, config);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
    EXPECT_LE(b.traffic_cut, r.metrics.extra_movement);
    EXPECT_LE(b.spill_in_cycles_cut, 406 * static_cast<int64_t>(r.solution.spills.size()));
    EXPECT_LE(b.traffic_free_order, r.metrics.extra_movement);
  }
  // Small caches and other shapes (m, n, k, cache): the cut stays at or
  // below the exact optimum (e.g. 3x3x3 with a cache of 2: cut 4, exact 23).
  for (auto [m, n, k, cache] :
       {std::array{3, 3, 3, 2}, std::array{2, 3, 3, 2}, std::array{3, 3, 2, 2},
        std::array{4, 2, 2, 2}, std::array{2, 2, 3, 2}, std::array{3, 3, 2, 4}}) {
    SCOPED_TRACE(::testing::PrintToString(std::array{m, n, k, cache}));
    const int64_t cut = MatmulCutReloads(m, n, k, cache, 1);
    const auto exact = testing::ExactMinLoads(testing::TinyMatmul{m, n, k, cache, 2, true});
    ASSERT_GE(exact.loads, 0);
    EXPECT_GT(cut, 0);
    EXPECT_LE(cut, exact.reloads());
  }
}

TEST(CutBoundTest, HoldsForThePlansOfGeneratedMatmuls) {
  CacheConfig config;
#ifdef NPUPLAN_TEST_SANITIZED
  const std::vector<int> sizes = {8};  // the larger plans take minutes there
#else
  const std::vector<int> sizes = {8, 12, 16};
#endif
  for (int size : sizes) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(
        KernelGraph g,
        GenerateKernelGraph(GeneratorOptions{GraphKind::kMatmul, size, size, size}, config));
    SCOPED_TRACE(g.name);
    const KernelBounds b = ComputeKernelBounds(g, config);
    EXPECT_GT(b.traffic_cut, 0);
    EXPECT_GE(b.traffic_free_order, b.traffic_cut);
    EXPECT_GE(b.spill_in_cycles, b.spill_in_cycles_cut);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
    EXPECT_LE(b.traffic_cut, r.metrics.extra_movement);
    EXPECT_LE(b.makespan, r.metrics.makespan);
  }
}

TEST(KernelBoundsTest, HoldForThePlansOfTheOfficialCases) {
  const char* env = std::getenv("NPUPLAN_SHARED_DIR");
  const std::filesystem::path dir = std::filesystem::path(env != nullptr ? env : NPUPLAN_SHARED_DIR) / "data/kernels";
  if (!std::filesystem::exists(dir / "Matmul_Case0.json")) GTEST_SKIP() << "no contest data in " << dir;
  CacheConfig config;
  for (const char* name : {"FlashAttention_Case0", "Matmul_Case0"}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, LoadKernelGraph((dir / (std::string(name) + ".json")).string(), config));
    const KernelBounds b = ComputeKernelBounds(g, config);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
    EXPECT_TRUE(b.complete);
    EXPECT_LE(b.makespan, r.metrics.makespan) << name;
    EXPECT_LE(b.traffic_free_order, r.metrics.extra_movement) << name;
    EXPECT_LE(FixedOrderTrafficBound(g, config, r.solution.schedule), r.metrics.extra_movement) << name;
    EXPECT_LE(b.vstay_combined, r.q1_metrics.max_vstay_combined) << name;
  }
}

}  // namespace
}  // namespace npuplan::kernel
