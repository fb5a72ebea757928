#include "npuplan/events/ready_lists.h"

#include <algorithm>

namespace npuplan::events {

ReadyLists BuildReadyLists(std::span<const std::pair<int32_t, int32_t>> flat,
                           const std::vector<size_t>& begin, const std::vector<size_t>& end,
                           std::vector<int32_t> rights, size_t k) {
  std::sort(rights.begin(), rights.end());  // edge order: the ties' order
  // Counter of (s, r) at base[s] + top[s] - r: streams in order, ready
  // descending within one.
  std::vector<int32_t> top(k, -1);
  for (int32_t e : rights) {
    for (size_t j = begin[e]; j < end[e]; ++j)
      top[flat[j].first] = std::max(top[flat[j].first], flat[j].second);
  }
  std::vector<size_t> base(k + 1, 0);
  for (size_t s = 0; s < k; ++s) base[s + 1] = base[s] + static_cast<size_t>(top[s] + 1);
  BigVector<size_t> at(base[k] + 1, 0);
  auto counter = [&](const std::pair<int32_t, int32_t>& x) {
    return base[x.first] + static_cast<size_t>(top[x.first] - x.second);
  };
  for (int32_t e : rights) {
    for (size_t j = begin[e]; j < end[e]; ++j) ++at[counter(flat[j]) + 1];
  }
  for (size_t i = 0; i + 1 < at.size(); ++i) at[i + 1] += at[i];
  ReadyLists out;
  out.entries.resize(at.back());
  out.first.resize(k + 1);
  for (size_t s = 0; s <= k; ++s) out.first[s] = at[base[s]];
  for (int32_t e : rights) {
    for (size_t j = begin[e]; j < end[e]; ++j)
      out.entries[at[counter(flat[j])]++] = {flat[j].second, e};
  }
  return out;
}

}  // namespace npuplan::events
