// StreamPool: the per-model device stream pool of the V2 runtime (R1,
// gert::StreamAllocator semantics, with GE's gaps closed).
//
//   slot:   0            1 .. size-1
//           caller's     created by the pool on demand, destroyed with it
//
// * Slot 0 is the caller's stream (the model executor's `arg.stream`). The pool
//   never creates or destroys it; it is StreamRef{} until SetCallerStream.
// * AcquireStreams(n) returns the contiguous vector of slots [0, max(size, n)):
//   it creates only the missing streams (with the pool's priority and flags)
//   and never shrinks: 22 after 33 returns 33 slots.
// * At most `max_streams` slots (default 2024, slot 0 included). A larger
//   request is ResourceExhausted naming the limit and the option (GE asserts).
// * Creation failure returns the device's error, prefixed with the slot; the
//   streams created by that call are destroyed again, so the pool is exactly
//   as before the call (GE keeps the partial growth).
// * Destruction destroys slots 1..size-1 (each drains its queue first).
// * Thread-safe; concurrent callers share the same streams.
#ifndef NPUPLAN_RUNTIME_STREAM_POOL_H_
#define NPUPLAN_RUNTIME_STREAM_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/runtime/device.h"
#include "npuplan/runtime/grow_only_pool.h"

namespace npuplan::runtime {

struct StreamPoolOptions {
  // Slots the pool may hold, slot 0 included (GE kMaxStreamNum = 2024).
  size_t max_streams = 2024;
  // Priority passed to every stream the pool creates.
  int32_t priority = 0;
  // StreamFlag bits passed to every stream the pool creates.
  uint32_t flags = kStreamDefault;
};

class StreamPool {
 public:
  static constexpr size_t kDefaultMaxStreams = 2024;

  // Checks the options (max_streams >= 1) and builds an empty pool (size 1).
  static absl::StatusOr<std::unique_ptr<StreamPool>> Create(Device& device,
                                                            StreamPoolOptions options = {},
                                                            StreamRef caller = {});
  StreamPool(const StreamPool&) = delete;
  StreamPool& operator=(const StreamPool&) = delete;
  ~StreamPool() = default;  // owned handles destroy slots 1..size-1

  // Slot 0 := the caller's stream (not owned).
  void SetCallerStream(StreamRef caller) { pool_.SetReserved(0, caller); }

  // Slots [0, max(size(), n)); see the header comment.
  absl::StatusOr<std::vector<StreamRef>> AcquireStreams(size_t n);

  size_t size() const { return pool_.size(); }
  const StreamPoolOptions& options() const { return options_; }

 private:
  StreamPool(Device& device, StreamPoolOptions options, StreamRef caller);

  Device& device_;
  const StreamPoolOptions options_;
  internal::GrowOnlyPool<Stream> pool_;
};

}  // namespace npuplan::runtime

#endif  // NPUPLAN_RUNTIME_STREAM_POOL_H_
