#include "npuplan/verify/memory_verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "npuplan/events/events_test_util.h"
#include "npuplan/memory/memory_planning.h"
#include "npuplan/memory/pool_test_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/verify.h"

namespace npuplan::memory {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

// a(s0) → c(s0); e(s1) → f(s1): a:0 and e:0 are disjoint in plan order but
// run in parallel. x(s0) after c reads c:0, so a:0 and x:0 may share.
Plan PlannedTwoStreams() {
  auto m = ParseVerifiedGraph(R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [256]}]},
    {"name": "c", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "e", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [256]}]},
    {"name": "f", "type": "Add", "inputs": ["e:0"], "attrs": {"_test_stream": 1, "_workspace_bytes": 16}, "outputs": [{"shape": [1]}]},
    {"name": "x", "type": "Add", "inputs": ["c:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [256]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["f:0", "x:0"]}]})json");
  EXPECT_THAT(m.status(), IsOk());
  Plan plan = PlanFromModel(std::move(m).value());
  EXPECT_THAT(RunPasses(plan, Passes<MemoryPlanning>()), IsOk());
  EXPECT_THAT(VerifyMemoryPlan(plan), IsOk());
  return plan;
}

TensorPlacement& Placement(Plan& plan, std::string_view node, int32_t out = 0) {
  NodeId id = plan.model.FindNode(node);
  for (TensorPlacement& t : plan.memory.tensors) {
    if (t.node == id && t.output == out) return t;
  }
  ADD_FAILURE() << node;
  return plan.memory.tensors[0];
}

TEST(MemoryVerifierTest, RejectsCrossStreamSharingWithoutDependency) {
  Plan plan = PlannedTwoStreams();
  Placement(plan, "e").offset = Placement(plan, "a").offset;
  EXPECT_THAT(VerifyMemoryPlan(plan),
              StatusIs(absl::StatusCode::kInternal, "verifier[memory-overlap]: 'a:0' (streams 0"));
  EXPECT_THAT(VerifyMemoryPlan(plan), StatusIs(absl::StatusCode::kInternal, "provably happen before"));
}

// Issue #19: offset + size is formed by the overlap sweep; a placement whose
// end does not fit in int64 used to wrap into a small address range.
TEST(MemoryVerifierTest, RejectsAPlacementWhoseEndOverflows) {
  Plan plan = PlannedTwoStreams();
  const int64_t offset = INT64_MAX / 512 * 512;  // aligned, so only the end is wrong
  Placement(plan, "e").offset = offset;
  EXPECT_THAT(VerifyMemoryPlan(plan),
              StatusIs(absl::StatusCode::kInternal,
                       StrCat("verifier[memory-tensors]: tensor 'e:0' at offset ", offset,
                              " with size 1024 ends beyond int64")));
}

TEST(MemoryVerifierTest, AcceptsSharingAlongADependency) {
  Plan plan = PlannedTwoStreams();
  // x runs after c on stream 0, so x:0 may take a:0's bytes.
  Placement(plan, "x").offset = Placement(plan, "a").offset;
  int64_t peak = 0;
  for (const TensorPlacement& t : plan.memory.tensors) {
    if (t.region == MemoryRegion::kActivation || t.region == MemoryRegion::kWorkspace)
      peak = std::max(peak, t.offset + t.size);
  }
  plan.memory.peak = peak;
  plan.memory.lower_bound = std::min(plan.memory.lower_bound, peak);
  EXPECT_THAT(VerifyMemoryPlan(plan), IsOk());
}

TEST(MemoryVerifierTest, RejectsWrongSizeAlignmentAndMissingTensor) {
  {
    Plan plan = PlannedTwoStreams();
    Placement(plan, "a").size = 512;
    EXPECT_THAT(VerifyMemoryPlan(plan), StatusIs(absl::StatusCode::kInternal, "'a:0' has size 512 but needs 1024"));
  }
  {
    Plan plan = PlannedTwoStreams();
    Placement(plan, "f", -1).offset += 100;
    EXPECT_THAT(VerifyMemoryPlan(plan), StatusIs(absl::StatusCode::kInternal, "memory-align"));
  }
  {
    Plan plan = PlannedTwoStreams();
    plan.memory.tensors.pop_back();
    EXPECT_THAT(VerifyMemoryPlan(plan), StatusIs(absl::StatusCode::kInternal, "has no placement"));
  }
  {
    Plan plan = PlannedTwoStreams();
    plan.memory.tensors.push_back(plan.memory.tensors.front());
    EXPECT_THAT(VerifyMemoryPlan(plan), StatusIs(absl::StatusCode::kInternal, "is placed twice"));
  }
  {
    Plan plan = PlannedTwoStreams();
    Placement(plan, "a").output = 7;  // node a has one output
    EXPECT_THAT(VerifyMemoryPlan(plan), StatusIs(absl::StatusCode::kInternal,
                                                 "'a:7' is placed but is not a planned tensor"));
  }
}

TEST(MemoryVerifierTest, RejectsWrongPeakAndBound) {
  Plan plan = PlannedTwoStreams();
  plan.memory.peak += 512;
  EXPECT_THAT(VerifyMemoryPlan(plan), StatusIs(absl::StatusCode::kInternal, "memory-peak"));
  plan.memory.peak -= 512;
  plan.memory.lower_bound = plan.memory.peak + 1;
  EXPECT_THAT(VerifyMemoryPlan(plan), StatusIs(absl::StatusCode::kInternal, "lower bound"));
}

// The pool overlap check (a sweep painting the address space with the
// latest buffer) against every pair: on random multi-stream plans whose pool
// buffers are moved to one of a few offsets, it fails exactly when two
// buffers sharing an address may not share. Offsets near 0 (slots of the
// gcd) and spread over 1e9 (the std::map painter) alternate.
TEST(MemoryVerifierTest, PoolOverlapMatchesThePairwiseCheck) {
  int failures = 0;
  for (uint32_t seed = 1; seed <= 80; ++seed) {
    testing::PoolCase c = testing::RandomPoolCase(seed, 30, 3, seed * 5 + 3, 300);
    Plan& plan = c.plan;
    ASSERT_THAT(RunPasses(plan, Passes<MemoryPlanning>()), IsOk());
    std::mt19937 rng(seed);
    const int64_t spread = seed % 2 == 0 ? 0 : 512 * int64_t{2'000'000};
    std::vector<int64_t> offset(c.lt.buffers.size(), -1);
    for (int b : c.pool) {
      offset[b] = 512 * static_cast<int64_t>(rng() % 400) + (rng() % 2 == 0 ? 0 : spread);
    }
    for (TensorPlacement& t : plan.memory.tensors) {
      const int b = c.lt.buffer_of.at(TensorRef{t.node, t.output});
      if (offset[b] >= 0) t.offset = offset[b];
    }
    StreamAwareReuse reuse(plan.model, c.lt);
    bool want = false;
    for (int a : c.pool) {
      for (int b : c.pool) {
        const LogicalBuffer &x = c.lt.buffers[a], &y = c.lt.buffers[b];
        if (a >= b || x.size == 0 || y.size == 0) continue;
        const bool shared = offset[a] < offset[b] + y.size && offset[b] < offset[a] + x.size;
        want = want || (shared && !reuse.MayShare(a, b));
      }
    }
    const absl::Status got = VerifyMemoryPlan(plan);
    EXPECT_EQ(std::string(got.message()).find("memory-overlap") != std::string::npos, want)
        << "seed " << seed << ": " << got;
    failures += want ? 1 : 0;
  }
  EXPECT_GT(failures, 10) << failures;  // both verdicts occur
  EXPECT_LT(failures, 70) << failures;
}

TEST(MemoryVerifierTest, RunsAsTheMemoryStageCheck) {
  Plan plan = PlannedTwoStreams();
  EXPECT_THAT(verify::VerifyPlan(plan), IsOk());
  Placement(plan, "e").offset = Placement(plan, "a").offset;
  EXPECT_THAT(verify::VerifyPlan(plan), StatusIs(absl::StatusCode::kInternal, "memory-overlap"));
}

}  // namespace
}  // namespace npuplan::memory
