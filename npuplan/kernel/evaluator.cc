// The evaluator runs in four stages: (1) coverage and order of the schedule,
// (2) spill records -> spill nodes, their order and the residency segments of
// every buffer, (3) the memory check (capacity and overlap, by a sweep in
// schedule order), (4) the timing simulation of Appendix C.
#include "npuplan/kernel/evaluator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/status_macros.h"

namespace npuplan::kernel {
namespace {

absl::Status Violation(std::string_view rule, std::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(msg), " (rule=", std::string(rule), ")"));
}

// A sum of solution values that does not fit in int64 (many spills of large
// buffers, huge cycle counts): an input error, never a wrapped metric.
absl::Status Overflow(std::string_view what) {
  return Violation("overflow", absl::StrCat(std::string(what), " overflows int64"));
}

// One interval during which a buffer occupies [offset, offset+size) of a cache.
struct Segment {
  int buf_id;
  int level;
  int64_t offset;
  int64_t size;
  int start_node;  // ALLOC or SPILL_IN
  int end_node;    // SPILL_OUT or FREE
};

// What the four stages share: the inputs, the metrics being filled, and what
// one stage derives for the next.
struct EvalState {
  EvalState(const KernelGraph& g, const KernelSolution& sol, const CacheConfig& config,
            const EvalOptions& opt)
      : g(g), sol(sol), config(config), opt(opt) {}
  const KernelGraph& g;
  const KernelSolution& sol;
  const CacheConfig& config;
  const EvalOptions& opt;
  int n = 0;      // graph nodes
  int s = 0;      // spills
  int total = 0;  // graph nodes + spill nodes
  KernelMetrics m;
  std::vector<int> pos;                      // schedule position of every node
  std::vector<std::vector<int>> extra_pred;  // dependencies the spills add
  std::vector<Segment> segments;
  std::vector<int> seg_start, seg_end;  // segment a node starts / ends, or -1
};

// 1. Coverage and original dependencies.
absl::Status CheckCoverage(EvalState& st) {
  const KernelGraph& g = st.g;
  const KernelSolution& sol = st.sol;
  std::vector<int>& pos = st.pos;
  pos.assign(st.total, -1);
  for (size_t i = 0; i < sol.schedule.size(); ++i) {
    int v = sol.schedule[i];
    if (v < 0 || v >= st.total) {
      return Violation("schedule-coverage",
                       absl::StrCat("schedule line ", i + 1, ": unknown node ", v, " (graph has ",
                                    st.n, " nodes and ", st.s, " spills)"));
    }
    if (pos[v] >= 0) {
      return Violation("schedule-coverage", absl::StrCat("schedule lists node ", v, " twice (lines ",
                                                         pos[v] + 1, " and ", i + 1, ")"));
    }
    pos[v] = static_cast<int>(i);
  }
  for (int v = 0; v < st.total; ++v) {
    if (pos[v] < 0) {
      return Violation("schedule-coverage", absl::StrCat("schedule misses node ", v,
                                                         v >= st.n ? " (a spill node)" : ""));
    }
  }
  for (auto [a, b] : g.edges) {
    if (pos[a] >= pos[b]) {
      return Violation("dependency", absl::StrCat("edge ", a, "->", b, " runs backwards (positions ",
                                                  pos[a] + 1, " and ", pos[b] + 1, ")"));
    }
  }
  return absl::OkStatus();
}

// 2a. Spills: order, users and extra edges; spills_of[buffer index] gets
// each buffer's spills.
absl::Status CheckSpills(EvalState& st, std::vector<std::vector<int>>& spills_of) {
  const KernelGraph& g = st.g;
  const std::vector<int>& pos = st.pos;
  const int n = st.n;
  for (int k = 0; k < st.s; ++k) {
    const SpillRecord& r = st.sol.spills[k];
    if (!g.HasBuffer(r.buf_id)) {
      return Violation("spill-buffer", absl::StrCat("spill ", k + 1, " names unknown buffer ", r.buf_id));
    }
    const KernelBuffer& b = g.buffer(r.buf_id);
    const int out = n + 2 * k, in = out + 1;
    if (!(pos[b.alloc_node] < pos[out] && pos[out] < pos[in] && pos[in] < pos[b.free_node])) {
      return Violation("spill-order",
                       absl::StrCat("spill ", k + 1, " of buffer ", r.buf_id,
                                    ": need ALLOC < SPILL_OUT < SPILL_IN < FREE, got positions ",
                                    pos[b.alloc_node] + 1, ", ", pos[out] + 1, ", ", pos[in] + 1, ", ",
                                    pos[b.free_node] + 1));
    }
    spills_of[g.buf_index[r.buf_id]].push_back(k);
    st.extra_pred[out].push_back(b.alloc_node);
    st.extra_pred[in].push_back(out);
    st.extra_pred[b.free_node].push_back(in);
    for (int u : b.users) {
      if (pos[u] < pos[out]) {
        st.extra_pred[out].push_back(u);
      } else if (pos[u] > pos[in]) {
        st.extra_pred[u].push_back(in);
      } else {
        return Violation("use-while-spilled",
                         absl::StrCat("node ", u, " uses buffer ", r.buf_id, " between SPILL_OUT ", out,
                                      " and SPILL_IN ", in));
      }
    }
    std::optional<int64_t> moved = CheckedAdd(st.m.extra_movement, g.SpillTraffic(r.buf_id));
    if (!moved) return Overflow(absl::StrCat("the extra data movement at spill ", k + 1));
    st.m.extra_movement = *moved;
  }
  return absl::OkStatus();
}

// 2b. Spills: nesting per buffer, and the residency segments of every buffer.
absl::Status BuildSegments(EvalState& st, std::vector<std::vector<int>>& spills_of) {
  const KernelGraph& g = st.g;
  const KernelSolution& sol = st.sol;
  const std::vector<int>& pos = st.pos;
  const int n = st.n;
  for (size_t bi = 0; bi < g.buffers.size(); ++bi) {
    const KernelBuffer& b = g.buffers[bi];
    auto& ks = spills_of[bi];
    std::sort(ks.begin(), ks.end(), [&](int x, int y) { return pos[n + 2 * x] < pos[n + 2 * y]; });
    for (size_t j = 1; j < ks.size(); ++j) {
      if (pos[n + 2 * ks[j - 1] + 1] > pos[n + 2 * ks[j]]) {
        return Violation("spill-nesting", absl::StrCat("buffer ", b.buf_id, " is spilled again (spill ",
                                                       ks[j] + 1, ") before spill ", ks[j - 1] + 1,
                                                       " reloads it"));
      }
      st.extra_pred[n + 2 * ks[j]].push_back(n + 2 * ks[j - 1] + 1);
    }
    if (!st.opt.check_memory) continue;
    auto it = sol.offsets.find(b.buf_id);
    if (it == sol.offsets.end()) {
      return Violation("missing-offset", absl::StrCat("buffer ", b.buf_id, " has no offset in the memory file"));
    }
    int64_t offset = it->second;
    int start = b.alloc_node;
    for (int k : ks) {
      st.segments.push_back({b.buf_id, b.level, offset, b.size, start, n + 2 * k});
      start = n + 2 * k + 1;
      offset = sol.spills[k].new_offset;
    }
    st.segments.push_back({b.buf_id, b.level, offset, b.size, start, b.free_node});
  }
  if (st.opt.check_memory) {
    for (const auto& [buf, off] : sol.offsets) {
      if (!g.HasBuffer(buf)) {
        return Violation("missing-offset", absl::StrCat("memory file names unknown buffer ", buf));
      }
    }
  }
  return absl::OkStatus();
}

// 3a. Every segment within its cache; which node starts and ends it.
absl::Status CheckCapacity(EvalState& st) {
  st.seg_start.assign(st.total, -1);
  st.seg_end.assign(st.total, -1);
  for (size_t i = 0; i < st.segments.size(); ++i) {
    const Segment& sg = st.segments[i];
    const CacheLevel& lv = st.config.levels[sg.level];
    const std::optional<int64_t> seg_end_addr = CheckedAdd(sg.offset, sg.size);
    if (sg.offset < 0 || !seg_end_addr || *seg_end_addr > lv.capacity) {
      return Violation("capacity",
                       absl::StrCat("buffer ", sg.buf_id, " at offset ", sg.offset, " size ",
                                    sg.size, " exceeds ", lv.name, " capacity ", lv.capacity,
                                    sg.start_node >= st.n ? " (after a SPILL_IN)" : ""));
    }
    st.seg_start[sg.start_node] = static_cast<int>(i);
    st.seg_end[sg.end_node] = static_cast<int>(i);
  }
  return absl::OkStatus();
}

// 3b. Memory: live bytes and overlap, sweeping the schedule.
absl::Status SweepMemory(EvalState& st) {
  const KernelGraph& g = st.g;
  const CacheConfig& config = st.config;
  const EvalOptions& opt = st.opt;
  const std::vector<Segment>& segments = st.segments;
  const std::vector<int>& seg_start = st.seg_start;
  const std::vector<int>& seg_end = st.seg_end;
  const int n = st.n;
  KernelMetrics& m = st.m;
  const int levels = static_cast<int>(config.levels.size());
  std::vector<std::vector<int>> active(levels);
  std::vector<int64_t> vstay(levels, 0), resident(levels, 0);
  std::vector<int> live(levels, 0);
  std::vector<int64_t> max_vstay(levels, 0), max_res(levels, 0);
  std::vector<int> max_live(levels, 0);
  std::vector<char> in_vstay(levels, 0);
  for (const std::string& name : config.vstay_levels) {
    if (int l = config.Find(name); l >= 0) in_vstay[l] = 1;
  }
  int64_t combined = 0;
  for (int v : st.sol.schedule) {
    if (v < n && g.nodes[v].kind != NodeKind::kOp) {
      const KernelBuffer& b = g.buffer(g.nodes[v].buf_id);
      const int l = b.level;
      const int64_t d = g.nodes[v].kind == NodeKind::kAlloc ? b.size : -b.size;
      const std::optional<int64_t> v_sum = CheckedAdd(vstay[l], d);
      const std::optional<int64_t> c_sum = in_vstay[l] ? CheckedAdd(combined, d) : combined;
      if (!v_sum || !c_sum) {
        return Overflow(absl::StrCat("the live bytes of ", config.levels[l].name, " at node ", v));
      }
      vstay[l] = *v_sum;
      live[l] += d > 0 ? 1 : -1;
      max_vstay[l] = std::max(max_vstay[l], vstay[l]);
      max_live[l] = std::max(max_live[l], live[l]);
      if (in_vstay[l]) {
        combined = *c_sum;
        m.max_vstay_combined = std::max(m.max_vstay_combined, combined);
      }
      if (opt.l0_single_residency && config.levels[l].is_l0 && live[l] > 1) {
        return Violation("l0-single-residency",
                         absl::StrCat("ALLOC node ", v, " makes ", live[l], " buffers live in ",
                                      config.levels[l].name));
      }
    }
    if (!opt.check_memory) continue;
    if (int e = seg_end[v]; e >= 0) {
      const Segment& sg = segments[e];
      auto& act = active[sg.level];
      act.erase(std::find(act.begin(), act.end(), e));
      resident[sg.level] -= sg.size;
    }
    if (int si = seg_start[v]; si >= 0) {
      const Segment& sg = segments[si];
      for (int o : active[sg.level]) {
        const Segment& other = segments[o];
        if (sg.offset < other.offset + other.size && other.offset < sg.offset + sg.size) {
          return Violation("overlap",
                           absl::StrCat(config.levels[sg.level].name, " buffer ", sg.buf_id, " [", sg.offset,
                                        ",", sg.offset + sg.size, ") placed by node ", v, " overlaps live buffer ",
                                        other.buf_id, " [", other.offset, ",", other.offset + other.size, ")"));
        }
      }
      active[sg.level].push_back(si);
      resident[sg.level] += sg.size;
      max_res[sg.level] = std::max(max_res[sg.level], resident[sg.level]);
    }
  }
  for (int l = 0; l < levels; ++l) {
    const std::string& name = config.levels[l].name;
    if (in_vstay[l]) m.max_vstay[name] = max_vstay[l];
    m.max_live_buffers[name] = max_live[l];
    if (opt.check_memory) m.max_resident[name] = max_res[l];
  }
  return absl::OkStatus();
}

// 4. Timing: in schedule order every predecessor is already timed.
absl::Status SimulateTiming(EvalState& st) {
  const KernelGraph& g = st.g;
  const KernelSolution& sol = st.sol;
  const CacheConfig& config = st.config;
  const EvalOptions& opt = st.opt;
  const std::vector<Segment>& segments = st.segments;
  const std::vector<std::vector<int>>& extra_pred = st.extra_pred;
  const std::vector<int>& seg_start = st.seg_start;
  const std::vector<int>& seg_end = st.seg_end;
  const int n = st.n;
  KernelMetrics& m = st.m;
  std::vector<int64_t> end(st.total, 0);
  // Pipes by small index: 0 = MTE3 (SPILL_OUT), 1 = MTE2 (SPILL_IN), then as met.
  std::vector<std::string> pipe_names = {"MTE3", "MTE2"};
  std::vector<int> pipe_of(n, -1);
  for (int v = 0; v < n; ++v) {
    if (g.nodes[v].kind != NodeKind::kOp) continue;
    auto it = std::find(pipe_names.begin(), pipe_names.end(), g.nodes[v].pipe);
    pipe_of[v] = static_cast<int>(it - pipe_names.begin());
    if (it == pipe_names.end()) pipe_names.push_back(g.nodes[v].pipe);
  }
  std::vector<int64_t> pipe_ready(pipe_names.size(), 0), busy(pipe_names.size(), 0);
  std::vector<char> pipe_used(pipe_names.size(), 0);
  std::vector<std::vector<int64_t>> addr_ready;
  if (opt.check_memory) {
    for (const CacheLevel& lv : config.levels) addr_ready.emplace_back(lv.capacity, 0);
  }
  for (int v : sol.schedule) {
    int64_t start = 0, cycles = 0;
    int pipe = -1;
    if (v < n) {
      const KernelNode& node = g.nodes[v];
      for (int p : g.pred[v]) start = std::max(start, end[p]);
      if (node.kind == NodeKind::kOp) {
        pipe = pipe_of[v];
        cycles = node.cycles;
      }
    } else {
      const int k = (v - n) / 2;
      const bool is_out = (v - n) % 2 == 0;
      pipe = is_out ? 0 : 1;
      cycles = is_out ? g.SpillOutCycles(sol.spills[k].buf_id, config)
                      : g.SpillInCycles(sol.spills[k].buf_id, config);
    }
    for (int p : extra_pred[v]) start = std::max(start, end[p]);
    if (pipe >= 0) start = std::max(start, pipe_ready[pipe]);
    if (opt.check_memory && seg_start[v] >= 0) {
      const Segment& sg = segments[seg_start[v]];
      const auto& ready = addr_ready[sg.level];
      for (int64_t a = sg.offset; a < sg.offset + sg.size; ++a) start = std::max(start, ready[a]);
    }
    const std::optional<int64_t> finish = CheckedAdd(start, cycles);
    const std::optional<int64_t> pipe_busy = pipe >= 0 ? CheckedAdd(busy[pipe], cycles) : std::optional<int64_t>(0);
    if (!finish || !pipe_busy) return Overflow(absl::StrCat("the end time of node ", v));
    end[v] = *finish;
    m.makespan = std::max(m.makespan, end[v]);
    if (pipe >= 0) {
      pipe_ready[pipe] = end[v];
      busy[pipe] = *pipe_busy;
      pipe_used[pipe] = 1;
    }
    if (opt.check_memory && seg_end[v] >= 0) {
      const Segment& sg = segments[seg_end[v]];
      auto& ready = addr_ready[sg.level];
      for (int64_t a = sg.offset; a < sg.offset + sg.size; ++a) ready[a] = std::max(ready[a], end[v]);
    }
  }
  for (size_t p = 0; p < pipe_names.size(); ++p) {
    if (pipe_used[p]) m.pipe_busy[pipe_names[p]] = busy[p];
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<KernelMetrics> EvaluateSolution(const KernelGraph& g, const KernelSolution& sol,
                                               const CacheConfig& config, const EvalOptions& opt) {
  const int n = g.num_nodes();
  // Spill nodes N+2k, N+2k+1 are ints, like every node Id.
  const std::optional<int> s_opt = CheckedCast<int>(sol.spills.size());
  const std::optional<int> spill_nodes = s_opt ? CheckedMul<int>(*s_opt, 2) : std::nullopt;
  const std::optional<int> total_opt =
      spill_nodes ? CheckedAdd<int>(n, *spill_nodes) : std::nullopt;
  if (!total_opt) {
    return Violation(
        "schedule-coverage",
        absl::StrCat(sol.spills.size(), " spills give spill node Ids beyond ", INT32_MAX));
  }
  EvalState st(g, sol, config, opt);
  st.n = n;
  st.s = *s_opt;
  st.total = *total_opt;
  st.m.spills = st.s;
  st.m.schedule_length = static_cast<int64_t>(sol.schedule.size());
  NPUPLAN_RETURN_IF_ERROR(CheckCoverage(st));
  st.extra_pred.resize(st.total);
  std::vector<std::vector<int>> spills_of(g.buffers.size());
  NPUPLAN_RETURN_IF_ERROR(CheckSpills(st, spills_of));
  NPUPLAN_RETURN_IF_ERROR(BuildSegments(st, spills_of));
  NPUPLAN_RETURN_IF_ERROR(CheckCapacity(st));
  NPUPLAN_RETURN_IF_ERROR(SweepMemory(st));
  NPUPLAN_RETURN_IF_ERROR(SimulateTiming(st));
  return std::move(st.m);
}

std::string MetricsToJson(const KernelMetrics& m, const std::string& case_name,
                          const std::map<std::string, std::string>& extra) {
  nlohmann::json j;
  j["case"] = case_name;
  j["max_vstay"] = m.max_vstay;
  j["max_vstay_combined"] = m.max_vstay_combined;
  j["max_live_buffers"] = m.max_live_buffers;
  j["max_resident"] = m.max_resident;
  j["spills"] = m.spills;
  j["extra_data_movement"] = m.extra_movement;
  j["makespan"] = m.makespan;
  j["schedule_length"] = m.schedule_length;
  j["pipe_busy"] = m.pipe_busy;
  for (const auto& [k, v] : extra) j[k] = v;
  return j.dump(2) + "\n";
}

}  // namespace npuplan::kernel
