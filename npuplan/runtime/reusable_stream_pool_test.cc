#include "npuplan/runtime/reusable_stream_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <vector>

#include "npuplan/runtime/cpu_device.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::runtime {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;

TEST(ReusableStreamPoolTest, NeverGivesAModelTheSameStreamTwice) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  std::set<StreamRef> got;
  for (int i = 0; i < 8; ++i) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef s, pool.GetOrCreateStream(1, 0, 0, 10));
    EXPECT_TRUE(got.insert(s).second) << "stream " << s.id << " handed to model 1 twice";
  }
  EXPECT_EQ(pool.stream_count(), 8u);
}

TEST(ReusableStreamPoolTest, SharesStreamsBetweenModels) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef a1, pool.GetOrCreateStream(1, 0, 0, 5));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef a2, pool.GetOrCreateStream(1, 0, 0, 5));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef b1, pool.GetOrCreateStream(2, 0, 0, 5));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef b2, pool.GetOrCreateStream(2, 0, 0, 5));
  EXPECT_EQ(std::set<StreamRef>({a1, a2}), std::set<StreamRef>({b1, b2}));
  EXPECT_NE(b1, b2);
  EXPECT_EQ(pool.stream_count(), 2u);
  EXPECT_EQ(device.live_streams(), 2u);
  for (const auto& s : pool.Snapshot()) {
    EXPECT_THAT(s.models, ElementsAre(1u, 2u));
    EXPECT_EQ(s.load, 10u);
  }
}

TEST(ReusableStreamPoolTest, KeysStreamsByPriorityAndFlags) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef a, pool.GetOrCreateStream(1, 0, kStreamPersistent));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef b, pool.GetOrCreateStream(2, 1, kStreamPersistent));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef c, pool.GetOrCreateStream(3, 0, kStreamHuge));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef d, pool.GetOrCreateStream(4, 0, kStreamPersistent));
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, d);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamInfo info, device.GetStreamInfo(b));
  EXPECT_EQ(info.priority, 1);
  EXPECT_EQ(info.flags, static_cast<uint32_t>(kStreamPersistent));
}

TEST(ReusableStreamPoolTest, PrefersTheClosestTaskCount) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  // Model 1 makes three streams with loads 10, 100, 1000.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef s10, pool.GetOrCreateStream(1, 0, 0, 10));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef s100, pool.GetOrCreateStream(1, 0, 0, 100));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef s1000, pool.GetOrCreateStream(1, 0, 0, 1000));
  // The first of model 1's requests shared nothing; later ones could not pick
  // model 1's own streams, so three streams exist.
  ASSERT_EQ(pool.stream_count(), 3u);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef x, pool.GetOrCreateStream(2, 0, 0, 120));
  EXPECT_EQ(x, s100);  // |100-120| smallest
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef y, pool.GetOrCreateStream(2, 0, 0, 900));
  EXPECT_EQ(y, s1000);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef z, pool.GetOrCreateStream(2, 0, 0, 0));
  EXPECT_EQ(z, s10);  // the only one model 2 does not hold yet
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef w, pool.GetOrCreateStream(2, 0, 0, 0));
  EXPECT_EQ(pool.stream_count(), 4u);  // model 2 holds all three: a new one
  EXPECT_NE(w, s10);
}

TEST(ReusableStreamPoolTest, BreaksTiesBySmallerLoadThenOlderStream) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef s40, pool.GetOrCreateStream(1, 0, 0, 40));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef s60, pool.GetOrCreateStream(1, 0, 0, 60));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef t, pool.GetOrCreateStream(2, 0, 0, 50));
  EXPECT_EQ(t, s40);
  (void)s60;
}

TEST(ReusableStreamPoolTest, SkipsStreamsThatWouldExceedTheTaskCap) {
  CpuDevice device;
  ReusableStreamPool pool(
      device, ReusableStreamPoolOptions{.max_tasks_per_stream = 1024, .observer = nullptr});
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef a, pool.GetOrCreateStream(1, 0, 0, 1000));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef b, pool.GetOrCreateStream(2, 0, 0, 100));
  EXPECT_NE(a, b);
  // a (1000) cannot take 924 more; b (100) can, exactly up to the cap.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef c, pool.GetOrCreateStream(3, 0, 0, 924));
  EXPECT_EQ(c, b);
  // Neither a (1000) nor b (1024) can take 25 more: a new stream.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef d, pool.GetOrCreateStream(4, 0, 0, 25));
  EXPECT_NE(d, a);
  EXPECT_NE(d, b);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef e, pool.GetOrCreateStream(5, 0, 0, 24));
  EXPECT_EQ(e, d);  // a fits too (1000 + 24), but d's load 25 is closer to 24
  EXPECT_EQ(pool.stream_count(), 3u);
}

TEST(ReusableStreamPoolTest, DestroysAStreamWhenItsLastModelReleasesIt) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef s, pool.GetOrCreateStream(1, 0, 0));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef t, pool.GetOrCreateStream(2, 0, 0));
  ASSERT_EQ(s, t);
  ASSERT_THAT(pool.ReleaseStream(1, s), IsOk());
  EXPECT_EQ(device.live_streams(), 1u);  // model 2 still holds it
  // Released and reused by another model.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef u, pool.GetOrCreateStream(3, 0, 0));
  EXPECT_EQ(u, s);
  // Model 1 may take it again after releasing.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef v, pool.GetOrCreateStream(1, 0, 0));
  EXPECT_EQ(v, s);
  ASSERT_THAT(pool.ReleaseModel(1), IsOk());
  ASSERT_THAT(pool.ReleaseStream(2, s), IsOk());
  EXPECT_EQ(device.live_streams(), 1u);
  ASSERT_THAT(pool.ReleaseStream(3, s), IsOk());
  EXPECT_EQ(device.live_streams(), 0u);
  EXPECT_EQ(pool.stream_count(), 0u);
  EXPECT_THAT(pool.ReleaseStream(3, s), StatusIs(absl::StatusCode::kNotFound, "does not hold"));
}

TEST(ReusableStreamPoolTest, ForcedDestroyRemovesAStreamFromEveryModel) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef s, pool.GetOrCreateStream(1, 0, 0));
  ASSERT_THAT(pool.GetOrCreateStream(2, 0, 0), IsOk());
  EXPECT_THAT(pool.DestroyStream(s), StatusIs(absl::StatusCode::kFailedPrecondition, "force=true"));
  EXPECT_EQ(device.live_streams(), 1u);
  ASSERT_THAT(pool.DestroyStream(s, /*force=*/true), IsOk());
  EXPECT_EQ(device.live_streams(), 0u);
  EXPECT_EQ(pool.stream_count(), 0u);
  EXPECT_THAT(pool.ReleaseStream(1, s), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(pool.DestroyStream(s, true), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(device.Launch(s, [] {}), StatusIs(absl::StatusCode::kNotFound));
  // Both models can get a fresh stream afterwards.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef fresh, pool.GetOrCreateStream(1, 0, 0));
  EXPECT_NE(fresh, s);
}

TEST(ReusableStreamPoolTest, CreationFailureLeavesThePoolUnchanged) {
  CpuDevice device;
  ReusableStreamPool pool(device);
  ASSERT_THAT(pool.GetOrCreateStream(1, 0, 0), IsOk());
  device.FailStreamCreationAfter(0);
  EXPECT_THAT(pool.GetOrCreateStream(1, 0, 0),
              StatusIs(absl::StatusCode::kResourceExhausted, "model 1"));
  EXPECT_EQ(pool.stream_count(), 1u);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamRef shared, pool.GetOrCreateStream(2, 0, 0));
  EXPECT_EQ(pool.Snapshot().at(0).stream, shared);  // sharing needs no creation
}

TEST(ReusableStreamPoolTest, EnforcesItsStreamCap) {
  CpuDevice device;
  ReusableStreamPool pool(device, ReusableStreamPoolOptions{.max_streams = 2, .observer = nullptr});
  ASSERT_THAT(pool.GetOrCreateStream(1, 0, 0), IsOk());
  ASSERT_THAT(pool.GetOrCreateStream(1, 0, 0), IsOk());
  EXPECT_THAT(pool.GetOrCreateStream(1, 0, 0), StatusIs(absl::StatusCode::kResourceExhausted,
                                                        "ReusableStreamPoolOptions::max_streams"));
}

class BindingObserver : public RuntimeObserver {
 public:
  void on_acquire(const ResourceInfo& e) override {
    if (e.model_id >= 0) ++binds;
  }
  void on_release(const ResourceInfo& e) override {
    if (e.model_id >= 0) ++unbinds;
  }
  std::atomic<int> binds{0};
  std::atomic<int> unbinds{0};
};

TEST(ReusableStreamPoolTest, ReportsBindsAndUnbindsToItsObserver) {
  CpuDevice device;
  auto observer = std::make_shared<BindingObserver>();
  {
    ReusableStreamPool pool(device, ReusableStreamPoolOptions{.observer = observer});
    ASSERT_THAT(pool.GetOrCreateStream(1, 0, 0), IsOk());
    ASSERT_THAT(pool.GetOrCreateStream(2, 0, 0), IsOk());
    ASSERT_THAT(pool.ReleaseModel(1), IsOk());
    EXPECT_EQ(observer->binds, 2);
    EXPECT_EQ(observer->unbinds, 1);
  }
  EXPECT_EQ(observer->unbinds, 2);  // the destructor releases model 2
  EXPECT_EQ(device.live_streams(), 0u);
}

}  // namespace
}  // namespace npuplan::runtime
