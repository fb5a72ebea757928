#include "npuplan/stream/critical_path_streams.h"

#include <random>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::StreamOf;

// Random layered DAG: `layers` layers of `width` nodes, each node fed by 1–3
// nodes of the previous layer; costs in [1, 40].
StreamDag LayeredDag(int32_t layers, int32_t width, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> cost;
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (int32_t l = 0; l < layers; ++l) {
    for (int32_t i = 0; i < width; ++i) {
      const int32_t v = static_cast<int32_t>(cost.size());
      cost.push_back(1 + static_cast<int64_t>(rng() % 40));
      if (l == 0) continue;
      std::set<int32_t> preds;
      const int32_t k = 1 + static_cast<int32_t>(rng() % 3);
      for (int32_t j = 0; j < k; ++j) preds.insert((l - 1) * width + static_cast<int32_t>(rng() % width));
      for (int32_t p : preds) edges.emplace_back(p, v);
    }
  }
  return BuildStreamDagFromEdges(std::move(cost), edges);
}

TEST(CriticalPathStreamsTest, PutsAChainOnOneStream) {
  StreamDag d = BuildStreamDagFromEdges({3, 4, 5}, {{0, 1}, {1, 2}});
  EXPECT_THAT(CriticalPathStreams::Schedule(d, 4, 2), ::testing::Each(0));
}

// The chain variant keeps the longest path on index 0 and moves off-path
// work elsewhere, so that the in-order stream never makes the chain wait.
// a(10) → b(10) → c(10), with s(1) after a, between a and b in topological
// order: the plain schedule queues s before b on a's stream (b starts at 11,
// not 10), the chain variant sends it to stream 1.
TEST(CriticalPathStreamsTest, ChainVariantKeepsTheLongestPathFromQueueingBehindSideWork) {
  StreamDag d = BuildStreamDagFromEdges({10, 1, 10, 10}, {{0, 1}, {0, 2}, {2, 3}});
  std::vector<int32_t> plain = CriticalPathStreams::Schedule(d, 2, 2);
  EXPECT_THAT(plain, ::testing::ElementsAre(0, 0, 0, 0));
  EXPECT_EQ(EstimateMakespan(d, plain, 2), 31);
  std::vector<int32_t> chain = CriticalPathStreams::Schedule(d, 2, 2, nullptr, /*chain=*/true);
  EXPECT_THAT(chain, ::testing::ElementsAre(0, 1, 0, 0));
  EXPECT_EQ(EstimateMakespan(d, chain, 2), 30);
  // With one stream there is nowhere else to go.
  EXPECT_THAT(CriticalPathStreams::Schedule(d, 1, 2, nullptr, true), ::testing::Each(0));
}

TEST(CriticalPathStreamsTest, SpreadsIndependentWorkUpToTheLimit) {
  StreamDag d = BuildStreamDagFromEdges({10, 10, 10, 10}, {});
  std::vector<int32_t> s = CriticalPathStreams::Schedule(d, 2, 2);
  EXPECT_EQ(std::set<int32_t>(s.begin(), s.end()).size(), 2u);
  EXPECT_EQ(EstimateMakespan(d, s, 2), 20);
}

TEST(CriticalPathStreamsTest, StaysWithinTheListSchedulingBoundOnRandomDags) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    for (int64_t n : {2, 4, 8}) {
      StreamDag d = LayeredDag(30, 1 + static_cast<int32_t>(seed % 12), seed);
      std::vector<int32_t> s = CriticalPathStreams::Schedule(d, n, 0);
      std::set<int32_t> used(s.begin(), s.end());
      EXPECT_LE(static_cast<int64_t>(used.size()), n);
      const int64_t ms = EstimateMakespan(d, s, 0);
      const int64_t lb = std::max(CriticalPathLength(d), (TotalWork(d) + n - 1) / n);
      EXPECT_GE(ms, lb);
      EXPECT_LE(ms, 2 * lb) << "seed " << seed << " n " << n;  // Graham's 2 − 1/N
    }
  }
}

TEST(CriticalPathStreamsTest, ChoosesNoWorseThanOneStreamOrTheGeMerges) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "x", "type": "Data"},
    {"name": "a", "type": "MatMul", "inputs": ["x"], "attrs": {"_cost": 30}},
    {"name": "b", "type": "MatMul", "inputs": ["x"], "attrs": {"_cost": 30}},
    {"name": "c", "type": "MatMul", "inputs": ["a"], "attrs": {"_cost": 30}},
    {"name": "d", "type": "Add", "inputs": ["b", "c"], "attrs": {"_cost": 1}}]})json",
                                                         {{"ge.autoMultistreamParallelMode", "CriticalPath:4"}}));
  EXPECT_EQ(plan.streams.auto_mode, "CriticalPath:4");
  EXPECT_EQ(plan.streams.logical, 2);
  EXPECT_EQ(StreamOf(plan, "a"), StreamOf(plan, "c"));  // the critical chain stays together
  EXPECT_NE(StreamOf(plan, "a"), StreamOf(plan, "b"));
  // ns: each MatMul 30 µs + 1 µs launch, d 1 + 1 µs; bound = a + c + d.
  EXPECT_EQ(plan.streams.makespan_lower_bound, 64000);
  // d waits for b through an event, off the critical path; its Recv task
  // (2 tasks, wait + reset: 2 µs of launches) is not.
  EXPECT_EQ(plan.streams.estimated_makespan, 66000);
}

TEST(CriticalPathStreamsTest, KeepsOneStreamWhenEventsCostMoreThanTheyGain) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "a", "type": "MatMul", "attrs": {"_cost": 0.1}},
    {"name": "b", "type": "MatMul", "attrs": {"_cost": 0.1}},
    {"name": "c", "type": "Add", "inputs": ["a", "b"], "attrs": {"_cost": 0.1}}]})json",
                                                         {{"ge.autoMultistreamParallelMode", "CriticalPath:4"}}));
  EXPECT_EQ(plan.streams.logical, 1);
}

}  // namespace
}  // namespace npuplan::stream
