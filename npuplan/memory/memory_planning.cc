// The memory planning pass contains four stages: lifetimes → stream-aware
// conflicts → interval solver for the activation pool → plan.memory and the
// decision log (see memory_planning.h).
#include "npuplan/memory/memory_planning.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "npuplan/memory/interval_solver.h"
#include "npuplan/memory/memory_verifier.h"
#include "npuplan/memory/stream_aware_reuse.h"
#include "npuplan/memory/tensor_lifetimes.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

[[maybe_unused]] const bool kMemoryChecksRegistered = memory::RegisterMemoryStageChecks();

constexpr std::string_view kPass = "memory-planning";

// Parses an option already validated by CompileOptions::Validate.
absl::StatusOr<double> ParseSeconds(const CompileOptions& options, std::string_view key) {
  const std::string v = options.Get(key);
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !(d >= 0)) {
    return absl::InvalidArgumentError(StrCat("option ", key, "=\"", v, "\": expected a non-negative number of seconds"));
  }
  return d;
}

absl::StatusOr<int64_t> ParseAlignment(const CompileOptions& options) {
  const std::string v = options.Get("npuplan.memory.alignment");
  char* end = nullptr;
  long long a = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end != v.c_str() + v.size() || a <= 0) {
    return absl::InvalidArgumentError(StrCat("option npuplan.memory.alignment=\"", v, "\": expected a positive integer"));
  }
  return static_cast<int64_t>(a);
}

}  // namespace

absl::StatusOr<bool> MemoryPlanning::Run(Plan& plan, PassContext& ctx) {
  const Model& m = plan.model;
  NPUPLAN_ASSIGN_OR_RETURN(int64_t alignment, ParseAlignment(ctx.options));
  NPUPLAN_ASSIGN_OR_RETURN(double time_limit, ParseSeconds(ctx.options, "npuplan.memory.timeLimit"));

  // 1. Lifetimes.
  NPUPLAN_ASSIGN_OR_RETURN(memory::TensorLifetimes lt, memory::ComputeTensorLifetimes(m, alignment));
  memory::StreamAwareReuse reuse(m, lt);

  // 2. The activation pool as an interval problem with extra conflicts.
  std::vector<int> pool;
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    if (lt.buffers[b].planned_in_pool()) pool.push_back(static_cast<int>(b));
  }
  memory::IntervalProblem problem;
  for (int b : pool) {
    const memory::LogicalBuffer& buf = lt.buffers[b];
    problem.buffers.push_back({buf.name, buf.lower, buf.upper, buf.size, alignment});
  }
  problem.extra_conflicts = reuse.ExtraConflicts(pool);

  // 3. Solve.
  memory::IntervalSolverOptions solver_options;
  solver_options.time_limit_seconds = time_limit;
  solver_options.search = time_limit > 0;
  absl::StatusOr<memory::IntervalSolution> solved = memory::SolveIntervals(problem, solver_options);
  if (!solved.ok()) {
    return absl::Status(solved.status().code(),
                        StrCat("memory-planning: activation pool of ", pool.size(),
                               " buffers: ", std::string(solved.status().message())));
  }
  const memory::IntervalSolution& sol = *solved;
  std::vector<int64_t> offset(lt.buffers.size(), 0);
  for (size_t i = 0; i < pool.size(); ++i) offset[pool[i]] = sol.assignment.offsets[i];

  // Inputs and constants: back to back in their own regions.
  std::map<std::string, int64_t> region_bytes = {{"activation", sol.peak}};
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    const memory::LogicalBuffer& buf = lt.buffers[b];
    if (buf.planned_in_pool()) continue;
    int64_t& top = region_bytes[buf.region];
    offset[b] = top;
    top += buf.size;
  }

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
      tp.region = r.output == memory::TensorRef::kWorkspace ? "workspace" : buf.region;
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

  // Decision log: which earlier buffer each pool buffer reuses (the most
  // recently dead one sharing its first byte range), in plan order.
  std::vector<int> by_lower = pool;
  std::sort(by_lower.begin(), by_lower.end(), [&](int a, int b) {
    return std::make_tuple(lt.buffers[a].lower, lt.buffers[a].name) < std::make_tuple(lt.buffers[b].lower, lt.buffers[b].name);
  });
  int64_t reused = 0, cross = 0;
  for (size_t i = 0; i < by_lower.size(); ++i) {
    const int b = by_lower[i];
    const memory::LogicalBuffer& buf = lt.buffers[b];
    if (!buf.pinned.empty()) {
      ctx.log.Record(kPass, "BufferPinned", "", Field("buffer", buf.name), Field("reason", buf.pinned));
    }
    int src = -1;
    for (size_t j = 0; j < i; ++j) {
      const int a = by_lower[j];
      const memory::LogicalBuffer& prev = lt.buffers[a];
      if (prev.size == 0 || buf.size == 0 || prev.upper > buf.lower) continue;
      if (offset[a] >= offset[b] + buf.size || offset[b] >= offset[a] + prev.size) continue;
      if (src < 0 || prev.upper > lt.buffers[src].upper) src = a;
    }
    if (src >= 0) {
      const bool cross_stream = !reuse.SameStream(src, b);
      ++reused;
      cross += cross_stream ? 1 : 0;
      ctx.log.Record(kPass, "BufferReused", "", Field("buffer", buf.name), Field("reuses", lt.buffers[src].name),
                     Field("offset", offset[b]), Field("size", buf.size),
                     Field("cross_stream", cross_stream ? "true" : "false"));
    } else {
      ctx.log.Record(kPass, "BufferPlaced", "", Field("buffer", buf.name), Field("region", buf.region),
                     Field("offset", offset[b]), Field("size", buf.size),
                     Field("lifetime", StrCat("[", buf.lower, ",", buf.upper, ")")));
    }
  }
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    const memory::LogicalBuffer& buf = lt.buffers[b];
    if (buf.planned_in_pool()) continue;
    ctx.log.Record(kPass, "BufferPlaced", "", Field("buffer", buf.name), Field("region", buf.region),
                   Field("offset", offset[b]), Field("size", buf.size),
                   Field("lifetime", StrCat("[", buf.lower, ",", buf.upper, ")")));
  }
  for (const std::string& t : lt.dynamic) {
    ctx.log.Record(kPass, "BufferDynamic", "", Field("tensor", t), Field("reason", "unknown-size"));
  }
  ctx.log.Record(kPass, "MemoryPlanned", "", Field("peak", sol.peak), Field("lower_bound", sol.lower_bound),
                 Field("gap", StrCat(sol.gap())), Field("buffers", pool.size()),
                 Field("extra_conflicts", problem.extra_conflicts.size()),
                 Field("optimal", sol.optimal ? "true" : "false"));
  ctx.stats.Set(kPass, "pool_buffers", static_cast<int64_t>(pool.size()));
  ctx.stats.Set(kPass, "extra_conflicts", static_cast<int64_t>(problem.extra_conflicts.size()));
  ctx.stats.Set(kPass, "dynamic_tensors", static_cast<int64_t>(lt.dynamic.size()));
  ctx.stats.Set(kPass, "peak_bytes", sol.peak);
  ctx.stats.Set(kPass, "lower_bound_bytes", sol.lower_bound);
  ctx.stats.Set(kPass, "reused_buffers", reused);
  ctx.stats.Set(kPass, "cross_stream_reuses", cross);
  return true;
}

}  // namespace npuplan
