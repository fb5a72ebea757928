// A plan's device resources against its budgets (issue 23 item 5): what
// `npuplan summary`, the report and `bundle compile` show.
//   streams     physical streams, attached included (DeviceStreamsUsed)
//   event ids   device event ids, the sync edges behind them and the proved
//               lower bound (event_counts when event-id-allocation wrote it,
//               else computed: events::IdLowerBounds)
//   notify ids  the same for notifies
//   memory      activation peak and its lower bound
// Budgets: npuplan.maxStreams / maxEventIds / maxNotifyIds in `options`, else
// the device limits (npuplan.device.*).
#ifndef NPUPLAN_EVENTS_RESOURCE_USE_H_
#define NPUPLAN_EVENTS_RESOURCE_USE_H_

#include <cstdint>
#include <string>

#include "npuplan/pass/options.h"
#include "npuplan/plan/plan.h"

namespace npuplan::events {

struct ResourceUse {
  int64_t streams = 0, stream_budget = 0;
  int64_t event_ids = 0, event_edges = 0, event_lower_bound = 0, event_budget = 0;
  bool event_exact = false;  // the plan records the ids as a proven minimum
  int64_t notify_ids = 0, notify_edges = 0, notify_lower_bound = 0, notify_budget = 0;
  int64_t memory_peak = 0, memory_lower_bound = 0;
};

ResourceUse PlanResourceUse(const Plan& plan, const CompileOptions& options);
// {"streams": {"used", "budget"}, "event_ids": {"used", "budget", "lower_bound",
// "sync_edges", "exact"}, "notify_ids": {...}, "memory": {"peak", "lower_bound"}},
// one JSON object (sorted keys, no trailing newline).
std::string ResourceUseJson(const ResourceUse& r);
// A few lines ("resources (used / budget):" and one per resource).
std::string ResourceUseText(const ResourceUse& r);

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_RESOURCE_USE_H_
