#include "npuplan/kernel/evaluator.h"

#include <gtest/gtest.h>

#include "npuplan/kernel/kernel_test_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::kernel {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using testing::kExpGraph;
using testing::kSpillGraph;
using testing::SmallUb;

KernelGraph Parse(const char* text, const CacheConfig& config) {
  auto g = ParseKernelGraph(text, config, "test");
  EXPECT_THAT(g, IsOk());
  return *std::move(g);
}

// The hand-checked spill solution of kSpillGraph (see kernel_test_util.h).
KernelSolution SpillSolution() {
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 11, 4, 5, 6, 12, 7, 8, 9, 10};
  s.offsets = {{0, 0}, {1, 5}, {2, 0}};
  s.spills = {{0, 5}};
  return s;
}

TEST(EvaluatorTest, ExpExampleTakesSixtyCycles) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kExpGraph, config);
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6};
  s.offsets = {{0, 0}, {1, 5}};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m, EvaluateSolution(g, s, config));
  EXPECT_EQ(m.makespan, 60);
  EXPECT_EQ(m.max_vstay.at("UB"), 10);
  EXPECT_EQ(m.extra_movement, 0);
  EXPECT_EQ(m.spills, 0);
}

TEST(EvaluatorTest, ExpExampleWithoutMemoryIsAProblemOneSchedule) {
  CacheConfig config;
  KernelGraph g = Parse(kExpGraph, config);
  KernelSolution s;
  s.schedule = {0, 2, 1, 3, 4, 5, 6};
  EvalOptions eo;
  eo.check_memory = false;
  eo.l0_single_residency = true;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m, EvaluateSolution(g, s, config, eo));
  EXPECT_EQ(m.makespan, 60);
  EXPECT_EQ(m.max_vstay.at("UB"), 10);
}

TEST(EvaluatorTest, RejectsOverlappingBuffers) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kExpGraph, config);
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6};
  s.offsets = {{0, 0}, {1, 3}};
  EXPECT_THAT(EvaluateSolution(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=overlap"));
}

TEST(EvaluatorTest, RejectsSharedOffsetWhileBothLive) {
  CacheConfig config = SmallUb(5);
  KernelGraph g = Parse(kExpGraph, config);
  KernelSolution s;
  // Buffer 0 is freed only after EXP, so both cannot share offset 0.
  s.schedule = {0, 1, 2, 3, 4, 5, 6};
  s.offsets = {{0, 0}, {1, 0}};
  EXPECT_THAT(EvaluateSolution(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=overlap"));
}

TEST(EvaluatorTest, RejectsBufferBeyondCapacity) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kExpGraph, config);
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6};
  s.offsets = {{0, 0}, {1, 6}};
  EXPECT_THAT(EvaluateSolution(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=capacity"));
}

TEST(EvaluatorTest, RejectsBackwardEdge) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kExpGraph, config);
  KernelSolution s;
  s.schedule = {0, 2, 3, 1, 4, 5, 6};
  s.offsets = {{0, 0}, {1, 5}};
  EXPECT_THAT(EvaluateSolution(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=dependency"));
}

TEST(EvaluatorTest, RejectsMissingAndDuplicateNodes) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kExpGraph, config);
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5};
  s.offsets = {{0, 0}, {1, 5}};
  EXPECT_THAT(EvaluateSolution(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=schedule-coverage"));
  s.schedule = {0, 1, 2, 3, 4, 5, 5};
  EXPECT_THAT(EvaluateSolution(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=schedule-coverage"));
}

TEST(EvaluatorTest, RejectsMissingOffset) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kExpGraph, config);
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6};
  s.offsets = {{0, 0}};
  EXPECT_THAT(EvaluateSolution(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=missing-offset"));
}

TEST(EvaluatorTest, ScoresHandMadeSpill) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kSpillGraph, config);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m, EvaluateSolution(g, SpillSolution(), config));
  EXPECT_EQ(m.spills, 1);
  EXPECT_EQ(m.extra_movement, 5);  // COPY_IN-backed: only the reload counts
  // SPILL_IN waits for FREE(b) (address reuse, t=30), runs 2*5+150 cycles.
  EXPECT_EQ(m.makespan, 210);
  EXPECT_EQ(m.max_resident.at("UB"), 10);
  EXPECT_EQ(m.max_vstay.at("UB"), 15);
}

TEST(EvaluatorTest, SpillOfComputedBufferCostsTwiceItsSize) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kSpillGraph, config);
  // Buffer 0 is COPY_IN-backed, buffer 2 is computed.
  EXPECT_EQ(g.SpillTraffic(0), 5);
  EXPECT_EQ(g.SpillTraffic(2), 10);
  EXPECT_EQ(g.SpillOutCycles(0, config), 0);
  EXPECT_EQ(g.SpillOutCycles(2, config), 160);
  EXPECT_EQ(g.SpillInCycles(2, config), 160);
}

TEST(EvaluatorTest, RejectsMissingReload) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kSpillGraph, config);
  KernelSolution s = SpillSolution();
  s.schedule.erase(s.schedule.begin() + 8);  // drop SPILL_IN 12
  EXPECT_THAT(EvaluateSolution(g, s, config),
              StatusIs(absl::StatusCode::kInvalidArgument, "rule=schedule-coverage"));
}

TEST(EvaluatorTest, RejectsUseWhileSpilled) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kSpillGraph, config);
  KernelSolution s = SpillSolution();
  s.schedule = {0, 1, 2, 3, 11, 4, 5, 6, 7, 12, 8, 9, 10};  // MUL before the reload
  EXPECT_THAT(EvaluateSolution(g, s, config),
              StatusIs(absl::StatusCode::kInvalidArgument, "rule=use-while-spilled"));
}

TEST(EvaluatorTest, RejectsSpillOutBeforeAlloc) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kSpillGraph, config);
  KernelSolution s = SpillSolution();
  s.schedule = {11, 0, 1, 2, 3, 4, 5, 6, 12, 7, 8, 9, 10};
  EXPECT_THAT(EvaluateSolution(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=spill-order"));
}

TEST(EvaluatorTest, RejectsReloadOntoLiveBuffer) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kSpillGraph, config);
  KernelSolution s = SpillSolution();
  s.spills = {{0, 0}};  // c still lives at offset 0
  EXPECT_THAT(EvaluateSolution(g, s, config), StatusIs(absl::StatusCode::kInvalidArgument, "rule=overlap"));
}

TEST(EvaluatorTest, EnforcesL0SingleResidencyOnlyWhenAsked) {
  CacheConfig config;
  KernelGraph g = Parse(R"json({"Nodes": [
    {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 8, "Type": "L0A"},
    {"Id": 1, "Op": "ALLOC", "BufId": 1, "Size": 8, "Type": "L0A"},
    {"Id": 2, "Op": "MOVE", "Pipe": "MTE1", "Cycles": 3, "Bufs": [0, 1]},
    {"Id": 3, "Op": "FREE", "BufId": 0, "Size": 8, "Type": "L0A"},
    {"Id": 4, "Op": "FREE", "BufId": 1, "Size": 8, "Type": "L0A"}],
    "Edges": [[0, 2], [1, 2], [2, 3], [2, 4], [0, 3], [1, 4]]})json",
                        config);
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4};
  s.offsets = {{0, 0}, {1, 8}};
  EXPECT_THAT(EvaluateSolution(g, s, config), IsOk());
  EvalOptions eo;
  eo.l0_single_residency = true;
  EXPECT_THAT(EvaluateSolution(g, s, config, eo),
              StatusIs(absl::StatusCode::kInvalidArgument, "rule=l0-single-residency"));
}

// ---- Issue #19: sums of solution values are checked.

// offset + Size used to wrap to a negative end and pass the capacity check
// (`kernel eval` said "valid yes").
TEST(EvaluatorTest, RejectsAnOffsetWhoseEndOverflows) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kExpGraph, config);
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6};
  for (int64_t offset : {INT64_MAX, INT64_MAX - 4, int64_t{1} << 62}) {
    SCOPED_TRACE(offset);
    s.offsets = {{0, 0}, {1, offset}};
    EXPECT_THAT(EvaluateSolution(g, s, config),
                StatusIs(absl::StatusCode::kInvalidArgument, "exceeds UB capacity 10 (rule=capacity)"));
  }
}

// A graph built in code has no reader limits: cycles that overflow the end
// time are an error, not a negative makespan.
TEST(EvaluatorTest, RejectsEndTimesThatOverflow) {
  CacheConfig config;
  KernelGraph g = Parse(kExpGraph, config);
  g.nodes[1].cycles = INT64_MAX;
  g.nodes[3].cycles = 1;
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6};
  EvalOptions eo;
  eo.check_memory = false;
  EXPECT_THAT(EvaluateSolution(g, s, config, eo),
              StatusIs(absl::StatusCode::kInvalidArgument, "the end time of node 3 overflows int64 (rule=overflow)"));
}

// The live bytes of a level are a running sum of Sizes: two buffers of 2^62
// live at once (a graph built in code) must not wrap to a negative maximum.
TEST(EvaluatorTest, RejectsLiveBytesThatOverflow) {
  CacheConfig config;
  KernelGraph g = Parse(kExpGraph, config);
  for (int b : {0, 1}) g.buffers[g.buf_index[b]].size = int64_t{1} << 62;
  KernelSolution s;
  s.schedule = {0, 1, 2, 3, 4, 5, 6};
  EvalOptions eo;
  eo.check_memory = false;
  EXPECT_THAT(EvaluateSolution(g, s, config, eo),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "the live bytes of UB at node 2 overflows int64 (rule=overflow)"));
  // One of them 2^62 - 1: the sum is int64's end, which fits.
  g.buffers[g.buf_index[1]].size = (int64_t{1} << 62) - 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m, EvaluateSolution(g, s, config, eo));
  EXPECT_EQ(m.max_vstay.at("UB"), INT64_MAX);
}

TEST(EvaluatorTest, RejectsExtraMovementThatOverflows) {
  CacheConfig config = SmallUb();
  KernelGraph g = Parse(kSpillGraph, config);
  // Buffer 2 (written by ADD, so a spill moves 2 * Size) made 2^61 in code:
  // two spills move 2^63.
  g.buffers[g.buf_index[2]].size = int64_t{1} << 61;
  KernelSolution s;
  s.spills = {{2, 0}, {2, 0}};
  s.schedule = {0, 1, 2, 3, 4, 11, 12, 13, 14, 5, 6, 7, 8, 9, 10};
  EXPECT_THAT(EvaluateSolution(g, s, config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "the extra data movement at spill 2 overflows int64 (rule=overflow)"));
}

}  // namespace
}  // namespace npuplan::kernel
