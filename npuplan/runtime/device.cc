#include "npuplan/runtime/device.h"

namespace npuplan::runtime {

// Stable lower-case name used in messages and traces.
std::string_view ResourceKindName(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kStream:
      return "stream";
    case ResourceKind::kEvent:
      return "event";
    case ResourceKind::kNotify:
      return "notify";
  }
  return "unknown";
}

void Device::AddObserver(std::shared_ptr<RuntimeObserver> observer) {
  std::lock_guard<std::mutex> lock(observers_mu_);
  observers_.push_back(std::move(observer));
}

void Device::RemoveObserver(const RuntimeObserver* observer) {
  std::lock_guard<std::mutex> lock(observers_mu_);
  std::erase_if(observers_,
                [&](const std::shared_ptr<RuntimeObserver>& o) { return o.get() == observer; });
}

// Snapshot so that hooks run without holding the lock.
std::vector<std::shared_ptr<RuntimeObserver>> Device::Observers() const {
  std::lock_guard<std::mutex> lock(observers_mu_);
  return observers_;
}

void Device::NotifyAcquire(const ResourceInfo& e) const {
  for (const auto& o : Observers()) o->on_acquire(e);
}
void Device::NotifyRelease(const ResourceInfo& e) const {
  for (const auto& o : Observers()) o->on_release(e);
}
void Device::NotifyEventMisuse(const EventMisuse& e) const {
  for (const auto& o : Observers()) o->on_event_misuse(e);
}
void Device::NotifyWait(const WaitInfo& e) const {
  for (const auto& o : Observers()) o->on_wait(e);
}

}  // namespace npuplan::runtime
