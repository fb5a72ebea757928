#include "npuplan/events/ready_lists.h"

#include <algorithm>

namespace npuplan::events {

ReadyLists::ReadyLists(std::span<const std::pair<int32_t, int32_t>> flat,
                       const std::vector<size_t>& begin, const std::vector<size_t>& end,
                       std::vector<int32_t> rights, size_t k)
    : top_(k, -1), base_(k + 1, 0) {
  std::sort(rights.begin(), rights.end());  // edge order: the ties' order
  for (int32_t e : rights) {
    for (size_t j = begin[e]; j < end[e]; ++j)
      top_[flat[j].first] = std::max(top_[flat[j].first], flat[j].second);
  }
  for (size_t s = 0; s < k; ++s) base_[s + 1] = base_[s] + static_cast<size_t>(top_[s] + 1);
  // Level of (s, r): streams in order, ready descending within one.
  auto level = [&](const std::pair<int32_t, int32_t>& x) {
    return base_[x.first] + static_cast<size_t>(top_[x.first] - x.second);
  };
  start_.assign(base_[k] + 1, 0);
  for (int32_t e : rights) {
    for (size_t j = begin[e]; j < end[e]; ++j) ++start_[level(flat[j]) + 1];
  }
  for (size_t i = 0; i + 1 < start_.size(); ++i) start_[i + 1] += start_[i];
  edges_.resize(start_.back());
  BigVector<size_t> at(start_.begin(), start_.end() - 1);
  for (int32_t e : rights) {
    for (size_t j = begin[e]; j < end[e]; ++j) edges_[at[level(flat[j])]++] = e;
  }
}

int32_t ReadyLists::ReadyAt(size_t s, size_t i) const {
  // Levels of stream s hold ready top_[s], top_[s] - 1, …: the first level
  // whose end passes entry i.
  const size_t entry = start_[base_[s]] + i;
  const auto it =
      std::upper_bound(start_.begin() + static_cast<std::ptrdiff_t>(base_[s]) + 1,
                       start_.begin() + static_cast<std::ptrdiff_t>(base_[s + 1]) + 1, entry);
  const size_t level = static_cast<size_t>(it - start_.begin()) - 1;
  return top_[s] - static_cast<int32_t>(level - base_[s]);
}

}  // namespace npuplan::events
