// The data the report page's script draws (docs/report.md, "Page data"): one
// JSON object, compact enough for 30k-task plans (page sizes:
// docs/benchmarks.md, "Report page").
//
//   times      integers in ns (the simulator's µs × 1000, rounded);
//   nodes      only the nodes a task or pool buffer refers to, numbered:
//              first the nodes of the plain tasks (main task, first run) in
//              the order the task lists give them (stream after stream) —
//              so those lists need not name them —, then the nodes only the
//              other tasks name, then the pool buffers' owners; "names":
//              flat [p, q, "middle"] per node: the first p and last q UTF-16
//              code units are the previous name's, the middle is new;
//              "kind": per node an index into "kinds",
//              the distinct [engine, graph, type] triples (indices into
//              "engines", "graphs", "types", each sorted by name);
//   streams    DescribeStreams (npuplan/sim/trace_views.h) + utilisation;
//   tasks      per stream, flat [gap, dur]: gap = start − end of the
//              previous task on the stream; "ext": [stream, task, node,
//              attached slot, run] for every task that is not a plain
//              first one (attached-stream tasks, loop runs > 0, repeats);
//              the plain tasks take the next node number in turn;
//   waits      per stream, flat [gap, dur] of the waits that blocked (gap
//              from the previous such wait's end); records: per stream, flat
//              start gaps;
//   arrows     one per wait bound to a record, by record time: flat
//              [from stream, from gap, to stream, to − from, kind, id],
//              from = the record's end, to = the release; kind 0 event,
//              1 notify, 2 activation (id = the activator's node number);
//   crit       per stream, the critical path's task indices, delta-coded;
//   memt       pool memory in use over simulated time (trace_views.h),
//              flat [gap, bytes / unit], at most 2,000 steps (maximum per
//              time bucket above that);
//   pool       the memory plan: buffers flat [lower gap, length, offset,
//              size, node] (offset and size in units of `unit` bytes, the
//              largest that divides them all), sorted by (lower, offset);
//              "bx": [buffer, output, members] where the output is not 0 or
//              aliases share the buffer; constants and inputs in bytes.
// Above max_timeline_items the per-item arrays are left out and "buckets"
// holds each stream's busy percentage in 2,000 equal time buckets.
#ifndef NPUPLAN_REPORT_REPORT_DATA_H_
#define NPUPLAN_REPORT_REPORT_DATA_H_

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "npuplan/plan/plan.h"
#include "npuplan/sim/simulator.h"

namespace npuplan::report {

struct ReportDataOptions {
  size_t max_timeline_items = 200000;  // tasks + records + blocking waits drawn one by one
  size_t max_memory_buffers = 200000;  // pool buffers drawn one by one
};

nlohmann::json PlanReportData(const Plan& plan, const sim::SimResult& result, const ReportDataOptions& options);

// JSON text safe inside <script type="application/json">: '<', '>' and '&'
// are written as \u003c, \u003e, \u0026 (they only occur inside strings).
std::string ScriptSafeJson(const nlohmann::json& data);

}  // namespace npuplan::report

#endif  // NPUPLAN_REPORT_REPORT_DATA_H_
