#include "npuplan/kernel/unit_order_search.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "npuplan/kernel/evaluator.h"
#include "npuplan/kernel/generator.h"
#include "npuplan/kernel/scheduler.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::kernel {
namespace {

using ::npuplan::testing::StatusIs;

KernelGraph Matmul(int tiles) {
  GeneratorOptions o;
  o.m = o.n = o.k = tiles;
  auto g = GenerateKernelGraph(o, CacheConfig{});
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

std::vector<int> NaturalOrder(const UnitPartition& p) {
  std::vector<int> order(p.units.size());
  for (size_t u = 0; u < order.size(); ++u) order[u] = static_cast<int>(u);
  return order;
}

TEST(UnitOrderOfTest, ListsEveryUnitOnceByFirstOperation) {
  const KernelGraph g = Matmul(2);
  const CacheConfig config;
  const UnitPartition p = PartitionUnits(g, config);
  ASSERT_EQ(p.units.size(), 4u);  // one per output tile
  // Operations of unit 2, then of unit 0: those two first, the rest by index.
  std::vector<int> ops = p.units[2];
  ops.insert(ops.end(), p.units[0].begin(), p.units[0].end());
  EXPECT_EQ(UnitOrderOf(p, ops), (std::vector<int>{2, 0, 1, 3}));
}

// 4x4x4 tiles fit in L1, so the plan never spills: the makespan is all
// scheduling. The natural (row-major) unit order loads a whole row of B
// before the second output row can start, which starves the CUBE pipe; the
// search finds a shorter, valid plan without any traffic.
TEST(UnitOrderSearchTest, ShortensRowMajorMatmulWithoutTraffic) {
  const KernelGraph g = Matmul(4);
  const CacheConfig config;
  const UnitPartition p = PartitionUnits(g, config);
  UnitSearchOptions o;
  o.max_steps = 60;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(UnitSearchResult r,
                               SearchUnitOrder(g, config, p, NaturalOrder(p), o));
  ASSERT_GT(r.start_makespan, 0);
  EXPECT_LT(r.makespan, r.start_makespan);
  EXPECT_GT(r.accepted, 0);
  EXPECT_EQ(r.extra_movement, 0);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m, EvaluateSolution(g, r.solution, config));
  EXPECT_EQ(m.makespan, r.makespan);
  EXPECT_EQ(m.extra_movement, 0);
  std::vector<int> sorted = r.unit_order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, NaturalOrder(p));
}

TEST(UnitOrderSearchTest, SameSeedGivesTheSamePlan) {
  const KernelGraph g = Matmul(3);
  const CacheConfig config;
  const UnitPartition p = PartitionUnits(g, config);
  UnitSearchOptions o;
  o.max_steps = 30;
  o.seed = 7;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(UnitSearchResult a,
                               SearchUnitOrder(g, config, p, NaturalOrder(p), o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(UnitSearchResult b,
                               SearchUnitOrder(g, config, p, NaturalOrder(p), o));
  EXPECT_EQ(a.unit_order, b.unit_order);
  EXPECT_EQ(a.solution.schedule, b.solution.schedule);
  EXPECT_EQ(a.solution.offsets, b.solution.offsets);
  EXPECT_EQ(a.makespan, b.makespan);
}

// With L1 at 8 tiles a 4x4x4 matmul must reload tiles in every order, so a
// cap of zero extra movement leaves nothing to return.
TEST(UnitOrderSearchTest, RejectsEveryPlanAboveTheMovementCap) {
  const KernelGraph g = Matmul(4);
  CacheConfig config;
  for (CacheLevel& l : config.levels) {
    if (l.name == "L1") l.capacity = 8 * 128;
  }
  const UnitPartition p = PartitionUnits(g, config);
  UnitSearchOptions o;
  o.max_steps = 5;
  o.max_extra_movement = 0;
  EXPECT_THAT(SearchUnitOrder(g, config, p, NaturalOrder(p), o).status(),
              StatusIs(absl::StatusCode::kNotFound, "movement cap"));
  o.max_extra_movement = 1'000'000;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(UnitSearchResult r,
                               SearchUnitOrder(g, config, p, NaturalOrder(p), o));
  EXPECT_GT(r.extra_movement, 0);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m, EvaluateSolution(g, r.solution, config));
  EXPECT_EQ(m.extra_movement, r.extra_movement);
  EXPECT_LE(r.makespan, r.start_makespan);
}

}  // namespace
}  // namespace npuplan::kernel
