// The options of the memory-planning pass, read and checked once per run
// (ReadMemoryOptions). Each field names the option it comes from; the option
// table with defaults and help texts is npuplan/pass/options.cc
// (`npuplan options`, docs/options.md).
#ifndef NPUPLAN_MEMORY_MEMORY_OPTIONS_H_
#define NPUPLAN_MEMORY_MEMORY_OPTIONS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "npuplan/pass/options.h"

namespace npuplan::memory {

struct MemoryOptions {
  // Byte alignment of every buffer's size and offset; > 0
  // (npuplan.memory.alignment, default 512 as in GE).
  int64_t alignment = 512;
  // Wall-clock limit in seconds on the interval solver's search; 0 = none
  // (npuplan.memory.timeLimit).
  double time_limit_seconds = 0;
  // Search budget after greedy, in buffers and sections visited; 0 = greedy
  // only (npuplan.memory.searchSteps).
  int64_t search_steps = 2'000'000;
};

// Reads and checks the memory options (alignment, then timeLimit, then
// searchSteps); an InvalidArgument naming the first bad option and its value.
absl::StatusOr<MemoryOptions> ReadMemoryOptions(const CompileOptions& options);

}  // namespace npuplan::memory

#endif  // NPUPLAN_MEMORY_MEMORY_OPTIONS_H_
