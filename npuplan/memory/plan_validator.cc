#include "npuplan/memory/plan_validator.h"

#include <queue>
#include <set>

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"

namespace npuplan::memory {
namespace {

ValidationResult Fail(Violation v, std::string message) {
  return {v, absl::InternalError(
                 absl::StrCat("memory plan invalid (", ViolationName(v), "): ", message))};
}

// True when [oa, oa + sa) and [ob, ob + sb) share an address.
bool AddressesOverlap(int64_t oa, int64_t sa, int64_t ob, int64_t sb) {
  return sa > 0 && sb > 0 && oa < ob + sb && ob < oa + sa;
}

// Describes one buffer as "'id' [lower,upper) at [offset,offset+size)".
std::string Describe(const IntervalBuffer& b, int64_t offset) {
  return absl::StrCat("'", b.id, "' live [", b.lower, ",", b.upper, ") at [", offset, ",",
                      offset + b.size, ")");
}

ValidationResult OverlapFailure(const IntervalProblem& p, const IntervalAssignment& s, int a,
                                int b, const char* why) {
  return Fail(Violation::kOverlap,
              absl::StrCat("buffers ", Describe(p.buffers[a], s.offsets[a]), " and ",
                           Describe(p.buffers[b], s.offsets[b]), " conflict (", why,
                           ") but share addresses"));
}

}  // namespace

const char* ViolationName(Violation v) {
  switch (v) {
    case Violation::kNone: return "none";
    case Violation::kWrongOffsetCount: return "wrong-offset-count";
    case Violation::kNegativeOffset: return "negative-offset";
    case Violation::kOffsetOverflow: return "offset-overflow";
    case Violation::kMisaligned: return "misaligned";
    case Violation::kOverlap: return "overlap";
    case Violation::kOverCapacity: return "over-capacity";
  }
  return "unknown";
}

ValidationResult ValidateIntervalAssignment(const IntervalProblem& problem,
                                            const IntervalAssignment& assignment) {
  const auto& bufs = problem.buffers;
  const auto& offs = assignment.offsets;
  const int n = static_cast<int>(bufs.size());
  // 1. One offset per buffer, each placed, representable and aligned.
  if (offs.size() != bufs.size()) {
    return Fail(Violation::kWrongOffsetCount,
                absl::StrCat(offs.size(), " offsets for ", bufs.size(), " buffers"));
  }
  for (int i = 0; i < n; ++i) {
    if (offs[i] < 0) {
      return Fail(Violation::kNegativeOffset,
                  absl::StrCat("buffer '", bufs[i].id, "' has offset ", offs[i]));
    }
    if (bufs[i].size > std::numeric_limits<int64_t>::max() - offs[i]) {
      return Fail(Violation::kOffsetOverflow,
                  absl::StrCat("buffer '", bufs[i].id, "': offset ", offs[i], " + size ",
                               bufs[i].size, " overflows"));
    }
    if (bufs[i].alignment > 1 && offs[i] % bufs[i].alignment != 0) {
      return Fail(Violation::kMisaligned,
                  absl::StrCat("buffer '", bufs[i].id, "' offset ", offs[i],
                               " is not a multiple of alignment ", bufs[i].alignment));
    }
  }
  // 2. Time overlaps: sweep buffers by lower bound; the live ones, kept by
  // offset, are pairwise disjoint so far, so a new buffer can only overlap
  // its neighbours in that order. O(n log n).
  std::vector<int> order;
  for (int i = 0; i < n; ++i) {
    if (bufs[i].size > 0) order.push_back(i);
  }
  StableSortByKey(order, [&](int b) { return bufs[b].lower; });
  std::set<std::pair<int64_t, int>> live;  // (offset, buffer)
  using Ending = std::pair<int64_t, int>;   // (upper, buffer)
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ends;
  for (int b : order) {
    while (!ends.empty() && ends.top().first <= bufs[b].lower) {
      live.erase({offs[ends.top().second], ends.top().second});
      ends.pop();
    }
    auto next = live.lower_bound({offs[b], -1});
    for (auto it : {next, next == live.begin() ? live.end() : std::prev(next)}) {
      if (it == live.end()) continue;
      const int a = it->second;
      if (AddressesOverlap(offs[a], bufs[a].size, offs[b], bufs[b].size)) {
        return OverlapFailure(problem, assignment, std::min(a, b), std::max(a, b),
                              "lifetimes overlap");
      }
    }
    live.emplace(offs[b], b);
    ends.emplace(bufs[b].upper, b);
  }
  // 3. Explicit conflicts and the predicate.
  for (const auto& [a, b] : problem.extra_conflicts) {
    if (a < 0 || b < 0 || a >= n || b >= n) continue;  // CheckIntervalProblem's job.
    if (AddressesOverlap(offs[a], bufs[a].size, offs[b], bufs[b].size)) {
      return OverlapFailure(problem, assignment, a, b, "extra conflict");
    }
  }
  if (problem.forbid_sharing) {
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (!AddressesOverlap(offs[a], bufs[a].size, offs[b], bufs[b].size)) continue;
        if (LifetimesOverlap(bufs[a], bufs[b])) continue;  // Reported above.
        if (problem.forbid_sharing(a, b)) {
          return OverlapFailure(problem, assignment, a, b, "forbid_sharing");
        }
      }
    }
  }
  // 4. Capacity.
  if (problem.capacity.has_value()) {
    for (int i = 0; i < n; ++i) {
      if (offs[i] + bufs[i].size > *problem.capacity) {
        return Fail(Violation::kOverCapacity,
                    absl::StrCat("buffer '", bufs[i].id, "' ends at ", offs[i] + bufs[i].size,
                                 " > capacity ", *problem.capacity));
      }
    }
  }
  return {Violation::kNone, absl::OkStatus()};
}

}  // namespace npuplan::memory
