#include "npuplan/events/device_limit_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/pass/options.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Op;
using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// `pairs` independent a_i (stream 0) → b_i (stream 1 + i % streams) edges:
// one event each, 1 + `streams` streams.
Plan Pairs(int pairs, int streams) {
  Model m;
  m.set_name("g");
  for (int i = 0; i < pairs; ++i) {
    NodeId a = m.AddNode(kRootGraph, Op(StrCat("a", i), 0));
    m.AddNode(kRootGraph, Op(StrCat("b", i), 1 + i % streams, a));
  }
  RenumberTopoIds(m);
  return PlanFromModel(std::move(m));
}

absl::Status Check(Plan& plan, std::map<std::string, std::string> options, RunResult* r = nullptr) {
  return RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse, DeviceLimitCheck>(),
                   options, r);
}

TEST(DeviceLimitCheckTest, AcceptsAPlanWithinTheDefaultLimitsAndLogsTheCounts) {
  Plan plan = Pairs(6, 3);
  RunResult r;
  ASSERT_THAT(Check(plan, {}, &r), IsOk());
  auto lines = r.log.WithKeyword("DeviceLimits");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(DeviceStreamsUsed(plan), 4);
}

TEST(DeviceLimitCheckTest, RejectsMoreStreamsThanTheDeviceHasNamingTheOption) {
  Plan plan = Pairs(6, 3);  // 4 streams
  EXPECT_THAT(Check(plan, {{"npuplan.device.maxStreams", "3"}}),
              StatusIs(absl::StatusCode::kResourceExhausted, "needs 4 device streams but the device has 3 "
                                                             "(npuplan.device.maxStreams"));
  Plan fits = Pairs(6, 3);
  EXPECT_THAT(Check(fits, {{"npuplan.device.maxStreams", "4"}}), IsOk());
}

TEST(DeviceLimitCheckTest, RejectsEventIdsBeyondTheDeviceRange) {
  Plan plan = Pairs(5, 1);  // 5 independent events, ids 0..4
  EXPECT_THAT(Check(plan, {{"npuplan.device.maxEvents", "4"}}),
              StatusIs(absl::StatusCode::kResourceExhausted, "event ids 0..4 but the device has 4 events "
                                                             "(npuplan.device.maxEvents"));
}

TEST(DeviceLimitCheckTest, RejectsNotifiesBeyondTheLoweredLimit) {
  Plan plan = Pairs(5, 1);
  EXPECT_THAT(Check(plan, {{"ge.event", "notify"}, {"npuplan.device.maxNotifies", "2"}}),
              StatusIs(absl::StatusCode::kResourceExhausted, "npuplan.device.maxNotifies"));
}

TEST(DeviceLimitCheckTest, LimitOptionsCanOnlyBeLowered) {
  for (const char* key : {"npuplan.device.maxStreams", "npuplan.device.maxEvents", "npuplan.device.maxNotifies"}) {
    CompileOptions o;
    o.Set(key, "0");
    EXPECT_THAT(o.Validate(), StatusIs(absl::StatusCode::kInvalidArgument, key));
    o.Set(key, "99999999");
    EXPECT_THAT(o.Validate(), StatusIs(absl::StatusCode::kInvalidArgument, "can only be lowered"));
    o.Set(key, "1");
    EXPECT_THAT(o.Validate(), IsOk());
  }
}

}  // namespace
}  // namespace npuplan
