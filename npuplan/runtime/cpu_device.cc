#include "npuplan/runtime/cpu_device.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace npuplan::runtime {

// One in-order queue served by one (lazily started) worker thread.
struct CpuDevice::StreamState {
  uint64_t id = 0;
  StreamInfo info;
  std::mutex mu;
  std::condition_variable work_cv;  // queue non-empty or stop
  std::condition_variable idle_cv;  // completed advanced
  std::deque<std::function<void()>> queue;
  uint64_t enqueued = 0;
  uint64_t completed = 0;
  bool stop = false;
  std::thread worker;
  absl::Status error;  // first task failure (sticky)
};

// Generation bookkeeping shared by events and notifies. Records get
// generations 1, 2, ... in enqueue order; completion may happen out of order
// (a re-recorded event may be recorded on several streams).
struct CpuDevice::SyncState {
  uint64_t id = 0;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t records_enqueued = 0;
  uint64_t waits_enqueued = 0;   // notifies only
  uint64_t contiguous_done = 0;  // every generation <= this has executed
  std::set<uint64_t> done_out_of_order;
  // kEventWaitReset: the one flag of the device object, as the generation
  // that set it (0 = clear).
  bool wait_reset = false;
  uint64_t set_by = 0;

  // Caller holds mu.
  bool Done(uint64_t generation) const {
    return generation <= contiguous_done || done_out_of_order.count(generation) > 0;
  }
  void Complete(uint64_t generation) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (generation == contiguous_done + 1) {
        ++contiguous_done;
        while (!done_out_of_order.empty() && *done_out_of_order.begin() == contiguous_done + 1) {
          done_out_of_order.erase(done_out_of_order.begin());
          ++contiguous_done;
        }
      } else {
        done_out_of_order.insert(generation);
      }
    }
    cv.notify_all();
  }
  void AwaitDone(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return Done(generation); });
  }
};

// Worker loop: runs queued items in order until stopped and drained. Holds a
// reference so that a stream destroyed from its own task outlives the loop.
void CpuDevice::RunWorker(std::shared_ptr<StreamState> s) {
  for (;;) {
    std::function<void()> item;
    {
      std::unique_lock<std::mutex> lock(s->mu);
      s->work_cv.wait(lock, [s] { return s->stop || !s->queue.empty(); });
      if (s->queue.empty()) return;  // stop requested and drained
      item = std::move(s->queue.front());
      s->queue.pop_front();
    }
    item();
    {
      std::lock_guard<std::mutex> lock(s->mu);
      ++s->completed;
    }
    s->idle_cv.notify_all();
  }
}

// Appends `item` to the stream's queue, starting the worker on first use.
// Fails if the stream is being destroyed.
absl::Status CpuDevice::Enqueue(const std::shared_ptr<StreamState>& s, std::function<void()> item) {
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->stop) {
      return absl::NotFoundError(absl::StrCat("CpuDevice: stream ", s->id, " is being destroyed"));
    }
    s->queue.push_back(std::move(item));
    ++s->enqueued;
    if (!s->worker.joinable()) s->worker = std::thread(&CpuDevice::RunWorker, s);
  }
  s->work_cv.notify_one();
  return absl::OkStatus();
}

CpuDevice::CpuDevice(CpuDeviceOptions options) : options_(options) {}

CpuDevice::~CpuDevice() {
  std::map<uint64_t, std::shared_ptr<StreamState>> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams.swap(streams_);
  }
  for (auto& [id, s] : streams) StopAndJoin(s);
}

void CpuDevice::SetStreamCreateFault(CreateFault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  create_fault_ = std::move(fault);
  create_attempts_ = 0;
}

void CpuDevice::FailStreamCreationAfter(uint64_t n) {
  SetStreamCreateFault([n](uint64_t attempt) {
    if (attempt < n) return absl::OkStatus();
    return absl::ResourceExhaustedError(
        absl::StrCat("CpuDevice: injected stream creation failure (attempt ", attempt,
                     ", FailStreamCreationAfter(", n, "))"));
  });
}

absl::StatusOr<StreamRef> CpuDevice::CreateStream(int32_t priority, uint32_t flags) {
  CreateFault fault;
  uint64_t attempt = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fault = create_fault_;
    attempt = create_attempts_++;
  }
  if (fault) {
    absl::Status s = fault(attempt);
    if (!s.ok()) return s;
  }
  auto state = std::make_shared<StreamState>();
  state->info = StreamInfo{priority, flags};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (options_.max_streams != 0 && streams_.size() >= options_.max_streams) {
      return absl::ResourceExhaustedError(
          absl::StrCat("CpuDevice: all ", options_.max_streams,
                       " device streams are in use (CpuDeviceOptions::max_streams)"));
    }
    state->id = next_id_++;
    streams_.emplace(state->id, state);
    ++streams_created_;
  }
  NotifyAcquire(ResourceInfo{ResourceKind::kStream, state->id, -1});
  return StreamRef{state->id};
}

// Marks the stream stopped, lets its worker drain the queue and joins it.
void CpuDevice::StopAndJoin(const std::shared_ptr<StreamState>& s) {
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stop = true;
  }
  s->work_cv.notify_all();
  if (!s->worker.joinable()) return;
  if (s->worker.get_id() == std::this_thread::get_id()) {
    s->worker.detach();  // destroyed from its own task: the loop drains and exits
  } else {
    s->worker.join();
  }
}

void CpuDevice::DestroyStream(StreamRef stream) {
  std::shared_ptr<StreamState> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find(stream.id);
    if (it == streams_.end()) return;
    s = std::move(it->second);
    streams_.erase(it);
  }
  StopAndJoin(s);
  NotifyRelease(ResourceInfo{ResourceKind::kStream, stream.id, -1});
}

absl::StatusOr<StreamInfo> CpuDevice::GetStreamInfo(StreamRef stream) const {
  auto s = FindStream(stream);
  if (!s.ok()) return s.status();
  return (*s)->info;
}

absl::StatusOr<EventRef> CpuDevice::CreateEvent(uint32_t flags) {
  auto state = std::make_shared<SyncState>();
  state->wait_reset = (flags & kEventWaitReset) != 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (options_.max_events != 0 && events_.size() >= options_.max_events) {
      return absl::ResourceExhaustedError(
          absl::StrCat("CpuDevice: all ", options_.max_events,
                       " device events are in use (CpuDeviceOptions::max_events)"));
    }
    state->id = next_id_++;
    events_.emplace(state->id, state);
  }
  NotifyAcquire(ResourceInfo{ResourceKind::kEvent, state->id, -1});
  return EventRef{state->id};
}

// A wait-reset event destroyed with its flag set kept a record no wait
// consumed: a device object that outlives the run (a loaded model's events
// do) hands it to the next run's first wait, before that run's record.
void CpuDevice::DestroyEvent(EventRef event) {
  std::shared_ptr<SyncState> state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = events_.find(event.id);
    if (it == events_.end()) return;
    state = std::move(it->second);
    events_.erase(it);
  }
  uint64_t pending = 0;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    if (state->wait_reset) pending = state->set_by;
  }
  if (pending != 0) {
    NotifyEventMisuse(
        EventMisuse{EventMisuse::Kind::kRecordNeverWaited, event.id, 0, pending, pending});
  }
  NotifyRelease(ResourceInfo{ResourceKind::kEvent, event.id, -1});
}

absl::StatusOr<NotifyRef> CpuDevice::CreateNotify() {
  auto state = std::make_shared<SyncState>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (options_.max_notifies != 0 && notifies_.size() >= options_.max_notifies) {
      return absl::ResourceExhaustedError(
          absl::StrCat("CpuDevice: all ", options_.max_notifies,
                       " device notifies are in use (CpuDeviceOptions::max_notifies)"));
    }
    state->id = next_id_++;
    notifies_.emplace(state->id, state);
  }
  NotifyAcquire(ResourceInfo{ResourceKind::kNotify, state->id, -1});
  return NotifyRef{state->id};
}

void CpuDevice::DestroyNotify(NotifyRef notify) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (notifies_.erase(notify.id) == 0) return;
  }
  NotifyRelease(ResourceInfo{ResourceKind::kNotify, notify.id, -1});
}

absl::StatusOr<std::shared_ptr<CpuDevice::StreamState>> CpuDevice::FindStream(
    StreamRef stream) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(stream.id);
  if (it == streams_.end()) {
    return absl::NotFoundError(
        absl::StrCat("CpuDevice: unknown stream ", stream.id, " (never created or destroyed)"));
  }
  return it->second;
}

absl::StatusOr<std::shared_ptr<CpuDevice::SyncState>> CpuDevice::FindEvent(EventRef event) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event.id);
  if (it == events_.end()) {
    return absl::NotFoundError(
        absl::StrCat("CpuDevice: unknown event ", event.id, " (never created or destroyed)"));
  }
  return it->second;
}

absl::StatusOr<std::shared_ptr<CpuDevice::SyncState>> CpuDevice::FindNotify(
    NotifyRef notify) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = notifies_.find(notify.id);
  if (it == notifies_.end()) {
    return absl::NotFoundError(
        absl::StrCat("CpuDevice: unknown notify ", notify.id, " (never created or destroyed)"));
  }
  return it->second;
}

absl::Status CpuDevice::Launch(StreamRef stream, Task task) {
  auto s = FindStream(stream);
  if (!s.ok()) return s.status();
  if (!task) return absl::InvalidArgumentError("CpuDevice::Launch: empty task");
  StreamState* raw = s->get();
  return Enqueue(*s, [raw, task = std::move(task)] {
    std::string failure;
    try {
      task();
      return;
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown exception";
    }
    std::lock_guard<std::mutex> lock(raw->mu);
    if (raw->error.ok()) {
      raw->error =
          absl::InternalError(absl::StrCat("task on stream ", raw->id, " threw: ", failure));
    }
  });
}

// Assigns the next record generation and enqueues its completion, atomically
// with respect to concurrent waits on the same sync object.
absl::Status CpuDevice::Record(ResourceKind kind, const std::shared_ptr<SyncState>& sync,
                               const std::shared_ptr<StreamState>& stream) {
  std::lock_guard<std::mutex> lock(sync->mu);
  const uint64_t generation = sync->records_enqueued + 1;
  const uint64_t stream_id = stream->id;
  absl::Status s = Enqueue(stream, [this, sync, generation, stream_id] {
    if (sync->wait_reset) {
      uint64_t pending;
      {
        std::lock_guard<std::mutex> flag(sync->mu);
        pending = sync->set_by;
        sync->set_by = generation;
      }
      if (pending != 0) {
        NotifyEventMisuse(EventMisuse{EventMisuse::Kind::kRecordWhilePending, sync->id, stream_id,
                                      generation, pending});
      }
    }
    sync->Complete(generation);
  });
  if (s.ok()) sync->records_enqueued = generation;
  return s;
}

// Binds the wait to its record generation now and enqueues the blocking item.
absl::Status CpuDevice::Wait(ResourceKind kind, const std::shared_ptr<StreamState>& stream,
                             const std::shared_ptr<SyncState>& sync, uint64_t sync_id) {
  std::lock_guard<std::mutex> lock(sync->mu);
  const uint64_t generation =
      kind == ResourceKind::kEvent ? sync->records_enqueued : sync->waits_enqueued + 1;
  const uint64_t stream_id = stream->id;
  absl::Status s = Enqueue(stream, [this, kind, sync, generation, stream_id, sync_id] {
    if (sync->wait_reset) {
      AwaitAndConsume(*sync, generation, stream_id);
    } else if (generation != 0) {
      sync->AwaitDone(generation);
    }
    NotifyWait(WaitInfo{kind, stream_id, sync_id, generation});
  });
  if (s.ok() && kind == ResourceKind::kNotify) sync->waits_enqueued = generation;
  return s;
}

// A wait on a kEventWaitReset event: pending from now until its record has
// run, then it clears the flag. While pending, a flag set by another record
// is one it could consume (reported once); afterwards the flag must still be
// its own record's. A wait with no record before it (generation 0) passes,
// as any event wait does here, and is reported: the device would block.
void CpuDevice::AwaitAndConsume(SyncState& sync, uint64_t generation, uint64_t stream_id) {
  std::unique_lock<std::mutex> lock(sync.mu);
  auto report = [&](EventMisuse m) {  // observers run without the lock
    lock.unlock();
    NotifyEventMisuse(m);
    lock.lock();
  };
  if (generation == 0) {
    report(EventMisuse{EventMisuse::Kind::kWaitWithoutRecord, sync.id, stream_id, 0, sync.set_by});
    return;
  }
  bool foreign = false;
  for (;;) {
    if (!foreign && sync.set_by != 0 && sync.set_by != generation) {
      foreign = true;
      report(EventMisuse{EventMisuse::Kind::kForeignRecord, sync.id, stream_id, generation,
                         sync.set_by});
      continue;
    }
    if (generation == 0 || sync.Done(generation)) break;
    sync.cv.wait(lock);
  }
  if (sync.set_by == generation) {
    sync.set_by = 0;
  } else if (!foreign) {
    report(
        EventMisuse{EventMisuse::Kind::kRecordLost, sync.id, stream_id, generation, sync.set_by});
  }
}

absl::Status CpuDevice::RecordEvent(EventRef event, StreamRef stream) {
  auto e = FindEvent(event);
  if (!e.ok()) return e.status();
  auto s = FindStream(stream);
  if (!s.ok()) return s.status();
  return Record(ResourceKind::kEvent, *e, *s);
}

absl::Status CpuDevice::WaitEvent(StreamRef stream, EventRef event) {
  auto s = FindStream(stream);
  if (!s.ok()) return s.status();
  auto e = FindEvent(event);
  if (!e.ok()) return e.status();
  return Wait(ResourceKind::kEvent, *s, *e, event.id);
}

absl::Status CpuDevice::RecordNotify(NotifyRef notify, StreamRef stream) {
  auto n = FindNotify(notify);
  if (!n.ok()) return n.status();
  auto s = FindStream(stream);
  if (!s.ok()) return s.status();
  return Record(ResourceKind::kNotify, *n, *s);
}

absl::Status CpuDevice::WaitNotify(StreamRef stream, NotifyRef notify) {
  auto s = FindStream(stream);
  if (!s.ok()) return s.status();
  auto n = FindNotify(notify);
  if (!n.ok()) return n.status();
  return Wait(ResourceKind::kNotify, *s, *n, notify.id);
}

absl::Status CpuDevice::SynchronizeStream(StreamRef stream) {
  auto found = FindStream(stream);
  if (!found.ok()) return found.status();
  StreamState& s = **found;
  std::unique_lock<std::mutex> lock(s.mu);
  const uint64_t target = s.enqueued;
  s.idle_cv.wait(lock, [&] { return s.completed >= target; });
  return s.error;
}

absl::Status CpuDevice::SynchronizeEvent(EventRef event) {
  auto e = FindEvent(event);
  if (!e.ok()) return e.status();
  SyncState& sync = **e;
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(sync.mu);
    target = sync.records_enqueued;
  }
  if (target != 0) sync.AwaitDone(target);
  return absl::OkStatus();
}

absl::Status CpuDevice::Synchronize() {
  std::vector<StreamRef> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, s] : streams_) streams.push_back(StreamRef{id});
  }
  absl::Status first;
  for (StreamRef s : streams) {
    absl::Status st = SynchronizeStream(s);
    if (absl::IsNotFound(st)) continue;  // destroyed concurrently
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

size_t CpuDevice::live_streams() const {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_.size();
}
size_t CpuDevice::live_events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_.size();
}
size_t CpuDevice::live_notifies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return notifies_.size();
}
uint64_t CpuDevice::streams_created() const {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_created_;
}

}  // namespace npuplan::runtime
