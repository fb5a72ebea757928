#include "npuplan/runtime/stream_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "npuplan/runtime/cpu_device.h"
#include "npuplan/runtime/event_pool.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::runtime {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// Distinct, valid, pool-created streams in slots 1..n-1.
void ExpectDistinctCreated(const std::vector<StreamRef>& slots, StreamRef caller) {
  std::set<StreamRef> seen;
  for (size_t i = 1; i < slots.size(); ++i) {
    EXPECT_TRUE(slots[i].valid()) << "slot " << i;
    EXPECT_NE(slots[i], caller) << "slot " << i;
    EXPECT_TRUE(seen.insert(slots[i]).second) << "slot " << i << " repeated";
  }
}

TEST(StreamPoolTest, AcquiresTwentyTwoFromEmptyWithCallerInSlotZero) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream caller, CreateStream(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, StreamPool::Create(device, {}, caller.get()));
  EXPECT_EQ(pool->size(), 1u);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> slots, pool->AcquireStreams(22));
  ASSERT_EQ(slots.size(), 22u);
  EXPECT_EQ(slots[0], caller.get());
  ExpectDistinctCreated(slots, caller.get());
  EXPECT_EQ(device.live_streams(), 22u);  // 21 created + the caller's
}

TEST(StreamPoolTest, LeavesSlotZeroEmptyUntilTheCallerSetsIt) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, StreamPool::Create(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> slots, pool->AcquireStreams(22));
  ASSERT_EQ(slots.size(), 22u);
  EXPECT_FALSE(slots[0].valid());
  EXPECT_EQ(device.live_streams(), 21u);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream caller, CreateStream(device));
  pool->SetCallerStream(caller.get());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(slots, pool->AcquireStreams(1));
  ASSERT_EQ(slots.size(), 22u);
  EXPECT_EQ(slots[0], caller.get());
}

TEST(StreamPoolTest, GrowsFromElevenToTwentyTwoKeepingThePrefix) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, StreamPool::Create(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> first, pool->AcquireStreams(11));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> second, pool->AcquireStreams(22));
  ASSERT_EQ(first.size(), 11u);
  ASSERT_EQ(second.size(), 22u);
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i], second[i]) << i;
  EXPECT_EQ(device.streams_created(), 21u);
}

TEST(StreamPoolTest, NeverShrinks) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, StreamPool::Create(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> big, pool->AcquireStreams(33));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> small, pool->AcquireStreams(22));
  EXPECT_EQ(small.size(), 33u);
  EXPECT_EQ(small, big);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> none, pool->AcquireStreams(0));
  EXPECT_EQ(none.size(), 33u);
  EXPECT_EQ(device.streams_created(), 32u);
}

TEST(StreamPoolTest, AcceptsExactlyTheCapAndRejectsOneMore) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, StreamPool::Create(device));
  EXPECT_THAT(pool->AcquireStreams(2025),
              StatusIs(absl::StatusCode::kResourceExhausted, "at most 2024 streams"));
  EXPECT_THAT(pool->AcquireStreams(2025),
              StatusIs(absl::StatusCode::kResourceExhausted, "StreamPoolOptions::max_streams"));
  EXPECT_EQ(pool->size(), 1u);
  EXPECT_EQ(device.live_streams(), 0u);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> all, pool->AcquireStreams(2024));
  EXPECT_EQ(all.size(), 2024u);
}

TEST(StreamPoolTest, HonoursAConfiguredCap) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool,
                               StreamPool::Create(device, StreamPoolOptions{.max_streams = 8}));
  EXPECT_THAT(pool->AcquireStreams(8), IsOk());
  EXPECT_THAT(pool->AcquireStreams(9),
              StatusIs(absl::StatusCode::kResourceExhausted, "at most 8 streams"));
  EXPECT_THAT(StreamPool::Create(device, StreamPoolOptions{.max_streams = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, "max_streams"));
}

TEST(StreamPoolTest, CreationFailureMidwayLeavesThePoolAsBefore) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, StreamPool::Create(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> before, pool->AcquireStreams(5));
  device.FailStreamCreationAfter(10);  // 4 already exist; 10 more succeed, then fail
  EXPECT_THAT(pool->AcquireStreams(30),
              StatusIs(absl::StatusCode::kResourceExhausted, "creating slot 15 failed"));
  EXPECT_EQ(pool->size(), 5u);
  EXPECT_EQ(device.live_streams(), 4u);  // the 10 made by the failed call were destroyed
  device.SetStreamCreateFault(nullptr);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> after, pool->AcquireStreams(30));
  ASSERT_EQ(after.size(), 30u);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i], after[i]);
  ExpectDistinctCreated(after, StreamRef{});
  EXPECT_EQ(device.live_streams(), 29u);
}

TEST(StreamPoolTest, DestroysItsStreamsButNotTheCallers) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Stream caller, CreateStream(device));
  {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, StreamPool::Create(device, {}, caller.get()));
    ASSERT_THAT(pool->AcquireStreams(16), IsOk());
    EXPECT_EQ(device.live_streams(), 16u);
  }
  EXPECT_EQ(device.live_streams(), 1u);
  EXPECT_THAT(device.GetStreamInfo(caller.get()), IsOk());
}

TEST(StreamPoolTest, CreatesStreamsWithThePoolsPriorityAndFlags) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      auto pool,
      StreamPool::Create(device, StreamPoolOptions{.priority = 2, .flags = kStreamPersistent}));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> slots, pool->AcquireStreams(4));
  for (size_t i = 1; i < slots.size(); ++i) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamInfo info, device.GetStreamInfo(slots[i]));
    EXPECT_EQ(info.priority, 2);
    EXPECT_EQ(info.flags, static_cast<uint32_t>(kStreamPersistent));
  }
}

TEST(StreamPoolTest, PoolStreamsRunTasks) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, StreamPool::Create(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<StreamRef> slots, pool->AcquireStreams(4));
  std::atomic<int> ran{0};
  for (size_t i = 1; i < slots.size(); ++i) {
    ASSERT_THAT(device.Launch(slots[i], [&] { ++ran; }), IsOk());
  }
  ASSERT_THAT(device.Synchronize(), IsOk());
  EXPECT_EQ(ran.load(), 3);
}

TEST(EventPoolTest, GrowsNeverShrinksAndDefaultsTo1023) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, EventPool::Create(device));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<EventRef> a, pool->AcquireEvents(10));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<EventRef> b, pool->AcquireEvents(4));
  EXPECT_EQ(a.size(), 10u);
  EXPECT_EQ(a, b);
  EXPECT_THAT(pool->AcquireEvents(1024),
              StatusIs(absl::StatusCode::kResourceExhausted, "at most 1023 events"));
  EXPECT_THAT(pool->AcquireEvents(1023), IsOk());
  EXPECT_EQ(device.live_events(), 1023u);
  pool.reset();
  EXPECT_EQ(device.live_events(), 0u);
}

TEST(EventPoolTest, DeviceFailureMidwayLeavesThePoolAsBefore) {
  CpuDevice device(CpuDeviceOptions{.max_events = 12});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, EventPool::Create(device));
  ASSERT_THAT(pool->AcquireEvents(5), IsOk());
  EXPECT_THAT(pool->AcquireEvents(20),
              StatusIs(absl::StatusCode::kResourceExhausted, "creating slot 12 failed"));
  EXPECT_EQ(pool->size(), 5u);
  EXPECT_EQ(device.live_events(), 5u);
}

TEST(NotifyPoolTest, BoundsNotifiesAt1024) {
  CpuDevice device;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pool, NotifyPool::Create(device));
  EXPECT_THAT(pool->AcquireNotifies(1025),
              StatusIs(absl::StatusCode::kResourceExhausted, "NotifyPoolOptions::max_notifies"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::vector<NotifyRef> all, pool->AcquireNotifies(1024));
  EXPECT_EQ(all.size(), 1024u);
  EXPECT_EQ(std::set<NotifyRef>(all.begin(), all.end()).size(), 1024u);
  EXPECT_THAT(NotifyPool::Create(device, NotifyPoolOptions{.max_notifies = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace npuplan::runtime
