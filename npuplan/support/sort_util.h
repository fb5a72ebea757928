// Sorting helpers shared by the passes and the verifier.
#ifndef NPUPLAN_SUPPORT_SORT_UTIL_H_
#define NPUPLAN_SUPPORT_SORT_UTIL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace npuplan {

// Sorts `items` stably by key(item) (an int64): a counting sort when the keys
// span at most a few times as many values as there are items (plan
// positions), else std::stable_sort. The same order either way. Items already
// in key order (the planners' lists usually are) cost one pass: the counting
// sort's arrays are fresh pages at a million items.
template <typename Key>
void StableSortByKey(std::vector<int>& items, Key key) {
  size_t first_inversion = 1;
  while (first_inversion < items.size() &&
         !(key(items[first_inversion]) < key(items[first_inversion - 1])))
    ++first_inversion;
  if (first_inversion >= items.size()) return;
  constexpr size_t kSmall = 64;
  if (items.size() < kSmall) {
    std::stable_sort(items.begin(), items.end(), [&](int a, int b) { return key(a) < key(b); });
    return;
  }
  int64_t lo = key(items[0]), hi = lo;
  for (int i : items) {
    lo = std::min(lo, key(i));
    hi = std::max(hi, key(i));
  }
  // hi - lo as unsigned: no overflow for any pair of int64 keys.
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span / 4 > items.size()) {
    std::stable_sort(items.begin(), items.end(), [&](int a, int b) { return key(a) < key(b); });
    return;
  }
  std::vector<int32_t> begin(span + 2, 0);
  for (int i : items) ++begin[static_cast<uint64_t>(key(i)) - static_cast<uint64_t>(lo) + 1];
  for (size_t k = 1; k < begin.size(); ++k) begin[k] += begin[k - 1];
  std::vector<int> sorted(items.size());
  for (int i : items)
    sorted[begin[static_cast<uint64_t>(key(i)) - static_cast<uint64_t>(lo)]++] = i;
  items = std::move(sorted);
}

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_SORT_UTIL_H_
