// A kernel solution in the official output format: the schedule (node Ids, spill
// nodes included), each buffer's initial offset, and the SPILL list in order
// (the k-th record, k from 0, owns spill nodes N+2k (SPILL_OUT) and N+2k+1
// (SPILL_IN)). Readers accept files written by any tool; writers are atomic.
#ifndef NPUPLAN_KERNEL_SOLUTION_H_
#define NPUPLAN_KERNEL_SOLUTION_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuplan::kernel {

struct SpillRecord {
  int buf_id = 0;
  int64_t new_offset = 0;  // offset the SPILL_IN reloads the buffer at
};

struct KernelSolution {
  std::vector<int> schedule;
  std::map<int, int64_t> offsets;  // BufId -> initial offset
  std::vector<SpillRecord> spills;
};

// Parsers for the three official text files; `source` names the file in errors.
absl::StatusOr<std::vector<int>> ParseScheduleText(std::string_view text, std::string_view source);
absl::StatusOr<std::map<int, int64_t>> ParseMemoryText(std::string_view text, std::string_view source);
absl::StatusOr<std::vector<SpillRecord>> ParseSpillText(std::string_view text, std::string_view source);

std::string FormatSchedule(const std::vector<int>& schedule);
std::string FormatMemory(const std::map<int, int64_t>& offsets);
std::string FormatSpills(const std::vector<SpillRecord>& spills);

// Writes <dir>/<case>_schedule.txt, _memory.txt, _spill.txt: all of them or
// none (one OutputTransaction).
// `with_memory` false writes only the schedule (Problem 1).
absl::Status WriteSolutionFiles(const std::string& dir, const std::string& case_name,
                                const KernelSolution& solution, bool with_memory = true);

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_SOLUTION_H_
