// device-limit-check (issue 11, limits): the last events stage checks the
// finished plan against the device's resource limits, so that a plan the
// runtime could not load is a clear compile error instead of a failure at
// load time (GE: rtStreamCreate / rtEventCreate failing on the device):
//   streams   physical streams (attached ones included; logical + attached
//             when no split ran) <= npuplan.device.maxStreams (default 2024,
//             GE kMaxStreamNum / gert StreamAllocator)
//   events    event ids 0..event_count-1 <= npuplan.device.maxEvents
//             (default 65536, the id range of the event table)
//   notifies  notify ids <= npuplan.device.maxNotifies (default 1024,
//             GE kMaxNotifyNum; event-reuse also rejects more than 1024)
// The options may only lower the limits (a smaller device, or a test); the
// error names the count, the limit, the option and what to change.
// Budgets (issue 23): npuplan.maxStreams / maxEventIds / maxNotifyIds, when
// set, are checked the same way (stream-budget and event-id-allocation fit
// the plan into them; this is the final check, in every id mode).
//
// Requires: sync-events. Provides: nothing (a check; never changes the plan).
// Decision keywords: DeviceLimits streams= events= notifies= max_streams= max_events= max_notifies=
#ifndef NPUPLAN_EVENTS_DEVICE_LIMIT_CHECK_H_
#define NPUPLAN_EVENTS_DEVICE_LIMIT_CHECK_H_

#include <cstdint>

#include "npuplan/pass/pass.h"

namespace npuplan {

inline constexpr int64_t kMaxDeviceStreams = 2024;
inline constexpr int64_t kMaxDeviceEvents = 65536;

class DeviceLimitCheck final : public Pass {
 public:
  std::string_view name() const override { return "device-limit-check"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kSyncEvents); }
  IrProperties provided() const override { return 0; }
  bool preserves_structure() const override { return true; }
  // Reads the counts only (and Plan::established): it runs beside
  // memory-planning, which the pipeline then joins at its end.
  PlanAccess access() const override { return {PlanPart::kStreams | PlanPart::kEvents, 0}; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

// Device streams the plan uses: physical streams after the split, else main
// logical streams plus attached streams.
int64_t DeviceStreamsUsed(const Plan& plan);

}  // namespace npuplan

#endif  // NPUPLAN_EVENTS_DEVICE_LIMIT_CHECK_H_
