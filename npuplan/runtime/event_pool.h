// EventPool and NotifyPool: grow-only pools of device events and notifies for
// one model (gert EventAllocator / NotifyAllocator semantics), with a real
// upper bound (GE's EventAllocator has kMaxEventNum = 4096 but never checks it).
//
// * Acquire{Events,Notifies}(n) returns the contiguous vector of slots
//   [0, max(size, n)), creating only the missing objects; never shrinks.
//   Slot i is the object for plan event/notify id i (ids are contiguous from 0,
//   as RTS requires).
// * Bounds: events default to 1023 (Ascend 310P's hard cap on concurrent
//   events), notifies to 1024 (GE kMaxNotifyNum). A larger request is
//   ResourceExhausted naming the limit and the option.
// * Creation failure: all-or-nothing per call, as StreamPool.
// * Destruction destroys every object; thread-safe.
#ifndef NPUPLAN_RUNTIME_EVENT_POOL_H_
#define NPUPLAN_RUNTIME_EVENT_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/runtime/device.h"
#include "npuplan/runtime/grow_only_pool.h"

namespace npuplan::runtime {

struct EventPoolOptions {
  // Events the pool may hold (310P hard cap 1023; GE's unchecked 4096).
  size_t max_events = 1023;
  // Flags passed to every event the pool creates.
  uint32_t flags = 0;
};

class EventPool {
 public:
  static constexpr size_t kDefaultMaxEvents = 1023;

  // Checks the options (max_events >= 1).
  static absl::StatusOr<std::unique_ptr<EventPool>> Create(Device& device,
                                                           EventPoolOptions options = {});
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  absl::StatusOr<std::vector<EventRef>> AcquireEvents(size_t n);
  size_t size() const { return pool_.size(); }

 private:
  EventPool(Device& device, EventPoolOptions options);
  Device& device_;
  const EventPoolOptions options_;
  internal::GrowOnlyPool<Event> pool_;
};

struct NotifyPoolOptions {
  // Notifies the pool may hold (GE kMaxNotifyNum = 1024).
  size_t max_notifies = 1024;
};

class NotifyPool {
 public:
  static constexpr size_t kDefaultMaxNotifies = 1024;

  // Checks the options (max_notifies >= 1).
  static absl::StatusOr<std::unique_ptr<NotifyPool>> Create(Device& device,
                                                            NotifyPoolOptions options = {});
  NotifyPool(const NotifyPool&) = delete;
  NotifyPool& operator=(const NotifyPool&) = delete;

  absl::StatusOr<std::vector<NotifyRef>> AcquireNotifies(size_t n);
  size_t size() const { return pool_.size(); }

 private:
  NotifyPool(Device& device, NotifyPoolOptions options);
  Device& device_;
  const NotifyPoolOptions options_;
  internal::GrowOnlyPool<Notify> pool_;
};

}  // namespace npuplan::runtime

#endif  // NPUPLAN_RUNTIME_EVENT_POOL_H_
