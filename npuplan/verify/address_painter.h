// The address space of a pool as segments, each painted with the buffer
// placed there last (-1: none): the reuse log (memory_planning.cc,
// LogPoolReuse) and the memory verifier's pool overlap check ask, for each
// buffer in lifetime order, which buffers held its bytes before it (here in
// verify/ so that the verifier may use it too). A std::map of segment starts
// costs a tree node per split, a million of them on a million-buffer pool;
// when the addresses are few multiples of one unit (a pool aligned to 512
// bytes), the starts are bits of a BitsetTree over those slots instead. Both
// answer alike (npuplan/memory/address_painter_test.cc).
//
//   [0          )[b1     )[b2 )[0    )    paint [x, y) with b3:
//   [0          )[b1 )[b3     )[0    )    sees b1, b2; splits b1's segment
#ifndef NPUPLAN_VERIFY_ADDRESS_PAINTER_H_
#define NPUPLAN_VERIFY_ADDRESS_PAINTER_H_

#include <cstdint>
#include <iterator>
#include <map>
#include <vector>

#include "npuplan/verify/bitset_tree.h"

namespace npuplan::memory {

class AddressPainter {
 public:
  // Addresses [0, end]; every address painted later is a multiple of `unit`
  // (>= 1). Slots when end / unit < max_slots, else a std::map.
  AddressPainter(int64_t end, int64_t unit, int64_t max_slots)
      : unit_(unit), dense_(end / unit < max_slots), starts_(dense_ ? end / unit + 1 : 0) {
    if (dense_) {
      painter_.assign(static_cast<size_t>(end / unit + 1), -1);
      starts_.Insert(0);
    } else {
      segments_[0] = -1;
    }
  }

  // Calls seen(buffer) for each segment of [from, to) (0 <= from < to <=
  // end, in offset order), then paints [from, to) with b.
  template <typename Seen>
  void Paint(int64_t from, int64_t to, int b, Seen seen) {
    if (!dense_) {
      SplitMap(from);
      SplitMap(to);
      auto first = segments_.find(from);
      auto last = segments_.find(to);
      for (auto it = first; it != last; ++it) seen(it->second);
      segments_.erase(std::next(first), last);
      first->second = b;
      return;
    }
    const size_t lo = static_cast<size_t>(from / unit_), hi = static_cast<size_t>(to / unit_);
    Split(lo);
    Split(hi);
    seen(painter_[lo]);
    for (size_t k = starts_.Next(lo + 1); k < hi; k = starts_.Next(k + 1)) {
      seen(painter_[k]);
      starts_.Erase(k);
    }
    painter_[lo] = b;
  }

 private:
  void SplitMap(int64_t at) {
    auto it = std::prev(segments_.upper_bound(at));
    if (it->first != at) segments_[at] = it->second;
  }
  void Split(size_t slot) {
    if (starts_.Contains(slot)) return;
    painter_[slot] = painter_[starts_.Prev(slot)];
    starts_.Insert(slot);
  }

  int64_t unit_;
  bool dense_;
  BitsetTree starts_;                // dense: slots where a segment starts
  std::vector<int> painter_;         // dense: per segment start, its buffer
  std::map<int64_t, int> segments_;  // else: segment start -> buffer
};

}  // namespace npuplan::memory

#endif  // NPUPLAN_VERIFY_ADDRESS_PAINTER_H_
