#include "npuplan/kernel/pipelined_schedule.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::kernel {
namespace {

enum class State { kNone, kResident, kSpilled, kFreed };

struct Live {
  int64_t off;
  int64_t size;
  int bi;
};

// One placement decided for a candidate: buffer, offset, and whether it is a
// reload (SPILL_IN) or a first allocation (ALLOC).
struct BufferPlacement {
  int bi;
  int64_t off;
  bool reload;
};

class Pipeliner {
 public:
  Pipeliner(const KernelGraph& g, const CacheConfig& config, const std::vector<int>& ops,
            const PipelineOptions& options)
      : g_(g), config_(config), ops_(ops), lookahead_(std::max(0, options.lookahead)) {}

  absl::StatusOr<PipelineResult> Run() {
    const int n = g_.num_nodes();
    const int nb = static_cast<int>(g_.buffers.size());
    for (const KernelBuffer& b : g_.buffers) {
      if (b.size > config_.levels[b.level].capacity) {
        return absl::ResourceExhaustedError(StrCat("no valid plan: buffer ", b.buf_id, " (Size ", b.size,
                                                   ") is larger than ", config_.levels[b.level].name));
      }
    }
    std::vector<std::string> pipes = {"MTE3", "MTE2"};
    pipe_of_.assign(n, -1);
    for (int v = 0; v < n; ++v) {
      if (g_.nodes[v].kind != NodeKind::kOp) continue;
      auto it = std::find(pipes.begin(), pipes.end(), g_.nodes[v].pipe);
      pipe_of_[v] = static_cast<int>(it - pipes.begin());
      if (it == pipes.end()) pipes.push_back(g_.nodes[v].pipe);
    }
    pipe_free_.assign(pipes.size(), 0);
    emitted_.assign(n, 0);
    end_.assign(n, 0);
    rem_.assign(n, 0);
    for (int v = 0; v < n; ++v) rem_[v] = static_cast<int>(g_.pred[v].size());
    refpos_.assign(n, -1);
    for (size_t i = 0; i < ops_.size(); ++i) refpos_[ops_[i]] = static_cast<int>(i);
    state_.assign(nb, State::kNone);
    offset_.assign(nb, -1);
    pending_.assign(nb, -1);
    last_in_end_.assign(nb, 0);
    users_end_.assign(nb, 0);
    next_user_.assign(nb, 0);
    users_by_ref_.assign(nb, {});
    for (int bi = 0; bi < nb; ++bi) {
      for (int u : g_.buffers[bi].users) {
        if (refpos_[u] >= 0) users_by_ref_[bi].push_back(refpos_[u]);
      }
      std::sort(users_by_ref_[bi].begin(), users_by_ref_[bi].end());
    }
    // L0 allocations stay in reference order per cache (see Blocked()).
    l0_allocs_.assign(config_.levels.size(), {});
    {
      std::vector<char> seen(nb, 0);
      for (size_t i = 0; i < ops_.size(); ++i) {
        const int c = ops_[i];
        for (int b : g_.nodes[c].bufs) {
          const int bi = g_.buf_index[b];
          if (seen[bi]) continue;
          seen[bi] = 1;
          const int l = g_.buffers[bi].level;
          if (config_.levels[l].is_l0 && (l0_allocs_[l].empty() || l0_allocs_[l].back() != static_cast<int>(i))) {
            l0_allocs_[l].push_back(static_cast<int>(i));
          }
        }
      }
      l0_next_.assign(config_.levels.size(), 0);
    }
    live_.assign(config_.levels.size(), {});
    addr_ready_.clear();
    for (const CacheLevel& lv : config_.levels) addr_ready_.emplace_back(lv.capacity, 0);

    size_t done_ops = 0;
    while (done_ops < ops_.size()) {
      NPUPLAN_RETURN_IF_ERROR(EmitReadyFrees());
      while (head_ < ops_.size() && emitted_[ops_[head_]]) ++head_;
      if (head_ >= ops_.size()) break;
      // Candidates: the head and the next `lookahead` operations whose
      // predecessors (ALLOCs aside) have run.
      int best = -1;
      int64_t best_t = 0;
      std::vector<BufferPlacement> best_pl;
      bool head_needs_spill = false;
      const size_t last = std::min(ops_.size(), head_ + 1 + static_cast<size_t>(lookahead_));
      for (size_t i = head_; i < last; ++i) {
        const int c = ops_[i];
        if (emitted_[c] || !PredsReady(c) || (i != head_ && L0OutOfTurn(c))) continue;
        std::vector<BufferPlacement> pl;
        const bool fits = TryPlaceFree(c, pl);
        if (!fits) {
          if (i == head_ && HeadMaySpill(c)) {
            head_needs_spill = true;
            break;
          }
          continue;
        }
        const int64_t t = Estimate(c, pl);
        if (best < 0 || t < best_t) {
          best = c;
          best_t = t;
          best_pl = std::move(pl);
        }
      }
      if (head_needs_spill) {
        NPUPLAN_RETURN_IF_ERROR(CommitHeadWithSpill(ops_[head_]));
        ++done_ops;
        continue;
      }
      if (best < 0) {
        return absl::ResourceExhaustedError(
            StrCat("pipelined-schedule: node ", ops_[head_], " cannot be placed: its L0 cache is held by ",
                   "operations issued ahead (lookahead ", lookahead_, ")"));
      }
      Commit(best, best_pl);
      ++done_ops;
    }
    // Buffers no operation uses: allocate and free them at the end.
    for (int bi = 0; bi < static_cast<int>(g_.buffers.size()); ++bi) {
      if (state_[bi] != State::kNone) continue;
      std::vector<BufferPlacement> pl;
      NPUPLAN_RETURN_IF_ERROR(PlaceWithSpill(bi, {bi}, pl, g_.buffers[bi].alloc_node));
      EmitPlacements(pl);
      NPUPLAN_RETURN_IF_ERROR(EmitReadyFrees());
    }
    NPUPLAN_RETURN_IF_ERROR(EmitReadyFrees());
    if (sol_.schedule.size() != static_cast<size_t>(n) + 2 * sol_.spills.size()) {
      return absl::InternalError(StrCat("pipelined-schedule: emitted ", sol_.schedule.size(), " of ",
                                        n + 2 * sol_.spills.size(), " nodes"));
    }
    PipelineResult r;
    r.solution = std::move(sol_);
    for (int64_t e : end_) r.makespan = std::max(r.makespan, e);
    return r;
  }

 private:
  // An L0 cache cannot be spilled: an operation ahead of the head may take
  // L0 space only if every earlier operation of the reference order that
  // allocates in that cache has been issued. Then what the head finds in an L0
  // cache is at most what the reference order has live there, so it fits.
  bool L0OutOfTurn(int c) {
    for (int bi : Needs(c)) {
      const int l = g_.buffers[bi].level;
      if (!config_.levels[l].is_l0 || state_[bi] != State::kNone) continue;
      auto& next = l0_next_[l];
      const auto& list = l0_allocs_[l];
      while (next < list.size() && emitted_[ops_[list[next]]]) ++next;
      if (next < list.size() && list[next] != refpos_[c]) return true;
    }
    return false;
  }

  bool PredsReady(int v) const {
    for (int p : g_.pred[v]) {
      if (!emitted_[p] && g_.nodes[p].kind != NodeKind::kAlloc) return false;
    }
    return true;
  }

  // Buffers a candidate needs placed: its own not yet allocated or spilled,
  // plus buffers of ALLOC predecessors it does not list.
  std::vector<int> Needs(int c) const {
    std::vector<int> need;
    auto add = [&](int bi) {
      if ((state_[bi] == State::kNone || state_[bi] == State::kSpilled) &&
          std::find(need.begin(), need.end(), bi) == need.end()) {
        need.push_back(bi);
      }
    };
    for (int b : g_.nodes[c].bufs) add(g_.buf_index[b]);
    for (int p : g_.pred[c]) {
      if (!emitted_[p] && g_.nodes[p].kind == NodeKind::kAlloc) add(g_.buf_index[g_.nodes[p].buf_id]);
    }
    return need;
  }

  bool HeadMaySpill(int c) const {
    for (int bi : Needs(c)) {
      if (config_.levels[g_.buffers[bi].level].is_l0 && !FitsSomewhere(bi)) return false;
    }
    return true;
  }

  bool FitsSomewhere(int bi) const {
    int64_t off;
    return FreeWindow(bi, off);
  }

  // Oldest-free window in free space: the hole end (start or end of a hole)
  // whose addresses were released earliest in time, then the smaller hole.
  bool FreeWindow(int bi, int64_t& off) const {
    const KernelBuffer& b = g_.buffers[bi];
    const auto& live = live_[b.level];
    const auto& ready = addr_ready_[b.level];
    const int64_t cap = config_.levels[b.level].capacity;
    bool found = false;
    int64_t best_t = 0, best_len = 0;
    auto consider = [&](int64_t start, int64_t len) {
      if (len < b.size) return;
      for (int64_t a : {start, start + len - b.size}) {
        int64_t t = 0;
        for (int64_t x = a; x < a + b.size; ++x) t = std::max(t, ready[x]);
        if (!found || t < best_t || (t == best_t && len < best_len)) {
          found = true;
          best_t = t;
          best_len = len;
          off = a;
        }
      }
    };
    int64_t prev = 0;
    for (const Live& l : live) {
      consider(prev, l.off - prev);
      prev = l.off + l.size;
    }
    consider(prev, cap - prev);
    return found;
  }

  void Insert(int bi, int64_t off) {
    auto& live = live_[g_.buffers[bi].level];
    Live lb{off, g_.buffers[bi].size, bi};
    live.insert(std::upper_bound(live.begin(), live.end(), lb, [](const Live& a, const Live& b) { return a.off < b.off; }),
                lb);
  }
  void Erase(int bi) {
    auto& live = live_[g_.buffers[bi].level];
    for (size_t i = 0; i < live.size(); ++i) {
      if (live[i].bi == bi) {
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
    }
  }

  // Places every need of c into free space (tentatively; undone before
  // returning). False when one does not fit.
  bool TryPlaceFree(int c, std::vector<BufferPlacement>& pl) {
    bool ok = true;
    for (int bi : Needs(c)) {
      int64_t off;
      if (!FreeWindow(bi, off)) {
        ok = false;
        break;
      }
      Insert(bi, off);
      pl.push_back({bi, off, state_[bi] == State::kSpilled});
    }
    for (const BufferPlacement& p : pl) Erase(p.bi);
    return ok;
  }

  int64_t RangeReady(int bi, int64_t off) const {
    const auto& ready = addr_ready_[g_.buffers[bi].level];
    int64_t t = 0;
    for (int64_t x = off; x < off + g_.buffers[bi].size; ++x) t = std::max(t, ready[x]);
    return t;
  }

  // Start time of c if issued now with placements pl (mirrors Commit).
  int64_t Estimate(int c, const std::vector<BufferPlacement>& pl) const {
    int64_t mte2 = pipe_free_[1];
    int64_t t = pipe_free_[pipe_of_[c]];
    for (int p : g_.pred[c]) {
      if (emitted_[p]) t = std::max(t, end_[p]);
    }
    for (int b : g_.nodes[c].bufs) {
      const int bi = g_.buf_index[b];
      if (state_[bi] != State::kSpilled) t = std::max(t, last_in_end_[bi]);
    }
    for (const BufferPlacement& p : pl) {
      const int64_t ready = RangeReady(p.bi, p.off);
      if (p.reload) {
        const int id = g_.buffers[p.bi].buf_id;
        const int64_t s = std::max({mte2, ready, end_[g_.num_nodes() + 2 * pending_[p.bi]]});
        mte2 = s + g_.SpillInCycles(id, config_);
        t = std::max(t, mte2);
      } else {
        t = std::max(t, ready);
      }
    }
    if (pipe_of_[c] == 1) t = std::max(t, mte2);
    return t;
  }

  // ---- emission (times exactly as the evaluator computes them)

  void EmitNode(int v, int64_t start) {
    end_[v] = start + (v < g_.num_nodes() && g_.nodes[v].kind == NodeKind::kOp ? g_.nodes[v].cycles : 0);
    sol_.schedule.push_back(v);
    if (v < g_.num_nodes()) {
      emitted_[v] = 1;
      for (int s : g_.succ[v]) {
        if (--rem_[s] == 0 && g_.nodes[s].kind == NodeKind::kFree) ready_frees_.push_back(s);
      }
    }
  }

  void Release(int bi, int64_t t) {
    auto& ready = addr_ready_[g_.buffers[bi].level];
    for (int64_t x = offset_[bi]; x < offset_[bi] + g_.buffers[bi].size; ++x) ready[x] = std::max(ready[x], t);
    Erase(bi);
  }

  void EmitPlacements(const std::vector<BufferPlacement>& pl) {
    for (const BufferPlacement& p : pl) {
      const KernelBuffer& b = g_.buffers[p.bi];
      const int64_t ready = RangeReady(p.bi, p.off);
      if (p.reload) {
        const int k = pending_[p.bi];
        const int in = g_.num_nodes() + 2 * k + 1;
        end_.resize(std::max<size_t>(end_.size(), in + 1), 0);
        const int64_t s = std::max({pipe_free_[1], ready, end_[in - 1]});
        sol_.spills[k].new_offset = p.off;
        EmitNode(in, s);
        end_[in] = s + g_.SpillInCycles(b.buf_id, config_);
        pipe_free_[1] = end_[in];
        last_in_end_[p.bi] = end_[in];
        pending_[p.bi] = -1;
      } else {
        int64_t s = ready;
        for (int q : g_.pred[b.alloc_node]) s = std::max(s, end_[q]);
        sol_.offsets[b.buf_id] = p.off;
        EmitNode(b.alloc_node, s);
      }
      offset_[p.bi] = p.off;
      state_[p.bi] = State::kResident;
      Insert(p.bi, p.off);
    }
  }

  void Commit(int c, const std::vector<BufferPlacement>& pl) {
    EmitPlacements(pl);
    int64_t t = pipe_free_[pipe_of_[c]];
    for (int p : g_.pred[c]) t = std::max(t, end_[p]);
    for (int b : g_.nodes[c].bufs) t = std::max(t, last_in_end_[g_.buf_index[b]]);
    EmitNode(c, t);
    pipe_free_[pipe_of_[c]] = end_[c];
    for (int b : g_.nodes[c].bufs) {
      const int bi = g_.buf_index[b];
      users_end_[bi] = std::max(users_end_[bi], end_[c]);
    }
  }

  void SpillOut(int bi) {
    const KernelBuffer& b = g_.buffers[bi];
    const int k = static_cast<int>(sol_.spills.size());
    sol_.spills.push_back({b.buf_id, -1});
    const int out = g_.num_nodes() + 2 * k;
    end_.resize(out + 2, 0);
    const int64_t s = std::max({pipe_free_[0], end_[b.alloc_node], users_end_[bi], last_in_end_[bi]});
    EmitNode(out, s);
    end_[out] = s + g_.SpillOutCycles(b.buf_id, config_);
    pipe_free_[0] = end_[out];
    pending_[bi] = k;
    state_[bi] = State::kSpilled;
    Release(bi, end_[out]);
  }

  // Reference position of bi's next use (its FREE when no user is left).
  int NextUse(int bi) {
    auto& c = next_user_[bi];
    const auto& u = users_by_ref_[bi];
    while (c < u.size() && emitted_[ops_[u[c]]]) ++c;
    return c < u.size() ? u[c] : static_cast<int>(ops_.size()) + 1;
  }

  // Places bi, spilling the cheapest window (sum traffic / distance to next
  // use) when free space does not suffice; L0 buffers and `protect` stay.
  absl::Status PlaceWithSpill(int bi, const std::vector<int>& protect,
                              std::vector<BufferPlacement>& pl, int node) {
    const KernelBuffer& b = g_.buffers[bi];
    const bool reload = state_[bi] == State::kSpilled;
    int64_t off;
    if (!FreeWindow(bi, off)) {
      if (config_.levels[b.level].is_l0) {
        return absl::ResourceExhaustedError(StrCat("pipelined-schedule: no room in ", config_.levels[b.level].name,
                                                   " for buffer ", b.buf_id, " at node ", node));
      }
      const int64_t cap = config_.levels[b.level].capacity;
      const auto& live = live_[b.level];
      std::vector<int64_t> starts = {0, cap - b.size};
      for (const Live& l : live) {
        starts.push_back(l.off);
        starts.push_back(l.off + l.size);
        starts.push_back(l.off + l.size - b.size);
      }
      std::sort(starts.begin(), starts.end());
      starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
      const int now = static_cast<int>(head_);
      double best_cost = std::numeric_limits<double>::infinity();
      int64_t win = -1;
      for (int64_t a : starts) {
        if (a < 0 || a + b.size > cap) continue;
        double cost = 0;
        bool ok = true;
        for (const Live& l : live) {
          if (l.off >= a + b.size) break;
          if (l.off + l.size <= a) continue;
          if (std::find(protect.begin(), protect.end(), l.bi) != protect.end()) {
            ok = false;
            break;
          }
          const int dist = std::max(1, NextUse(l.bi) - now);
          cost += static_cast<double>(g_.SpillTraffic(g_.buffers[l.bi].buf_id)) / dist;
        }
        if (ok && cost < best_cost) {
          best_cost = cost;
          win = a;
        }
      }
      if (win < 0) {
        return absl::ResourceExhaustedError(StrCat("no valid plan: buffer ", b.buf_id, " does not fit in ",
                                                   config_.levels[b.level].name, " at node ", node,
                                                   ": every window holds a buffer the same node needs"));
      }
      std::vector<int> victims;
      for (const Live& l : live) {
        if (l.off < win + b.size && win < l.off + l.size) victims.push_back(l.bi);
      }
      for (int x : victims) SpillOut(x);
      off = win;
    }
    pl.push_back({bi, off, reload});
    return absl::OkStatus();
  }

  absl::Status CommitHeadWithSpill(int c) {
    std::vector<int> protect;
    for (int b : g_.nodes[c].bufs) protect.push_back(g_.buf_index[b]);
    for (int bi : Needs(c)) {
      std::vector<BufferPlacement> pl;
      NPUPLAN_RETURN_IF_ERROR(PlaceWithSpill(bi, protect, pl, c));
      EmitPlacements(pl);
    }
    Commit(c, {});
    return absl::OkStatus();
  }

  // FREE nodes whose predecessors have all run, by Id; a spilled buffer is
  // reloaded first (the statement's SPILL_IN -> FREE edge).
  absl::Status EmitReadyFrees() {
    while (!ready_frees_.empty()) {
      std::sort(ready_frees_.begin(), ready_frees_.end(), std::greater<int>());
      const int v = ready_frees_.back();
      ready_frees_.pop_back();
      const int bi = g_.buf_index[g_.nodes[v].buf_id];
      if (state_[bi] == State::kSpilled) {
        std::vector<BufferPlacement> pl;
        NPUPLAN_RETURN_IF_ERROR(PlaceWithSpill(bi, {bi}, pl, v));
        EmitPlacements(pl);
      }
      int64_t s = last_in_end_[bi];
      for (int p : g_.pred[v]) s = std::max(s, end_[p]);
      EmitNode(v, s);
      state_[bi] = State::kFreed;
      Release(bi, end_[v]);
    }
    return absl::OkStatus();
  }

  const KernelGraph& g_;
  const CacheConfig& config_;
  const std::vector<int>& ops_;
  const int lookahead_;
  size_t head_ = 0;
  std::vector<int> ready_frees_;
  std::vector<std::vector<int>> l0_allocs_;  // per cache: reference positions of the L0 allocators
  std::vector<size_t> l0_next_;
  std::vector<int> pipe_of_;
  std::vector<int64_t> pipe_free_;
  std::vector<char> emitted_;
  std::vector<int64_t> end_;
  std::vector<int> rem_;
  std::vector<int> refpos_;
  std::vector<State> state_;
  std::vector<int64_t> offset_;
  std::vector<int> pending_;           // spill record of a spilled buffer
  std::vector<int64_t> last_in_end_;   // end of the buffer's last SPILL_IN
  std::vector<int64_t> users_end_;     // latest end among its issued users
  std::vector<size_t> next_user_;
  std::vector<std::vector<int>> users_by_ref_;
  std::vector<std::vector<Live>> live_;
  std::vector<std::vector<int64_t>> addr_ready_;
  KernelSolution sol_;
};

}  // namespace

absl::StatusOr<PipelineResult> PipelinedSchedule(const KernelGraph& g, const CacheConfig& config,
                                                 const std::vector<int>& ops, const PipelineOptions& options) {
  Pipeliner p(g, config, ops, options);
  return p.Run();
}

}  // namespace npuplan::kernel
