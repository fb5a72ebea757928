// ReusableStreamPool: device streams shared across models (R2, the V1
// runtime). Implements the policy GE's ReusableStreamAllocator documents but
// never implemented (its open code creates a new stream every time):
//
//   GetOrCreateStream(model, priority, flags, task_num):
//     1. candidates = live streams with the same (priority, flags) key that
//        `model` does not already hold (a model never gets a stream twice);
//        when max_tasks_per_stream is set, also drop those whose load plus
//        task_num would exceed it;
//     2. pick the candidate whose load is closest to task_num, where a
//        stream's load is the sum of the task counts of the models that hold
//        it now; ties: smaller load, then older stream (smaller id);
//     3. none left → create a stream with (priority, flags).
//     The model is added to the stream's model set and its task_num to the
//     stream's load.
//   ReleaseStream(model, stream): removes the model (and its tasks); the
//     stream is destroyed when its last model releases it.
//   DestroyStream(stream, force): force destroys it whatever models hold it
//     (their later ReleaseStream is NotFound); without force it is
//     FailedPrecondition while a model holds it.
//
// Thread-safe (one mutex). Device calls that destroy streams (which drain the
// stream's queue) and observer hooks run after the lock is dropped. Observer
// hooks: on_acquire / on_release with model_id for every bind / unbind.
#ifndef NPUPLAN_RUNTIME_REUSABLE_STREAM_POOL_H_
#define NPUPLAN_RUNTIME_REUSABLE_STREAM_POOL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npuplan/runtime/device.h"

namespace npuplan::runtime {

using ModelId = uint32_t;

struct ReusableStreamPoolOptions {
  // Largest load (accumulated task count) a shared stream may reach; a stream
  // that would exceed it is not a candidate. 0 = unlimited. (GE's normal
  // streams hold 1024 tasks, huge ones 8192.)
  uint64_t max_tasks_per_stream = 0;
  // Live streams the pool may hold; 0 = unlimited (the device's cap applies).
  size_t max_streams = 0;
  // Told about every bind (on_acquire) and unbind (on_release); may be null.
  std::shared_ptr<RuntimeObserver> observer;
};

class ReusableStreamPool {
 public:
  // A snapshot of one pooled stream, for tests and tracing.
  struct StreamStatus {
    StreamRef stream;
    int32_t priority = 0;
    uint32_t flags = 0;
    uint64_t load = 0;            // sum of the holders' task counts
    std::vector<ModelId> models;  // ascending
  };

  explicit ReusableStreamPool(Device& device, ReusableStreamPoolOptions options = {});
  // Destroys every stream still pooled.
  ~ReusableStreamPool();
  ReusableStreamPool(const ReusableStreamPool&) = delete;
  ReusableStreamPool& operator=(const ReusableStreamPool&) = delete;

  // See the header comment. ResourceExhausted when max_streams is reached;
  // the device's error when creation fails (the pool is unchanged).
  absl::StatusOr<StreamRef> GetOrCreateStream(ModelId model, int32_t priority, uint32_t flags,
                                              uint64_t task_num = 0);
  // NotFound if `model` does not hold `stream`.
  absl::Status ReleaseStream(ModelId model, StreamRef stream);
  // Releases every stream `model` holds (model unload). OK if it holds none.
  absl::Status ReleaseModel(ModelId model);
  // NotFound if the stream is not pooled; see the header comment for force.
  absl::Status DestroyStream(StreamRef stream, bool force = false);

  size_t stream_count() const;
  // Every pooled stream, by ascending stream id.
  std::vector<StreamStatus> Snapshot() const;

 private:
  using Key = std::pair<int32_t, uint32_t>;  // (priority, flags)
  struct Entry {
    Stream handle;
    Key key;
    uint64_t load = 0;
    std::map<ModelId, uint64_t> models;  // holder → its task count
  };
  struct Pending;  // observer calls and handles to destroy after unlocking

  // Caller holds mu_. Unbinds `model` from the entry at `it`; moves the handle
  // to `pending` if the stream has no holder left.
  void UnbindLocked(std::map<uint64_t, Entry>::iterator it, ModelId model, Pending& pending);
  void Finish(Pending& pending);

  Device& device_;
  const ReusableStreamPoolOptions options_;
  mutable std::mutex mu_;
  std::map<uint64_t, Entry> streams_;                              // by stream id
  std::map<Key, std::set<std::pair<uint64_t, uint64_t>>> by_key_;  // (load, id), ascending
  std::map<ModelId, std::set<uint64_t>> by_model_;                 // model → stream ids
};

}  // namespace npuplan::runtime

#endif  // NPUPLAN_RUNTIME_REUSABLE_STREAM_POOL_H_
