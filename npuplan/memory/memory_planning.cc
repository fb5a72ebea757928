// The memory planning pass contains four stages: lifetimes → stream-aware
// conflicts → interval solver for the activation pool → plan.memory and the
// decision log (see memory_planning.h).
#include "npuplan/memory/memory_planning.h"

#include <algorithm>
#include <tuple>

#include "npuplan/memory/interval_solver.h"
#include "npuplan/memory/memory_options.h"
#include "npuplan/memory/stream_sweep.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/tensor_lifetimes.h"

namespace npuplan {
namespace {

constexpr std::string_view kPass = "memory-planning";

// Cross-stream conflict pairs listed per buffer before its lifetime is
// widened to its release point instead (StreamAwareReuse::Conflicts): at
// least 64, more on small pools (about 2M pairs in all), so small graphs keep
// exact pairs and the solver's proven bound.
int64_t MaxPairsPerBuffer(size_t pool) {
  return std::max<int64_t>(64, 2'000'000 / std::max<int64_t>(1, static_cast<int64_t>(pool)));
}

}  // namespace

absl::StatusOr<bool> MemoryPlanning::Run(Plan& plan, PassContext& ctx) {
  const Model& m = plan.model;
  NPUPLAN_ASSIGN_OR_RETURN(memory::MemoryOptions options, memory::ReadMemoryOptions(ctx.options));
  const int64_t alignment = options.alignment;

  // 1. Lifetimes.
  StepTimer lap;
  NPUPLAN_ASSIGN_OR_RETURN(memory::TensorLifetimes lt, memory::ComputeTensorLifetimes(m, alignment));
  lap.Lap(ctx.stats, "memory-planning: lifetimes");
  memory::StreamAwareReuse reuse(m, lt);
  lap.Lap(ctx.stats, "memory-planning: happens-before");

  // 2. The activation pool as an interval problem with extra conflicts.
  std::vector<int> pool;
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    if (lt.buffers[b].planned_in_pool()) pool.push_back(static_cast<int>(b));
  }
  // Cross-stream constraints: exact pairs for buffers with few of them, a
  // widened lifetime (release point) for the others — linear in size.
  memory::StreamAwareReuse::PlanningConflicts conflicts = reuse.Conflicts(pool, MaxPairsPerBuffer(pool.size()));
  memory::IntervalProblem problem;
  for (size_t i = 0; i < pool.size(); ++i) {
    const memory::LogicalBuffer& buf = lt.buffers[pool[i]];
    problem.buffers.push_back({buf.name, conflicts.lower[i], conflicts.upper[i], buf.size, alignment});
  }
  problem.extra_conflicts = std::move(conflicts.pairs);
  lap.Lap(ctx.stats, "memory-planning: conflicts");

  // 3. Solve.
  memory::IntervalSolverOptions solver_options;
  solver_options.time_limit_seconds = options.time_limit_seconds > 0 ? options.time_limit_seconds : 1e9;
  solver_options.max_steps = options.search_steps;
  solver_options.search = options.search_steps > 0;
  absl::StatusOr<memory::IntervalSolution> solved = memory::SolveIntervals(problem, solver_options);
  if (!solved.ok()) {
    return absl::Status(solved.status().code(),
                        StrCat("memory-planning: activation pool of ", pool.size(),
                               " buffers: ", std::string(solved.status().message())));
  }
  memory::IntervalSolution sol = *solved;
  lap.Lap(ctx.stats, "memory-planning: interval solver");
  // The stream-aware sweep needs no conflict pairs and no widening: it
  // releases a dead buffer's bytes per stream (stream_sweep.h). Kept when it
  // beats the solver (the solver keeps ties).
  std::string method = sol.stats.scalable ? "sweep" : (sol.stats.nodes > 0 ? "search" : "greedy");
  {
    memory::SweepResult swept = memory::SweepStreamAware(reuse.SweepInput(pool, alignment),
                                                         static_cast<int>(reuse.happens_before().num_streams()));
    if (swept.peak < sol.peak) {
      sol.assignment.offsets = std::move(swept.offsets);
      sol.peak = swept.peak;
      method = "stream-sweep";
    }
  }
  lap.Lap(ctx.stats, "memory-planning: stream sweep");
  if (conflicts.extended > 0) {
    // The solver's bound holds for the widened lifetimes only; report one
    // that holds for every plan: max live bytes over the true lifetimes.
    memory::IntervalProblem exact;
    for (int b : pool) {
      const memory::LogicalBuffer& buf = lt.buffers[b];
      exact.buffers.push_back({buf.name, buf.lower, buf.upper, buf.size, alignment});
    }
    sol.lower_bound = memory::MaxLiveBytes(exact);
  }
  sol.lower_bound = std::min(sol.lower_bound, sol.peak);
  sol.optimal = sol.peak == sol.lower_bound;
  std::vector<int64_t> offset(lt.buffers.size(), 0);
  for (size_t i = 0; i < pool.size(); ++i) offset[pool[i]] = sol.assignment.offsets[i];

  // Inputs and constants: back to back in their own regions.
  std::map<std::string, int64_t> region_bytes = {{"activation", sol.peak}};
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    const memory::LogicalBuffer& buf = lt.buffers[b];
    if (buf.planned_in_pool()) continue;
    int64_t& top = region_bytes[std::string(MemoryRegionName(buf.region))];
    offset[b] = top;
    std::optional<int64_t> end = CheckedAdd(top, buf.size);
    if (!end) {
      return absl::InvalidArgumentError(
          StrCat("[", name(), "] tensor '", buf.name, "' (", buf.size, " bytes) makes region '",
                 MemoryRegionName(buf.region), "' larger than int64"));
    }
    top = *end;
  }

  lap.Lap(ctx.stats, "memory-planning: bound and regions");
  // 4. plan.memory.
  MemoryResult& mem = plan.memory;
  mem = MemoryResult();
  mem.planned = true;
  mem.alignment = alignment;
  mem.peak = sol.peak;
  mem.lower_bound = sol.lower_bound;
  mem.optimal = sol.optimal;
  mem.region_bytes = region_bytes;
  mem.dynamic_tensors = lt.dynamic;
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    const memory::LogicalBuffer& buf = lt.buffers[b];
    for (const memory::TensorRef& r : buf.members) {
      TensorPlacement tp;
      tp.node = r.node;
      tp.output = r.output;
      tp.region = r.output == memory::TensorRef::kWorkspace ? MemoryRegion::kWorkspace : buf.region;
      tp.offset = offset[b];
      tp.size = buf.size;
      tp.first_use = buf.lower;
      tp.last_use = buf.upper;
      tp.buffer = buf.name;
      tp.stream = m.node(r.node).stream_id;
      mem.tensors.push_back(std::move(tp));
    }
  }
  std::sort(mem.tensors.begin(), mem.tensors.end(), [&](const TensorPlacement& a, const TensorPlacement& b) {
    return std::make_tuple(lt.position[a.node.index()], a.output) < std::make_tuple(lt.position[b.node.index()], b.output);
  });

  lap.Lap(ctx.stats, "memory-planning: placements");
  // Decision log: which earlier buffer each pool buffer reuses (the most
  // recently dead one sharing its byte range; ties: first in plan order), in
  // plan order. A sweep that paints the address space with the last buffer
  // placed there: in a valid plan the buffers covering one address are
  // disjoint in time, so the painter is the latest to die. O(n log n).
  std::vector<int> by_lower = pool;
  std::sort(by_lower.begin(), by_lower.end(), [&](int a, int b) {
    return std::make_tuple(lt.buffers[a].lower, lt.buffers[a].name) < std::make_tuple(lt.buffers[b].lower, lt.buffers[b].name);
  });
  std::map<int64_t, int> painted;  // segment start -> buffer (-1 = none); segments end at the next key
  painted[0] = -1;
  auto split_at = [&](int64_t at) {
    auto it = painted.upper_bound(at);
    --it;
    if (it->first != at) painted[at] = it->second;
  };
  int64_t reused = 0, cross = 0;
  for (size_t i = 0; i < by_lower.size(); ++i) {
    const int b = by_lower[i];
    const memory::LogicalBuffer& buf = lt.buffers[b];
    if (!buf.pinned.empty()) {
      ctx.log.Record(kPass, "BufferPinned", "", Field("buffer", buf.name), Field("reason", buf.pinned));
    }
    int src = -1;
    if (buf.size > 0) {
      split_at(offset[b]);
      split_at(offset[b] + buf.size);
      auto first = painted.find(offset[b]);
      auto last = painted.find(offset[b] + buf.size);
      for (auto it = first; it != last; ++it) {
        const int a = it->second;
        if (a < 0 || lt.buffers[a].upper > buf.lower) continue;
        if (src < 0 || lt.buffers[a].upper > lt.buffers[src].upper ||
            (lt.buffers[a].upper == lt.buffers[src].upper &&
             std::make_tuple(lt.buffers[a].lower, lt.buffers[a].name) <
                 std::make_tuple(lt.buffers[src].lower, lt.buffers[src].name))) {
          src = a;
        }
      }
      painted.erase(std::next(first), last);
      first->second = b;
    }
    if (src >= 0) {
      const bool cross_stream = !reuse.SameStream(src, b);
      ++reused;
      cross += cross_stream ? 1 : 0;
      ctx.log.Record(kPass, "BufferReused", "", Field("buffer", buf.name), Field("reuses", lt.buffers[src].name),
                     Field("offset", offset[b]), Field("size", buf.size),
                     Field("cross_stream", cross_stream ? "true" : "false"));
    } else {
      ctx.log.Record(kPass, "BufferPlaced", "", Field("buffer", buf.name),
                     Field("region", MemoryRegionName(buf.region)), Field("offset", offset[b]),
                     Field("size", buf.size),
                     Field("lifetime", StrCat("[", buf.lower, ",", buf.upper, ")")));
    }
  }
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    const memory::LogicalBuffer& buf = lt.buffers[b];
    if (buf.planned_in_pool()) continue;
    ctx.log.Record(kPass, "BufferPlaced", "", Field("buffer", buf.name),
                   Field("region", MemoryRegionName(buf.region)), Field("offset", offset[b]),
                   Field("size", buf.size),
                   Field("lifetime", StrCat("[", buf.lower, ",", buf.upper, ")")));
  }
  for (const std::string& t : lt.dynamic) {
    ctx.log.Record(kPass, "BufferDynamic", "", Field("tensor", t), Field("reason", "unknown-size"));
  }
  ctx.log.Record(kPass, "MemoryPlanned", "", Field("peak", sol.peak), Field("lower_bound", sol.lower_bound),
                 Field("gap", StrCat(sol.gap())), Field("buffers", pool.size()),
                 Field("extra_conflicts", problem.extra_conflicts.size()),
                 Field("optimal", sol.optimal ? "true" : "false"), Field("method", method));
  lap.Lap(ctx.stats, "memory-planning: reuse log");
  ctx.stats.Set(kPass, "pool_buffers", static_cast<int64_t>(pool.size()));
  ctx.stats.Set(kPass, "extra_conflicts", static_cast<int64_t>(problem.extra_conflicts.size()));
  ctx.stats.Set(kPass, "dynamic_tensors", static_cast<int64_t>(lt.dynamic.size()));
  ctx.stats.Set(kPass, "widened_lifetimes", conflicts.extended);
  ctx.stats.Set(kPass, "conflict_edges", sol.stats.conflict_edges);
  ctx.stats.Set(kPass, "search_nodes", sol.stats.nodes);
  ctx.stats.Set(kPass, "search_steps", sol.stats.steps);
  ctx.stats.Set(kPass, "scalable", sol.stats.scalable ? 1 : 0);
  ctx.stats.Set(kPass, "peak_bytes", sol.peak);
  ctx.stats.Set(kPass, "lower_bound_bytes", sol.lower_bound);
  ctx.stats.Set(kPass, "reused_buffers", reused);
  ctx.stats.Set(kPass, "cross_stream_reuses", cross);
  return true;
}

}  // namespace npuplan
