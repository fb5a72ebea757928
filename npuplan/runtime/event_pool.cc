#include "npuplan/runtime/event_pool.h"

namespace npuplan::runtime {

namespace {
constexpr internal::PoolNames kEventNames{
    "EventPool::AcquireEvents", "events", "EventPoolOptions::max_events",
    " (the default is Ascend 310P's hard cap on concurrent events)"};
constexpr internal::PoolNames kNotifyNames{"NotifyPool::AcquireNotifies", "notifies",
                                           "NotifyPoolOptions::max_notifies", ""};
}  // namespace

absl::StatusOr<std::unique_ptr<EventPool>> EventPool::Create(Device& device,
                                                             EventPoolOptions options) {
  if (options.max_events < 1) {
    return absl::InvalidArgumentError("EventPoolOptions::max_events must be >= 1");
  }
  return std::unique_ptr<EventPool>(new EventPool(device, options));
}

EventPool::EventPool(Device& device, EventPoolOptions options)
    : device_(device), options_(options), pool_(0, options.max_events, kEventNames) {}

// Grows the pool to n events.
absl::StatusOr<std::vector<EventRef>> EventPool::AcquireEvents(size_t n) {
  return pool_.Acquire(n, [this] { return CreateEvent(device_, options_.flags); });
}

absl::StatusOr<std::unique_ptr<NotifyPool>> NotifyPool::Create(Device& device,
                                                               NotifyPoolOptions options) {
  if (options.max_notifies < 1) {
    return absl::InvalidArgumentError("NotifyPoolOptions::max_notifies must be >= 1");
  }
  return std::unique_ptr<NotifyPool>(new NotifyPool(device, options));
}

NotifyPool::NotifyPool(Device& device, NotifyPoolOptions options)
    : device_(device), options_(options), pool_(0, options.max_notifies, kNotifyNames) {}

// Grows the pool to n notifies.
absl::StatusOr<std::vector<NotifyRef>> NotifyPool::AcquireNotifies(size_t n) {
  return pool_.Acquire(n, [this] { return CreateNotify(device_); });
}

}  // namespace npuplan::runtime
