// R5: the pools and the CPU device hammered from many threads. These tests
// check invariants, not timings; they are meant to run under ThreadSanitizer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "npuplan/runtime/cpu_device.h"
#include "npuplan/runtime/event_pool.h"
#include "npuplan/runtime/reusable_stream_pool.h"
#include "npuplan/runtime/stream_pool.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::runtime {
namespace {

using ::npuplan::testing::IsOk;

constexpr int kThreads = 8;

TEST(PoolConcurrencyTest, StreamPoolHandsEveryThreadAPrefixOfOneVector) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream caller, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, StreamPool::Create(device, {}, caller.get()));
  std::vector<std::vector<std::vector<StreamRef>>> results(kThreads);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 100; ++i) {
        absl::StatusOr<std::vector<StreamRef>> got = pool->AcquireStreams(1 + rng() % 64);
        if (!got.ok()) {
          ++errors;
          continue;
        }
        // Launch something on one slot to exercise the device concurrently.
        StreamRef s = (*got)[got->size() - 1];
        if (!device.Launch(s, [] {}).ok()) ++errors;
        results[t].push_back(*std::move(got));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> final_slots, pool->AcquireStreams(0));
  EXPECT_EQ(final_slots[0], caller.get());
  for (const auto& per_thread : results) {
    for (const auto& v : per_thread) {
      ASSERT_LE(v.size(), final_slots.size());
      EXPECT_TRUE(std::equal(v.begin(), v.end(), final_slots.begin()));
    }
  }
  EXPECT_EQ(device.live_streams(), final_slots.size());
  EXPECT_EQ(device.streams_created(), final_slots.size());  // caller + one per slot 1..
  EXPECT_THAT(device.Synchronize(), IsOk());
}

TEST(PoolConcurrencyTest, EventAndNotifyPoolsStayConsistentUnderContention) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto events, EventPool::Create(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto notifies, NotifyPool::Create(device));
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      for (int i = 0; i < 100; ++i) {
        const size_t n = 1 + rng() % 1100;  // sometimes above the caps
        absl::StatusOr<std::vector<EventRef>> e = events->AcquireEvents(n);
        if (e.ok() != (n <= EventPool::kDefaultMaxEvents)) ++errors;
        if (e.ok() && e->size() < n) ++errors;
        absl::StatusOr<std::vector<NotifyRef>> m = notifies->AcquireNotifies(n);
        if (m.ok() != (n <= NotifyPool::kDefaultMaxNotifies)) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(device.live_events(), events->size());
  EXPECT_EQ(device.live_notifies(), notifies->size());
}

TEST(PoolConcurrencyTest, ReusablePoolNeverHandsAModelItsOwnStreamUnderContention) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  std::atomic<int> violations{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  // Each thread plays two models in turn (load, use, unload), so several
  // threads' models share streams at any time.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(200 + t);
      for (int round = 0; round < 60; ++round) {
        const ModelId model = static_cast<ModelId>(t * 1000 + round % 2);
        std::set<StreamRef> mine;
        const int want = 1 + static_cast<int>(rng() % 6);
        for (int k = 0; k < want; ++k) {
          const int32_t priority = static_cast<int32_t>(rng() % 2);
          absl::StatusOr<StreamRef> s =
              pool.GetOrCreateStream(model, priority, kStreamPersistent, rng() % 200);
          if (!s.ok()) {
            ++errors;
            continue;
          }
          if (!mine.insert(*s).second) ++violations;
          if (!device.Launch(*s, [] {}).ok()) ++errors;
        }
        // Release half one by one, the rest with ReleaseModel.
        int k = 0;
        for (StreamRef s : mine) {
          if (k++ % 2 == 0 && !pool.ReleaseStream(model, s).ok()) ++errors;
        }
        if (!pool.ReleaseModel(model).ok()) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(pool.stream_count(), 0u);
  EXPECT_EQ(device.live_streams(), 0u);
}

TEST(PoolConcurrencyTest, ReusablePoolSurvivesConcurrentForcedDestroys) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  std::atomic<int> unexpected{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(300 + t);
      const ModelId model = static_cast<ModelId>(t);
      for (int i = 0; i < 200; ++i) {
        absl::StatusOr<StreamRef> s = pool.GetOrCreateStream(model, 0, 0, rng() % 50);
        if (!s.ok()) {
          ++unexpected;
          continue;
        }
        absl::Status st = (rng() % 3 == 0) ? pool.DestroyStream(*s, /*force=*/true)
                                           : pool.ReleaseStream(model, *s);
        // Another thread may have force-destroyed it first.
        if (!st.ok() && !absl::IsNotFound(st)) ++unexpected;
      }
      if (!pool.ReleaseModel(model).ok()) ++unexpected;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(pool.stream_count(), 0u);
  EXPECT_EQ(device.live_streams(), 0u);
}

TEST(PoolConcurrencyTest, DeviceAcceptsWorkFromManyHostThreads) {
  CpuDevice device;
  constexpr int kStreams = 8;
  std::vector<Stream> streams;
  std::vector<Event> events;
  for (int i = 0; i < kStreams; ++i) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream s, CreateStream(device));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Event e, CreateEvent(device));
    streams.push_back(std::move(s));
    events.push_back(std::move(e));
  }
  std::atomic<int> ran{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(400 + t);
      for (int i = 0; i < 300; ++i) {
        const int a = static_cast<int>(rng() % kStreams);
        const int b = static_cast<int>(rng() % kStreams);
        if (!device.Launch(streams[a].get(), [&] { ++ran; }).ok()) ++errors;
        if (!device.RecordEvent(events[a].get(), streams[a].get()).ok()) ++errors;
        if (!device.WaitEvent(streams[b].get(), events[a].get()).ok()) ++errors;
        if (i % 50 == 0 && !device.SynchronizeEvent(events[a].get()).ok()) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_THAT(device.Synchronize(), IsOk());
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(ran.load(), kThreads * 300);
}

}  // namespace
}  // namespace npuplan::runtime
