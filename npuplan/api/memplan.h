// npuplan public API: pack buffers with known lifetimes into one memory
// region (`npuplan memplan`, MiniMalloc's problem; docs/memory.md).
#ifndef NPUPLAN_API_MEMPLAN_H_
#define NPUPLAN_API_MEMPLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npuplan::api {

// A buffer live on [lower, upper) that needs `size` bytes.
struct Interval {
  std::string id;  // unique; "" = its index
  int64_t lower = 0;
  int64_t upper = 0;
  int64_t size = 0;
  int64_t alignment = 1;
};

struct MemplanOptions {
  std::optional<int64_t> capacity;   // --capacity (the peak must fit)
  double time_limit_seconds = 10.0;  // --time-limit
  int64_t target = 0;                // --target (0 = the lower bound)
  int64_t max_nodes = 0;             // --max-nodes (0 = no limit; machine-independent)
  int64_t max_steps = 0;             // --max-steps (0 = no limit; machine-independent)
  bool greedy_only = false;          // --greedy-only
  int64_t max_file_bytes = 0;        // --max-file-bytes of MemplanCsvFile (0 = 2 GiB - 1)
};

struct MemplanResult {
  std::vector<int64_t> offsets;  // one per interval, in input order
  int64_t peak = 0;              // max(offset + size)
  int64_t lower_bound = 0;       // proven: no packing has a smaller peak
  bool optimal = false;
  int64_t greedy_peak = 0;
  std::string greedy_order;
  int64_t search_nodes = 0;
  int64_t search_steps = 0;
  bool timed_out = false;
};

// Solves and independently validates the packing.
absl::StatusOr<MemplanResult> Memplan(const std::vector<Interval>& intervals,
                                      const MemplanOptions& options = {});
// The same for a MiniMalloc CSV file (id,lower,upper,size).
absl::StatusOr<MemplanResult> MemplanCsvFile(const std::string& path,
                                             const MemplanOptions& options = {});
// The CSV `npuplan memplan -o` writes for these intervals and offsets.
std::string MemplanCsv(const std::vector<Interval>& intervals, const std::vector<int64_t>& offsets);

}  // namespace npuplan::api

#endif  // NPUPLAN_API_MEMPLAN_H_
