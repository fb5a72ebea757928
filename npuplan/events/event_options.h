// The options the events stage reads (physical-stream-split … device-limit-
// check), parsed once per pass run from CompileOptions into typed fields: the
// passes compare enums and integers, never option text. Names, defaults and
// validation (the messages) are the option specs' in npuplan/pass/options.cc
// (`npuplan options`): ReadEventOptions runs those validators, so a pass
// given unvalidated options fails as CompileOptions::Validate would.
#ifndef NPUPLAN_EVENTS_EVENT_OPTIONS_H_
#define NPUPLAN_EVENTS_EVENT_OPTIONS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "npuplan/pass/options.h"

namespace npuplan::events {

// npuplan.eventOptimization.
enum class EventOptimization : uint8_t { kExact, kGe, kNone };
// npuplan.eventIdReuse in effect (EventIdReuseMode's rule when unset).
enum class EventIdReuse : uint8_t { kMin, kGe, kNone };
std::string_view EventOptimizationName(EventOptimization o);  // "exact" | "ge" | "none"
std::string_view EventIdReuseName(EventIdReuse r);            // "min" | "ge" | "none"

struct EventOptions {
  bool notify = false;         // ge.event=notify
  bool single_stream = false;  // ge.enableSingleStream
  EventOptimization optimization = EventOptimization::kExact;
  EventIdReuse id_reuse = EventIdReuse::kMin;
  int64_t id_exact_limit = 0;       // npuplan.eventIdExactLimit
  int64_t id_exact_entries = 0;     // npuplan.eventIdExactEntries
  int64_t reuse_threshold = 65500;  // npuplan.eventReuseThreshold (GE kEventReuseThreshold)
  // Physical split.
  int64_t max_tasks_per_stream = 1024;  // npuplan.device.maxTasksPerStream
  int64_t huge_stream_tasks = 8192;     // npuplan.device.hugeStreamTasks
  bool unlimited_stream_depth = false;  // npuplan.device.unlimitedStreamDepth
  // Device limits (npuplan.device.maxStreams / maxEvents / maxNotifies).
  int64_t device_max_streams = 0;
  int64_t device_max_events = 0;
  int64_t device_max_notifies = 0;
  // Budgets (npuplan.maxStreams / maxEventIds / maxNotifyIds): BudgetOption's
  // value when the option is set, INT64_MAX when it is not.
  int64_t budget_streams = INT64_MAX;
  int64_t budget_event_ids = INT64_MAX;
  int64_t budget_notify_ids = INT64_MAX;
};

absl::StatusOr<EventOptions> ReadEventOptions(const CompileOptions& options);

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_EVENT_OPTIONS_H_
