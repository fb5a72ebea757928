// `npuplan report PLAN`: one self-contained HTML page for an execution plan
// (docs/report.md). Sections:
//   * summary        headline numbers of the plan and of the simulation;
//   * timeline       <svg id="timeline">: one lane per stream from the
//                    simulator (npuplan/sim), tasks coloured by engine, records
//                    and waits, an arrow per event from its record to the wait
//                    it released; tasks on the schedule path are outlined;
//                    hover (<title>) shows node, engine, cost, start/end;
//                    above max_timeline_items: busy fraction per time bucket;
//   * utilisation    <svg id="utilisation"> and a table: busy time / makespan
//                    per stream;
//   * partition      decision and reason, subgraphs (static/dynamic) with the
//                    reasons that made them dynamic (plan.partition);
//   * memory         <svg id="memory">: activation tensors placed by offset
//                    over their plan-order lifetime, the live-bytes curve, the
//                    peak and the lower bound (plan.memory).
// Sections whose stage did not run say so instead of drawing.
// Deterministic: ties as in the simulator; engines coloured in name order.
#ifndef NPUPLAN_REPORT_PLAN_REPORT_H_
#define NPUPLAN_REPORT_PLAN_REPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "npuplan/plan/plan.h"
#include "npuplan/sim/simulator.h"

namespace npuplan::report {

struct PlanReportOptions {
  std::string title;             // page title (default: "npuplan report: <root graph>")
  std::string source;            // input file name shown on the page
  sim::SimOptions sim;           // simulator options (cost model, overheads)
  double timeline_width = 1200;  // px of the time axis
  // Above this many timeline items (tasks, records, blocking waits) the
  // timeline shows per-stream busy fractions in 600 time buckets instead of
  // one element per item, and no event arrows; above max_memory_buffers pool
  // buffers the memory chart shows only the live-bytes curve. Keeps the page
  // small enough for a browser on 1M-node plans.
  size_t max_timeline_items = 20000;
  size_t max_memory_buffers = 20000;
};

// Live activation bytes per plan-order position: distinct buffers (tensors
// sharing TensorPlacement::buffer count once, over the union of their
// lifetimes). live[t] for t in [0, max last_use).
std::vector<int64_t> LiveActivationBytes(const MemoryResult& memory);

// InvalidArgument when a planned tensor's lifetime, offset or size is out of
// range (negative, or a lifetime far beyond the plan's node count).
absl::Status CheckMemoryForReport(const Plan& plan);

// Simulates the plan and renders the page. Errors: CheckMemoryForReport's and
// the simulator's (InvalidArgument for bad events or a deadlocking plan).
absl::StatusOr<std::string> PlanReportHtml(const Plan& plan, const PlanReportOptions& options = {});

}  // namespace npuplan::report

#endif  // NPUPLAN_REPORT_PLAN_REPORT_H_
