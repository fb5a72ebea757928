// The memory planning pass contains four stages: lifetimes → stream-aware
// conflicts → interval solver for the activation pool → plan.memory and the
// decision log (see memory_planning.h).
#include "npuplan/memory/memory_planning.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "npuplan/memory/interval_solver.h"
#include "npuplan/memory/memory_options.h"
#include "npuplan/memory/pool_planner.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/address_painter.h"
#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/tensor_lifetimes.h"

namespace npuplan {
namespace {

constexpr std::string_view kPass = "memory-planning";

using RegionBytes = std::map<std::string, int64_t>;  // region name -> bytes

// Cross-stream conflict pairs listed per buffer before its lifetime is
// widened to its release point instead (StreamAwareReuse::Conflicts): at
// least 64, more on small pools (about 2M pairs in all), so small graphs keep
// exact pairs and the solver's proven bound.
int64_t MaxPairsPerBuffer(size_t pool) {
  return std::max<int64_t>(64, 2'000'000 / std::max<int64_t>(1, static_cast<int64_t>(pool)));
}

// The buffers of the activation pool (activations + workspaces), by index.
std::vector<int> PoolBuffers(const memory::TensorLifetimes& lt) {
  std::vector<int> pool;
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    if (lt.buffers[b].planned_in_pool()) pool.push_back(static_cast<int>(b));
  }
  return pool;
}

// Inputs and constants: back to back in their own regions, after the pool's
// `peak` bytes of "activation". Fills their `offset`; returns the region sizes.
absl::StatusOr<RegionBytes> PlaceOutsidePool(const memory::TensorLifetimes& lt, int64_t peak,
                                             std::vector<int64_t>& offset) {
  RegionBytes region_bytes = {{"activation", peak}};
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    const memory::LogicalBuffer& buf = lt.buffers[b];
    if (buf.planned_in_pool()) continue;
    int64_t& top = region_bytes[std::string(MemoryRegionName(buf.region))];
    offset[b] = top;
    std::optional<int64_t> end = CheckedAdd(top, buf.size);
    if (!end) {
      return absl::InvalidArgumentError(
          StrCat("[", kPass, "] tensor '", buf.name, "' (", buf.size, " bytes) makes region '",
                 MemoryRegionName(buf.region), "' larger than int64"));
    }
    top = *end;
  }
  return region_bytes;
}

// plan.memory: the totals and one placement per tensor, in plan order.
void WriteMemoryResult(const std::vector<int64_t>& node_stream, const memory::TensorLifetimes& lt,
                       const memory::IntervalSolution& sol, int64_t alignment,
                       RegionBytes region_bytes, const std::vector<int64_t>& offset,
                       MemoryResult& mem) {
  mem = MemoryResult();
  mem.planned = true;
  mem.alignment = alignment;
  mem.peak = sol.peak;
  mem.lower_bound = sol.lower_bound;
  mem.optimal = sol.optimal;
  mem.region_bytes = std::move(region_bytes);
  mem.dynamic_tensors = lt.dynamic;
  auto place = [&](const memory::TensorRef& r, int b) {
    const memory::LogicalBuffer& buf = lt.buffers[b];
    TensorPlacement& tp = mem.tensors.emplace_back();
    tp.node = r.node;
    tp.output = r.output;
    tp.region = r.output == memory::TensorRef::kWorkspace ? MemoryRegion::kWorkspace : buf.region;
    tp.offset = offset[b];
    tp.size = buf.size;
    tp.first_use = buf.lower;
    tp.last_use = buf.upper;
    tp.buffer = buf.name;
    tp.stream = node_stream[r.node.index()];
  };
  mem.tensors.reserve(lt.buffer_of.size());
  if (lt.order.size() == node_stream.size()) {
    // Every node once in plan order: its tensors by output are already the
    // order by (position, output).
    for (size_t i = 0; i < lt.order.size(); ++i) {
      // Each node's stream is read in plan order: a cache miss per node
      // unless fetched a few nodes ahead.
      if (i + 8 < lt.order.size()) __builtin_prefetch(&node_stream[lt.order[i + 8].index()]);
      for (const auto& [r, b] : lt.buffer_of.OfNode(lt.order[i])) place(r, b);
    }
    return;
  }
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    for (const memory::TensorRef& r : lt.buffers[b].members) place(r, static_cast<int>(b));
  }
  std::sort(mem.tensors.begin(), mem.tensors.end(), [&](const TensorPlacement& a, const TensorPlacement& b) {
    return std::make_tuple(lt.position[a.node.index()], a.output) < std::make_tuple(lt.position[b.node.index()], b.output);
  });
}

void LogPlaced(DecisionLog& log, const memory::LogicalBuffer& buf, int64_t offset) {
  if (!log.enabled()) return;  // spares the lifetime string
  log.Record(kPass, "BufferPlaced", "", Field("buffer", buf.name),
             Field("region", MemoryRegionName(buf.region)), Field("offset", offset),
             Field("size", buf.size),
             Field("lifetime", StrCat("[", buf.lower, ",", buf.upper, ")")));
}

// The pool's address space for LogPoolReuse: slots of the gcd of the
// placed offsets and sizes when there are at most a few per buffer.
memory::AddressPainter PoolPainter(const memory::TensorLifetimes& lt, const std::vector<int>& pool,
                                   const std::vector<int64_t>& offset) {
  int64_t end = 0, unit = 0;
  for (int b : pool) {
    if (lt.buffers[b].size <= 0) continue;
    end = std::max(end, offset[b] + lt.buffers[b].size);
    unit = std::gcd(std::gcd(unit, offset[b]), lt.buffers[b].size);
  }
  return memory::AddressPainter(end, std::max<int64_t>(unit, 1),
                                4 * static_cast<int64_t>(pool.size()) + 64);
}

struct ReuseCounts {
  int64_t reused = 0;  // pool buffers that reuse an earlier one's bytes
  int64_t cross = 0;   // of which across streams
};

// Decision log: which earlier buffer each pool buffer reuses (the most
// recently dead one sharing its byte range; ties: first in plan order), in
// plan order. A sweep that paints the address space with the last buffer
// placed there: in a valid plan the buffers covering one address are
// disjoint in time, so the painter is the latest to die. O(n log n)
// (AddressPainter).
ReuseCounts LogPoolReuse(const memory::TensorLifetimes& lt, const memory::StreamAwareReuse& reuse,
                         const std::vector<int>& pool, const std::vector<int64_t>& offset,
                         DecisionLog& log) {
  // lt.buffers is sorted by (region, lower, name): the pool is two runs
  // (activations, workspaces) sorted by (lower, name); names are unique.
  std::vector<int> by_lower = pool;
  auto by_lower_name = [&](int a, int b) {
    return std::tie(lt.buffers[a].lower, lt.buffers[a].name) <
           std::tie(lt.buffers[b].lower, lt.buffers[b].name);
  };
  auto runs = std::find_if(by_lower.begin(), by_lower.end(), [&](int b) {
    return lt.buffers[b].region != lt.buffers[by_lower.front()].region;
  });
  std::inplace_merge(by_lower.begin(), runs, by_lower.end(), by_lower_name);
  memory::AddressPainter painted = PoolPainter(lt, pool, offset);
  ReuseCounts counts;
  for (size_t i = 0; i < by_lower.size(); ++i) {
    const int b = by_lower[i];
    const memory::LogicalBuffer& buf = lt.buffers[b];
    if (!buf.pinned.empty()) {
      log.Record(kPass, "BufferPinned", "", Field("buffer", buf.name), Field("reason", buf.pinned));
    }
    int src = -1;
    if (buf.size > 0) {
      painted.Paint(offset[b], offset[b] + buf.size, b, [&](int a) {
        if (a < 0 || lt.buffers[a].upper > buf.lower) return;
        if (src < 0 || lt.buffers[a].upper > lt.buffers[src].upper ||
            (lt.buffers[a].upper == lt.buffers[src].upper &&
             std::tie(lt.buffers[a].lower, lt.buffers[a].name) <
                 std::tie(lt.buffers[src].lower, lt.buffers[src].name))) {
          src = a;
        }
      });
    }
    if (src >= 0) {
      const bool cross_stream = !reuse.SameStream(src, b);
      ++counts.reused;
      counts.cross += cross_stream ? 1 : 0;
      log.Record(kPass, "BufferReused", "", Field("buffer", buf.name),
                 Field("reuses", lt.buffers[src].name), Field("offset", offset[b]),
                 Field("size", buf.size), Field("cross_stream", cross_stream ? "true" : "false"));
    } else {
      LogPlaced(log, buf, offset[b]);
    }
  }
  return counts;
}

}  // namespace

absl::StatusOr<bool> MemoryPlanning::Run(Plan& plan, PassContext& ctx) {
  const Model& m = plan.model;
  NPUPLAN_ASSIGN_OR_RETURN(memory::MemoryOptions options, memory::ReadMemoryOptions(ctx.options));
  const int64_t alignment = options.alignment;

  // 1. Lifetimes.
  StepTimer lap;
  NPUPLAN_ASSIGN_OR_RETURN(memory::TensorLifetimes lt,
                           memory::ComputeTensorLifetimes(m, alignment));
  lap.Lap(ctx.stats, "memory-planning: lifetimes");
  // The placements take the nodes' streams from here while later passes may
  // add nodes.
  std::vector<int64_t> node_stream(m.num_nodes());
  for (size_t i = 0; i < node_stream.size(); ++i) node_stream[i] = m.nodes()[i].stream_id;
  // The last read of the model (PlanAccess::released) is the happens-before
  // relation's predecessor lists: its sweep and the reuse tables run beside
  // the passes that wait for the release.
  memory::StreamAwareReuse reuse(
      m, lt, [&ctx] { ctx.ReleaseParts(); }, DynamicPathGraphs(plan));
  lap.Lap(ctx.stats, "memory-planning: happens-before");

  // 2. The activation pool as an interval problem with extra conflicts.
  // Cross-stream constraints: exact pairs for buffers with few of them, a
  // widened lifetime (release point) for the others — linear in size.
  const std::vector<int> pool = PoolBuffers(lt);
  memory::StreamAwareReuse::PlanningConflicts conflicts =
      reuse.Conflicts(pool, MaxPairsPerBuffer(pool.size()));

  // 3. Solve, then the stream sweep; bound and regions.
  memory::PoolPlanOptions pool_options;
  pool_options.alignment = alignment;
  pool_options.search_steps = options.search_steps;
  pool_options.time_limit_seconds = options.time_limit_seconds;
  NPUPLAN_ASSIGN_OR_RETURN(
      memory::PoolPlan pool_plan,
      memory::PlanPool(lt, reuse, pool, conflicts, pool_options,
                       [&](std::string_view stage) { lap.Lap(ctx.stats, stage); }));
  const memory::IntervalSolution& sol = pool_plan.solution;
  const std::string& method = pool_plan.method;
  std::vector<int64_t> offset(lt.buffers.size(), 0);
  for (size_t i = 0; i < pool.size(); ++i) offset[pool[i]] = sol.assignment.offsets[i];
  NPUPLAN_ASSIGN_OR_RETURN(RegionBytes region_bytes, PlaceOutsidePool(lt, sol.peak, offset));
  lap.Lap(ctx.stats, "memory-planning: bound and regions");

  // 4. plan.memory and the decision log.
  WriteMemoryResult(node_stream, lt, sol, alignment, std::move(region_bytes), offset, plan.memory);
  lap.Lap(ctx.stats, "memory-planning: placements");
  const ReuseCounts counts = LogPoolReuse(lt, reuse, pool, offset, ctx.log);
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    if (!lt.buffers[b].planned_in_pool()) LogPlaced(ctx.log, lt.buffers[b], offset[b]);
  }
  for (const std::string& t : lt.dynamic) {
    ctx.log.Record(kPass, "BufferDynamic", "", Field("tensor", t), Field("reason", "unknown-size"));
  }
  ctx.log.Record(kPass, "MemoryPlanned", "", Field("peak", sol.peak),
                 Field("lower_bound", sol.lower_bound), Field("gap", StrCat(sol.gap())),
                 Field("buffers", pool.size()), Field("extra_conflicts", pool_plan.extra_conflicts),
                 Field("optimal", sol.optimal ? "true" : "false"), Field("method", method));
  lap.Lap(ctx.stats, "memory-planning: reuse log");
  ctx.stats.Set(kPass, "pool_buffers", static_cast<int64_t>(pool.size()));
  ctx.stats.Set(kPass, "extra_conflicts", pool_plan.extra_conflicts);
  ctx.stats.Set(kPass, "dynamic_tensors", static_cast<int64_t>(lt.dynamic.size()));
  ctx.stats.Set(kPass, "widened_lifetimes", conflicts.extended);
  ctx.stats.Set(kPass, "conflict_edges", sol.stats.conflict_edges);
  ctx.stats.Set(kPass, "search_nodes", sol.stats.nodes);
  ctx.stats.Set(kPass, "search_steps", sol.stats.steps);
  ctx.stats.Set(kPass, "scalable", sol.stats.scalable ? 1 : 0);
  ctx.stats.Set(kPass, "peak_bytes", sol.peak);
  ctx.stats.Set(kPass, "lower_bound_bytes", sol.lower_bound);
  ctx.stats.Set(kPass, "reused_buffers", counts.reused);
  ctx.stats.Set(kPass, "cross_stream_reuses", counts.cross);
  return true;
}

}  // namespace npuplan
