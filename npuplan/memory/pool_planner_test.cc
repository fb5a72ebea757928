#include "npuplan/memory/pool_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "npuplan/memory/pool_test_util.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/tensor_lifetimes.h"

namespace npuplan::memory {
namespace {

using Case = testing::PoolCase;

Case MakeCase(uint32_t seed, int nodes, int streams) {
  return testing::RandomPoolCase(seed, nodes, streams, seed * 13 + 5, 8192);
}

// Plans c's pool with `max_pairs` exact pairs per buffer (fewer: more
// widened lifetimes) and the solver's scalable path from `max_edges` edges.
PoolPlan Plan(const Case& c, const StreamAwareReuse& reuse, int64_t max_pairs, int64_t max_edges,
              bool skip) {
  StreamAwareReuse::PlanningConflicts conflicts = reuse.Conflicts(c.pool, max_pairs);
  PoolPlanOptions options;
  options.max_conflict_edges = max_edges;
  options.search_steps = 2000;
  options.skip_losing_solver = skip;
  absl::StatusOr<PoolPlan> plan =
      PlanPool(c.lt, reuse, c.pool, conflicts, options, [](std::string_view) {});
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? std::move(plan).value() : PoolPlan();
}

// Skipping the solver when it cannot beat the sweep changes nothing: the
// same plan, method, bounds and solver counters as running it. The skip
// must happen on some cases (else this tests nothing), and whenever it
// happened the solver's own plan was strictly worse than the sweep's.
TEST(PoolPlannerTest, SkippingALosingSolverChangesNothing) {
  int skipped = 0, compared = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    const int streams = 2 + static_cast<int>(seed % 4);
    Case c = MakeCase(seed, 60 + static_cast<int>(seed % 5) * 20, streams);
    StreamAwareReuse reuse(c.plan.model, c.lt);
    for (const int64_t max_pairs : {int64_t{0}, int64_t{2}, int64_t{64}}) {
      for (const int64_t max_edges : {int64_t{1}, int64_t{1'000'000}}) {
        SCOPED_TRACE(::testing::Message() << "seed " << seed << " max_pairs " << max_pairs
                                          << " max_edges " << max_edges);
        const PoolPlan full = Plan(c, reuse, max_pairs, max_edges, /*skip=*/false);
        const PoolPlan fast = Plan(c, reuse, max_pairs, max_edges, /*skip=*/true);
        ++compared;
        EXPECT_FALSE(full.solver_skipped);
        EXPECT_EQ(fast.solution.assignment.offsets, full.solution.assignment.offsets);
        EXPECT_EQ(fast.solution.peak, full.solution.peak);
        EXPECT_EQ(fast.solution.lower_bound, full.solution.lower_bound);
        EXPECT_EQ(fast.solution.optimal, full.solution.optimal);
        EXPECT_EQ(fast.method, full.method);
        EXPECT_EQ(fast.extra_conflicts, full.extra_conflicts);
        EXPECT_EQ(fast.solution.stats.conflict_edges, full.solution.stats.conflict_edges);
        EXPECT_EQ(fast.solution.stats.scalable, full.solution.stats.scalable);
        EXPECT_EQ(fast.solution.stats.nodes, full.solution.stats.nodes);
        EXPECT_EQ(fast.solution.stats.steps, full.solution.stats.steps);
        if (fast.solver_skipped) {
          ++skipped;
          EXPECT_EQ(full.method, "stream-sweep") << "the skipped solver would have won";
        }
      }
    }
  }
  EXPECT_GT(skipped, 0) << "no case skipped the solver: the test checks nothing";
  EXPECT_LT(skipped, compared) << "every case skipped the solver";
}

}  // namespace
}  // namespace npuplan::memory
