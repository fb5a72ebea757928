// GrowOnlyPool: the shared core of StreamPool, EventPool and NotifyPool
// (gert::StreamAllocator / EventAllocator semantics). Internal to runtime.
//
// Slots [0, reserved) are filled by the owner (StreamPool's slot 0 is the
// caller's stream) and never created or destroyed here. Acquire(n) creates
// slots [size, n) in order, never shrinks, and is all-or-nothing: when a
// creation fails, the handles created by that call are destroyed again (RAII)
// and the pool is exactly as before. Thread-safe: one mutex; concurrent
// callers asking for overlapping sizes get the same objects.
#ifndef NPUPLAN_RUNTIME_GROW_ONLY_POOL_H_
#define NPUPLAN_RUNTIME_GROW_ONLY_POOL_H_

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace npuplan::runtime::internal {

// What a pool calls its objects in error messages.
struct PoolNames {
  const char* call;    // "StreamPool::AcquireStreams"
  const char* noun;    // "streams"
  const char* option;  // "StreamPoolOptions::max_streams"
  const char* note;    // extra sentence after the limit, may be empty
};

template <typename H>  // H = Handle<Ref, Deleter>
class GrowOnlyPool {
 public:
  using Ref = decltype(std::declval<const H&>().get());

  GrowOnlyPool(size_t reserved, size_t max, PoolNames names)
      : max_(max), names_(names), slots_(reserved) {}

  // Returns slots [0, max(size, n)), creating the missing ones with `create`
  // (a callable returning absl::StatusOr<H>).
  template <typename Create>
  absl::StatusOr<std::vector<Ref>> Acquire(size_t n, Create&& create) {
    if (n > max_) {
      return absl::ResourceExhaustedError(
          absl::StrCat(names_.call, "(", n, "): the pool holds at most ", max_, " ", names_.noun,
                       names_.note, "; raise ", names_.option, " to allow more"));
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (n > slots_.size()) {
      std::vector<H> fresh;  // destroyed again if any creation fails
      fresh.reserve(n - slots_.size());
      for (size_t i = slots_.size(); i < n; ++i) {
        absl::StatusOr<H> h = create();
        if (!h.ok()) {
          return absl::Status(
              h.status().code(),
              absl::StrCat(names_.call, "(", n, "): creating slot ", i, " failed; pool left at ",
                           slots_.size(), " ", names_.noun, ": ", h.status().message()));
        }
        fresh.push_back(*std::move(h));
      }
      for (H& h : fresh) {
        slots_.push_back(h.get());
        owned_.push_back(std::move(h));
      }
    }
    return slots_;
  }

  // Sets a reserved slot (not owned by the pool).
  void SetReserved(size_t index, Ref ref) {
    std::lock_guard<std::mutex> lock(mu_);
    slots_.at(index) = ref;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return slots_.size();
  }
  size_t max() const { return max_; }

  // Destroys the owned objects, newest first (reserved slots untouched).
  ~GrowOnlyPool() {
    while (!owned_.empty()) owned_.pop_back();
  }

 private:
  const size_t max_;
  const PoolNames names_;
  mutable std::mutex mu_;
  std::vector<Ref> slots_;  // contiguous: reserved slots, then owned_[i].get()
  std::vector<H> owned_;
};

}  // namespace npuplan::runtime::internal

#endif  // NPUPLAN_RUNTIME_GROW_ONLY_POOL_H_
