// Independent evaluator of kernel solutions by the official rules
// (docs/kernel.md lists every rule and every ambiguity reading).
//
// Checks, each reported with a stable rule keyword in the message:
//   schedule-coverage   the schedule is a permutation of 0..N+2S-1
//   dependency          every original edge goes forward in the schedule
//   spill-buffer        a SPILL names a declared buffer
//   spill-order         ALLOC < SPILL_OUT < SPILL_IN < FREE for each SPILL
//   spill-nesting       two SPILLs of one buffer do not interleave
//   use-while-spilled   no operation uses a buffer between its SPILL_OUT and SPILL_IN
//   missing-offset      every buffer has an offset (memory given)
//   capacity            offset >= 0 and offset+Size <= capacity
//   overlap             live residency segments of one cache never overlap
//   l0-single-residency at most one live buffer per L0 cache (Q1 mode only)
// and computes max V_stay per cache type, extra data movement and makespan
// (spill nodes and edges, address-reuse edges, in-order pipes).
#ifndef NPUPLAN_KERNEL_EVALUATOR_H_
#define NPUPLAN_KERNEL_EVALUATOR_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/solution.h"

namespace npuplan::kernel {

struct EvalOptions {
  bool check_memory = true;          // false: Problem 1 (schedule only, no reuse edges)
  bool l0_single_residency = false;  // enforce Q1's "one live buffer per L0 cache"
};

struct KernelMetrics {
  std::map<std::string, int64_t> max_vstay;       // per cache type, ALLOC/FREE running sum
  int64_t max_vstay_combined = 0;                 // running sum over all vstay_levels together
  std::map<std::string, int> max_live_buffers;    // per cache type, ALLOC/FREE count
  std::map<std::string, int64_t> max_resident;    // per cache type, spilled buffers excluded
  int spills = 0;
  int64_t extra_movement = 0;
  int64_t makespan = 0;
  int64_t schedule_length = 0;
  std::map<std::string, int64_t> pipe_busy;       // cycles per pipe
};

absl::StatusOr<KernelMetrics> EvaluateSolution(const KernelGraph& graph,
                                               const KernelSolution& solution,
                                               const CacheConfig& config,
                                               const EvalOptions& options = {});

// The metrics as a JSON object with sorted keys.
std::string MetricsToJson(const KernelMetrics& m, const std::string& case_name,
                          const std::map<std::string, std::string>& extra = {});

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_EVALUATOR_H_
