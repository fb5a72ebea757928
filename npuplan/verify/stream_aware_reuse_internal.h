// What the parts of StreamAwareReuse share (stream_aware_reuse.cc,
// stream_aware_conflicts.cc, stream_release_tables.cc); not an API.
#ifndef NPUPLAN_VERIFY_STREAM_AWARE_REUSE_INTERNAL_H_
#define NPUPLAN_VERIFY_STREAM_AWARE_REUSE_INTERNAL_H_

#include <algorithm>
#include <cstddef>

namespace npuplan::memory::reuse_internal {

// The first index r < n with !below(r) (n when none), for a predicate true
// on a prefix: within the kNear indices past (or before) `hint` when two
// probes show it is there, else a binary search of all n (whose first probes
// are the same every call: cached); `hint` becomes r. The same answer as
// std::partition_point, in a few probes when the answers of consecutive
// calls are close, two more than a binary search when not.
template <typename Below>
size_t PartitionFrom(size_t n, Below below, size_t& hint) {
  constexpr size_t kNear = 16;
  size_t lo = 0, hi = n;  // the answer lies in [lo, hi]
  const size_t h = std::min(hint, n);
  if (h < n && below(h)) {
    const size_t near = std::min(n, h + 1 + kNear);
    if (near == n || !below(near)) {
      lo = h + 1;
      hi = near;
    }
  } else if (h > 0) {
    const size_t near = h > kNear ? h - kNear : 0;
    if (below(near)) {
      lo = near + 1;
      hi = h;
    }
  } else {
    hi = 0;  // h == 0 and !below(0) (or n == 0)
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (below(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  hint = lo;
  return lo;
}

}  // namespace npuplan::memory::reuse_internal

#endif  // NPUPLAN_VERIFY_STREAM_AWARE_REUSE_INTERNAL_H_
