#include "npuplan/events/device_limit_check.h"

#include <string>
#include <tuple>

#include "npuplan/events/event_options.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
int64_t DeviceStreamsUsed(const Plan& plan) {
  if (Has(plan.established, IrProperty::kPhysicalStreams)) return plan.streams.physical;
  return plan.streams.logical + static_cast<int64_t>(plan.streams.attached.size());
}

absl::StatusOr<bool> DeviceLimitCheck::Run(Plan& plan, PassContext& ctx) {
  NPUPLAN_ASSIGN_OR_RETURN(const events::EventOptions opts, events::ReadEventOptions(ctx.options));
  const int64_t max_streams = opts.device_max_streams;
  const int64_t max_events = opts.device_max_events;
  const int64_t max_notifies = opts.device_max_notifies;
  const int64_t streams = DeviceStreamsUsed(plan);
  ctx.log.Record(name(), "DeviceLimits", "", Field("streams", streams), Field("events", plan.events.event_count),
                 Field("notifies", plan.events.notify_count), Field("max_streams", max_streams),
                 Field("max_events", max_events), Field("max_notifies", max_notifies));
  if (streams > max_streams) {
    return absl::ResourceExhaustedError(StrCat(
        "[", name(), "] the plan needs ", streams, " device streams but the device has ", max_streams,
        " (npuplan.device.maxStreams, at most ", kMaxDeviceStreams,
        "); use fewer streams: ge.enableSingleStream=true, ge.autoMultistreamParallelMode=LoadBalance:N, "
        "ge.streamMaxParallelNum, or a larger npuplan.device.maxTasksPerStream (fewer splits)"));
  }
  if (plan.events.event_count > max_events) {
    return absl::ResourceExhaustedError(
        StrCat("[", name(), "] the plan uses event ids 0..", plan.events.event_count - 1,
               " but the device has ", max_events, " events (npuplan.device.maxEvents, at most ",
               kMaxDeviceEvents,
               "); use npuplan.eventIdReuse=min, fewer streams, ge.event=notify, or "
               "npuplan.eventOptimization=exact"));
  }
  // Budgets, when set (issue 23): what the compile promised to fit into.
  for (const auto& [key, budget, used, what] :
       {std::tuple<const char*, int64_t, int64_t, const char*>{
            "npuplan.maxStreams", opts.budget_streams, streams, "device streams"},
        {"npuplan.maxEventIds", opts.budget_event_ids, plan.events.event_count, "event ids"},
        {"npuplan.maxNotifyIds", opts.budget_notify_ids, plan.events.notify_count, "notify ids"}}) {
    if (used > budget) {  // an unset budget is INT64_MAX
      return absl::ResourceExhaustedError(
          StrCat("[", name(), "] the plan uses ", used, " ", what, " but the budget is ", budget,
                 " (", key, ")",
                 std::string_view(key) == "npuplan.maxStreams"
                     ? "; stream-budget's estimate fell short of the physical split: "
                       "lower npuplan.maxStreams or raise npuplan.device.maxTasksPerStream"
                     : ""));
    }
  }
  if (plan.events.notify_count > max_notifies) {
    return absl::ResourceExhaustedError(StrCat(
        "[", name(), "] the plan uses notify ids 0..", plan.events.notify_count - 1, " but the device has ",
        max_notifies, " notifies (npuplan.device.maxNotifies, at most 1024); use ge.event=event or fewer streams"));
  }
  return false;
}

}  // namespace npuplan
