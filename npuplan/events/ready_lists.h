// The right-side lists of event-id-allocation's augmenting phases (issue
// 23): per clock stream, the rights (sync edges) whose ready value on that
// stream reaches its first left, ready descending, then edge ascending — a
// left at position p precedes exactly a prefix of its stream's list, the
// rights with ready >= p (AtLeast).
//
// Each right knows its ready value on every stream (k of them), so the
// lists hold up to k × rights entries: they are built by a counting sort on
// (stream, ready) fed with the rights in edge order, linear in the entries,
// where sorting each list by comparison cost a log factor on top. An entry
// is the edge alone; the ready values stay in the counting sort's offsets
// (one per stream and ready value, as many as the context has slots), which
// is all AtLeast needs: on graphs of many Ifs in the auto-stream modes these
// lists are the allocation's largest memory.
#ifndef NPUPLAN_EVENTS_READY_LISTS_H_
#define NPUPLAN_EVENTS_READY_LISTS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "npuplan/support/big_vector.h"

namespace npuplan::events {

class ReadyLists {
 public:
  ReadyLists() = default;
  // `flat[begin[e], end[e])`: the (stream < k, ready >= 0) pairs of right e,
  // for each e of `rights` (distinct edges, any order; indices into begin/end).
  ReadyLists(std::span<const std::pair<int32_t, int32_t>> flat, const std::vector<size_t>& begin,
             const std::vector<size_t>& end, std::vector<int32_t> rights, size_t k);
  size_t streams() const { return top_.size(); }
  // Stream s's rights.
  std::span<int32_t> list(size_t s) {
    return {edges_.data() + start_[base_[s]], edges_.data() + start_[base_[s + 1]]};
  }
  // How many of list(s)'s first entries have ready >= p.
  size_t AtLeast(size_t s, int32_t p) const {
    if (p > top_[s]) return 0;
    const size_t level = base_[s] + static_cast<size_t>(top_[s] - std::max(p, 0));
    return start_[level + 1] - start_[base_[s]];
  }
  // The ready value of list(s)[i] (for tests; a binary search).
  int32_t ReadyAt(size_t s, size_t i) const;

 private:
  // Written once: huge pages (in 4 KiB pages their first touch cost more than
  // the sort).
  BigVector<int32_t> edges_;  // stream after stream
  std::vector<int32_t> top_;  // per stream: its largest ready value (-1: no entry)
  std::vector<size_t> base_;  // per stream (+1): its first level
  BigVector<size_t> start_;   // per level (+1): its first entry; level base_[s] + top_[s] - ready
};

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_READY_LISTS_H_
