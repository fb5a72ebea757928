#include "npuplan/kernel/makespan_reorder.h"

#include <algorithm>
#include <queue>
#include <random>
#include <string>

#include "npuplan/kernel/evaluator.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::kernel {
namespace {

// The constraint graph G' of a valid solution (see the header), with the
// timing attributes of each node.
struct TimedGraph {
  std::vector<std::vector<int>> pred, succ;
  std::vector<int64_t> cycles;
  std::vector<int> pipe;  // -1 for ALLOC/FREE
  int num_pipes = 0;
};

TimedGraph BuildTimedGraph(const KernelGraph& g, const KernelSolution& sol, const CacheConfig& config) {
  const int n = g.num_nodes();
  const int s = static_cast<int>(sol.spills.size());
  const int total = n + 2 * s;
  TimedGraph tg;
  tg.pred.assign(total, {});
  tg.cycles.assign(total, 0);
  tg.pipe.assign(total, -1);
  std::vector<int> pos(total);
  for (int i = 0; i < total; ++i) pos[sol.schedule[i]] = i;

  // Pipes: MTE3 = 0 and MTE2 = 1 (SPILL_OUT / SPILL_IN), others as met by Id.
  std::vector<std::string> pipes = {"MTE3", "MTE2"};
  for (int v = 0; v < n; ++v) {
    const KernelNode& node = g.nodes[v];
    tg.pred[v] = g.pred[v];
    if (node.kind != NodeKind::kOp) continue;
    auto it = std::find(pipes.begin(), pipes.end(), node.pipe);
    tg.pipe[v] = static_cast<int>(it - pipes.begin());
    if (it == pipes.end()) pipes.push_back(node.pipe);
    tg.cycles[v] = node.cycles;
  }
  tg.num_pipes = static_cast<int>(pipes.size());

  // Spill nodes and edges; residency segments as (start node, end node, offset).
  std::vector<std::vector<int>> spills_of(g.buffers.size());
  for (int k = 0; k < s; ++k) {
    const int b = sol.spills[k].buf_id;
    const KernelBuffer& buf = g.buffer(b);
    const int out = n + 2 * k, in = out + 1;
    tg.pipe[out] = 0;
    tg.pipe[in] = 1;
    tg.cycles[out] = g.SpillOutCycles(b, config);
    tg.cycles[in] = g.SpillInCycles(b, config);
    tg.pred[out].push_back(buf.alloc_node);
    tg.pred[in].push_back(out);
    tg.pred[buf.free_node].push_back(in);
    for (int u : buf.users) {
      if (pos[u] < pos[out]) tg.pred[out].push_back(u);
      if (pos[u] > pos[in]) tg.pred[u].push_back(in);
    }
    spills_of[g.buf_index[b]].push_back(k);
  }
  struct Seg {
    int level;
    int64_t offset, size;
  };
  std::vector<int> seg_start(total, -1), seg_end(total, -1);
  std::vector<Seg> segs;
  for (size_t bi = 0; bi < g.buffers.size(); ++bi) {
    const KernelBuffer& b = g.buffers[bi];
    auto& ks = spills_of[bi];
    std::sort(ks.begin(), ks.end(), [&](int x, int y) { return pos[n + 2 * x] < pos[n + 2 * y]; });
    int64_t offset = sol.offsets.at(b.buf_id);
    int start = b.alloc_node;
    for (size_t j = 0; j < ks.size(); ++j) {
      if (j > 0) tg.pred[n + 2 * ks[j]].push_back(n + 2 * ks[j - 1] + 1);
      seg_start[start] = seg_end[n + 2 * ks[j]] = static_cast<int>(segs.size());
      segs.push_back({b.level, offset, b.size});
      start = n + 2 * ks[j] + 1;
      offset = sol.spills[ks[j]].new_offset;
    }
    seg_start[start] = seg_end[b.free_node] = static_cast<int>(segs.size());
    segs.push_back({b.level, offset, b.size});
  }
  // Address-reuse edges: the last end at each address -> the next start there.
  std::vector<std::vector<int>> last_end;
  for (const CacheLevel& lv : config.levels) last_end.emplace_back(lv.capacity, -1);
  std::vector<int> stamp(total, -1);
  for (int v : sol.schedule) {
    if (int e = seg_end[v]; e >= 0) {
      auto& le = last_end[segs[e].level];
      for (int64_t a = segs[e].offset; a < segs[e].offset + segs[e].size; ++a) le[a] = v;
    }
    if (int si = seg_start[v]; si >= 0) {
      const auto& le = last_end[segs[si].level];
      for (int64_t a = segs[si].offset; a < segs[si].offset + segs[si].size; ++a) {
        if (int u = le[a]; u >= 0 && stamp[u] != v) {
          stamp[u] = v;
          tg.pred[v].push_back(u);
        }
      }
    }
  }
  tg.succ.assign(total, {});
  for (int v = 0; v < total; ++v) {
    auto& p = tg.pred[v];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    for (int u : p) tg.succ[u].push_back(v);
  }
  return tg;
}

}  // namespace

absl::StatusOr<ReorderResult> ReorderForMakespan(const KernelGraph& g, const KernelSolution& sol,
                                                 const CacheConfig& config, const ReorderOptions& options) {
  NPUPLAN_ASSIGN_OR_RETURN(KernelMetrics before, EvaluateSolution(g, sol, config));
  const int n = g.num_nodes();
  const int total = static_cast<int>(sol.schedule.size());
  TimedGraph tg = BuildTimedGraph(g, sol, config);
  std::vector<int> pos(total);
  for (int i = 0; i < total; ++i) pos[sol.schedule[i]] = i;

  // Priority: bottom level (longest path to a sink, cycles included).
  std::vector<int64_t> prio(total, 0);
  if (options.priority == ReorderOptions::Priority::kCriticalPath) {
    for (int i = total - 1; i >= 0; --i) {
      const int v = sol.schedule[i];
      int64_t best = 0;
      for (int s : tg.succ[v]) best = std::max(best, prio[s]);
      prio[v] = best + tg.cycles[v];
    }
    if (options.noise_seed != 0 && options.noise_permille > 0) {
      std::mt19937 rng(options.noise_seed);
      for (int i = 0; i < total; ++i) {
        const int v = sol.schedule[i];
        const int64_t cut = static_cast<int64_t>(rng() % (static_cast<uint32_t>(options.noise_permille) + 1));
        prio[v] -= prio[v] * cut / 1000;
      }
    }
  }
  // Higher priority first, then earlier input position.
  auto before_in_ready = [&](int a, int b) {
    return prio[a] != prio[b] ? prio[a] < prio[b] : pos[a] > pos[b];
  };
  std::vector<int64_t> est(total, 0), end(total, 0);
  auto before_in_waiting = [&](int a, int b) {
    if (est[a] != est[b]) return est[a] > est[b];
    return before_in_ready(a, b);
  };
  using ReadyQ = std::priority_queue<int, std::vector<int>, decltype(before_in_ready)>;
  using WaitQ = std::priority_queue<int, std::vector<int>, decltype(before_in_waiting)>;
  std::vector<ReadyQ> ready;
  std::vector<WaitQ> waiting;
  for (int p = 0; p < tg.num_pipes; ++p) {
    ready.emplace_back(before_in_ready);
    waiting.emplace_back(before_in_waiting);
  }
  std::vector<int64_t> pipe_free(tg.num_pipes, 0);
  std::vector<int> indeg(total);
  auto later_pos = [&](int a, int b) { return pos[a] > pos[b]; };
  std::priority_queue<int, std::vector<int>, decltype(later_pos)> zero(later_pos);
  // Zero-duration ALLOC/FREE run as soon as they are available, in input order.
  auto make_available = [&](int v) {
    for (int u : tg.pred[v]) est[v] = std::max(est[v], end[u]);
    if (tg.pipe[v] < 0) {
      zero.push(v);
    } else {
      waiting[tg.pipe[v]].push(v);
    }
  };
  for (int v = 0; v < total; ++v) {
    indeg[v] = static_cast<int>(tg.pred[v].size());
  }
  for (int v : sol.schedule) {
    if (indeg[v] == 0) make_available(v);
  }
  std::vector<int> order;
  order.reserve(total);
  auto emit = [&](int v, int64_t start) {
    end[v] = start + tg.cycles[v];
    order.push_back(v);
    for (int s : tg.succ[v]) {
      if (--indeg[s] == 0) make_available(s);
    }
  };
  int64_t makespan = 0;
  while (static_cast<int>(order.size()) < total) {
    if (!zero.empty()) {
      // Smallest input position first keeps the output stable.
      const int v = zero.top();
      zero.pop();
      emit(v, est[v]);
      makespan = std::max(makespan, end[v]);
      continue;
    }
    int best_pipe = -1;
    int64_t best_t = 0;
    for (int p = 0; p < tg.num_pipes; ++p) {
      int64_t t;
      if (!ready[p].empty()) {
        t = pipe_free[p];
      } else if (!waiting[p].empty()) {
        t = std::max(pipe_free[p], est[waiting[p].top()]);
      } else {
        continue;
      }
      if (best_pipe < 0 || t < best_t) {
        best_pipe = p;
        best_t = t;
      }
    }
    if (best_pipe < 0) {
      return absl::InternalError(StrCat("makespan-reorder: constraint graph of '", g.name,
                                        "' has a cycle (", total - order.size(), " nodes left)"));
    }
    auto& w = waiting[best_pipe];
    auto& r = ready[best_pipe];
    while (!w.empty() && est[w.top()] <= best_t) {
      r.push(w.top());
      w.pop();
    }
    const int v = r.top();
    r.pop();
    emit(v, best_t);
    pipe_free[best_pipe] = end[v];
    makespan = std::max(makespan, end[v]);
  }

  // Renumber spill records in SPILL_OUT order of the new schedule.
  const int s = static_cast<int>(sol.spills.size());
  std::vector<int> new_pos(total);
  for (int i = 0; i < total; ++i) new_pos[order[i]] = i;
  std::vector<int> ks(s);
  for (int k = 0; k < s; ++k) ks[k] = k;
  std::sort(ks.begin(), ks.end(), [&](int a, int b) { return new_pos[n + 2 * a] < new_pos[n + 2 * b]; });
  std::vector<int> renum(s);
  ReorderResult res;
  res.solution.offsets = sol.offsets;
  for (int j = 0; j < s; ++j) {
    renum[ks[j]] = j;
    res.solution.spills.push_back(sol.spills[ks[j]]);
  }
  res.solution.schedule.reserve(total);
  for (int v : order) {
    res.solution.schedule.push_back(v < n ? v : n + 2 * renum[(v - n) / 2] + (v - n) % 2);
  }
  res.makespan_before = before.makespan;
  res.makespan_after = makespan;
  return res;
}

}  // namespace npuplan::kernel
