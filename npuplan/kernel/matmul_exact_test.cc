// The exact tile-load optimum of tiny matmuls (matmul_exact_test_util.h)
// against an independent dynamic program and against the planner's plans.
#include <gtest/gtest.h>

#include <cstdio>

#include "npuplan/kernel/evaluator.h"
#include "npuplan/kernel/generator.h"
#include "npuplan/kernel/matmul_exact_test_util.h"
#include "npuplan/kernel/planner.h"
#include "npuplan/testing/sanitized.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::kernel {
namespace {

using testing::ExactMinLoads;
using testing::TinyMatmul;

TEST(ExactMatmulTest, MatchesTheDynamicProgramOfOneTilePerCache) {
  // bounds_test.cc's ExactDirectMatmulReloads3: A and B in a cache of two,
  // one output tile in L0C, so every change of output tile is a C reload.
  const auto r = ExactMinLoads(TinyMatmul{3, 3, 3, /*cache=*/2, /*open_c=*/1, /*c_spills=*/true});
  EXPECT_EQ(r.reloads(), 28);
}

TEST(ExactMatmulTest, KnownOptimaOf3x3x3) {
#ifdef NPUPLAN_TEST_SANITIZED
  GTEST_SKIP() << "exact searches of seconds; checked in the unsanitized build";
#endif
  // Cache of A/B tiles -> fewest reloads, two output tiles open, no C spills.
  for (auto [cache, reloads] : {std::pair{2, 24}, {4, 12}, {6, 7}, {8, 4}, {12, 0}}) {
    SCOPED_TRACE(cache);
    const auto r = ExactMinLoads(TinyMatmul{3, 3, 3, cache, 2, false});
    EXPECT_EQ(r.reloads(), reloads);
    // C spills only add freedom (3x3x3 with a cache of 10 needs 2 without).
    if (cache >= 12) {
      EXPECT_LE(ExactMinLoads(TinyMatmul{3, 3, 3, cache - 2, 2, true}).reloads(), 2);
    }
  }
  // A third open output tile never costs more.
  EXPECT_LE(ExactMinLoads(TinyMatmul{3, 3, 3, 4, 3, false}).reloads(), 12);
}

// The generated matmul with an L1 of X tiles: the plan's reloads (spill
// lines) lie between the optimum of the relaxed model (cache X + 4 for the
// L0A/L0B buffers, C spills allowed) and that of the restricted one (cache X,
// no C spills, which every plan could follow).
struct PlanVsExact {
  int64_t lower = 0, upper = 0, plan = 0, traffic = 0;
};

PlanVsExact PlanAndExact(int size, int l1_tiles) {
  CacheConfig config;
  for (CacheLevel& l : config.levels) {
    if (l.name == "L1") l.capacity = 128 * l1_tiles;
  }
  PlanVsExact out;
  auto g = GenerateKernelGraph(GeneratorOptions{GraphKind::kMatmul, size, size, size}, config);
  EXPECT_TRUE(g.ok());
  if (!g.ok()) return out;
  auto r = PlanKernel(*g, config);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return out;
  EXPECT_TRUE(EvaluateSolution(*g, r->solution, config).ok());
  out.plan = static_cast<int64_t>(r->solution.spills.size());
  out.traffic = r->metrics.extra_movement;
  out.lower = ExactMinLoads(TinyMatmul{size, size, size, l1_tiles + 4, 2, true}).reloads();
  out.upper = ExactMinLoads(TinyMatmul{size, size, size, l1_tiles, 2, false}).reloads();
  return out;
}

TEST(ExactMatmulTest, BracketsThePlannersReloads) {
#ifdef NPUPLAN_TEST_SANITIZED
  GTEST_SKIP() << "exact searches of seconds; checked in the unsanitized build";
#endif
  for (int x : {4, 6}) {
    SCOPED_TRACE(x);
    const PlanVsExact p = PlanAndExact(3, x);
    EXPECT_GE(p.lower, 0);
    EXPECT_LE(p.lower, p.upper);
    EXPECT_LE(p.lower, p.plan);
  }
}

// The table of docs/kernel.md ("Exact optima of tiny matmuls"); slow (about a
// minute): --gtest_also_run_disabled_tests --gtest_filter='*Table*'.
TEST(ExactMatmulTest, DISABLED_Table) {
  std::printf("size L1  lower  upper  plan  traffic\n");
  for (int x : {2, 3, 4, 6, 8}) {
    const PlanVsExact p = PlanAndExact(3, x);
    std::printf("3^3 %3d %6lld %6lld %5lld %8lld\n", x, static_cast<long long>(p.lower),
                static_cast<long long>(p.upper), static_cast<long long>(p.plan),
                static_cast<long long>(p.traffic));
  }
}

}  // namespace
}  // namespace npuplan::kernel
