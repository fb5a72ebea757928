#include "npuplan/events/event_options.h"

#include <charconv>
#include <string>

#include "npuplan/events/device_limit_check.h"
#include "npuplan/support/status_macros.h"

namespace npuplan::events {
namespace {

// `key`'s value in effect (its spec's default when unset), checked by the
// option's own validator: the messages of CompileOptions::Validate.
absl::StatusOr<std::string> Checked(const CompileOptions& o, std::string_view key) {
  std::string v = o.Get(key);
  if (const OptionSpec* spec = FindOptionSpec(key); spec != nullptr && spec->validate != nullptr) {
    NPUPLAN_RETURN_IF_ERROR(spec->validate(o.ReadableName(key), v));
  }
  return v;
}

// An integer option; `fallback` when its value is empty or, for a spec that
// allows non-integers, not an integer (EventIdExactLimit: SimpleAtoi's rule).
absl::StatusOr<int64_t> IntOption(const CompileOptions& o, std::string_view key, int64_t fallback) {
  NPUPLAN_ASSIGN_OR_RETURN(const std::string v, Checked(o, key));
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) return fallback;
  return n;
}

int64_t Budget(const CompileOptions& o, std::string_view key, std::string_view device_key) {
  return o.Has(key) ? BudgetOption(o, key, device_key) : INT64_MAX;
}

}  // namespace

std::string_view EventOptimizationName(EventOptimization o) {
  return o == EventOptimization::kGe ? "ge" : o == EventOptimization::kNone ? "none" : "exact";
}

std::string_view EventIdReuseName(EventIdReuse r) {
  return r == EventIdReuse::kGe ? "ge" : r == EventIdReuse::kNone ? "none" : "min";
}

absl::StatusOr<EventOptions> ReadEventOptions(const CompileOptions& options) {
  EventOptions o;
  NPUPLAN_ASSIGN_OR_RETURN(const std::string event, Checked(options, "ge.event"));
  o.notify = event == "notify";
  NPUPLAN_RETURN_IF_ERROR(Checked(options, "ge.enableSingleStream").status());
  o.single_stream = options.GetBool("ge.enableSingleStream");
  NPUPLAN_ASSIGN_OR_RETURN(const std::string opt, Checked(options, "npuplan.eventOptimization"));
  o.optimization = opt == "ge"     ? EventOptimization::kGe
                   : opt == "none" ? EventOptimization::kNone
                                   : EventOptimization::kExact;
  if (options.Has("npuplan.eventIdReuse")) {
    NPUPLAN_RETURN_IF_ERROR(Checked(options, "npuplan.eventIdReuse").status());
  }
  const std::string reuse = EventIdReuseMode(options);
  o.id_reuse = reuse == "ge"     ? EventIdReuse::kGe
               : reuse == "none" ? EventIdReuse::kNone
                                 : EventIdReuse::kMin;
  NPUPLAN_ASSIGN_OR_RETURN(o.id_exact_limit, IntOption(options, "npuplan.eventIdExactLimit", 0));
  NPUPLAN_ASSIGN_OR_RETURN(o.id_exact_entries,
                           IntOption(options, "npuplan.eventIdExactEntries", 0));
  NPUPLAN_ASSIGN_OR_RETURN(o.reuse_threshold,
                           IntOption(options, "npuplan.eventReuseThreshold", 65500));
  NPUPLAN_ASSIGN_OR_RETURN(o.max_tasks_per_stream,
                           IntOption(options, "npuplan.device.maxTasksPerStream", 1024));
  NPUPLAN_ASSIGN_OR_RETURN(o.huge_stream_tasks,
                           IntOption(options, "npuplan.device.hugeStreamTasks", 8192));
  NPUPLAN_RETURN_IF_ERROR(Checked(options, "npuplan.device.unlimitedStreamDepth").status());
  o.unlimited_stream_depth = options.GetBool("npuplan.device.unlimitedStreamDepth");
  NPUPLAN_ASSIGN_OR_RETURN(o.device_max_streams,
                           IntOption(options, "npuplan.device.maxStreams", kMaxDeviceStreams));
  NPUPLAN_ASSIGN_OR_RETURN(o.device_max_events,
                           IntOption(options, "npuplan.device.maxEvents", kMaxDeviceEvents));
  NPUPLAN_ASSIGN_OR_RETURN(o.device_max_notifies,
                           IntOption(options, "npuplan.device.maxNotifies", 1024));
  for (const char* key : {"npuplan.maxStreams", "npuplan.maxEventIds", "npuplan.maxNotifyIds"}) {
    NPUPLAN_RETURN_IF_ERROR(Checked(options, key).status());
  }
  o.budget_streams = Budget(options, "npuplan.maxStreams", "npuplan.device.maxStreams");
  o.budget_event_ids = Budget(options, "npuplan.maxEventIds", "npuplan.device.maxEvents");
  o.budget_notify_ids = Budget(options, "npuplan.maxNotifyIds", "npuplan.device.maxNotifies");
  return o;
}

}  // namespace npuplan::events
