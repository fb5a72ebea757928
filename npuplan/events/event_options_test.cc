#include "npuplan/events/event_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/testing/status_matchers.h"

namespace npuplan::events {
namespace {

using ::npuplan::testing::StatusIs;

TEST(EventOptionsTest, ReadsTheSpecDefaults) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(EventOptions o, ReadEventOptions(CompileOptions()));
  EXPECT_FALSE(o.notify);
  EXPECT_EQ(o.optimization, EventOptimization::kExact);
  EXPECT_EQ(o.id_reuse, EventIdReuse::kMin);
  EXPECT_EQ(o.id_exact_limit, 1000000);
  EXPECT_EQ(o.reuse_threshold, 65500);
  EXPECT_EQ(o.max_tasks_per_stream, 1024);
  EXPECT_EQ(o.huge_stream_tasks, 8192);
  EXPECT_EQ(o.device_max_streams, 2024);
  EXPECT_EQ(o.device_max_events, 65536);
  EXPECT_EQ(o.device_max_notifies, 1024);
  EXPECT_EQ(o.budget_event_ids, INT64_MAX);  // unset budget: no budget check
}

TEST(EventOptionsTest, ParsesSetValuesOnce) {
  CompileOptions c;
  c.Set("ge.event", "notify");
  c.Set("npuplan.eventOptimization", "ge");
  c.Set("npuplan.eventReuseThreshold", "7");
  c.Set("npuplan.device.maxTasksPerStream", "64");
  c.Set("npuplan.device.maxEvents", "100");
  c.Set("npuplan.maxEventIds", "200");  // above the device limit: the device's
  NPUPLAN_ASSERT_OK_AND_ASSIGN(EventOptions o, ReadEventOptions(c));
  EXPECT_TRUE(o.notify);
  EXPECT_EQ(o.optimization, EventOptimization::kGe);
  EXPECT_EQ(o.id_reuse, EventIdReuse::kGe);  // unset: follows eventOptimization=ge
  EXPECT_EQ(EventIdReuseName(o.id_reuse), "ge");
  EXPECT_EQ(o.reuse_threshold, 7);
  EXPECT_EQ(o.max_tasks_per_stream, 64);
  EXPECT_EQ(o.device_max_events, 100);
  EXPECT_EQ(o.budget_event_ids, 100);
}

// Run without CompileOptions::Validate (library callers, tests), a bad value
// gets the option spec's message instead of an exception from std::stoll.
TEST(EventOptionsTest, RefusesAnInvalidValueWithTheSpecMessage) {
  CompileOptions c;
  c.Set("npuplan.device.maxTasksPerStream", "lots");
  EXPECT_THAT(ReadEventOptions(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "option npuplan.device.maxTasksPerStream: invalid value 'lots'"));
  CompileOptions e;
  e.Set("ge.event", "both");
  EXPECT_THAT(ReadEventOptions(e), StatusIs(absl::StatusCode::kInvalidArgument, "option ge.event"));
}

}  // namespace
}  // namespace npuplan::events
