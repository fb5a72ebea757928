// Shared by the files of the dynamic-shape partition (dynamic_shape_partition,
// cluster_merge, frame_builder); not an interface of the module.
#ifndef NPUPLAN_PARTITION_PARTITION_INTERNAL_H_
#define NPUPLAN_PARTITION_PARTITION_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "npuplan/partition/dynamic_shape_partition.h"
#include "npuplan/partition/op_types.h"
#include "npuplan/pass/statistics.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace partition {

// Errors, decision-log records and counters carry the pass name.
inline constexpr std::string_view kPass = DynamicShapePartition::kName;

inline absl::Status Bad(std::string_view what) {
  return absl::InvalidArgumentError(StrCat("[", kPass, "] ", what));
}

// The counters of one graph's partition: summed locally (no string building
// per merge) and handed to `stats` once, by Flush. Null `stats`: not counted.
class PassCounters {
 public:
  explicit PassCounters(Statistics* stats) : stats_(stats) {}

  void Count(std::string_view counter, int64_t d = 1) {
    if (!stats_) return;
    auto it = counts_.find(counter);
    if (it == counts_.end()) it = counts_.emplace(std::string(counter), 0).first;
    it->second += d;
  }
  // Drops every counter whose name does not start with `prefix`.
  void KeepOnly(std::string_view prefix) {
    for (auto it = counts_.begin(); it != counts_.end();) {
      it = it->first.starts_with(prefix) ? std::next(it) : counts_.erase(it);
    }
  }
  void Flush() {
    if (stats_) {
      for (const auto& [name, v] : counts_) stats_->Add(kPass, name, v);
    }
    counts_.clear();
  }

 private:
  Statistics* stats_;
  std::map<std::string, int64_t, std::less<>> counts_;
};

}  // namespace partition
}  // namespace npuplan

#endif  // NPUPLAN_PARTITION_PARTITION_INTERNAL_H_
