#include "npuplan/events/resource_use.h"

#include <nlohmann/json.hpp>

#include "npuplan/events/device_limit_check.h"
#include "npuplan/events/event_id_allocation.h"
#include "npuplan/support/str_util.h"

namespace npuplan::events {

ResourceUse PlanResourceUse(const Plan& plan, const CompileOptions& options) {
  ResourceUse r;
  r.streams = DeviceStreamsUsed(plan);
  r.stream_budget = BudgetOption(options, "npuplan.maxStreams", "npuplan.device.maxStreams");
  r.event_ids = plan.events.event_count;
  r.notify_ids = plan.events.notify_count;
  r.event_budget = BudgetOption(options, "npuplan.maxEventIds", "npuplan.device.maxEvents");
  r.notify_budget = BudgetOption(options, "npuplan.maxNotifyIds", "npuplan.device.maxNotifies");
  for (const SyncEvent& e : plan.events.events)
    ++(e.kind == SyncKind::kNotify ? r.notify_edges : r.event_edges);
  const auto& c = plan.events.counts;
  auto count = [&](const char* key) -> std::optional<int64_t> {
    auto it = c.find(key);
    return it == c.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  auto events_lb = count("device_event_ids_lower_bound");
  auto notifies_lb = count("device_notify_ids_lower_bound");
  if (!events_lb || (!notifies_lb && r.notify_edges > 0)) {
    const IdAllocation bounds = IdLowerBounds(plan);
    if (!events_lb) events_lb = bounds.events.lower_bound;
    if (!notifies_lb) notifies_lb = bounds.notifies.lower_bound;
  }
  r.event_lower_bound = *events_lb;
  r.notify_lower_bound = notifies_lb.value_or(0);
  r.event_exact = count("device_event_ids_exact").value_or(0) == 1;
  r.memory_peak = plan.memory.peak;
  r.memory_lower_bound = plan.memory.lower_bound;
  return r;
}

std::string ResourceUseJson(const ResourceUse& r) {
  nlohmann::json j = {{"streams", {{"used", r.streams}, {"budget", r.stream_budget}}},
                      {"event_ids",
                       {{"used", r.event_ids},
                        {"budget", r.event_budget},
                        {"lower_bound", r.event_lower_bound},
                        {"sync_edges", r.event_edges},
                        {"exact", r.event_exact}}},
                      {"notify_ids",
                       {{"used", r.notify_ids},
                        {"budget", r.notify_budget},
                        {"lower_bound", r.notify_lower_bound},
                        {"sync_edges", r.notify_edges}}},
                      {"memory", {{"peak", r.memory_peak}, {"lower_bound", r.memory_lower_bound}}}};
  return j.dump();
}

std::string ResourceUseText(const ResourceUse& r) {
  std::string out = "resources (used / budget):\n";
  out += StrCat("  device streams  ", r.streams, " / ", r.stream_budget, "\n");
  out += StrCat("  event ids       ", r.event_ids, " / ", r.event_budget, " (", r.event_edges,
                " sync edges; at least ", r.event_lower_bound,
                r.event_exact ? ", minimum reached" : "", ")\n");
  out += StrCat("  notify ids      ", r.notify_ids, " / ", r.notify_budget, " (", r.notify_edges,
                " sync edges; at least ", r.notify_lower_bound, ")\n");
  out += StrCat("  memory peak     ", r.memory_peak, " bytes (lower bound ", r.memory_lower_bound,
                ")\n");
  return out;
}

}  // namespace npuplan::events
