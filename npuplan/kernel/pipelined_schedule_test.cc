#include "npuplan/kernel/pipelined_schedule.h"

#include <gtest/gtest.h>

#include "npuplan/kernel/allocator.h"
#include "npuplan/kernel/bounds.h"
#include "npuplan/kernel/evaluator.h"
#include "npuplan/kernel/generator.h"
#include "npuplan/kernel/kernel_test_util.h"
#include "npuplan/kernel/scheduler.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::kernel {
namespace {

using ::npuplan::testing::IsOk;

std::vector<int> OpsById(const KernelGraph& g) {
  std::vector<int> ops;
  for (int v = 0; v < g.num_nodes(); ++v) {
    if (g.nodes[v].kind == NodeKind::kOp) ops.push_back(v);
  }
  return ops;
}

TEST(PipelinedScheduleTest, ProducesValidPlansWhoseSimulatedMakespanTheEvaluatorConfirms) {
  CacheConfig config;
  for (GeneratorOptions o : {GeneratorOptions{GraphKind::kMatmul, 4, 4, 4},
                             GeneratorOptions{GraphKind::kFlashAttention, 4, 4, 4, 4},
                             GeneratorOptions{GraphKind::kConv, 4, 4, 4, 4, 3, 8}}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph(o, config));
    for (int la : {0, 1, 4, 16}) {
      SCOPED_TRACE(::testing::Message() << g.name << " lookahead " << la);
      PipelineOptions po;
      po.lookahead = la;
      NPUPLAN_ASSERT_OK_AND_ASSIGN(PipelineResult r, PipelinedSchedule(g, config, OpsById(g), po));
      NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m, EvaluateSolution(g, r.solution, config));
      EXPECT_EQ(m.makespan, r.makespan);
      EXPECT_GE(m.makespan, ComputeKernelBounds(g, config).makespan);
    }
  }
}

TEST(PipelinedScheduleTest, LookaheadZeroKeepsTheReferenceOrder) {
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph({GraphKind::kMatmul, 2, 2, 2}, config));
  const std::vector<int> ops = OpsById(g);
  PipelineOptions po;
  po.lookahead = 0;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PipelineResult r, PipelinedSchedule(g, config, ops, po));
  std::vector<int> got;
  for (int v : r.solution.schedule) {
    if (v < g.num_nodes() && g.nodes[v].kind == NodeKind::kOp) got.push_back(v);
  }
  EXPECT_EQ(got, ops);
}

TEST(PipelinedScheduleTest, IssuingAheadOverlapsLoadsWithCompute) {
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph({GraphKind::kMatmul, 2, 2, 4}, config));
  const std::vector<int> ops = OpsById(g);
  PipelineOptions none, ahead;
  none.lookahead = 0;
  ahead.lookahead = 8;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PipelineResult r0, PipelinedSchedule(g, config, ops, none));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PipelineResult r8, PipelinedSchedule(g, config, ops, ahead));
  EXPECT_THAT(EvaluateSolution(g, r8.solution, config), IsOk());
  EXPECT_LT(r8.makespan, r0.makespan);
  // The same reference order with lookahead 0 is AllocateBest's order timed
  // as is: no better than the evaluator's makespan of that plan.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelSolution base, AllocateBest(g, DemandDrivenOrder(g, ops), config));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics mb, EvaluateSolution(g, base, config));
  EXPECT_LT(r8.makespan, mb.makespan);
}

TEST(PipelinedScheduleTest, SpillsForTheHeadWhenTheCacheIsFull) {
  CacheConfig config = testing::SmallUb();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kSpillGraph, config, "spill"));
  for (int la : {0, 4}) {
    PipelineOptions po;
    po.lookahead = la;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PipelineResult r, PipelinedSchedule(g, config, OpsById(g), po));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m, EvaluateSolution(g, r.solution, config));
    EXPECT_EQ(m.extra_movement, 5) << la;  // the bound (one COPY_IN-backed reload) is met
    EXPECT_EQ(m.makespan, r.makespan);
  }
}

TEST(PipelinedScheduleTest, IsDeterministic) {
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph({GraphKind::kFlashAttention, 4, 4, 4, 3}, config));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PipelineResult a, PipelinedSchedule(g, config, OpsById(g)));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PipelineResult b, PipelinedSchedule(g, config, OpsById(g)));
  EXPECT_EQ(a.solution.schedule, b.solution.schedule);
  EXPECT_EQ(a.solution.offsets, b.solution.offsets);
}

}  // namespace
}  // namespace npuplan::kernel
