#include "npuplan/kernel/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "npuplan/kernel/allocator.h"
#include "npuplan/kernel/generator.h"
#include "npuplan/kernel/kernel_test_util.h"
#include "npuplan/kernel/scheduler.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/sanitized.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::kernel {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

TEST(SeedAllocatorTest, SpillsLargestRemainingLifeTimesSize) {
  CacheConfig config = testing::SmallUb();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kSpillGraph, config, "spill"));
  std::vector<int> order = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelSolution s, AllocateSeed(g, order, config));
  // At ALLOC(c): a lives 4 more steps (score 20), b 2 (score 10): a is spilled,
  // c takes its offset, a is reloaded into b's freed block before MUL.
  EXPECT_EQ(s.schedule, (std::vector<int>{0, 1, 2, 3, 11, 4, 5, 6, 12, 7, 8, 9, 10}));
  EXPECT_EQ(s.offsets, (std::map<int, int64_t>{{0, 0}, {1, 5}, {2, 0}}));
  ASSERT_EQ(s.spills.size(), 1u);
  EXPECT_EQ(s.spills[0].buf_id, 0);
  EXPECT_EQ(s.spills[0].new_offset, 5);
  EXPECT_THAT(EvaluateSolution(g, s, config), IsOk());
}

TEST(BestAllocatorTest, SpillsTheBufferUsedFarthestAway) {
  CacheConfig config = testing::SmallUb();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kSpillGraph, config, "spill"));
  std::vector<int> order = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelSolution s, AllocateBest(g, order, config));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelMetrics m, EvaluateSolution(g, s, config));
  EXPECT_EQ(m.extra_movement, 5);
  ASSERT_EQ(s.spills.size(), 1u);
  EXPECT_EQ(s.spills[0].buf_id, 0);
}

TEST(PlannerTest, PlansExpExampleWithoutSpill) {
  CacheConfig config = testing::SmallUb();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kExpGraph, config, "exp"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
  EXPECT_EQ(r.metrics.extra_movement, 0);
  EXPECT_EQ(r.metrics.makespan, 60);
  std::set<int64_t> offsets;
  for (auto [b, off] : r.solution.offsets) offsets.insert(off);
  EXPECT_EQ(offsets, (std::set<int64_t>{0, 5}));
}

TEST(PlannerTest, ReportsBufferLargerThanItsCache) {
  CacheConfig config = testing::SmallUb(4);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kExpGraph, config, "exp"));
  for (Strategy s : {Strategy::kSeed, Strategy::kBest}) {
    PlanOptions o;
    o.strategy = s;
    EXPECT_THAT(PlanKernel(g, config, o),
                StatusIs(absl::StatusCode::kResourceExhausted, "larger than the cache"));
  }
}

// Two L0A buffers of 200 (capacity 256) allocated back to back: the seed has
// no victim (L0 is never spilled) and postpones the second ALLOC past FREE(a).
constexpr char kPostponeGraph[] = R"json({
  "Nodes": [
    {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 200, "Type": "L0A"},
    {"Id": 1, "Op": "ALLOC", "BufId": 1, "Size": 200, "Type": "L0A"},
    {"Id": 2, "Op": "MOVE", "Pipe": "MTE1", "Cycles": 10, "Bufs": [0]},
    {"Id": 3, "Op": "FREE", "BufId": 0, "Size": 200, "Type": "L0A"},
    {"Id": 4, "Op": "MOVE", "Pipe": "MTE1", "Cycles": 10, "Bufs": [1]},
    {"Id": 5, "Op": "FREE", "BufId": 1, "Size": 200, "Type": "L0A"}
  ],
  "Edges": [[0, 2], [2, 3], [1, 4], [4, 5]]
})json";

TEST(DecisionLogTest, SeedLogsPostponedAlloc) {
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(kPostponeGraph, config, "postpone"));
  DecisionLog log(/*keep=*/true);
  SeedOptions o;
  o.log = &log;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelSolution s, AllocateSeed(g, {0, 1, 2, 3, 4, 5}, config, o));
  EXPECT_EQ(s.schedule, (std::vector<int>{0, 2, 3, 1, 4, 5}));
  auto r = log.WithKeyword("AllocPostponed");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->ToLine(), "[seed-allocator] AllocPostponed buf=1 node=1 after_node=3 times=1");
}

TEST(DecisionLogTest, PlannerForwardsTheChosenPlansDecisions) {
  CacheConfig config = testing::SmallUb();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kSpillGraph, config, "spill"));
  for (Strategy st : {Strategy::kSeed, Strategy::kBest}) {
    DecisionLog log(/*keep=*/true);
    PlanOptions o;
    o.strategy = st;
    o.log = &log;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config, o));
    // One BufferSpilled / BufferReloaded per spill of the chosen plan.
    EXPECT_EQ(log.WithKeyword("BufferSpilled").size(), r.solution.spills.size());
    EXPECT_EQ(log.WithKeyword("BufferReloaded").size(), r.solution.spills.size());
    ASSERT_EQ(log.WithKeyword("CandidateChosen").size(), 1u);
    const Remark& c = *log.WithKeyword("CandidateChosen")[0];
    EXPECT_NE(c.ToLine().find("candidate=" + r.chosen), std::string::npos) << c.ToLine();
    EXPECT_NE(c.ToLine().find(StrCat("extra_movement=", r.metrics.extra_movement)), std::string::npos);
    if (r.chosen.find("+reorder") != std::string::npos) {
      EXPECT_EQ(log.WithKeyword("ScheduleReordered").size(), 1u);
    }
  }
  // A disabled log records nothing and costs nothing.
  DecisionLog off;
  PlanOptions o;
  o.log = &off;
  ASSERT_THAT(PlanKernel(g, config, o), IsOk());
  EXPECT_TRUE(off.remarks().empty());
}

struct GenCase {
  GraphKind kind;
  int a, b, c;
};

class GeneratedCaseTest : public ::testing::TestWithParam<GenCase> {
 protected:
  KernelGraph Make() {
    GeneratorOptions o;
    o.kind = GetParam().kind;
    o.m = o.seq = o.layers = GetParam().a;
    o.n = o.width = GetParam().b;
    o.k = GetParam().c;
    auto g = GenerateKernelGraph(o, CacheConfig{});
    EXPECT_THAT(g, IsOk());
    return *std::move(g);
  }
};

TEST_P(GeneratedCaseTest, BestNeverMovesMoreDataThanSeed) {
  CacheConfig config;
  KernelGraph g = Make();
  PlanOptions seed;
  seed.strategy = Strategy::kSeed;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult rs, PlanKernel(g, config, seed));
  for (Objective obj : {Objective::kTraffic, Objective::kBalanced, Objective::kTime}) {
    PlanOptions best;
    best.objective = obj;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult rb, PlanKernel(g, config, best));
    if (obj != Objective::kTime) {
      EXPECT_LE(rb.metrics.extra_movement, rs.metrics.extra_movement) << g.name;
    }
    EXPECT_THAT(EvaluateSolution(g, rb.solution, config), IsOk());
  }
  EXPECT_THAT(EvaluateSolution(g, rs.solution, config), IsOk());
}

TEST_P(GeneratedCaseTest, ReorderNeverLengthensAndKeepsTraffic) {
  CacheConfig config;
  KernelGraph g = Make();
  for (Objective obj : {Objective::kTraffic, Objective::kTime}) {
    PlanOptions without;
    without.objective = obj;
    without.reorder_candidates = 0;
    // The unit-order search starts from whichever plan ranks first, so its
    // result is not monotone in the candidates before it; this test is about
    // reordering alone.
    without.unit_search_max_steps = 0;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r0, PlanKernel(g, config, without));
    PlanOptions with = without;
    with.reorder_candidates = 3;
    with.realloc_rounds = 0;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r1, PlanKernel(g, config, with));
    EXPECT_LE(r1.metrics.makespan, r0.metrics.makespan) << g.name;
    // Reordering alone never changes the least movement.
    if (obj == Objective::kTraffic) {
      EXPECT_EQ(r1.metrics.extra_movement, r0.metrics.extra_movement) << g.name;
    }
    // Re-allocation rounds only add candidates.
    with.realloc_rounds = 2;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r2, PlanKernel(g, config, with));
    if (obj == Objective::kTraffic) {
      EXPECT_LE(r2.metrics.extra_movement, r1.metrics.extra_movement) << g.name;
    }
    if (obj == Objective::kTime) {
      EXPECT_LE(r2.metrics.makespan, r1.metrics.makespan) << g.name;
    }
  }
}

TEST_P(GeneratedCaseTest, ObjectivesTradeTrafficForTime) {
  CacheConfig config;
  KernelGraph g = Make();
  PlanOptions t, m;
  t.objective = Objective::kTraffic;
  m.objective = Objective::kTime;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult rt, PlanKernel(g, config, t));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult rm, PlanKernel(g, config, m));
  PlanOptions b;  // balanced (default)
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult rb, PlanKernel(g, config, b));
  EXPECT_LE(rt.metrics.extra_movement, rm.metrics.extra_movement) << g.name;
  EXPECT_LE(rm.metrics.makespan, rt.metrics.makespan) << g.name;
  // Balanced lies between the two.
  EXPECT_LE(rt.metrics.extra_movement, rb.metrics.extra_movement) << g.name;
  EXPECT_LE(rm.metrics.makespan, rb.metrics.makespan) << g.name;
}

TEST_P(GeneratedCaseTest, Q1ScheduleKeepsOneBufferPerL0Cache) {
  CacheConfig config;
  KernelGraph g = Make();
  Q1Result q1 = BestQ1Schedule(g, config, 8);
  EXPECT_FALSE(q1.l0_rule_relaxed);
  KernelSolution s;
  s.schedule = q1.order;
  EvalOptions eo;
  eo.check_memory = false;
  eo.l0_single_residency = true;
  EXPECT_THAT(EvaluateSolution(g, s, config, eo), IsOk());
}

TEST_P(GeneratedCaseTest, PlanIsDeterministic) {
  CacheConfig config;
  KernelGraph g = Make();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult a, PlanKernel(g, config));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult b, PlanKernel(g, config));
  EXPECT_EQ(a.solution.schedule, b.solution.schedule);
  EXPECT_EQ(a.solution.offsets, b.solution.offsets);
  EXPECT_EQ(FormatSpills(a.solution.spills), FormatSpills(b.solution.spills));
}

// Under the sanitizers the three largest shapes go: their cost is the
// planner's search (about 38 of these tests' 50 s in Release, some 11 minutes
// under ASan+UBSan), and the same code runs on the smaller shapes of each
// kind (docs/reliability.md, "Sanitizers").
std::vector<GenCase> GeneratedShapes() {
  std::vector<GenCase> shapes = {{GraphKind::kMatmul, 4, 4, 4},
                                 {GraphKind::kMatmul, 6, 10, 4},
                                 {GraphKind::kFlashAttention, 4, 1, 1},
                                 {GraphKind::kConv, 3, 8, 1}};
#ifndef NPUPLAN_TEST_SANITIZED
  shapes.insert(shapes.end(), {{GraphKind::kMatmul, 8, 8, 8},
                               {GraphKind::kFlashAttention, 8, 1, 1},
                               {GraphKind::kConv, 4, 24, 1}});
#endif
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GeneratedCaseTest, ::testing::ValuesIn(GeneratedShapes()));

// Published best results (kernel-cache-problem.md): extra movement and makespan.
struct Official {
  const char* name;
  int64_t extra;
  int64_t makespan;
};

// The 4x4x4 matmul fits in L1: its makespan is all scheduling, and the
// unit-order search shortens it at the same (zero) traffic, under every
// objective; the chosen plan is the search's.
TEST(PlannerTest, UnitOrderSearchShortensTheMatmulWithoutTraffic) {
  GeneratorOptions go;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph(go, CacheConfig{}));
  for (Objective obj : {Objective::kTraffic, Objective::kBalanced, Objective::kTime}) {
    PlanOptions off;
    off.objective = obj;
    off.unit_search_max_steps = 0;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r0, PlanKernel(g, CacheConfig{}, off));
    PlanOptions on = off;
    on.unit_search_max_steps = PlanOptions{}.unit_search_max_steps;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r1, PlanKernel(g, CacheConfig{}, on));
    EXPECT_EQ(r1.metrics.extra_movement, 0);
    EXPECT_EQ(r0.metrics.extra_movement, 0);
    EXPECT_LT(r1.metrics.makespan, r0.metrics.makespan);
    EXPECT_NE(r1.chosen.find("+unit-search"), std::string::npos) << r1.chosen;
  }
}

TEST(PairInterleavedTargetsTest, InterleavesPairsChunkByChunkKeepingEachUnitsOrder) {
  GeneratorOptions go;
  go.m = 2;
  go.n = 3;
  go.k = 2;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph(go, CacheConfig{}));
  const UnitPartition p = PartitionUnits(g, CacheConfig{});
  ASSERT_EQ(p.units.size(), 6u);                   // one unit per output tile
  const std::vector<int> order = {5, 0, 3, 1, 4};  // odd count: the last unit runs alone
  const std::vector<int> t = PairInterleavedTargets(g, CacheConfig{}, p, order);
  std::vector<int> sorted_t = t, sorted_ref = TargetsFromUnits(p, order);
  std::sort(sorted_t.begin(), sorted_t.end());
  std::sort(sorted_ref.begin(), sorted_ref.end());
  EXPECT_EQ(sorted_t, sorted_ref);
  // Each unit's operations keep their order; pairs (5, 0) and (3, 1)
  // alternate: a unit's k-th MATMUL precedes its partner's k-th, which
  // precedes the unit's (k+1)-th.
  std::vector<int> matmul_unit;
  for (int v : t) {
    if (g.nodes[v].op == "MATMUL") matmul_unit.push_back(p.unit_of[v]);
  }
  EXPECT_EQ(matmul_unit, (std::vector<int>{5, 0, 5, 0, 3, 1, 3, 1, 4, 4}));
  for (int u : order) {
    std::vector<int> mine;
    for (int v : t) {
      if (p.unit_of[v] == u) mine.push_back(v);
    }
    EXPECT_EQ(mine, p.units[u]);
  }
}

// Paired band orders join only without raising traffic over the plan chosen
// without them; on a matmul that needs reloads they shorten the plan.
TEST(PlannerTest, PairedBandOrdersNeverRaiseTraffic) {
  CacheConfig config;
  for (CacheLevel& l : config.levels) {
    if (l.name == "L1") l.capacity = 128 * 12;
  }
  GeneratorOptions go;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph(go, config));
  for (Objective obj : {Objective::kTraffic, Objective::kBalanced, Objective::kTime}) {
    PlanOptions off;
    off.objective = obj;
    off.paired_orders = false;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r0, PlanKernel(g, config, off));
    PlanOptions on = off;
    on.paired_orders = true;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r1, PlanKernel(g, config, on));
    EXPECT_THAT(EvaluateSolution(g, r1.solution, config), IsOk());
    EXPECT_LE(r1.metrics.extra_movement, r0.metrics.extra_movement);
    if (obj == Objective::kTime) {
      // 15,553 -> 14,919 at the same 1,152 bytes.
      EXPECT_LT(r1.metrics.makespan, r0.metrics.makespan);
      EXPECT_NE(r1.chosen.find("/pairs/"), std::string::npos) << r1.chosen;
    }
  }
}

TEST(ParetoFrontierTest, KeepsOnlyNonDominatedVerifiedPoints) {
  std::vector<CandidateReport> c = {{"a", 10, 100, ""}, {"b", 10, 90, ""}, {"c", 20, 80, ""},
                                    {"d", 30, 85, ""},  {"e", -1, -1, "failed"}, {"f", 40, 70, ""}};
  std::vector<ParetoPoint> f = ParetoFrontier(c);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].candidate, "b");
  EXPECT_EQ(f[1].candidate, "c");
  EXPECT_EQ(f[2].candidate, "f");
}

TEST(ParetoFrontierTest, HoldsTheLeastTrafficPlan) {
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, GenerateKernelGraph({GraphKind::kFlashAttention, 4, 4, 4, 8}, config));
  PlanOptions o;
  o.objective = Objective::kTraffic;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config, o));
  ASSERT_FALSE(r.pareto.empty());
  EXPECT_EQ(r.pareto.front().extra_movement, r.metrics.extra_movement);
  EXPECT_EQ(r.pareto.front().makespan, r.metrics.makespan);
  for (size_t i = 1; i < r.pareto.size(); ++i) {
    EXPECT_GT(r.pareto[i].extra_movement, r.pareto[i - 1].extra_movement);
    EXPECT_LT(r.pareto[i].makespan, r.pareto[i - 1].makespan);
  }
}

TEST(OfficialCasesTest, BeatsPublishedResults) {
  // The environment variable (as in bench/kernel_bench.sh) overrides the
  // build-time default ../shared, e.g. for worktrees outside the main tree.
  const char* env = std::getenv("NPUPLAN_SHARED_DIR");
  const std::string dir = std::string(env != nullptr ? env : NPUPLAN_SHARED_DIR) + "/data/kernels/";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no contest data at " << dir;
  CacheConfig config;
  int found = 0;
  for (Official c : {Official{"Matmul_Case0", 34688, 194331}, Official{"FlashAttention_Case0", 3584, 46761},
                     Official{"Matmul_Case1", 460800, 1800218}, Official{"FlashAttention_Case1", 32512, 193059},
                     Official{"Conv_Case0", 66828, 535312}, Official{"Conv_Case1", 72734, 1073322}}) {
    const std::string path = dir + c.name + ".json";
    if (!std::filesystem::exists(path)) continue;
    ++found;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, LoadKernelGraph(path, config));
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult r, PlanKernel(g, config));
    EXPECT_LE(r.metrics.extra_movement, c.extra) << c.name;
    EXPECT_LT(r.metrics.makespan, c.makespan) << c.name;
    EXPECT_THAT(EvaluateSolution(g, r.solution, config), IsOk());
    // `time` stays below the published makespan at no more than the published traffic.
    PlanOptions t;
    t.objective = Objective::kTime;
    NPUPLAN_ASSERT_OK_AND_ASSIGN(PlanResult rt, PlanKernel(g, config, t));
    EXPECT_LE(rt.metrics.extra_movement, c.extra) << c.name;
    EXPECT_LE(rt.metrics.makespan, r.metrics.makespan) << c.name;
  }
  if (found == 0) GTEST_SKIP() << "no official case in " << dir;
}

}  // namespace
}  // namespace npuplan::kernel
