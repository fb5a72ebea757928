#include "npuplan/kernel/bounds.h"

#include <algorithm>
#include <cmath>
#include <queue>

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
