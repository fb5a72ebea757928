// The interval solver has three stages (see interval_solver.h):
//   1. preprocessing: drop zero-size buffers, build the conflict graph, cut
//      time into sweep-line sections and compute the lower bound;
//   2. greedy first-fit over several orders (interval_greedy.cc);
//   3. feasibility probes "peak <= cap?" by a canonical branch and bound, with
//      caps bisected between the proven lower bound and the best plan; each
//      round of probes gets a node budget twice the previous one
//      (interval_search.cc).
// This file holds stage 1, the buffer orders stages 2 and 3 share, and the
// driver (SolveIntervals).
#include "npuplan/memory/interval_solver.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "npuplan/memory/interval_solver_internal.h"
#include "npuplan/memory/plan_validator.h"
#include "npuplan/support/status_macros.h"

namespace npuplan::memory {
namespace interval_internal {
namespace {

// Area as a saturating product (sizes and lengths can be large).
int64_t SaturatingArea(int64_t size, int64_t length) {
  if (length != 0 && size > std::numeric_limits<int64_t>::max() / length) {
    return std::numeric_limits<int64_t>::max();
  }
  return size * length;
}

}  // namespace

// Orders tried by greedy; every key sorts descending except kLowerAsc.
const std::vector<NamedOrder>& GreedyOrders() {
  static const auto* orders = new std::vector<NamedOrder>{
      {"size", {Key::kSize, Key::kLength}},
      {"total-size", {Key::kTotal, Key::kSize, Key::kLength}},
      {"area", {Key::kArea, Key::kSize}},
      {"length", {Key::kLength, Key::kSize}},
      {"total-length", {Key::kTotal, Key::kLength, Key::kArea}},
      {"lower", {Key::kLowerAsc, Key::kSize}},
  };
  return *orders;
}

// Preorders the search restarts over (MiniMalloc found total/width/area best).
const std::vector<std::vector<Key>>& SearchPreorders() {
  static const auto* orders = new std::vector<std::vector<Key>>{
      {Key::kTotal, Key::kLength, Key::kArea},
      {Key::kLength, Key::kArea, Key::kTotal},
      {Key::kTotal, Key::kArea, Key::kLength},
  };
  return *orders;
}

// Sorts `buffers` by `keys`, ties by compact index (stable, deterministic).
void SortBy(std::vector<int>& buffers, const std::vector<BufferKeys>& k,
            const std::vector<Key>& keys) {
  std::sort(buffers.begin(), buffers.end(), [&](int a, int b) {
    for (Key key : keys) {
      switch (key) {
        case Key::kSize:
          if (k[a].size != k[b].size) return k[a].size > k[b].size;
          break;
        case Key::kLength:
          if (k[a].length != k[b].length) return k[a].length > k[b].length;
          break;
        case Key::kArea:
          if (k[a].area_hi != k[b].area_hi) return k[a].area_hi > k[b].area_hi;
          break;
        case Key::kTotal:
          if (k[a].total != k[b].total) return k[a].total > k[b].total;
          break;
        case Key::kLowerAsc:
          if (k[a].lower != k[b].lower) return k[a].lower < k[b].lower;
          break;
      }
    }
    return a < b;
  });
}

// Keys of buffers given per-section totals (bytes live in each section).
std::vector<BufferKeys> ComputeKeys(const Compact& c, const std::vector<int64_t>& section_total,
                                    const std::vector<int>& buffers) {
  std::vector<BufferKeys> keys(c.count());
  for (int b : buffers) {
    int64_t total = 0;
    for (int s = c.sec_lo[b]; s < c.sec_hi[b]; ++s) total = std::max(total, section_total[s]);
    const int64_t length = c.upper[b] - c.lower[b];
    keys[b] = {c.size[b], length, SaturatingArea(c.size[b], length), total, c.lower[b]};
  }
  return keys;
}

}  // namespace interval_internal

namespace {

using interval_internal::Clock;
using interval_internal::Compact;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Builds the compact problem from a checked problem and its conflict graph.
// Without `with_sections` (the scalable path) only the buffers, the
// adjacency (the extra pairs; `adj` is not read) and the granularity are
// filled.
Compact BuildCompact(const IntervalProblem& problem, const std::vector<std::vector<int>>& adj,
                     bool with_sections = true) {
  Compact c;
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<int> to_compact(n, -1);
  for (BigVector<int64_t>* v : {&c.size, &c.align, &c.lower, &c.upper}) v->reserve(n);
  c.orig.reserve(n);
  for (int i = 0; i < n; ++i) {
    const IntervalBuffer& b = problem.buffers[i];
    if (b.size == 0) continue;
    to_compact[i] = c.count();
    c.orig.push_back(i);
    c.size.push_back(b.size);
    c.align.push_back(b.alignment);
    c.lower.push_back(b.lower);
    c.upper.push_back(b.upper);
  }
  const int m = c.count();
  c.adj.begin.assign(static_cast<size_t>(m) + 1, 0);
  if (!with_sections) {
    // Scalable: the extra pairs are the whole adjacency (no n-sized copy),
    // each row in pair order: counted, then filled.
    for (const auto& [a, b] : problem.extra_conflicts) {
      if (to_compact[a] < 0 || to_compact[b] < 0) continue;
      ++c.adj.begin[static_cast<size_t>(to_compact[a]) + 1];
      ++c.adj.begin[static_cast<size_t>(to_compact[b]) + 1];
    }
    for (int i = 0; i < m; ++i) c.adj.begin[i + 1] += c.adj.begin[i];
    c.adj.list.resize(static_cast<size_t>(c.adj.begin[m]));
    BigVector<int64_t> next(c.adj.begin.begin(), c.adj.begin.end() - 1);
    for (const auto& [a, b] : problem.extra_conflicts) {
      if (to_compact[a] < 0 || to_compact[b] < 0) continue;
      c.adj.list[static_cast<size_t>(next[to_compact[a]]++)] = to_compact[b];
      c.adj.list[static_cast<size_t>(next[to_compact[b]]++)] = to_compact[a];
    }
  }
  for (int i = 0; i < m && with_sections; ++i) {
    for (int j : adj[c.orig[i]]) {
      if (to_compact[j] >= 0) c.adj.list.push_back(to_compact[j]);
    }
    c.adj.begin[i + 1] = static_cast<int64_t>(c.adj.list.size());
  }
  // Canonical offsets are sums of sizes, rounded up to alignments where
  // those exceed 1: multiples of the gcd of sizes and alignments > 1.
  int64_t g = 0;
  for (int i = 0; i < m; ++i) {
    g = std::gcd(g, c.size[i]);
    if (c.align[i] > 1) g = std::gcd(g, c.align[i]);
  }
  c.granularity = std::max<int64_t>(g, 1);
  if (!with_sections) return c;
  // Sections between consecutive distinct time points.
  std::vector<int64_t> times;
  for (int i = 0; i < m; ++i) {
    times.push_back(c.lower[i]);
    times.push_back(c.upper[i]);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  c.num_sections = std::max<int>(0, static_cast<int>(times.size()) - 1);
  c.live.resize(c.num_sections);
  c.sec_lo.resize(m);
  c.sec_hi.resize(m);
  auto index_of = [&](int64_t t) {
    return static_cast<int>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  for (int i = 0; i < m; ++i) {
    c.sec_lo[i] = index_of(c.lower[i]);
    c.sec_hi[i] = index_of(c.upper[i]);
    for (int s = c.sec_lo[i]; s < c.sec_hi[i]; ++s) c.live[s].push_back(i);
  }
  c.edges_of.resize(m);
  for (int i = 0; i < m; ++i) {
    for (int j : c.adj[i]) {
      if (j <= i || (c.lower[i] < c.upper[j] && c.lower[j] < c.upper[i])) continue;
      const int id = static_cast<int>(c.edges.size());
      c.edges.push_back(
          {i, j, std::min(c.sec_lo[i], c.sec_lo[j]), std::max(c.sec_hi[i], c.sec_hi[j])});
      c.edges_of[i].push_back(id);
      c.edges_of[j].push_back(id);
    }
  }
  return c;
}

absl::Status CheckSolverOptions(const IntervalSolverOptions& options) {
  if (!(options.time_limit_seconds >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("time limit (", options.time_limit_seconds,
                                                   " s) must be >= 0"));
  }
  if (options.max_nodes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("node limit (", options.max_nodes, ") must be >= 0"));
  }
  if (options.target_peak < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("target peak (", options.target_peak, ") must be >= 0"));
  }
  if (options.max_steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat("step limit (", options.max_steps, ") must be >= 0"));
  }
  if (options.max_conflict_edges < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("conflict edge limit (", options.max_conflict_edges, ") must be >= 0"));
  }
  return absl::OkStatus();
}

// Conflict adjacency; none for large problems (scalable), whose extra pairs
// BuildCompact reads itself.
std::vector<std::vector<int>> SolverConflicts(const IntervalProblem& problem, bool scalable) {
  if (!scalable) return BuildConflictGraph(problem);
  return {};
}

// 4. Expand to the full problem and validate independently.
absl::Status ExpandSolution(const IntervalProblem& problem, const IntervalSolverOptions& options,
                            const Compact& c, const std::vector<int64_t>& best, int64_t lower_bound,
                            IntervalSolution& solution) {
  const std::optional<int64_t> capacity = problem.capacity;
  solution.assignment.offsets.assign(problem.buffers.size(), 0);
  for (int b = 0; b < c.count(); ++b) solution.assignment.offsets[c.orig[b]] = best[b];
  solution.peak = ComputePeak(problem, solution.assignment);
  solution.lower_bound = std::min(lower_bound, solution.peak);
  solution.optimal = solution.peak == solution.lower_bound;
  if (capacity.has_value() && solution.peak > *capacity) {
    if (lower_bound > *capacity) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "infeasible: needs at least ", lower_bound, " bytes, capacity is ", *capacity));
    }
    const std::string limit =
        solution.stats.node_limit_hit    ? absl::StrCat(options.max_nodes, " nodes")
        : solution.stats.steps_exhausted ? absl::StrCat(options.max_steps, " search steps")
                                         : absl::StrCat(options.time_limit_seconds, " s");
    return absl::DeadlineExceededError(absl::StrCat("no plan within capacity ", *capacity,
                                                    " found in ", limit, "; best peak ",
                                                    solution.peak, ", lower bound ", lower_bound));
  }
  if (!options.validate) return absl::OkStatus();
  const ValidationResult valid = ValidateIntervalAssignment(problem, solution.assignment);
  NPUPLAN_RET_CHECK(valid.ok()) << valid.status.message();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<IntervalSolution> SolveIntervals(const IntervalProblem& problem,
                                                const IntervalSolverOptions& options) {
  const Clock::time_point start = Clock::now();
  NPUPLAN_RETURN_IF_ERROR(CheckIntervalProblem(problem));
  NPUPLAN_RETURN_IF_ERROR(CheckSolverOptions(options));
  // 1. Preprocessing and the lower bound. Large problems (scalable) keep only
  // the extra pairs as adjacency and bound by the max live bytes.
  IntervalSolution solution;
  const TimeProfile profile =
      options.time_profile ? *options.time_profile : ComputeTimeProfile(problem);
  solution.stats.conflict_edges =
      profile.overlaps + static_cast<int64_t>(problem.extra_conflicts.size());
  const bool scalable = !problem.forbid_sharing && options.max_conflict_edges > 0 &&
                        solution.stats.conflict_edges > options.max_conflict_edges;
  solution.stats.scalable = scalable;
  const std::vector<std::vector<int>> conflicts = SolverConflicts(problem, scalable);
  const Compact c = BuildCompact(problem, conflicts, /*with_sections=*/!scalable);
  const int64_t g = c.granularity;
  // Canonical plans put every offset on a multiple of g, so optima are too.
  int64_t lower_bound = scalable ? profile.max_live.value_or(std::numeric_limits<int64_t>::max())
                                 : ComputeLowerBound(problem, conflicts);
  lower_bound = (lower_bound + g - 1) / g * g;
  const std::optional<int64_t> capacity = problem.capacity;
  if (capacity.has_value() && lower_bound > *capacity) {
    return absl::ResourceExhaustedError(absl::StrCat("infeasible: needs at least ", lower_bound,
                                                     " bytes, capacity is ", *capacity));
  }

  std::vector<int64_t> best;
  int64_t best_peak = interval_internal::GreedyPlan(c, scalable, best, solution);
  solution.stats.greedy_seconds = SecondsSince(start);

  const Clock::time_point search_start = Clock::now();
  const int64_t fit = options.stop_at_capacity && capacity.has_value() ? *capacity : 0;
  const bool done = best_peak <= std::max({lower_bound, options.target_peak, fit});
  if (options.search && !scalable && !done && c.count() > 0) {
    const auto deadline =
        search_start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(options.time_limit_seconds));
    interval_internal::SearchBelowGreedy(c, options, capacity, fit, deadline, solution, best,
                                         best_peak, lower_bound);
  }
  solution.stats.search_seconds = SecondsSince(search_start);
  solution.stats.fits_capacity =
      best_peak <= fit && best_peak > std::max(lower_bound, options.target_peak);
  NPUPLAN_RETURN_IF_ERROR(ExpandSolution(problem, options, c, best, lower_bound, solution));
  return solution;
}

}  // namespace npuplan::memory
