#include "npuplan/runtime/cpu_device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "npuplan/testing/status_matchers.h"

namespace npuplan::runtime {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// A host-side gate a task can block on until the test opens it.
class Gate {
 public:
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Pass() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(CpuDeviceTest, RunsTasksInEnqueueOrderWithinAStream) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device));
  std::vector<int> order;  // touched only by s's worker until synchronised
  for (int i = 0; i < 1000; ++i) {
    ASSERT_THAT(device.Launch(s.get(), [&order, i] { order.push_back(i); }), IsOk());
  }
  ASSERT_THAT(device.SynchronizeStream(s.get()), IsOk());
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(order[i], i);
}

TEST(CpuDeviceTest, WaitBlocksUntilRecordersPriorTasksFinish) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream b, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
  Gate gate;
  std::atomic<bool> produced{false};
  std::atomic<bool> consumer_saw_product{false};
  ASSERT_THAT(device.Launch(a.get(),
                            [&] {
                              gate.Pass();
                              produced = true;
                            }),
              IsOk());
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());
  ASSERT_THAT(device.WaitEvent(b.get(), e.get()), IsOk());
  ASSERT_THAT(device.Launch(b.get(), [&] { consumer_saw_product = produced.load(); }), IsOk());
  gate.Open();
  ASSERT_THAT(device.Synchronize(), IsOk());
  EXPECT_TRUE(consumer_saw_product);
}

TEST(CpuDeviceTest, WaitObservesTheMostRecentRecordEnqueuedBeforeIt) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream b, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
  Gate second;
  std::atomic<bool> b_done{false};
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());  // generation 1: free
  ASSERT_THAT(device.WaitEvent(b.get(), e.get()), IsOk());    // binds to generation 1
  ASSERT_THAT(device.Launch(b.get(), [&] { b_done = true; }), IsOk());
  ASSERT_THAT(device.Launch(a.get(), [&] { second.Pass(); }), IsOk());
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());  // generation 2: gated
  // b must finish although the later record cannot run yet.
  ASSERT_THAT(device.SynchronizeStream(b.get()), IsOk());
  EXPECT_TRUE(b_done);
  second.Open();
  EXPECT_THAT(device.Synchronize(), IsOk());
}

TEST(CpuDeviceTest, WaitAfterReRecordOnAnotherStreamWaitsForTheNewRecord) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream b, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream c, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
  Gate gate;
  std::atomic<bool> produced{false};
  std::atomic<bool> saw{false};
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());
  ASSERT_THAT(device.SynchronizeEvent(e.get()), IsOk());
  ASSERT_THAT(device.Launch(c.get(),
                            [&] {
                              gate.Pass();
                              produced = true;
                            }),
              IsOk());
  ASSERT_THAT(device.RecordEvent(e.get(), c.get()), IsOk());
  ASSERT_THAT(device.WaitEvent(b.get(), e.get()), IsOk());
  ASSERT_THAT(device.Launch(b.get(), [&] { saw = produced.load(); }), IsOk());
  gate.Open();
  ASSERT_THAT(device.Synchronize(), IsOk());
  EXPECT_TRUE(saw);
}

TEST(CpuDeviceTest, WaitOnNeverRecordedEventDoesNotBlock) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
  ASSERT_THAT(device.WaitEvent(s.get(), e.get()), IsOk());
  EXPECT_THAT(device.SynchronizeStream(s.get()), IsOk());
  EXPECT_THAT(device.SynchronizeEvent(e.get()), IsOk());
}

TEST(CpuDeviceTest, NotifyWaitPairsWithARecordEnqueuedLater) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream b, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Notify n, CreateNotify(device));
  std::atomic<int> produced{0};
  std::vector<int> seen;  // b's worker only
  // Two waits enqueued before any record: the k-th waits for the k-th record.
  for (int k = 0; k < 2; ++k) {
    ASSERT_THAT(device.WaitNotify(b.get(), n.get()), IsOk());
    ASSERT_THAT(device.Launch(b.get(), [&] { seen.push_back(produced.load()); }), IsOk());
  }
  for (int k = 0; k < 2; ++k) {
    ASSERT_THAT(device.Launch(a.get(), [&] { produced.fetch_add(1); }), IsOk());
    ASSERT_THAT(device.RecordNotify(n.get(), a.get()), IsOk());
  }
  ASSERT_THAT(device.Synchronize(), IsOk());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_GE(seen[0], 1);
  EXPECT_GE(seen[1], 2);
}

TEST(CpuDeviceTest, CrossStreamDagStressHasNoOrderViolations) {
  // A random DAG of tasks over many streams; every cross-stream edge gets its
  // own event, same-stream edges rely on queue order. Each task checks that all
  // its producers have finished.
  constexpr int kStreams = 24;
  constexpr int kTasks = 3000;
  CpuDevice device;
  std::vector<Stream> streams;
  for (int i = 0; i < kStreams; ++i) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device, i % 3, 0));
    streams.push_back(std::move(s));
  }
  std::mt19937 rng(12345);
  std::vector<int> stream_of(kTasks);
  std::vector<std::vector<int>> producers(kTasks);
  auto done = std::make_unique<std::atomic<bool>[]>(kTasks);
  for (int t = 0; t < kTasks; ++t) done[t] = false;
  std::atomic<int> violations{0};
  std::vector<Event> events;
  for (int t = 0; t < kTasks; ++t) {
    stream_of[t] = static_cast<int>(rng() % kStreams);
    const int fan_in = t == 0 ? 0 : static_cast<int>(rng() % 4);
    for (int k = 0; k < fan_in; ++k) producers[t].push_back(static_cast<int>(rng() % t));
    StreamRef s = streams[stream_of[t]].get();
    for (int p : producers[t]) {
      if (stream_of[p] == stream_of[t]) continue;
      // Record right after p would be ideal; recording now on p's stream orders
      // at least everything p's stream has enqueued so far, p included.
      NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
      ASSERT_THAT(device.RecordEvent(e.get(), streams[stream_of[p]].get()), IsOk());
      ASSERT_THAT(device.WaitEvent(s, e.get()), IsOk());
      events.push_back(std::move(e));  // destroying early would also be legal
    }
    ASSERT_THAT(device.Launch(s,
                              [&, t] {
                                for (int p : producers[t]) {
                                  if (!done[p].load()) violations.fetch_add(1);
                                }
                                done[t] = true;
                              }),
                IsOk());
  }
  ASSERT_THAT(device.Synchronize(), IsOk());
  EXPECT_EQ(violations.load(), 0);
  for (int t = 0; t < kTasks; ++t) EXPECT_TRUE(done[t].load()) << t;
}

TEST(CpuDeviceTest, ReusedEventsAcrossManyStreamsKeepOrder) {
  // One event per stream, re-recorded after every task: waits must bind to the
  // record enqueued just before them.
  constexpr int kStreams = 16;
  constexpr int kRounds = 300;
  CpuDevice device;
  std::vector<Stream> streams;
  std::vector<Event> events;
  for (int i = 0; i < kStreams; ++i) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
    streams.push_back(std::move(s));
    events.push_back(std::move(e));
  }
  std::vector<std::atomic<int>> progress(kStreams);
  for (auto& p : progress) p = 0;
  std::atomic<int> violations{0};
  for (int r = 1; r <= kRounds; ++r) {
    for (int i = 0; i < kStreams; ++i) {
      const int from = (i + r) % kStreams;
      if (from != i) {
        ASSERT_THAT(device.WaitEvent(streams[i].get(), events[from].get()), IsOk());
      }
      // Stream `from` has completed its rounds < r (or r if it was enqueued first).
      const int need = from < i ? r : r - 1;
      ASSERT_THAT(device.Launch(streams[i].get(),
                                [&, i, from, need, r] {
                                  if (from != i && progress[from].load() < need) {
                                    violations.fetch_add(1);
                                  }
                                  progress[i] = r;
                                }),
                  IsOk());
      ASSERT_THAT(device.RecordEvent(events[i].get(), streams[i].get()), IsOk());
    }
  }
  ASSERT_THAT(device.Synchronize(), IsOk());
  EXPECT_EQ(violations.load(), 0);
}

TEST(CpuDeviceTest, FailsStreamCreationWhenFaultInjected) {
  CpuDevice device;
  device.FailStreamCreationAfter(2);
  EXPECT_THAT(device.CreateStream(0, 0), IsOk());
  EXPECT_THAT(device.CreateStream(0, 0), IsOk());
  EXPECT_THAT(device.CreateStream(0, 0),
              StatusIs(absl::StatusCode::kResourceExhausted, "injected stream creation failure"));
  device.SetStreamCreateFault(nullptr);
  EXPECT_THAT(device.CreateStream(0, 0), IsOk());
  EXPECT_EQ(device.live_streams(), 3u);
}

TEST(CpuDeviceTest, EnforcesDeviceLimits) {
  CpuDevice device(CpuDeviceOptions{.max_streams = 2, .max_events = 1, .max_notifies = 1});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s1, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s2, CreateStream(device));
  EXPECT_THAT(CreateStream(device),
              StatusIs(absl::StatusCode::kResourceExhausted, "CpuDeviceOptions::max_streams"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
  EXPECT_THAT(CreateEvent(device), StatusIs(absl::StatusCode::kResourceExhausted));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Notify n, CreateNotify(device));
  EXPECT_THAT(CreateNotify(device), StatusIs(absl::StatusCode::kResourceExhausted));
  s2.reset();
  EXPECT_THAT(CreateStream(device), IsOk());
}

TEST(CpuDeviceTest, HandlesDestroyOnScopeExitAndTransferOnMove) {
  CpuDevice device;
  {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Notify n, CreateNotify(device));
    EXPECT_EQ(device.live_streams(), 1u);
    Stream moved = std::move(s);
    EXPECT_FALSE(s);  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_TRUE(moved);
    EXPECT_EQ(device.live_streams(), 1u);
    EXPECT_EQ(device.live_events(), 1u);
    EXPECT_EQ(device.live_notifies(), 1u);
  }
  EXPECT_EQ(device.live_streams(), 0u);
  EXPECT_EQ(device.live_events(), 0u);
  EXPECT_EQ(device.live_notifies(), 0u);
}

TEST(CpuDeviceTest, DestroyingAStreamDrainsItsQueue) {
  CpuDevice device;
  std::atomic<int> ran{0};
  {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device));
    for (int i = 0; i < 100; ++i) ASSERT_THAT(device.Launch(s.get(), [&] { ++ran; }), IsOk());
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST(CpuDeviceTest, AStreamMayBeDestroyedFromItsOwnTask) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream other, CreateStream(device));
  const StreamRef self = s.release();
  std::atomic<bool> later{false};
  Gate gate;  // keeps the destroying task back until everything is enqueued
  ASSERT_THAT(device.Launch(self,
                            [&device, &gate, self] {
                              gate.Pass();
                              device.DestroyStream(self);
                            }),
              IsOk());
  ASSERT_THAT(device.Launch(self, [&] { later = true; }), IsOk());  // still drained
  ASSERT_THAT(device.RecordEvent(e.get(), self), IsOk());
  ASSERT_THAT(device.WaitEvent(other.get(), e.get()), IsOk());
  gate.Open();
  ASSERT_THAT(device.SynchronizeStream(other.get()), IsOk());
  EXPECT_TRUE(later);
  EXPECT_EQ(device.live_streams(), 1u);
}

TEST(CpuDeviceTest, RejectsStaleHandles) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
  const StreamRef stale_stream = s.get();
  const EventRef stale_event = e.get();
  s.reset();
  e.reset();
  EXPECT_THAT(device.Launch(stale_stream, [] {}), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(device.SynchronizeStream(stale_stream), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(device.SynchronizeEvent(stale_event), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(device.GetStreamInfo(stale_stream), StatusIs(absl::StatusCode::kNotFound));
}

TEST(CpuDeviceTest, KeepsTheFirstTaskFailureAndRunsLaterWork) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device));
  std::atomic<bool> later{false};
  ASSERT_THAT(device.Launch(s.get(), [] { throw std::runtime_error("boom"); }), IsOk());
  ASSERT_THAT(device.Launch(s.get(), [&] { later = true; }), IsOk());
  EXPECT_THAT(device.SynchronizeStream(s.get()), StatusIs(absl::StatusCode::kInternal, "boom"));
  EXPECT_TRUE(later);
}

TEST(CpuDeviceTest, RecordsStreamPriorityAndFlags) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device, 3, kStreamHuge | kStreamPersistent));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamInfo info, device.GetStreamInfo(s.get()));
  EXPECT_EQ(info.priority, 3);
  EXPECT_EQ(info.flags, kStreamHuge | kStreamPersistent);
}

class CountingObserver : public RuntimeObserver {
 public:
  void on_acquire(const ResourceInfo& e) override { ++acquired[static_cast<int>(e.kind)]; }
  void on_release(const ResourceInfo& e) override { ++released[static_cast<int>(e.kind)]; }
  void on_wait(const WaitInfo& e) override {
    ++waits;
    last_generation = e.generation;
  }
  std::atomic<int> acquired[3] = {0, 0, 0};
  std::atomic<int> released[3] = {0, 0, 0};
  std::atomic<int> waits{0};
  std::atomic<uint64_t> last_generation{0};
};

TEST(CpuDeviceTest, ReportsAcquireReleaseAndWaitToObservers) {
  CpuDevice device;
  auto observer = std::make_shared<CountingObserver>();
  device.AddObserver(observer);
  {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream b, CreateStream(device));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
    ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());
    ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());
    ASSERT_THAT(device.WaitEvent(b.get(), e.get()), IsOk());
    ASSERT_THAT(device.Synchronize(), IsOk());
  }
  EXPECT_EQ(observer->acquired[0], 2);
  EXPECT_EQ(observer->released[0], 2);
  EXPECT_EQ(observer->acquired[1], 1);
  EXPECT_EQ(observer->released[1], 1);
  EXPECT_EQ(observer->waits, 1);
  EXPECT_EQ(observer->last_generation, 2u);
}

// Issue 23: an event created with kEventWaitReset is one flag.
class MisuseObserver final : public RuntimeObserver {
 public:
  void on_event_misuse(const EventMisuse& e) override {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(e);
  }
  std::mutex mu;
  std::vector<EventMisuse> seen;
};

TEST(CpuDeviceTest, WaitResetEventReportsASecondRecordBeforeTheFirstWasConsumed) {
  CpuDevice device;
  auto observer = std::make_shared<MisuseObserver>();
  device.AddObserver(observer);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream b, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device, kEventWaitReset));
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());  // nobody waited for the first
  ASSERT_THAT(device.Synchronize(), IsOk());
  ASSERT_THAT(device.WaitEvent(b.get(), e.get()), IsOk());
  ASSERT_THAT(device.Synchronize(), IsOk());
  ASSERT_EQ(observer->seen.size(), 1u);
  EXPECT_EQ(observer->seen[0].kind, EventMisuse::Kind::kRecordWhilePending);
  EXPECT_EQ(observer->seen[0].generation, 2u);
  EXPECT_EQ(observer->seen[0].pending, 1u);
  EXPECT_EQ(observer->seen[0].stream_id, a.get().id);
}

// A wait enqueued before any record of its event passes (a no-op, as on
// CUDA), but a wait-reset device would block on it: reported.
TEST(CpuDeviceTest, WaitResetEventReportsAWaitWithNoRecordBeforeIt) {
  CpuDevice device;
  auto observer = std::make_shared<MisuseObserver>();
  device.AddObserver(observer);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream b, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device, kEventWaitReset));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event plain, CreateEvent(device));
  ASSERT_THAT(device.WaitEvent(b.get(), plain.get()), IsOk());  // not wait-reset: no report
  ASSERT_THAT(device.WaitEvent(b.get(), e.get()), IsOk());
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());
  ASSERT_THAT(device.WaitEvent(b.get(), e.get()), IsOk());  // bound to that record: clean
  ASSERT_THAT(device.Synchronize(), IsOk());
  ASSERT_EQ(observer->seen.size(), 1u);
  EXPECT_EQ(observer->seen[0].kind, EventMisuse::Kind::kWaitWithoutRecord);
  EXPECT_EQ(observer->seen[0].generation, 0u);
  EXPECT_EQ(observer->seen[0].stream_id, b.get().id);
}

// A loaded model's events outlive a run: a record no wait consumed would
// let the next run's first wait pass before that run's record.
TEST(CpuDeviceTest, WaitResetEventDestroyedWithARecordNoWaitConsumedIsReported) {
  CpuDevice device;
  auto observer = std::make_shared<MisuseObserver>();
  device.AddObserver(observer);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device, kEventWaitReset));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event consumed, CreateEvent(device, kEventWaitReset));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event plain, CreateEvent(device));
  const uint64_t id = e.get().id;
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());
  ASSERT_THAT(device.RecordEvent(consumed.get(), a.get()), IsOk());
  ASSERT_THAT(device.WaitEvent(a.get(), consumed.get()), IsOk());
  ASSERT_THAT(device.RecordEvent(plain.get(), a.get()), IsOk());  // not wait-reset: no report
  ASSERT_THAT(device.Synchronize(), IsOk());
  EXPECT_TRUE(observer->seen.empty());
  e.reset();
  consumed.reset();
  plain.reset();
  ASSERT_EQ(observer->seen.size(), 1u);
  EXPECT_EQ(observer->seen[0].kind, EventMisuse::Kind::kRecordNeverWaited);
  EXPECT_EQ(observer->seen[0].event_id, id);
  EXPECT_EQ(observer->seen[0].pending, 1u);
}

TEST(CpuDeviceTest, WaitResetEventReportsAWaitPendingOverAnotherRecord) {
  CpuDevice device;
  auto observer = std::make_shared<MisuseObserver>();
  device.AddObserver(observer);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream b, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device, kEventWaitReset));
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()),
              IsOk());  // generation 1, its waiter comes later
  ASSERT_THAT(device.Synchronize(), IsOk());
  Gate later;
  ASSERT_THAT(device.Launch(a.get(), [&] { later.Pass(); }), IsOk());
  ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());  // generation 2, gated
  ASSERT_THAT(device.WaitEvent(b.get(), e.get()), IsOk());    // bound to 2, pending while 1 is set
  // The report comes as soon as b's wait is pending (generation 2 is still gated).
  auto foreign_seen = [&] {
    std::lock_guard<std::mutex> lock(observer->mu);
    return std::any_of(observer->seen.begin(), observer->seen.end(), [](const EventMisuse& m) {
      return m.kind == EventMisuse::Kind::kForeignRecord;
    });
  };
  for (int i = 0; i < 10000 && !foreign_seen(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(foreign_seen());
  later.Open();
  ASSERT_THAT(device.Synchronize(), IsOk());
  std::vector<EventMisuse::Kind> kinds;
  for (const EventMisuse& m : observer->seen) kinds.push_back(m.kind);
  EXPECT_THAT(kinds, ::testing::Contains(EventMisuse::Kind::kForeignRecord));
}

TEST(CpuDeviceTest, WaitResetEventRecordWaitRecordWaitIsClean) {
  CpuDevice device;
  auto observer = std::make_shared<MisuseObserver>();
  device.AddObserver(observer);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream a, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream b, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device, kEventWaitReset));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Event back, CreateEvent(device));
  for (int i = 0; i < 50; ++i) {
    ASSERT_THAT(device.RecordEvent(e.get(), a.get()), IsOk());
    ASSERT_THAT(device.WaitEvent(b.get(), e.get()), IsOk());
    ASSERT_THAT(device.RecordEvent(back.get(), b.get()),
                IsOk());  // a records again only after b waited
    ASSERT_THAT(device.WaitEvent(a.get(), back.get()), IsOk());
  }
  ASSERT_THAT(device.Synchronize(), IsOk());
  EXPECT_TRUE(observer->seen.empty());
  device.RemoveObserver(observer.get());
}

}  // namespace
}  // namespace npuplan::runtime
