// Device interface: streams, events and notifies behind one abstract `Device`,
// handed out as RAII handles built from creator/deleter functors (Taskflow's
// cudaStreamBase<Creator, Deleter>), plus an observer interface for tracing.
//
// Semantics every back end implements (docs/runtime.md has the long form):
//  * Stream: an in-order queue. Work enqueued on one stream runs one item at a
//    time, in enqueue order. Different streams run concurrently.
//  * Event (CUDA/ACL semantics): RecordEvent(e, s) enqueues a marker on s.
//    WaitEvent(s, e) binds, at enqueue time, to the most recent record of e
//    enqueued before it (on any stream); the wait blocks s's queue until that
//    record has executed, i.e. until all work enqueued on the recording stream
//    before the record has finished. A wait on a never-recorded event is a
//    no-op. Re-recording later does not affect waits already enqueued.
//  * Notify (ACL wait-and-reset semantics): records and waits pair up in
//    enqueue order: the k-th WaitNotify on n blocks until the k-th RecordNotify
//    on n has executed, whenever that record is enqueued.
//  * Task: a host callable run on the stream's queue.
//
// Handles carry plain numeric ids (never pointers, never reused by a device),
// so a stale handle is detected (NotFound) rather than dereferenced.
#ifndef NPUPLAN_RUNTIME_DEVICE_H_
#define NPUPLAN_RUNTIME_DEVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuplan::runtime {

// Non-owning references to device objects. Id 0 is "no object". Distinct
// types so that a stream cannot be passed where an event is expected.
struct StreamRef {
  uint64_t id = 0;
  bool valid() const { return id != 0; }
  friend bool operator==(StreamRef, StreamRef) = default;
  friend auto operator<=>(StreamRef, StreamRef) = default;
};
struct EventRef {
  uint64_t id = 0;
  bool valid() const { return id != 0; }
  friend bool operator==(EventRef, EventRef) = default;
  friend auto operator<=>(EventRef, EventRef) = default;
};
struct NotifyRef {
  uint64_t id = 0;
  bool valid() const { return id != 0; }
  friend bool operator==(NotifyRef, NotifyRef) = default;
  friend auto operator<=>(NotifyRef, NotifyRef) = default;
};

// Stream creation flags (bit set). Back ends map them to their own flags
// (RT_STREAM_PERSISTENT, RT_STREAM_HUGE, ...); the CPU device only stores them.
enum StreamFlag : uint32_t {
  kStreamDefault = 0,
  kStreamPersistent = 1u << 0,
  kStreamHuge = 1u << 1,
  kStreamForceCopy = 1u << 2,
  kStreamOverflow = 1u << 3,
};

// Event creation flags (bit set).
enum EventFlag : uint32_t {
  kEventDefault = 0,
  // One device object, set by a record and cleared by the wait that consumes
  // it (Ascend: a Recv task is wait + reset), so one id serves many sync
  // edges only if each record comes after the previous edge's wait. A wait
  // still binds to the latest record enqueued before it (a run cannot
  // deadlock), but the device reports each misuse to observers
  // (on_event_misuse): a record that finds the object still set by an
  // earlier record nobody has waited for, a wait that, while pending, finds
  // the object set by a record other than its own (it could consume it) or
  // finds its own record gone, and a wait with no record enqueued before it
  // (a no-op here, as on CUDA; the wait-reset device blocks on it).
  kEventWaitReset = 1u << 0,
};

// A misuse of a kEventWaitReset event (see EventFlag).
struct EventMisuse {
  enum class Kind {
    kRecordWhilePending,  // `generation` recorded while `pending` was still set
    kForeignRecord,       // a wait for `generation` found `pending` set (another record)
    kRecordLost,          // a wait for `generation` found it overwritten or consumed
    kWaitWithoutRecord,   // a wait with no record enqueued before it (generation 0)
    kRecordNeverWaited,   // destroyed with `pending` still set: no wait consumed that record
  };
  Kind kind = Kind::kRecordWhilePending;
  uint64_t event_id = 0;
  uint64_t stream_id = 0;   // the recording or waiting stream
  uint64_t generation = 0;  // the record being made, or the one the wait is bound to (1-based)
  uint64_t pending = 0;     // the record that was set (0 = none)
};

// A unit of host work launched on a stream.
using Task = std::function<void()>;

// What an observer is told about.
enum class ResourceKind { kStream, kEvent, kNotify };
std::string_view ResourceKindName(ResourceKind kind);

struct ResourceInfo {
  ResourceKind kind = ResourceKind::kStream;
  uint64_t id = 0;        // StreamRef/EventRef/NotifyRef id
  int64_t model_id = -1;  // set by the reusable stream pool, else -1
};

struct WaitInfo {
  ResourceKind kind = ResourceKind::kEvent;  // kEvent or kNotify
  uint64_t stream_id = 0;                    // the waiting stream
  uint64_t sync_id = 0;                      // the event or notify waited on
  uint64_t generation = 0;                   // which record it waited for (1-based; 0 = none)
};

// Tracing hooks (Taskflow ObserverInterface). Called from any thread, possibly
// concurrently: implementations must be thread-safe and must not call back
// into the device or pool that calls them.
class RuntimeObserver {
 public:
  virtual ~RuntimeObserver() = default;
  // A resource was created (device) or bound to a model (reusable pool).
  virtual void on_acquire(const ResourceInfo& e) {}
  // A resource was destroyed (device) or a model released it (reusable pool).
  virtual void on_release(const ResourceInfo& e) {}
  // A stream's wait was satisfied (called on the waiting stream's worker).
  virtual void on_wait(const WaitInfo& e) {}
  // A kEventWaitReset event was misused (called on the stream's worker).
  virtual void on_event_misuse(const EventMisuse& e) {}
};

// Creation parameters of a stream, as recorded by the device.
struct StreamInfo {
  int32_t priority = 0;
  uint32_t flags = 0;
};

// Abstract device. All methods are thread-safe. Enqueue methods return as soon
// as the work is queued; errors are about the arguments (unknown handle), not
// about the work. Prefer the RAII helpers below to the Create*/Destroy* calls.
class Device {
 public:
  virtual ~Device() = default;
  virtual std::string_view name() const = 0;

  virtual absl::StatusOr<StreamRef> CreateStream(int32_t priority, uint32_t flags) = 0;
  // Drains the stream's queue, then releases it. Unknown ids are ignored.
  virtual void DestroyStream(StreamRef stream) = 0;
  virtual absl::StatusOr<StreamInfo> GetStreamInfo(StreamRef stream) const = 0;
  virtual absl::StatusOr<EventRef> CreateEvent(uint32_t flags) = 0;
  // Waits already enqueued on the event still complete normally.
  virtual void DestroyEvent(EventRef event) = 0;
  virtual absl::StatusOr<NotifyRef> CreateNotify() = 0;
  virtual void DestroyNotify(NotifyRef notify) = 0;

  virtual absl::Status Launch(StreamRef stream, Task task) = 0;
  virtual absl::Status RecordEvent(EventRef event, StreamRef stream) = 0;
  virtual absl::Status WaitEvent(StreamRef stream, EventRef event) = 0;
  virtual absl::Status RecordNotify(NotifyRef notify, StreamRef stream) = 0;
  virtual absl::Status WaitNotify(StreamRef stream, NotifyRef notify) = 0;

  // Host blocks until everything enqueued on `stream` so far has run. Returns
  // the stream's first task failure (sticky), if any.
  virtual absl::Status SynchronizeStream(StreamRef stream) = 0;
  // Host blocks until the most recent record of `event` enqueued so far ran.
  virtual absl::Status SynchronizeEvent(EventRef event) = 0;
  // SynchronizeStream on every live stream.
  virtual absl::Status Synchronize() = 0;

  // Observers are kept alive by the device; add them before use (adding is
  // thread-safe, but an observer added late misses earlier events).
  void AddObserver(std::shared_ptr<RuntimeObserver> observer);
  // Stops notifying `observer` (hooks already running may still finish).
  void RemoveObserver(const RuntimeObserver* observer);

 protected:
  void NotifyAcquire(const ResourceInfo& e) const;
  void NotifyRelease(const ResourceInfo& e) const;
  void NotifyWait(const WaitInfo& e) const;
  void NotifyEventMisuse(const EventMisuse& e) const;

 private:
  std::vector<std::shared_ptr<RuntimeObserver>> Observers() const;
  mutable std::mutex observers_mu_;
  std::vector<std::shared_ptr<RuntimeObserver>> observers_;
};

// ---------------------------------------------------------------------------
// RAII handles (Taskflow style): a Handle owns one raw reference and calls its
// Deleter on destruction. Move-only.
template <typename Ref, typename Deleter>
class Handle {
 public:
  Handle() = default;
  Handle(Ref ref, Deleter deleter) : ref_(ref), deleter_(std::move(deleter)) {}
  Handle(Handle&& other) noexcept
      : ref_(std::exchange(other.ref_, Ref{})), deleter_(std::move(other.deleter_)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      ref_ = std::exchange(other.ref_, Ref{});
      deleter_ = std::move(other.deleter_);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  Ref get() const { return ref_; }
  explicit operator bool() const { return ref_.valid(); }
  // Gives up ownership without destroying.
  Ref release() { return std::exchange(ref_, Ref{}); }
  // Destroys the owned object, if any.
  void reset() {
    if (ref_.valid()) deleter_(std::exchange(ref_, Ref{}));
  }

 private:
  Ref ref_{};
  Deleter deleter_{};
};

// Builds a handle from a creator (returning StatusOr<Ref>) and a deleter.
template <typename Creator, typename Deleter>
auto MakeHandle(Creator&& creator, Deleter deleter)
    -> absl::StatusOr<Handle<typename std::invoke_result_t<Creator>::value_type, Deleter>> {
  using Ref = typename std::invoke_result_t<Creator>::value_type;
  absl::StatusOr<Ref> ref = std::forward<Creator>(creator)();
  if (!ref.ok()) return ref.status();
  return Handle<Ref, Deleter>(*ref, std::move(deleter));
}

struct StreamCreator {
  Device* device = nullptr;
  int32_t priority = 0;
  uint32_t flags = kStreamDefault;
  absl::StatusOr<StreamRef> operator()() const { return device->CreateStream(priority, flags); }
};
struct StreamDeleter {
  Device* device = nullptr;
  void operator()(StreamRef s) const { device->DestroyStream(s); }
};
struct EventCreator {
  Device* device = nullptr;
  uint32_t flags = 0;
  absl::StatusOr<EventRef> operator()() const { return device->CreateEvent(flags); }
};
struct EventDeleter {
  Device* device = nullptr;
  void operator()(EventRef e) const { device->DestroyEvent(e); }
};
struct NotifyCreator {
  Device* device = nullptr;
  absl::StatusOr<NotifyRef> operator()() const { return device->CreateNotify(); }
};
struct NotifyDeleter {
  Device* device = nullptr;
  void operator()(NotifyRef n) const { device->DestroyNotify(n); }
};

using Stream = Handle<StreamRef, StreamDeleter>;
using Event = Handle<EventRef, EventDeleter>;
using Notify = Handle<NotifyRef, NotifyDeleter>;

inline absl::StatusOr<Stream> CreateStream(Device& device, int32_t priority = 0,
                                           uint32_t flags = kStreamDefault) {
  return MakeHandle(StreamCreator{&device, priority, flags}, StreamDeleter{&device});
}
inline absl::StatusOr<Event> CreateEvent(Device& device, uint32_t flags = 0) {
  return MakeHandle(EventCreator{&device, flags}, EventDeleter{&device});
}
inline absl::StatusOr<Notify> CreateNotify(Device& device) {
  return MakeHandle(NotifyCreator{&device}, NotifyDeleter{&device});
}

}  // namespace npuplan::runtime

#endif  // NPUPLAN_RUNTIME_DEVICE_H_
