#include "npuplan/memory/interval_problem.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "npuplan/support/checked_math.h"

namespace npuplan::memory {
namespace {

// The instants at which the live set changes, each with its live buffers.
struct LiveSet {
  int64_t total = 0;
  std::vector<int> buffers;
};

// Live sets right after each distinct `lower` (only there can a maximum start).
std::vector<LiveSet> LiveSetsAtStarts(const IntervalProblem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<int> by_lower(n);
  std::iota(by_lower.begin(), by_lower.end(), 0);
  std::stable_sort(by_lower.begin(), by_lower.end(), [&](int a, int b) {
    return problem.buffers[a].lower < problem.buffers[b].lower;
  });
  std::vector<LiveSet> sets;
  std::vector<int> active;
  for (int i = 0; i < n;) {
    const int64_t t = problem.buffers[by_lower[i]].lower;
    std::erase_if(active, [&](int b) { return problem.buffers[b].upper <= t; });
    for (; i < n && problem.buffers[by_lower[i]].lower == t; ++i) {
      if (problem.buffers[by_lower[i]].size > 0) active.push_back(by_lower[i]);
    }
    LiveSet set;
    set.buffers = active;
    for (int b : active) set.total += problem.buffers[b].size;
    sets.push_back(std::move(set));
  }
  return sets;
}

}  // namespace

int FirstDuplicateId(std::span<const IntervalBuffer> buffers) {
  const size_t n = buffers.size();
  // (32-bit hash of id) << 32 | index, sorted with two 16-bit counting
  // passes (a million ids: a comparison sort of (hash, index) pairs cost
  // several times more). Equal ids have equal keys' high halves; ids are
  // compared only within such runs (a few, by chance, at a million ids).
  BigVector<uint64_t> keys(n), sorted(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = std::hash<std::string_view>{}(buffers[i].id);
    keys[i] = ((h ^ (h >> 32)) << 32) | static_cast<uint64_t>(i);
  }
  for (int shift : {32, 48}) {
    std::vector<int32_t> start((size_t{1} << 16) + 1, 0);
    for (uint64_t k : keys) ++start[((k >> shift) & 0xffff) + 1];
    for (size_t d = 1; d < start.size(); ++d) start[d] += start[d - 1];
    for (uint64_t k : keys) sorted[static_cast<size_t>(start[(k >> shift) & 0xffff]++)] = k;
    keys.swap(sorted);
  }
  FreeStorage(sorted);
  int first = static_cast<int>(n);
  std::vector<int> run;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && (keys[j] >> 32) == (keys[i] >> 32)) ++j;
    if (j - i > 1) {
      run.clear();
      for (size_t x = i; x < j; ++x) run.push_back(static_cast<int>(keys[x] & 0xffffffffu));
      // By (id, index): an id's second occurrence follows its first.
      std::sort(run.begin(), run.end(), [&](int a, int b) {
        const std::string_view x = buffers[a].id, y = buffers[b].id;
        return x != y ? x < y : a < b;
      });
      for (size_t k = 1; k < run.size(); ++k) {
        if (buffers[run[k]].id == buffers[run[k - 1]].id) first = std::min(first, run[k]);
      }
    }
    i = j;
  }
  return first;
}

absl::Status CheckIntervalProblem(const IntervalProblem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  const int first_duplicate = FirstDuplicateId(problem.buffers);
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const IntervalBuffer& b = problem.buffers[i];
    if (b.lower >= b.upper) {
      return absl::InvalidArgumentError(absl::StrCat("buffer '", b.id.str(), "': lower (", b.lower,
                                                     ") must be < upper (", b.upper, ")"));
    }
    if (b.size < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer '", b.id.str(), "': size (", b.size, ") must be >= 0"));
    }
    if (b.alignment < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer '", b.id.str(), "': alignment (", b.alignment, ") must be >= 1"));
    }
    if (i == first_duplicate) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate buffer id '", b.id.str(), "'"));
    }
    // The solvers form upper - lower (lengths, areas).
    if (!CheckedSub(b.upper, b.lower)) {
      return absl::InvalidArgumentError(absl::StrCat("buffer '", b.id.str(), "': lifetime [",
                                                     b.lower, ", ", b.upper,
                                                     ") is longer than int64"));
    }
    std::optional<int64_t> padded = CheckedAdd(b.size, b.alignment - 1);
    std::optional<int64_t> sum = padded ? CheckedAdd(total, *padded) : std::nullopt;
    if (!sum) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer '", b.id.str(), "': total size of all buffers overflows a 64-bit offset"));
    }
    total = *sum;
  }
  for (const auto& [a, b] : problem.extra_conflicts) {
    if (a < 0 || a >= n || b < 0 || b >= n || a == b) {
      return absl::InvalidArgumentError(absl::StrCat("extra conflict (", a, ", ", b,
                                                     ") must name two distinct buffers in [0, ",
                                                     n, ")"));
    }
  }
  if (problem.capacity.has_value() && *problem.capacity < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("capacity (", *problem.capacity, ") must be >= 0"));
  }
  return absl::OkStatus();
}

std::vector<std::vector<int>> BuildConflictGraph(const IntervalProblem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<std::vector<int>> conflicts(n);
  const auto& bufs = problem.buffers;
  // 1. Time overlaps by a sweep over lower bounds.
  std::vector<int> by_lower(n);
  std::iota(by_lower.begin(), by_lower.end(), 0);
  std::stable_sort(by_lower.begin(), by_lower.end(),
                   [&](int a, int b) { return bufs[a].lower < bufs[b].lower; });
  std::vector<int> active;
  for (int b : by_lower) {
    if (bufs[b].size == 0) continue;
    std::erase_if(active, [&](int a) { return bufs[a].upper <= bufs[b].lower; });
    for (int a : active) {
      conflicts[a].push_back(b);
      conflicts[b].push_back(a);
    }
    active.push_back(b);
  }
  // 2. Explicit extra conflicts.
  for (const auto& [a, b] : problem.extra_conflicts) {
    if (bufs[a].size == 0 || bufs[b].size == 0) continue;
    conflicts[a].push_back(b);
    conflicts[b].push_back(a);
  }
  // 3. The predicate, on time-disjoint pairs only.
  if (problem.forbid_sharing) {
    for (int a = 0; a < n; ++a) {
      if (bufs[a].size == 0) continue;
      for (int b = a + 1; b < n; ++b) {
        if (bufs[b].size == 0 || LifetimesOverlap(bufs[a], bufs[b])) continue;
        if (problem.forbid_sharing(a, b)) {
          conflicts[a].push_back(b);
          conflicts[b].push_back(a);
        }
      }
    }
  }
  for (auto& list : conflicts) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return conflicts;
}

int64_t ComputeLowerBound(const IntervalProblem& problem,
                          const std::vector<std::vector<int>>& conflicts) {
  std::vector<LiveSet> sets = LiveSetsAtStarts(problem);
  int64_t bound = 0;
  for (const LiveSet& s : sets) bound = std::max(bound, s.total);
  if (problem.extra_conflicts.empty() && !problem.forbid_sharing) return bound;

  // Grow the heaviest live sets into larger cliques of the conflict graph:
  // a buffer joins when it conflicts with every member so far.
  constexpr size_t kMaxSetsToGrow = 64;
  std::stable_sort(sets.begin(), sets.end(),
                   [](const LiveSet& a, const LiveSet& b) { return a.total > b.total; });
  if (sets.size() > kMaxSetsToGrow) sets.resize(kMaxSetsToGrow);
  const int n = static_cast<int>(problem.buffers.size());
  auto conflicts_with = [&](int a, int b) {
    return std::binary_search(conflicts[a].begin(), conflicts[a].end(), b);
  };
  std::vector<int> hits(n, 0);
  std::vector<char> in_set(n, 0);
  for (const LiveSet& s : sets) {
    if (s.buffers.empty()) continue;
    for (int m : s.buffers) in_set[m] = 1;
    std::vector<int> candidates;
    for (int m : s.buffers) {
      for (int x : conflicts[m]) {
        if (in_set[x]) continue;
        if (++hits[x] == static_cast<int>(s.buffers.size())) candidates.push_back(x);
      }
    }
    for (int m : s.buffers) {
      for (int x : conflicts[m]) hits[x] = 0;
    }
    std::sort(candidates.begin(), candidates.end(), [&](int a, int b) {
      const int64_t sa = problem.buffers[a].size, sb = problem.buffers[b].size;
      return sa != sb ? sa > sb : a < b;
    });
    int64_t total = s.total;
    std::vector<int> added;
    for (int x : candidates) {
      bool all = true;
      for (int y : added) all = all && conflicts_with(x, y);
      if (!all) continue;
      added.push_back(x);
      total += problem.buffers[x].size;
    }
    bound = std::max(bound, total);
    for (int m : s.buffers) in_set[m] = 0;
  }
  return bound;
}

namespace {

// Positive-size buffers by (lower, index).
std::vector<int> ByLower(const IntervalProblem& problem) {
  std::vector<int> order;
  order.reserve(problem.buffers.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (problem.buffers[i].size > 0) order.push_back(static_cast<int>(i));
  }
  StableSortByKey(order, [&](int b) { return problem.buffers[b].lower; });
  return order;
}

}  // namespace

int64_t MaxLiveBytes(const IntervalProblem& problem) {
  const auto& bufs = problem.buffers;
  // CheckIntervalProblem bounds the total size, so the sum cannot overflow here.
  return MaxLiveBytesOf(
             bufs.size(), [&](int i) { return bufs[i].lower; },
             [&](int i) { return bufs[i].upper; }, [&](int i) { return bufs[i].size; })
      .value_or(std::numeric_limits<int64_t>::max());
}

int64_t CountTimeOverlaps(const IntervalProblem& problem) {
  const auto& bufs = problem.buffers;
  const std::vector<int> by_lower = ByLower(problem);
  // Ends in order of upper, as in MaxLiveBytesOf (a buffer that ends by the
  // time b starts started before b); the heap only for lower >= upper.
  const bool proper = std::all_of(by_lower.begin(), by_lower.end(),
                                  [&](int b) { return bufs[b].lower < bufs[b].upper; });
  int64_t pairs = 0;
  if (proper) {
    std::vector<int> by_upper = by_lower;
    StableSortByKey(by_upper, [&](int b) { return bufs[b].upper; });
    size_t dead = 0;
    for (size_t i = 0; i < by_lower.size(); ++i) {
      const int b = by_lower[i];
      while (dead < by_upper.size() && bufs[by_upper[dead]].upper <= bufs[b].lower) ++dead;
      pairs += static_cast<int64_t>(i - dead);
    }
    return pairs;
  }
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> live;
  for (int b : by_lower) {
    while (!live.empty() && live.top() <= bufs[b].lower) live.pop();
    pairs += static_cast<int64_t>(live.size());
    live.push(bufs[b].upper);
  }
  return pairs;
}

TimeProfile ComputeTimeProfile(const IntervalProblem& problem) {
  const auto& bufs = problem.buffers;
  const std::vector<int> by_lower = ByLower(problem);
  const bool proper = std::all_of(by_lower.begin(), by_lower.end(),
                                  [&](int b) { return bufs[b].lower < bufs[b].upper; });
  if (!proper) {
    return {CountTimeOverlaps(problem),
            MaxLiveBytesOf(
                bufs.size(), [&](int i) { return bufs[i].lower; },
                [&](int i) { return bufs[i].upper; }, [&](int i) { return bufs[i].size; })};
  }
  // As in CountTimeOverlaps and MaxLiveBytesOf: a buffer that ends by the
  // time b starts started before b.
  std::vector<int> by_upper = by_lower;
  StableSortByKey(by_upper, [&](int b) { return bufs[b].upper; });
  TimeProfile out;
  size_t dead = 0;
  int64_t total = 0, best = 0;
  bool overflow = false;
  for (size_t i = 0; i < by_lower.size(); ++i) {
    const int b = by_lower[i];
    // Once the sum has overflowed it is no longer tracked: subtracting from
    // it then would itself overflow.
    for (; dead < by_upper.size() && bufs[by_upper[dead]].upper <= bufs[b].lower; ++dead)
      if (!overflow) total -= bufs[by_upper[dead]].size;
    out.overlaps += static_cast<int64_t>(i - dead);
    if (overflow) continue;
    const std::optional<int64_t> sum = CheckedAdd(total, bufs[b].size);
    overflow = !sum;
    total = sum.value_or(0);
    best = std::max(best, total);
  }
  if (!overflow) out.max_live = best;
  return out;
}

int64_t ComputePeak(const IntervalProblem& problem, const IntervalAssignment& assignment) {
  int64_t peak = 0;
  for (size_t i = 0; i < problem.buffers.size() && i < assignment.offsets.size(); ++i) {
    peak = std::max(peak, assignment.offsets[i] + problem.buffers[i].size);
  }
  return peak;
}

}  // namespace npuplan::memory
