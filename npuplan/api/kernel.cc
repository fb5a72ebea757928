// Kernel cache planning of the public API, as `npuplan kernel plan` runs it.
#include "npuplan/api/kernel.h"

#include <utility>

#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/planner.h"
#include "npuplan/kernel/solution.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"

namespace npuplan::api {
namespace {

KernelMetricsInfo ToMetrics(const kernel::KernelMetrics& m) {
  return KernelMetricsInfo{m.max_vstay, m.spills, m.extra_movement, m.makespan};
}

absl::StatusOr<KernelPlanResult> PlanGraph(const kernel::KernelGraph& g,
                                           const kernel::CacheConfig& config,
                                           const KernelPlanOptions& options) {
  kernel::PlanOptions o;
  NPUPLAN_ASSIGN_OR_RETURN(o.strategy, kernel::ParseStrategy(options.strategy));
  NPUPLAN_ASSIGN_OR_RETURN(o.objective, kernel::ParseObjective(options.objective));
  NPUPLAN_ASSIGN_OR_RETURN(kernel::PlanResult r, kernel::PlanKernel(g, config, o));
  KernelPlanResult out;
  out.name = g.name;
  out.candidate = r.chosen;
  out.schedule = std::move(r.solution.schedule);
  out.offsets = std::move(r.solution.offsets);
  for (const kernel::SpillRecord& s : r.solution.spills)
    out.spills.push_back(KernelSpill{s.buf_id, s.new_offset});
  out.metrics = ToMetrics(r.metrics);
  out.q1_schedule = std::move(r.q1.order);
  out.q1_metrics = ToMetrics(r.q1_metrics);
  return out;
}

std::vector<kernel::SpillRecord> ToRecords(const std::vector<KernelSpill>& spills) {
  std::vector<kernel::SpillRecord> records;
  for (const KernelSpill& s : spills)
    records.push_back(kernel::SpillRecord{s.buffer, s.new_offset});
  return records;
}

}  // namespace

std::string KernelPlanResult::schedule_text() const { return kernel::FormatSchedule(schedule); }
std::string KernelPlanResult::memory_text() const { return kernel::FormatMemory(offsets); }
std::string KernelPlanResult::spill_text() const { return kernel::FormatSpills(ToRecords(spills)); }
std::string KernelPlanResult::q1_schedule_text() const {
  return kernel::FormatSchedule(q1_schedule);
}

absl::Status KernelPlanResult::WriteFiles(const std::string& dir) const {
  const std::string base = dir + "/" + name;
  return WriteFilesAtomically({{base + "_q1_schedule.txt", q1_schedule_text()},
                               {base + "_schedule.txt", schedule_text()},
                               {base + "_memory.txt", memory_text()},
                               {base + "_spill.txt", spill_text()}});
}

absl::StatusOr<KernelPlanResult> PlanKernelFile(const std::string& path,
                                                const KernelPlanOptions& options) {
  kernel::CacheConfig config;
  // The CLI checks the options before it reads the case: the same error first.
  NPUPLAN_RETURN_IF_ERROR(kernel::ParseStrategy(options.strategy).status());
  NPUPLAN_RETURN_IF_ERROR(kernel::ParseObjective(options.objective).status());
  ScopedMaxFileBytes limit(options.max_file_bytes);  // the case reader's ReadFile
  NPUPLAN_ASSIGN_OR_RETURN(kernel::KernelGraph g, kernel::LoadKernelGraph(path, config));
  return PlanGraph(g, config, options);
}

absl::StatusOr<KernelPlanResult> PlanKernelJson(std::string_view json, const std::string& name,
                                                const KernelPlanOptions& options) {
  kernel::CacheConfig config;
  NPUPLAN_RETURN_IF_ERROR(kernel::ParseStrategy(options.strategy).status());
  NPUPLAN_RETURN_IF_ERROR(kernel::ParseObjective(options.objective).status());
  NPUPLAN_ASSIGN_OR_RETURN(kernel::KernelGraph g, kernel::ParseKernelGraph(json, config, name));
  g.name = name;
  return PlanGraph(g, config, options);
}

}  // namespace npuplan::api
