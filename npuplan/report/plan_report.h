// `npuplan report PLAN`: one self-contained HTML page for an execution plan
// (docs/report.md). Sections:
//   * summary        headline numbers of the plan and of the simulation;
//   * timeline       <div id="timeline">: a canvas the page's inline script
//                    draws from the embedded data (report_data.h): lanes
//                    grouped by logical stream, zoom and pan with level of
//                    detail, a minimap, colour by engine / subgraph / logical
//                    stream with a legend, event arrows of the visible window
//                    (bundled when dense), the critical path's own tasks, a
//                    memory-in-use lane and a search box; above
//                    max_timeline_items: busy percentage per time bucket;
//   * utilisation    <svg id="utilisation"> and a table: busy time / makespan
//                    per stream;
//   * partition      decision and reason, subgraphs (static/dynamic) with the
//                    reasons that made them dynamic (plan.partition);
//   * memory         <div id="memory">: activation buffers at their offset
//                    over their plan-order lifetime where the pool is live,
//                    the live-bytes curve, peak and lower bound, constants and
//                    inputs as their own band (plan.memory), and a table.
// Sections whose stage did not run say so instead of drawing. The page loads
// nothing: its CSP allows inline style and script only.
// Deterministic: the same plan and options give the same bytes.
#ifndef NPUPLAN_REPORT_PLAN_REPORT_H_
#define NPUPLAN_REPORT_PLAN_REPORT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "npuplan/plan/plan.h"
#include "npuplan/sim/simulator.h"

namespace npuplan::report {

struct PlanReportOptions {
  std::string title;             // page title (default: "npuplan report: <root graph>")
  std::string source;            // input file name shown on the page
  sim::SimOptions sim;           // simulator options (cost model, overheads)
  // Above this many timeline items (tasks, records, blocking waits) the page
  // carries per-stream busy percentages in 2,000 time buckets instead of
  // every item (no arrows, no search); above max_memory_buffers pool buffers
  // the memory chart has only the live-bytes curve. Keeps the page small
  // enough for a browser on 1M-node plans (about 50 bytes an item).
  size_t max_timeline_items = 200000;
  size_t max_memory_buffers = 200000;
  // Called with the stage about to run ("simulating", "laying out"), for
  // progress on a terminal; may be empty.
  std::function<void(std::string_view)> on_stage;
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
