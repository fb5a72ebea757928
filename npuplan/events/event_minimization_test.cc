#include "npuplan/events/event_minimization.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/events/event_id_allocation.h"
#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/plan/plan_claims.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/sync_verifier.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RandomPlan;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::events::testing::SplitImpliedByEvents;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// Every events pass up to the minimum (verify-each on).
absl::Status UpToMinimum(Plan& plan, std::map<std::string, std::string> options,
                         RunResult* r = nullptr) {
  return RunPasses(plan,
                   Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization,
                          EventReuse, PhysicalStreamSplit, StreamActivation, EventMinimization>(),
                   options, r);
}

const std::map<std::string, std::string> kLimit40 = {{"npuplan.device.maxTasksPerStream", "40"}};

TEST(EventMinimizationTest, DropsASplitEventThatOtherEventsImply) {
  Plan plan = SplitImpliedByEvents();
  RunResult r;
  ASSERT_THAT(UpToMinimum(plan, kLimit40, &r), IsOk());
  EXPECT_EQ(plan.streams.split_to_logical, (std::map<int64_t, int64_t>{{2, 0}}));
  ASSERT_EQ(plan.events.events.size(), 2u);
  for (const SyncEvent& e : plan.events.events) EXPECT_NE(e.reason, SyncReason::kSplit);
  EXPECT_EQ(plan.events.counts["exact"], 2);
  EXPECT_EQ(plan.events.counts["minimum"], 2);
  EXPECT_EQ(plan.events.event_count, 2);  // ids compacted: 0, 1
  ASSERT_EQ(r.log.WithKeyword("EventMinimum").size(), 1u);
  EXPECT_EQ(r.log.WithKeyword("EventMinimum")[0]->ToLine(),
            "[event-minimization] EventMinimum events=2 minimum=2 removed=1 split_removed=1");
  EXPECT_THAT(verify::VerifyHappensBefore(plan), IsOk());
  EXPECT_THAT(VerifyPlanClaims(plan), IsOk());
}

// ge mode is GE's table: the split event stays and no minimum is written.
// After the gates, p → t1 → t2 → to → p's exit gate on stream 2 → y holds
// only when then runs: when else runs the gate follows nothing of p, so the
// event p → y stays (property seed 1442: y started before p finished).
TEST(EventMinimizationTest, KeepsAnEventThatOnlyOneBranchImplies) {
  Plan plan = events::testing::OwnerOrderedThroughOneBranch();
  RunResult r;
  ASSERT_THAT(UpToMinimum(plan, {}, &r), IsOk());
  EXPECT_TRUE(events::testing::HasEvent(plan, "p", "y"));
  EXPECT_TRUE(events::testing::HasEvent(plan, "p_BranchExit_2", "y"));
  EXPECT_THAT(verify::VerifyHappensBefore(plan), IsOk());
  // The final plan holds the minimum the verifier recomputes.
  ASSERT_THAT(RunPasses(plan, Passes<EventIdAllocation, SyncNodeGeneration>(), {}), IsOk());
  EXPECT_EQ(plan.events.counts["minimum"], static_cast<int64_t>(plan.events.events.size()));
  EXPECT_THAT(verify::VerifyHappensBefore(plan), IsOk());
}

TEST(EventMinimizationTest, GeModeKeepsTheSplitEvent) {
  Plan plan = SplitImpliedByEvents();
  std::map<std::string, std::string> options = kLimit40;
  options["npuplan.eventOptimization"] = "ge";
  ASSERT_THAT(UpToMinimum(plan, options), IsOk());
  EXPECT_EQ(plan.events.events.size(), 3u);
  EXPECT_EQ(plan.events.counts.count("minimum"), 0u);
}

TEST(EventMinimizationTest, VerifierRejectsAWrongMinimumAndARedundantEvent) {
  Plan plan = SplitImpliedByEvents();
  ASSERT_THAT(UpToMinimum(plan, kLimit40), IsOk());
  Plan lying = plan;
  lying.events.counts["minimum"] = 3;
  EXPECT_THAT(
      verify::VerifyHappensBefore(lying),
      StatusIs(
          absl::StatusCode::kInternal,
          "verifier[event-minimum]: event_counts.minimum is 3 but the plan's orderings need 2"));
  // The split event back in the table: ordered, but not the minimum.
  Plan redundant = plan;
  SyncEvent split;
  split.kind = SyncKind::kEvent;
  split.id = 2;
  split.send = plan.model.FindNode("a1");
  split.recv = plan.model.FindNode("a2");
  split.reason = SyncReason::kSplit;
  redundant.events.events.push_back(split);
  events::RecountIds(redundant.events);
  EXPECT_THAT(verify::VerifyHappensBefore(redundant),
              StatusIs(absl::StatusCode::kInternal, "the table holds 3 events"));
  redundant.events.counts["minimum"] = 3;
  EXPECT_THAT(verify::VerifyHappensBefore(redundant),
              StatusIs(absl::StatusCode::kInternal, "need 2"));
  // Without the minimum claim the plan must keep one split event per split stream.
  Plan unclaimed = plan;
  unclaimed.events.counts.erase("minimum");
  EXPECT_THAT(VerifyPlanClaims(unclaimed),
              StatusIs(absl::StatusCode::kInternal, "split events open them"));
}

// Random DAGs split into many physical streams: the table is exactly the
// minimum the verifier recomputes, and no event can go (each one alone
// orders some dependency). Through Send/Recv nodes, so the verifier's count
// also runs on a materialised plan.
TEST(EventMinimizationTest, RandomSplitPlansHoldExactlyTheMinimum) {
  int64_t split_removed = 0, removed = 0, splits = 0;
  for (uint32_t seed = 0; seed < 60; ++seed) {
    Plan plan =
        RandomPlan(seed, 150, 2 + static_cast<int>(seed % 3), 3, 4 + static_cast<int>(seed % 20));
    RunResult r;
    ASSERT_THAT(
        RunPasses(plan,
                  Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse,
                         PhysicalStreamSplit, StreamActivation, EventMinimization,
                         EventIdAllocation, SyncNodeGeneration>(),
                  {{"npuplan.device.maxTasksPerStream", std::to_string(40 + seed % 30)}}, &r),
        IsOk())
        << seed;
    splits += static_cast<int64_t>(plan.streams.split_to_logical.size());
    ASSERT_EQ(r.log.WithKeyword("EventMinimum").size(), 1u) << seed;
    const std::string line = r.log.WithKeyword("EventMinimum")[0]->ToLine();
    for (const auto* kv : {"removed=", "split_removed="}) {
      const int64_t v =
          std::stoll(line.substr(line.find(StrCat(" ", kv)) + 1 + std::string(kv).size()));
      (std::string(kv) == "removed=" ? removed : split_removed) += v;
    }
    EXPECT_EQ(static_cast<int64_t>(plan.events.events.size()), plan.events.counts["minimum"])
        << seed;
  }
  EXPECT_GT(splits, 100);
  EXPECT_GT(split_removed, 0);  // the property is not vacuous
  EXPECT_GE(removed, split_removed);
}

// Minimality by deletion on the un-materialised plan: removing any one event
// of the minimum leaves a dependency unordered.
TEST(EventMinimizationTest, EveryEventOfTheMinimumIsNeeded) {
  for (uint32_t seed = 0; seed < 12; ++seed) {
    Plan plan = RandomPlan(seed, 100, 3, 3, 8);
    ASSERT_THAT(UpToMinimum(plan, {{"npuplan.device.maxTasksPerStream", "40"}}), IsOk()) << seed;
    ASSERT_FALSE(plan.streams.split_to_logical.empty()) << seed;
    for (size_t i = 0; i < plan.events.events.size(); ++i) {
      Plan less = plan;
      less.events.counts.erase("minimum");
      less.events.events.erase(less.events.events.begin() + static_cast<std::ptrdiff_t>(i));
      EXPECT_FALSE(verify::VerifyHappensBefore(less).ok()) << seed << " event " << i;
    }
  }
}

}  // namespace
}  // namespace npuplan
