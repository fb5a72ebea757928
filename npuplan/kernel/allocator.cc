#include "npuplan/kernel/allocator.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "npuplan/support/status_macros.h"

namespace npuplan::kernel {
namespace {

enum class BufState { kNone, kResident, kSpilled, kFreed };

// The growing solution: schedule with spill nodes, offsets, spill records.
class SolutionBuilder {
 public:
  explicit SolutionBuilder(const KernelGraph& g) : g_(g), pending_(g.buffers.size(), -1) {
    sol_.schedule.reserve(g.num_nodes() + 64);
  }
  int size() const { return static_cast<int>(sol_.schedule.size()); }
  void Node(int v) { sol_.schedule.push_back(v); }
  void SpillOut(int buf_id) {
    const int k = static_cast<int>(sol_.spills.size());
    sol_.spills.push_back({buf_id, -1});
    pending_[g_.buf_index[buf_id]] = k;
    sol_.schedule.push_back(g_.num_nodes() + 2 * k);
  }
  void SpillIn(int buf_id, int64_t offset) {
    int& k = pending_[g_.buf_index[buf_id]];
    sol_.spills[k].new_offset = offset;
    sol_.schedule.push_back(g_.num_nodes() + 2 * k + 1);
    k = -1;
  }
  void Offset(int buf_id, int64_t offset) { sol_.offsets[buf_id] = offset; }
  KernelSolution Take() { return std::move(sol_); }

 private:
  const KernelGraph& g_;
  KernelSolution sol_;
  std::vector<int> pending_;
};

absl::Status NoRoom(const KernelGraph& g, const CacheConfig& config, int buf_id, int node,
                    std::string_view why) {
  const KernelBuffer& b = g.buffer(buf_id);
  return absl::ResourceExhaustedError(
      absl::StrCat("no valid plan: buffer ", buf_id, " (Size ", b.size, ") does not fit in ",
                   config.levels[b.level].name, " (capacity ", config.levels[b.level].capacity,
                   ") at node ", node, ": ", std::string(why)));
}

absl::Status CheckSizes(const KernelGraph& g, const CacheConfig& config) {
  for (const KernelBuffer& b : g.buffers) {
    if (b.size > config.levels[b.level].capacity) {
      return NoRoom(g, config, b.buf_id, b.alloc_node, "the buffer is larger than the cache");
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------- seed

// The seed's CacheAllocator: a free list, best-fit, merge on failure.
struct SeedCache {
  int64_t capacity = 0;
  std::vector<std::pair<int64_t, int64_t>> free_blocks;  // (start, size), sorted by start

  void Defragment() {
    std::sort(free_blocks.begin(), free_blocks.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (auto blk : free_blocks) {
      if (!merged.empty() && merged.back().first + merged.back().second == blk.first) {
        merged.back().second += blk.second;
      } else {
        merged.push_back(blk);
      }
    }
    free_blocks = std::move(merged);
  }
  int64_t Alloc(int64_t size) {
    int best = -1;
    for (size_t i = 0; i < free_blocks.size(); ++i) {
      if (free_blocks[i].second >= size && (best < 0 || free_blocks[i].second < free_blocks[best].second)) {
        best = static_cast<int>(i);
      }
    }
    if (best < 0) {
      Defragment();
      for (size_t i = 0; i < free_blocks.size() && best < 0; ++i) {
        if (free_blocks[i].second >= size) best = static_cast<int>(i);
      }
      if (best < 0) return -1;
    }
    auto [start, block] = free_blocks[best];
    free_blocks.erase(free_blocks.begin() + best);
    if (block > size) {
      free_blocks.emplace_back(start + size, block - size);
      std::sort(free_blocks.begin(), free_blocks.end());
    }
    return start;
  }
  void Free(int64_t start, int64_t size) {
    free_blocks.emplace_back(start, size);
    std::sort(free_blocks.begin(), free_blocks.end());
  }
  int64_t FreeTotal() const {
    int64_t t = 0;
    for (auto& b : free_blocks) t += b.second;
    return t;
  }
};

}  // namespace

absl::StatusOr<KernelSolution> AllocateSeed(const KernelGraph& g, const std::vector<int>& order_in,
                                            const CacheConfig& config, const SeedOptions& options) {
  NPUPLAN_RETURN_IF_ERROR(CheckSizes(g, config));
  const int nb = static_cast<int>(g.buffers.size());
  std::vector<SeedCache> caches(config.levels.size());
  for (size_t l = 0; l < caches.size(); ++l) {
    caches[l].capacity = config.levels[l].capacity;
    caches[l].free_blocks = {{0, config.levels[l].capacity}};
  }
  std::vector<int> sched = order_in;
  std::vector<int> pos(g.num_nodes());
  auto rebuild = [&] {
    for (size_t i = 0; i < sched.size(); ++i) pos[sched[i]] = static_cast<int>(i);
  };
  rebuild();
  std::vector<BufState> state(nb, BufState::kNone);
  std::vector<int64_t> offset(nb, -1);
  std::vector<int> active;  // buffer indices in allocation order
  std::vector<int> postponed(nb, 0);
  SolutionBuilder out(g);

  // Spills the seed's victim among live non-L0 buffers of `level` (not in
  // `protect`); returns false when there is none.
  auto spill_one = [&](int level, size_t idx, const std::vector<int>& protect) {
    int victim = -1;
    int64_t best_score = -1;
    for (int bi : active) {
      const KernelBuffer& b = g.buffers[bi];
      if (b.level != level || config.levels[b.level].is_l0) continue;
      if (std::find(protect.begin(), protect.end(), b.buf_id) != protect.end()) continue;
      const int64_t score = static_cast<int64_t>(pos[b.free_node] - static_cast<int>(idx)) * b.size;
      if (score > best_score) {
        best_score = score;
        victim = bi;
      }
    }
    if (victim < 0) return false;
    const KernelBuffer& b = g.buffers[victim];
    if (options.log != nullptr) {
      options.log->Record("seed-allocator", "BufferSpilled", "", Field("buf", b.buf_id),
                          Field("cache", config.levels[level].name), Field("size", b.size),
                          Field("traffic", g.SpillTraffic(b.buf_id)), Field("before_node", sched[idx]));
    }
    caches[level].Free(offset[victim], b.size);
    active.erase(std::find(active.begin(), active.end(), victim));
    state[victim] = BufState::kSpilled;
    out.SpillOut(b.buf_id);
    return true;
  };
  // Allocates buffer index bi, spilling victims as needed; -1 if impossible.
  auto alloc_with_spill = [&](int bi, size_t idx, const std::vector<int>& protect) -> int64_t {
    const KernelBuffer& b = g.buffers[bi];
    while (true) {
      int64_t off = caches[b.level].Alloc(b.size);
      if (off >= 0) return off;
      if (!spill_one(b.level, idx, protect)) return -1;
    }
  };
  auto reload = [&](int bi, size_t idx, const std::vector<int>& protect) -> absl::Status {
    const KernelBuffer& b = g.buffers[bi];
    int64_t off = alloc_with_spill(bi, idx, protect);
    if (off < 0) return NoRoom(g, config, b.buf_id, sched[idx], "no victim left to reload it");
    offset[bi] = off;
    state[bi] = BufState::kResident;
    active.push_back(bi);
    out.SpillIn(b.buf_id, off);
    if (options.log != nullptr) {
      options.log->Record("seed-allocator", "BufferReloaded", "", Field("buf", b.buf_id),
                          Field("cache", config.levels[b.level].name), Field("offset", off),
                          Field("before_node", sched[idx]));
    }
    return absl::OkStatus();
  };

  size_t idx = 0;
  while (idx < sched.size()) {
    const int v = sched[idx];
    const KernelNode& node = g.nodes[v];
    if (node.kind == NodeKind::kAlloc) {
      const int bi = g.buf_index[node.buf_id];
      const KernelBuffer& b = g.buffers[bi];
      int64_t off = caches[b.level].Alloc(b.size);
      while (off < 0 && spill_one(b.level, idx, {})) off = caches[b.level].Alloc(b.size);
      if (off < 0) {
        // Postpone: move the ALLOC after enough FREEs of its cache, but never
        // past its first successor.
        bool moved = false;
        if (postponed[bi] < options.max_postpone) {
          ++postponed[bi];
          int first_succ = static_cast<int>(sched.size());
          for (int s : g.succ[v]) first_succ = std::min(first_succ, pos[s]);
          int64_t added = 0;
          for (int p = static_cast<int>(idx) + 1; p < first_succ; ++p) {
            const KernelNode& fn = g.nodes[sched[p]];
            if (fn.kind != NodeKind::kFree) continue;
            const int fi = g.buf_index[fn.buf_id];
            if (g.buffers[fi].level != b.level || state[fi] != BufState::kResident) continue;
            added += g.buffers[fi].size;
            if (caches[b.level].FreeTotal() + added >= b.size) {
              if (options.log != nullptr) {
                options.log->Record("seed-allocator", "AllocPostponed", "", Field("buf", b.buf_id),
                                    Field("node", v), Field("after_node", sched[p]),
                                    Field("times", postponed[bi]));
              }
              sched.erase(sched.begin() + idx);
              sched.insert(sched.begin() + p, v);  // right after that FREE
              rebuild();
              moved = true;
              break;
            }
          }
        }
        if (moved) continue;
        return NoRoom(g, config, b.buf_id, v,
                      "no victim to spill and the ALLOC cannot be postponed (seed strategy)");
      }
      offset[bi] = off;
      state[bi] = BufState::kResident;
      active.push_back(bi);
      out.Offset(b.buf_id, off);
      out.Node(v);
    } else if (node.kind == NodeKind::kFree) {
      const int bi = g.buf_index[node.buf_id];
      if (state[bi] == BufState::kSpilled) NPUPLAN_RETURN_IF_ERROR(reload(bi, idx, {node.buf_id}));
      caches[g.buffers[bi].level].Free(offset[bi], g.buffers[bi].size);
      active.erase(std::find(active.begin(), active.end(), bi));
      state[bi] = BufState::kFreed;
      out.Node(v);
    } else {
      for (int b : node.bufs) {
        const int bi = g.buf_index[b];
        if (state[bi] == BufState::kSpilled) NPUPLAN_RETURN_IF_ERROR(reload(bi, idx, node.bufs));
      }
      out.Node(v);
    }
    ++idx;
  }
  return out.Take();
}

// ---------------------------------------------------------------- best

namespace {

struct LiveBuf {
  int64_t off;
  int64_t size;
  int bi;
};

class BestAllocator {
 public:
  BestAllocator(const KernelGraph& g, const std::vector<int>& order, const CacheConfig& config,
                const BestOptions& options)
      : g_(g), order_(order), config_(config), options_(options), out_(g) {}

  absl::StatusOr<KernelSolution> Run() {
    NPUPLAN_RETURN_IF_ERROR(CheckSizes(g_, config_));
    const int nb = static_cast<int>(g_.buffers.size());
    std::vector<int> pos(g_.num_nodes(), 0);
    for (size_t i = 0; i < order_.size(); ++i) pos[order_[i]] = static_cast<int>(i);
    use_pos_.assign(nb, {});
    free_pos_.assign(nb, 0);
    cursor_.assign(nb, 0);
    for (int bi = 0; bi < nb; ++bi) {
      for (int u : g_.buffers[bi].users) use_pos_[bi].push_back(pos[u]);
      std::sort(use_pos_[bi].begin(), use_pos_[bi].end());
      free_pos_[bi] = pos[g_.buffers[bi].free_node];
    }
    state_.assign(nb, BufState::kNone);
    offset_.assign(nb, -1);
    live_.assign(config_.levels.size(), {});
    released_.clear();
    for (const CacheLevel& lv : config_.levels) released_.emplace_back(lv.capacity, -1);

    for (size_t t = 0; t < order_.size(); ++t) {
      now_ = static_cast<int>(t);
      const int v = order_[t];
      const KernelNode& node = g_.nodes[v];
      if (node.kind == NodeKind::kAlloc) {
        const int bi = g_.buf_index[node.buf_id];
        NPUPLAN_ASSIGN_OR_RETURN(int64_t off, Place(bi, {}, v));
        out_.Offset(node.buf_id, off);
        out_.Node(v);
      } else if (node.kind == NodeKind::kFree) {
        const int bi = g_.buf_index[node.buf_id];
        if (state_[bi] == BufState::kSpilled) {
          NPUPLAN_ASSIGN_OR_RETURN(int64_t off, Place(bi, {bi}, v));
          out_.SpillIn(node.buf_id, off);
          LogReload(bi, off, v);
        }
        out_.Node(v);
        Remove(bi, out_.size() - 1);
        state_[bi] = BufState::kFreed;
      } else {
        std::vector<int> protect;
        for (int b : node.bufs) protect.push_back(g_.buf_index[b]);
        for (int bi : protect) {
          if (state_[bi] != BufState::kSpilled) continue;
          NPUPLAN_ASSIGN_OR_RETURN(int64_t off, Place(bi, protect, v));
          out_.SpillIn(g_.buffers[bi].buf_id, off);
          LogReload(bi, off, v);
        }
        out_.Node(v);
      }
    }
    return out_.Take();
  }

 private:
  void LogReload(int bi, int64_t off, int node) {
    if (options_.log == nullptr) return;
    const KernelBuffer& b = g_.buffers[bi];
    options_.log->Record("best-allocator", "BufferReloaded", "", Field("buf", b.buf_id),
                         Field("cache", config_.levels[b.level].name), Field("offset", off),
                         Field("before_node", node));
  }

  // Position of the next use of bi after now (its FREE if none).
  int NextUse(int bi) {
    auto& c = cursor_[bi];
    const auto& u = use_pos_[bi];
    while (c < u.size() && u[c] <= now_) ++c;
    return c < u.size() ? u[c] : free_pos_[bi];
  }

  void Remove(int bi, int release_index) {
    auto& live = live_[g_.buffers[bi].level];
    for (size_t i = 0; i < live.size(); ++i) {
      if (live[i].bi == bi) {
        auto& rel = released_[g_.buffers[bi].level];
        for (int64_t a = live[i].off; a < live[i].off + live[i].size; ++a) rel[a] = release_index;
        live.erase(live.begin() + i);
        return;
      }
    }
  }

  void Insert(int bi, int64_t off) {
    auto& live = live_[g_.buffers[bi].level];
    LiveBuf lb{off, g_.buffers[bi].size, bi};
    live.insert(std::upper_bound(live.begin(), live.end(), lb,
                                 [](const LiveBuf& a, const LiveBuf& b) { return a.off < b.off; }),
                lb);
    state_[bi] = BufState::kResident;
    offset_[bi] = off;
  }

  // Finds space for bi (spilling if needed), inserts it and returns its offset.
  absl::StatusOr<int64_t> Place(int bi, const std::vector<int>& protect, int node) {
    const KernelBuffer& b = g_.buffers[bi];
    const int level = b.level;
    const int64_t cap = config_.levels[level].capacity;
    auto& live = live_[level];
    // 1. Free space.
    int64_t best_off = -1, best_len = 0;
    int best_age = 0;
    int64_t prev_end = 0;
    auto consider_hole = [&](int64_t start, int64_t len) {
      if (len < b.size) return;
      if (options_.placement == Placement::kBestFit) {
        if (best_off < 0 || len < best_len) {
          best_off = start;
          best_len = len;
        }
        return;
      }
      for (int64_t a : {start, start + len - b.size}) {
        int age = -1;
        const auto& rel = released_[level];
        for (int64_t x = a; x < a + b.size; ++x) age = std::max(age, rel[x]);
        if (best_off < 0 || age < best_age || (age == best_age && len < best_len)) {
          best_off = a;
          best_age = age;
          best_len = len;
        }
      }
    };
    for (const LiveBuf& lb : live) {
      consider_hole(prev_end, lb.off - prev_end);
      prev_end = lb.off + lb.size;
    }
    consider_hole(prev_end, cap - prev_end);
    if (best_off >= 0) {
      Insert(bi, best_off);
      return best_off;
    }
    if (config_.levels[level].is_l0) {
      return NoRoom(g_, config_, b.buf_id, node, "L0 buffers are never spilled and the cache is full");
    }
    // 2. Eviction window of least cost.
    std::vector<int64_t> starts = {0, cap - b.size};
    for (const LiveBuf& lb : live) {
      starts.push_back(lb.off + lb.size);
      starts.push_back(lb.off);
      starts.push_back(lb.off + lb.size - b.size);
    }
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    double best_cost = std::numeric_limits<double>::infinity();
    int64_t win = -1;
    for (int64_t a : starts) {
      if (a < 0 || a + b.size > cap) continue;
      double cost = 0;
      bool ok = true;
      for (const LiveBuf& lb : live) {
        if (lb.off >= a + b.size) break;
        if (lb.off + lb.size <= a) continue;
        if (config_.levels[level].is_l0 ||
            std::find(protect.begin(), protect.end(), lb.bi) != protect.end()) {
          ok = false;
          break;
        }
        const int dist = std::max(1, NextUse(lb.bi) - now_);
        cost += static_cast<double>(g_.SpillTraffic(g_.buffers[lb.bi].buf_id)) / dist;
      }
      if (ok && cost < best_cost) {
        best_cost = cost;
        win = a;
      }
    }
    if (win < 0) {
      return NoRoom(g_, config_, b.buf_id, node, "every window holds a buffer the same node needs");
    }
    std::vector<int> victims;
    for (const LiveBuf& lb : live) {
      if (lb.off < win + b.size && win < lb.off + lb.size) victims.push_back(lb.bi);
    }
    for (int x : victims) {
      if (options_.log != nullptr) {
        const KernelBuffer& vb = g_.buffers[x];
        options_.log->Record("best-allocator", "BufferSpilled", "", Field("buf", vb.buf_id),
                             Field("cache", config_.levels[level].name), Field("size", vb.size),
                             Field("traffic", g_.SpillTraffic(vb.buf_id)), Field("before_node", node));
      }
      out_.SpillOut(g_.buffers[x].buf_id);
      Remove(x, out_.size() - 1);
      state_[x] = BufState::kSpilled;
    }
    Insert(bi, win);
    return win;
  }

  const KernelGraph& g_;
  const std::vector<int>& order_;
  const CacheConfig& config_;
  BestOptions options_;
  SolutionBuilder out_;
  int now_ = 0;
  std::vector<std::vector<int>> use_pos_;
  std::vector<int> free_pos_;
  std::vector<size_t> cursor_;
  std::vector<BufState> state_;
  std::vector<int64_t> offset_;
  std::vector<std::vector<LiveBuf>> live_;
  std::vector<std::vector<int>> released_;
};

}  // namespace

absl::StatusOr<KernelSolution> AllocateBest(const KernelGraph& g, const std::vector<int>& order,
                                            const CacheConfig& config, const BestOptions& options) {
  BestAllocator a(g, order, config, options);
  return a.Run();
}

}  // namespace npuplan::kernel
