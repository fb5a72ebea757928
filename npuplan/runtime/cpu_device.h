// CpuDevice: the host back end of `Device`. One worker thread per stream runs
// that stream's queue in order; events and notifies are host-side generation
// counters with the happens-before semantics documented in device.h:
//
//   stream A:  [t1][t2][rec e#1]                      e#1 done ──┐
//   stream B:  [t3][wait e#1]~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~[t4]
//                          (enqueue-time binding to the latest record of e)
//
// A stream's worker thread starts lazily on its first enqueue, so creating
// many streams (e.g. a 2024-slot pool) costs no threads until they are used.
// Priority and flags are recorded (GetStreamInfo) but not used for scheduling.
// An event created with kEventWaitReset is one flag (Ascend's event object):
// misuse — a second record before the pending wait consumed the first — is
// reported to observers (EventMisuse).
//
// Task failures (an exception escaping a task) are caught on the worker and
// kept as the stream's sticky error, returned by SynchronizeStream; later work
// on the stream still runs so that records are never lost.
//
// Fault injection for tests: SetStreamCreateFault / FailStreamCreationAfter
// make CreateStream fail, like GE's stubs that limit the device stream count.
#ifndef NPUPLAN_RUNTIME_CPU_DEVICE_H_
#define NPUPLAN_RUNTIME_CPU_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npuplan/runtime/device.h"

namespace npuplan::runtime {

struct CpuDeviceOptions {
  // Live streams the device allows at once; 0 = unlimited. A real device has
  // about 2048; creating beyond this fails with ResourceExhausted.
  size_t max_streams = 0;
  // Live events the device allows at once; 0 = unlimited (310P: 1023).
  size_t max_events = 0;
  // Live notifies the device allows at once; 0 = unlimited.
  size_t max_notifies = 0;
};

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(CpuDeviceOptions options = {});
  // Drains and destroys every stream still alive (their queued work runs).
  ~CpuDevice() override;
  CpuDevice(const CpuDevice&) = delete;
  CpuDevice& operator=(const CpuDevice&) = delete;

  std::string_view name() const override { return "cpu"; }

  absl::StatusOr<StreamRef> CreateStream(int32_t priority, uint32_t flags) override;
  void DestroyStream(StreamRef stream) override;
  absl::StatusOr<StreamInfo> GetStreamInfo(StreamRef stream) const override;
  absl::StatusOr<EventRef> CreateEvent(uint32_t flags) override;
  void DestroyEvent(EventRef event) override;
  absl::StatusOr<NotifyRef> CreateNotify() override;
  void DestroyNotify(NotifyRef notify) override;

  absl::Status Launch(StreamRef stream, Task task) override;
  absl::Status RecordEvent(EventRef event, StreamRef stream) override;
  absl::Status WaitEvent(StreamRef stream, EventRef event) override;
  absl::Status RecordNotify(NotifyRef notify, StreamRef stream) override;
  absl::Status WaitNotify(StreamRef stream, NotifyRef notify) override;

  absl::Status SynchronizeStream(StreamRef stream) override;
  absl::Status SynchronizeEvent(EventRef event) override;
  absl::Status Synchronize() override;

  // Fault injection: `fault(attempt)` is called before every stream creation
  // with the 0-based attempt index; a non-OK status fails that creation (no
  // stream is created). Pass nullptr to clear.
  using CreateFault = std::function<absl::Status(uint64_t attempt)>;
  void SetStreamCreateFault(CreateFault fault);
  // Convenience: the next `n` stream creations succeed, all later ones fail
  // with ResourceExhausted (as a device with only `n` free streams would).
  void FailStreamCreationAfter(uint64_t n);

  size_t live_streams() const;
  size_t live_events() const;
  size_t live_notifies() const;
  // Successful stream creations over the device's lifetime.
  uint64_t streams_created() const;

 private:
  struct StreamState;
  struct SyncState;

  absl::StatusOr<std::shared_ptr<StreamState>> FindStream(StreamRef stream) const;
  absl::StatusOr<std::shared_ptr<SyncState>> FindEvent(EventRef event) const;
  absl::StatusOr<std::shared_ptr<SyncState>> FindNotify(NotifyRef notify) const;
  absl::Status Record(ResourceKind kind, const std::shared_ptr<SyncState>& sync,
                      const std::shared_ptr<StreamState>& stream);
  absl::Status Wait(ResourceKind kind, const std::shared_ptr<StreamState>& stream,
                    const std::shared_ptr<SyncState>& sync, uint64_t sync_id);
  void AwaitAndConsume(SyncState& sync, uint64_t generation, uint64_t stream_id);
  static void RunWorker(std::shared_ptr<StreamState> s);
  absl::Status Enqueue(const std::shared_ptr<StreamState>& s, std::function<void()> item);
  void StopAndJoin(const std::shared_ptr<StreamState>& stream);

  const CpuDeviceOptions options_;
  mutable std::mutex mu_;  // guards the tables and counters below
  uint64_t next_id_ = 1;
  uint64_t create_attempts_ = 0;
  uint64_t streams_created_ = 0;
  CreateFault create_fault_;
  std::map<uint64_t, std::shared_ptr<StreamState>> streams_;
  std::map<uint64_t, std::shared_ptr<SyncState>> events_;
  std::map<uint64_t, std::shared_ptr<SyncState>> notifies_;
};

}  // namespace npuplan::runtime

#endif  // NPUPLAN_RUNTIME_CPU_DEVICE_H_
