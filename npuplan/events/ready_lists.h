// The right-side lists of event-id-allocation's augmenting phases (issue
// 23): per clock stream, the rights (sync edges) with their ready value on
// that stream, ready descending, then edge ascending — a left at position p
// precedes exactly a prefix of its stream's list.
//
// Each right knows its ready value on every stream (k of them), so the
// lists hold k × rights entries: they are built by a counting sort on
// (stream, ready) fed with the rights in edge order, linear in the entries,
// where sorting each list by comparison cost a log factor on top.
#ifndef NPUPLAN_EVENTS_READY_LISTS_H_
#define NPUPLAN_EVENTS_READY_LISTS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "npuplan/support/big_vector.h"

namespace npuplan::events {

struct ReadyLists {
  // k × rights entries, written once: huge pages (in 4 KiB pages their first
  // touch cost more than the sort).
  BigVector<std::pair<int32_t, int32_t>> entries;    // (ready, edge), stream after stream
  std::vector<size_t> first;                         // k + 1 offsets into entries
  std::span<std::pair<int32_t, int32_t>> list(size_t s) {
    return {entries.data() + first[s], entries.data() + first[s + 1]};
  }
};

// `flat[begin[e], end[e])`: the (stream < k, ready >= 0) pairs of right e,
// for each e of `rights` (distinct edges, any order; indices into begin/end).
ReadyLists BuildReadyLists(std::span<const std::pair<int32_t, int32_t>> flat,
                           const std::vector<size_t>& begin, const std::vector<size_t>& end,
                           std::vector<int32_t> rights, size_t k);

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_READY_LISTS_H_
