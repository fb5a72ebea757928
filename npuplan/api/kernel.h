// npuplan public API: on-chip cache planning of one kernel case
// (`npuplan kernel plan`, docs/kernel.md).
#ifndef NPUPLAN_API_KERNEL_H_
#define NPUPLAN_API_KERNEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuplan::api {

struct KernelPlanOptions {
  std::string strategy = "best";       // seed | best
  std::string objective = "balanced";  // traffic | time | balanced
  int64_t max_file_bytes = 0;          // --max-file-bytes of PlanKernelFile (0 = 2 GiB - 1)
};

struct KernelSpill {
  int buffer = 0;
  int64_t new_offset = 0;  // where the SPILL_IN reloads it
};

struct KernelMetricsInfo {
  std::map<std::string, int64_t> max_vstay;  // per cache level
  int64_t spills = 0;
  int64_t extra_movement = 0;
  int64_t makespan = 0;
};

struct KernelPlanResult {
  std::string name;                // the case name
  std::string candidate;           // the candidate the planner chose
  std::vector<int> schedule;       // node ids, spill nodes included
  std::map<int, int64_t> offsets;  // buffer id → initial offset
  std::vector<KernelSpill> spills;
  KernelMetricsInfo metrics;
  std::vector<int> q1_schedule;  // Problem 1 schedule
  KernelMetricsInfo q1_metrics;
  // The official output files, byte-identical to `npuplan kernel plan --out-dir`.
  std::string schedule_text() const;
  std::string memory_text() const;
  std::string spill_text() const;
  std::string q1_schedule_text() const;
  // Writes <dir>/<name>_schedule.txt, _memory.txt, _spill.txt, _q1_schedule.txt:
  // all four or none (an existing file is replaced only when all can be).
  absl::Status WriteFiles(const std::string& dir) const;
};

// A case file in the contest's JSON format.
absl::StatusOr<KernelPlanResult> PlanKernelFile(const std::string& path,
                                                const KernelPlanOptions& options = {});
// Case JSON text; `name` is the case name (a file's stem).
absl::StatusOr<KernelPlanResult> PlanKernelJson(std::string_view json, const std::string& name,
                                                const KernelPlanOptions& options = {});

}  // namespace npuplan::api

#endif  // NPUPLAN_API_KERNEL_H_
