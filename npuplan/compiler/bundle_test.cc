#include "npuplan/compiler/bundle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

std::vector<BundleGraph> ThreeGraphs() {
  std::vector<BundleGraph> g(3);
  const int64_t streams[] = {3, 5, 2}, events[] = {10, 4, 7}, peaks[] = {1000, 600, 1500};
  for (int i = 0; i < 3; ++i) {
    g[i].name = StrCat("g", i);
    g[i].input = StrCat("g", i, ".json");
    g[i].plan = StrCat("g", i, ".plan.json");
    g[i].streams = streams[i];
    g[i].event_ids = events[i];
    g[i].event_ids_lower_bound = events[i] - 1;
    g[i].sync_edges = 2 * events[i];
    g[i].memory_peak = peaks[i];
    g[i].memory_alignment = 512;
  }
  return g;
}

const BundleBudget kBudget{2024, 65536, 1024};

TEST(BundleTest, SequentialGraphsShareOnePoolSoTheDeviceTotalIsTheMaximum) {
  const Bundle b = LayoutBundle(ThreeGraphs(), /*concurrent=*/false, kBudget);
  EXPECT_EQ(b.streams, 5);
  EXPECT_EQ(b.event_ids, 10);
  EXPECT_EQ(b.memory_bytes, 1500);
  for (const BundleGraph& g : b.graphs) {
    EXPECT_EQ(g.stream_base, 0);
    EXPECT_EQ(g.event_base, 0);
    EXPECT_EQ(g.memory_offset, 0);
  }
}

TEST(BundleTest, ConcurrentGraphsGetConsecutiveRangesSoTheDeviceTotalIsTheSum) {
  const Bundle b = LayoutBundle(ThreeGraphs(), /*concurrent=*/true, kBudget);
  EXPECT_EQ(b.streams, 10);
  EXPECT_EQ(b.event_ids, 21);
  EXPECT_EQ(b.graphs[1].stream_base, 3);
  EXPECT_EQ(b.graphs[2].stream_base, 8);
  EXPECT_EQ(b.graphs[2].event_base, 14);
  EXPECT_EQ(b.graphs[1].memory_offset, 1024);  // 1000 aligned up to 512
  EXPECT_EQ(b.graphs[2].memory_offset, 2048);  // 1024 + 600 aligned up
  EXPECT_EQ(b.memory_bytes, 3548);
}

TEST(BundleTest, ABundleAboveItsBudgetNamesTheTotalAndTheLargestGraph) {
  EXPECT_THAT(CheckBundleBudget(LayoutBundle(ThreeGraphs(), false, {5, 65536, 1024})), IsOk());
  EXPECT_THAT(
      CheckBundleBudget(LayoutBundle(ThreeGraphs(), true, {8, 65536, 1024})),
      StatusIs(
          absl::StatusCode::kResourceExhausted,
          "bundle of 3 graphs (concurrent: the sum) needs 10 device streams but the budget is 8 "
          "(npuplan.maxStreams); the largest graph, 'g1', needs 5"));
  EXPECT_THAT(
      CheckBundleBudget(LayoutBundle(ThreeGraphs(), false, {2024, 9, 1024})),
      StatusIs(absl::StatusCode::kResourceExhausted, "needs 10 event ids but the budget is 9"));
}

TEST(BundleTest, TheManifestRoundTripsAndVerifiesAgainstItsPlans) {
  const Bundle b = LayoutBundle(ThreeGraphs(), true, kBudget);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Bundle back, BundleFromJson(BundleToJson(b), "b.json"));
  EXPECT_EQ(BundleToJson(back), BundleToJson(b));
  EXPECT_THAT(VerifyBundle(back, ThreeGraphs()), IsOk());
}

TEST(BundleTest, VerifierRejectsAManifestThatDisagreesWithItsPlans) {
  Bundle b = LayoutBundle(ThreeGraphs(), true, kBudget);
  Bundle overlap = b;
  overlap.graphs[1].stream_base = 2;  // would share device stream 2 with g0
  EXPECT_THAT(VerifyBundle(overlap, ThreeGraphs()),
              StatusIs(absl::StatusCode::kInternal,
                       "graph 'g1' stream_base is 2 but the plans and the mode give 3"));
  Bundle total = b;
  total.streams = 5;
  EXPECT_THAT(VerifyBundle(total, ThreeGraphs()),
              StatusIs(absl::StatusCode::kInternal, "device.streams is 5"));
  std::vector<BundleGraph> changed = ThreeGraphs();
  changed[0].event_ids = 11;  // the plan uses more ids than the manifest says
  EXPECT_THAT(VerifyBundle(b, changed),
              StatusIs(absl::StatusCode::kInternal, "graph 'g0' event_ids is 10"));
  Bundle over = LayoutBundle(ThreeGraphs(), true, {8, 65536, 1024});
  EXPECT_THAT(VerifyBundle(over, ThreeGraphs()),
              StatusIs(absl::StatusCode::kInternal, "budget is 8"));
}

TEST(BundleTest, ReaderRejectsBadManifests) {
  EXPECT_THAT(BundleFromJson("[]", "b.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "b.json: not a JSON object"));
  std::string text = BundleToJson(LayoutBundle(ThreeGraphs(), false, kBudget));
  std::string negative = text;
  negative.replace(negative.find("\"streams\": 3"), 12, "\"streams\": -3");
  EXPECT_THAT(BundleFromJson(negative, "b.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "graphs[0].streams is missing or not a non-negative integer"));
  EXPECT_THAT(
      ReadBundleInput(R"({"format": "npuplan.bundle-input/1", "graphs": []})", "dir/l.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "graphs is not a non-empty list"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      auto paths, ReadBundleInput(R"({"format": "npuplan.bundle-input/1", "graphs": ["a.json"]})",
                                  "dir/l.json"));
  EXPECT_EQ(paths, (std::vector<std::string>{"dir/a.json"}));
}

}  // namespace
}  // namespace npuplan
