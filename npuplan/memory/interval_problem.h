// Interval packing problem: the data model shared by the interval solver, the
// plan validator, the MiniMalloc CSV reader and (later) the graph-level memory
// planner.
//
// A buffer lives on the half-open time interval [lower, upper) and needs `size`
// bytes at an offset that is a multiple of `alignment`. Two buffers *conflict*
// when their lifetimes overlap, or when the problem lists them as an extra
// conflict (e.g. two tensors on different streams with no event ordering their
// uses: disjoint in topological index, still not allowed to share memory).
// Conflicting buffers must not overlap in [offset, offset + size).
//
//   address ^
//           |        +-----+
//           |  +-----+  c  |        a, b overlap in time -> stacked
//           |  |  b  +-----+--+     c, d disjoint in time -> may share
//           |  +--+--+     |d |     unless {c, d} is an extra conflict
//           |  a  |        +--+
//           +-----+---------------> time
#ifndef NPUPLAN_MEMORY_INTERVAL_PROBLEM_H_
#define NPUPLAN_MEMORY_INTERVAL_PROBLEM_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/sort_util.h"

namespace npuplan::memory {

// A buffer's id: its own copy of the characters, or (View) a view of
// characters that outlive it. 16 bytes instead of a std::string's 32: the
// memory planner's problems hold a million buffers named by views of its
// tensor names, and every pass of the solver reads the whole array.
class BufferId {
 public:
  BufferId() = default;
  BufferId(std::string_view s) { Assign(s); }  // NOLINT: copies, like a std::string
  BufferId(const std::string& s) : BufferId(std::string_view(s)) {}  // NOLINT
  BufferId(const char* s) : BufferId(std::string_view(s)) {}         // NOLINT
  // Does not copy: `s` must outlive the id and its copies.
  static BufferId View(std::string_view s) {
    BufferId id;
    id.data_ = s.data();
    id.meta_ = static_cast<uint64_t>(s.size()) << 1;
    return id;
  }
  BufferId(const BufferId& o) : data_(o.data_), meta_(o.meta_) {
    if (o.owned()) Assign(o.view());
  }
  BufferId(BufferId&& o) noexcept : data_(o.data_), meta_(o.meta_) {
    o.data_ = "";
    o.meta_ = 0;
  }
  BufferId& operator=(BufferId o) noexcept {
    std::swap(data_, o.data_);
    std::swap(meta_, o.meta_);
    return *this;
  }
  ~BufferId() {
    if (owned()) delete[] data_;
  }
  std::string_view view() const { return {data_, size()}; }
  std::string str() const { return std::string(view()); }  // for absl::StrCat
  operator std::string_view() const { return view(); }     // NOLINT
  bool empty() const { return size() == 0; }
  size_t size() const { return static_cast<size_t>(meta_ >> 1); }
  friend bool operator==(const BufferId& a, const BufferId& b) { return a.view() == b.view(); }
  friend auto operator<=>(const BufferId& a, const BufferId& b) { return a.view() <=> b.view(); }
  friend std::ostream& operator<<(std::ostream& os, const BufferId& id) { return os << id.view(); }

 private:
  bool owned() const { return (meta_ & 1) != 0; }
  // Replaces the characters by an owned copy of `s` (the old ones are not freed).
  void Assign(std::string_view s) {
    char* p = new char[s.size() + 1];
    std::copy(s.begin(), s.end(), p);
    p[s.size()] = '\0';
    data_ = p;
    meta_ = static_cast<uint64_t>(s.size()) << 1 | 1;
  }
  const char* data_ = "";
  uint64_t meta_ = 0;  // size << 1 | owned
};

// One buffer to place. Indices into IntervalProblem::buffers identify buffers
// everywhere else (extra conflicts, solutions, violations).
struct IntervalBuffer {
  BufferId id;            // Stable name (CSV id, tensor name); unique in a problem.
  int64_t lower = 0;      // First time step the buffer is live (inclusive).
  int64_t upper = 0;      // First time step it is dead again (exclusive); > lower.
  int64_t size = 0;       // Bytes; >= 0. Zero-size buffers are placed at offset 0.
  int64_t alignment = 1;  // The offset must be a multiple of this; >= 1.
};

// The packing problem. Conflict = time overlap OR an extra conflict pair OR
// `forbid_sharing` returning true.
struct IntervalProblem {
  BigVector<IntervalBuffer> buffers;  // a million at 1M nodes: on reusable pages
  // Upper bound on the peak (max offset + size); nullopt = unbounded.
  std::optional<int64_t> capacity;
  // Explicit conflicts between buffers (indices), typically buffers disjoint in
  // time that still must not share memory. Order within a pair is irrelevant;
  // duplicates and pairs that also overlap in time are harmless.
  std::vector<std::pair<int, int>> extra_conflicts;
  // Optional predicate, asked once per pair (a < b) of buffers that are
  // disjoint in time: true = they may not share memory. Costs O(n^2) calls;
  // prefer `extra_conflicts` for large problems.
  std::function<bool(int a, int b)> forbid_sharing;
};

// Offsets chosen for the buffers of a problem, index-aligned with `buffers`.
struct IntervalAssignment {
  std::vector<int64_t> offsets;
};

// Max bytes live at one instant over lifetimes [lower(i), upper(i)) of sizes
// size(i), i < n (positive sizes only), without building a problem; nullopt
// when a sum overflows int64. Buffers die in order of upper (one more
// counting sort) instead of through a heap: one dead by the time b starts
// started before b. A lifetime with lower >= upper, which that argument does
// not cover, takes the heap.
template <typename Lower, typename Upper, typename Size>
std::optional<int64_t> MaxLiveBytesOf(size_t n, Lower lower, Upper upper, Size size) {
  std::vector<int> by_lower(n);
  bool proper = true;
  for (size_t i = 0; i < n; ++i) {
    by_lower[i] = static_cast<int>(i);
    proper = proper && (size(static_cast<int>(i)) <= 0 ||
                        lower(static_cast<int>(i)) < upper(static_cast<int>(i)));
  }
  StableSortByKey(by_lower, lower);
  std::vector<int> by_upper;
  if (proper) {
    for (int b : by_lower) {
      if (size(b) > 0) by_upper.push_back(b);
    }
    StableSortByKey(by_upper, upper);
  }
  using Live = std::pair<int64_t, int64_t>;  // (upper, size)
  std::priority_queue<Live, std::vector<Live>, std::greater<>> live;
  size_t dead = 0;
  int64_t total = 0, best = 0;
  for (int b : by_lower) {
    if (proper) {
      for (; dead < by_upper.size() && upper(by_upper[dead]) <= lower(b); ++dead) {
        total -= size(by_upper[dead]);
      }
    } else {
      while (!live.empty() && live.top().first <= lower(b)) {
        total -= live.top().second;
        live.pop();
      }
    }
    if (size(b) <= 0) continue;
    if (!proper) live.emplace(upper(b), size(b));
    const std::optional<int64_t> sum = CheckedAdd(total, size(b));
    if (!sum) return std::nullopt;
    total = *sum;
    best = std::max(best, total);
  }
  return best;
}

// Index of the first buffer whose id repeats an earlier buffer's; the number
// of buffers when the ids are unique. O(n log n) without a hash map of
// strings: ids are compared only within runs of equal hashes.
int FirstDuplicateId(std::span<const IntervalBuffer> buffers);

// True when buffers a and b of `problem` overlap in time (half-open).
inline bool LifetimesOverlap(const IntervalBuffer& a, const IntervalBuffer& b) {
  return a.lower < b.upper && b.lower < a.upper;
}

// Checks the problem itself: lower < upper, size >= 0, alignment >= 1, unique
// ids, extra conflicts naming existing distinct buffers, capacity >= 0, and
// that sum(size + alignment - 1) fits in int64 (so no offset can overflow).
// InvalidArgument naming the buffer id and the rule.
absl::Status CheckIntervalProblem(const IntervalProblem& problem);

// The conflict graph of a problem: for each buffer, the sorted indices of the
// buffers it conflicts with (time overlap, extra pairs and the predicate).
// Zero-size buffers conflict with nothing. Requires a checked problem.
std::vector<std::vector<int>> BuildConflictGraph(const IntervalProblem& problem);

// Max total size live at one instant (a clique of the interval graph). With
// extra conflicts each instant's live set is greedily grown into a larger
// clique of the conflict graph, so the bound is never weaker. Requires a
// checked problem; `conflicts` from BuildConflictGraph.
int64_t ComputeLowerBound(const IntervalProblem& problem,
                          const std::vector<std::vector<int>>& conflicts);

// Max total size live at one instant, ignoring extra conflicts: a valid
// lower bound of every plan. O(n log n), no live sets materialised.
int64_t MaxLiveBytes(const IntervalProblem& problem);

// Number of pairs of positive-size buffers that overlap in time (the
// interval part of the conflict graph's edges), in O(n log n).
int64_t CountTimeOverlaps(const IntervalProblem& problem);

// CountTimeOverlaps and the max live bytes of MaxLiveBytesOf (nullopt when a
// sum overflows int64) in one sweep: the orders by lower and by upper are
// sorted once for both.
struct TimeProfile {
  int64_t overlaps = 0;
  std::optional<int64_t> max_live;
};
TimeProfile ComputeTimeProfile(const IntervalProblem& problem);

// max(offset + size) over buffers (0 for none). Requires matching sizes.
int64_t ComputePeak(const IntervalProblem& problem, const IntervalAssignment& assignment);

}  // namespace npuplan::memory

#endif  // NPUPLAN_MEMORY_INTERVAL_PROBLEM_H_
