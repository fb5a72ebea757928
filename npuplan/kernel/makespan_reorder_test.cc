#include "npuplan/kernel/makespan_reorder.h"

#include <gtest/gtest.h>

#include "npuplan/kernel/allocator.h"
#include "npuplan/kernel/evaluator.h"
#include "npuplan/kernel/generator.h"
#include "npuplan/kernel/kernel_test_util.h"
#include "npuplan/kernel/scheduler.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::kernel {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// Two independent jobs on UB: Y = COPY_IN (MTE2, 10) -> COPY_OUT (MTE3, 10),
// X = COPY_IN (MTE2, 10) -> EXP (VECTOR, 100). Input order runs Y's load
// first; X is on the critical path, so its load should go first on MTE2.
constexpr char kTwoJobs[] = R"json({
  "Nodes": [
    {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 4, "Type": "UB"},
    {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
    {"Id": 2, "Op": "COPY_OUT", "Pipe": "MTE3", "Cycles": 10, "Bufs": [0]},
    {"Id": 3, "Op": "FREE", "BufId": 0, "Size": 4, "Type": "UB"},
    {"Id": 4, "Op": "ALLOC", "BufId": 1, "Size": 4, "Type": "UB"},
    {"Id": 5, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [1]},
    {"Id": 6, "Op": "EXP", "Pipe": "VECTOR", "Cycles": 100, "Bufs": [1]},
    {"Id": 7, "Op": "FREE", "BufId": 1, "Size": 4, "Type": "UB"}
  ],
  "Edges": [[0, 1], [1, 2], [2, 3], [0, 3], [4, 5], [5, 6], [6, 7], [4, 7]]
})json";

TEST(MakespanReorderTest, RunsCriticalLoadFirstOnItsPipe) {
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(kTwoJobs, config, "two_jobs"));
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6, 7};
  s.offsets = {{0, 0}, {1, 4}};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m0, EvaluateSolution(g, s, config));
  EXPECT_EQ(m0.makespan, 120);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ReorderResult r, ReorderForMakespan(g, s, config));
  EXPECT_EQ(r.makespan_before, 120);
  EXPECT_EQ(r.makespan_after, 110);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m1, EvaluateSolution(g, r.solution, config));
  EXPECT_EQ(m1.makespan, 110);
  EXPECT_EQ(r.solution.offsets, s.offsets);
  // X's load (node 5) now precedes Y's (node 1).
  auto at = [&](int v) { return std::find(r.solution.schedule.begin(), r.solution.schedule.end(), v); };
  EXPECT_LT(at(5), at(1));
}

TEST(MakespanReorderTest, InputOrderPriorityKeepsFifoOnEachPipe) {
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(kTwoJobs, config, "two_jobs"));
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6, 7};
  s.offsets = {{0, 0}, {1, 4}};
  ReorderOptions o;
  o.priority = ReorderOptions::Priority::kInputOrder;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ReorderResult r, ReorderForMakespan(g, s, config, o));
  EXPECT_EQ(r.makespan_after, 120);
}

TEST(MakespanReorderTest, SharedAddressKeepsResidenciesOrdered) {
  // Both buffers at offset 0: the reuse edge FREE(0) -> ALLOC(1) must hold, so
  // X cannot start first and the makespan stays 130 (10+10 then 10+100).
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(kTwoJobs, config, "two_jobs"));
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6, 7};
  s.offsets = {{0, 0}, {1, 0}};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ReorderResult r, ReorderForMakespan(g, s, config));
  EXPECT_EQ(r.makespan_before, 130);
  EXPECT_EQ(r.makespan_after, 130);
  EXPECT_THAT(EvaluateSolution(g, r.solution, config), IsOk());
}

TEST(MakespanReorderTest, RejectsInvalidSolution) {
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(kTwoJobs, config, "two_jobs"));
  KernelSolution s;
  s.schedule = {0, 4, 1, 5, 2, 6, 3, 7};  // both buffers live at once
  s.offsets = {{0, 0}, {1, 2}};          // [0,4) and [2,6) overlap
  EXPECT_THAT(ReorderForMakespan(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=overlap"));
}

TEST(MakespanReorderTest, KeepsSpillsAndTrafficOnSpillGraph) {
  CacheConfig config = testing::SmallUb();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kSpillGraph, config, "spill"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelSolution s, AllocateSeed(g, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, config));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m0, EvaluateSolution(g, s, config));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(ReorderResult r, ReorderForMakespan(g, s, config));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m1, EvaluateSolution(g, r.solution, config));
  EXPECT_EQ(m1.extra_movement, m0.extra_movement);
  EXPECT_EQ(m1.spills, m0.spills);
  EXPECT_EQ(m1.makespan, r.makespan_after);
  EXPECT_LE(m1.makespan, m0.makespan);
}

class ReorderGeneratedTest : public ::testing::TestWithParam<GraphKind> {};

TEST_P(ReorderGeneratedTest, EvaluatorAgreesAndTrafficIsKept) {
  CacheConfig config;
  GeneratorOptions o;
  o.kind = GetParam();
  o.m = o.n = o.k = 6;
  o.seq = 6;
  o.layers = 3;
  o.width = 12;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph(o, config));
  Q1Result q1 = BestQ1Schedule(g, config, 4);
  for (Placement p : {Placement::kBestFit, Placement::kOldestFree}) {
    BestOptions bo;
    bo.placement = p;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelSolution s, AllocateBest(g, q1.order, config, bo));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m0, EvaluateSolution(g, s, config));
    for (auto prio : {ReorderOptions::Priority::kCriticalPath, ReorderOptions::Priority::kInputOrder}) {
      ReorderOptions ro;
      ro.priority = prio;
      NPUPLAN_ASSERT_OK_AND_ASSIGN(ReorderResult r, ReorderForMakespan(g, s, config, ro));
      NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m1, EvaluateSolution(g, r.solution, config));
      EXPECT_EQ(m1.makespan, r.makespan_after) << g.name;
      EXPECT_EQ(m1.extra_movement, m0.extra_movement) << g.name;
      EXPECT_EQ(r.solution.spills.size(), s.spills.size());
      // Spill records stay in SPILL_OUT order of the new schedule.
      std::vector<int> out_pos;
      for (size_t i = 0; i < r.solution.schedule.size(); ++i) {
        const int v = r.solution.schedule[i];
        if (v >= g.num_nodes() && (v - g.num_nodes()) % 2 == 0) out_pos.push_back((v - g.num_nodes()) / 2);
      }
      for (size_t k = 0; k < out_pos.size(); ++k) EXPECT_EQ(out_pos[k], static_cast<int>(k));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, ReorderGeneratedTest,
                         ::testing::Values(GraphKind::kMatmul, GraphKind::kFlashAttention, GraphKind::kConv));

}  // namespace
}  // namespace npuplan::kernel
