// `npuplan report CASE_report.json --case CASE.json`: the HTML page for a
// kernel cache plan (`npuplan kernel plan`, docs/kernel.md). It re-reads the
// plan's three solution files next to the report (<case>_schedule.txt,
// <case>_memory.txt, <case>_spill.txt), checks them with the independent
// evaluator (an invalid solution is an error naming the rule, not a picture),
// and draws per cache type (<svg id="cache-<type>">) the bytes resident in
// that cache at each schedule position (spilled buffers excluded), the
// V_stay running sum (ALLOC − FREE, spills ignored), the capacity, and every
// spill: SPILL_OUT as a red tick, SPILL_IN as a green tick, hover for the
// buffer and its size. The metrics of the report JSON are shown as a table.
#ifndef NPUPLAN_REPORT_KERNEL_REPORT_H_
#define NPUPLAN_REPORT_KERNEL_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/solution.h"

namespace npuplan::report {

// Occupancy of one cache type along the schedule.
struct CacheOccupancy {
  std::string type;
  int64_t capacity = 0;
  std::vector<int64_t> resident;  // after each schedule position
  std::vector<int64_t> vstay;     // after each schedule position
  struct Spill {
    int64_t position = 0;  // schedule position of the SPILL node
    bool out = true;       // SPILL_OUT (true) or SPILL_IN
    int buf_id = 0;
    int64_t size = 0;
  };
  std::vector<Spill> spills;
};

// Walks the schedule (which must be valid: call after EvaluateSolution) and
// returns one entry per configured cache level, in config order.
std::vector<CacheOccupancy> ComputeCacheOccupancy(const kernel::KernelGraph& graph,
                                                  const kernel::KernelSolution& solution,
                                                  const kernel::CacheConfig& config);

struct KernelReportInput {
  std::string report_json;  // text of <case>_report.json
  std::string report_path;  // for messages
  std::string case_path;    // the kernel graph JSON
};

// True when the JSON text looks like a kernel-plan report (has "case" and
// "max_vstay" keys, no plan "format").
bool LooksLikeKernelReport(std::string_view text);

// Loads the case and the solution files, verifies, renders.
absl::StatusOr<std::string> KernelReportHtml(const KernelReportInput& input);

}  // namespace npuplan::report

#endif  // NPUPLAN_REPORT_KERNEL_REPORT_H_
