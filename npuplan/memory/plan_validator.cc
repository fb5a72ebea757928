#include "npuplan/memory/plan_validator.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "npuplan/support/sort_util.h"
#include "npuplan/verify/bitset_tree.h"

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
  return absl::StrCat("'", b.id.str(), "' live [", b.lower, ",", b.upper, ") at [", offset, ",",
                      offset + b.size, ")");
}

ValidationResult OverlapFailure(const IntervalProblem& p, const IntervalAssignment& s, int a,
                                int b, const char* why) {
  return Fail(Violation::kOverlap,
              absl::StrCat("buffers ", Describe(p.buffers[a], s.offsets[a]), " and ",
                           Describe(p.buffers[b], s.offsets[b]), " conflict (", why,
                           ") but share addresses"));
}

// Positive-size buffers by (lower, index).
std::vector<int> SizedByLower(const IntervalProblem& p) {
  std::vector<int> order;
  order.reserve(p.buffers.size());
  for (int i = 0; i < static_cast<int>(p.buffers.size()); ++i) {
    if (p.buffers[i].size > 0) order.push_back(i);
  }
  StableSortByKey(order, [&](int b) { return p.buffers[b].lower; });
  return order;
}

// Sweeps buffers by lower bound; the live ones, kept by offset, are pairwise
// disjoint so far, so a new buffer can only overlap its neighbours in that
// order. O(n log n). Reports the first overlap met (the fast check below
// defers to this one for the message).
ValidationResult SweepTimeOverlaps(const IntervalProblem& p, const IntervalAssignment& s) {
  const auto& bufs = p.buffers;
  const auto& offs = s.offsets;
  std::set<std::pair<int64_t, int>> live;  // (offset, buffer)
  using Ending = std::pair<int64_t, int>;  // (upper, buffer)
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ends;
  for (int b : SizedByLower(p)) {
    while (!ends.empty() && ends.top().first <= bufs[b].lower) {
      live.erase({offs[ends.top().second], ends.top().second});
      ends.pop();
    }
    auto next = live.lower_bound({offs[b], -1});
    for (auto it : {next, next == live.begin() ? live.end() : std::prev(next)}) {
      if (it == live.end()) continue;
      const int a = it->second;
      if (AddressesOverlap(offs[a], bufs[a].size, offs[b], bufs[b].size)) {
        return OverlapFailure(p, s, std::min(a, b), std::max(a, b), "lifetimes overlap");
      }
    }
    live.emplace(offs[b], b);
    ends.emplace(bufs[b].upper, b);
  }
  return {Violation::kNone, absl::OkStatus()};
}

// Ranks of the (non-negative) offsets of `buffers`, in offset order: the
// offset over their gcd when that leaves at most a few slots per buffer (a
// plan aligned to 512 bytes: no sort), else the rank among distinct offsets.
struct OffsetRanks {
  std::vector<int32_t> rank;            // per buffer index (0 for others)
  std::vector<int64_t> offset_of_rank;  // increasing

  OffsetRanks(const std::vector<int>& buffers, const std::vector<int64_t>& offs)
      : rank(offs.size(), 0) {
    int64_t unit = 0, top = 0;
    for (int b : buffers) {
      unit = std::gcd(unit, offs[b]);
      top = std::max(top, offs[b]);
    }
    unit = std::max<int64_t>(unit, 1);
    if (top / unit < 4 * static_cast<int64_t>(buffers.size()) + 64) {
      for (int b : buffers) rank[b] = static_cast<int32_t>(offs[b] / unit);
      offset_of_rank.resize(static_cast<size_t>(top / unit + 1));
      for (size_t r = 0; r < offset_of_rank.size(); ++r)
        offset_of_rank[r] = static_cast<int64_t>(r) * unit;
      return;
    }
    std::vector<std::pair<int64_t, int>> by_offset;  // (offset, buffer)
    by_offset.reserve(buffers.size());
    for (int b : buffers) by_offset.emplace_back(offs[b], b);
    std::sort(by_offset.begin(), by_offset.end());
    for (const auto& [offset, b] : by_offset) {
      if (offset_of_rank.empty() || offset_of_rank.back() != offset)
        offset_of_rank.push_back(offset);
      rank[b] = static_cast<int32_t>(offset_of_rank.size() - 1);
    }
  }
};

// The same verdict as SweepTimeOverlaps without a tree node or heap entry
// per buffer (every solver plan is validated, a million buffers at 1M nodes):
// offsets become
// ranks, the live ranks a BitsetTree, and buffers die in order of `upper`
// (a buffer dead before b's lower started before it, so it is live then:
// no heap needed). Any overlap, or a lifetime the order argument does not
// cover (lower >= upper), reruns SweepTimeOverlaps for its exact message.
ValidationResult CheckTimeOverlaps(const IntervalProblem& p, const IntervalAssignment& s) {
  const auto& bufs = p.buffers;
  const auto& offs = s.offsets;
  const std::vector<int> by_lower = SizedByLower(p);
  for (int b : by_lower) {
    if (bufs[b].lower >= bufs[b].upper) return SweepTimeOverlaps(p, s);
  }
  const OffsetRanks ranks(by_lower, offs);
  const std::vector<int32_t>& rank = ranks.rank;
  const std::vector<int64_t>& offset_of_rank = ranks.offset_of_rank;
  std::vector<int> by_upper = by_lower;
  StableSortByKey(by_upper, [&](int b) { return bufs[b].upper; });
  BitsetTree live(offset_of_rank.size());
  std::vector<int> owner(offset_of_rank.size(), -1);  // per live rank: its buffer
  size_t dead = 0;
  for (int b : by_lower) {
    for (; dead < by_upper.size() && bufs[by_upper[dead]].upper <= bufs[b].lower; ++dead) {
      live.Erase(static_cast<size_t>(rank[by_upper[dead]]));
    }
    const size_t r = static_cast<size_t>(rank[b]);
    // Same offset: both sizes are positive, an overlap.
    if (live.Contains(r)) return SweepTimeOverlaps(p, s);
    const size_t next = live.Next(r);
    if (next != BitsetTree::kNone && offset_of_rank[next] < offs[b] + bufs[b].size)
      return SweepTimeOverlaps(p, s);
    const size_t prev = r == 0 ? BitsetTree::kNone : live.Prev(r - 1);
    if (prev != BitsetTree::kNone && offset_of_rank[prev] + bufs[owner[prev]].size > offs[b])
      return SweepTimeOverlaps(p, s);
    live.Insert(r);
    owner[r] = b;
  }
  return {Violation::kNone, absl::OkStatus()};
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
                  absl::StrCat("buffer '", bufs[i].id.str(), "' has offset ", offs[i]));
    }
    if (bufs[i].size > std::numeric_limits<int64_t>::max() - offs[i]) {
      return Fail(Violation::kOffsetOverflow,
                  absl::StrCat("buffer '", bufs[i].id.str(), "': offset ", offs[i], " + size ",
                               bufs[i].size, " overflows"));
    }
    if (bufs[i].alignment > 1 && offs[i] % bufs[i].alignment != 0) {
      return Fail(Violation::kMisaligned,
                  absl::StrCat("buffer '", bufs[i].id.str(), "' offset ", offs[i],
                               " is not a multiple of alignment ", bufs[i].alignment));
    }
  }
  // 2. Time overlaps.
  if (ValidationResult r = CheckTimeOverlaps(problem, assignment); !r.ok()) return r;
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
                    absl::StrCat("buffer '", bufs[i].id.str(), "' ends at ", offs[i] + bufs[i].size,
                                 " > capacity ", *problem.capacity));
      }
    }
  }
  return {Violation::kNone, absl::OkStatus()};
}

}  // namespace npuplan::memory
