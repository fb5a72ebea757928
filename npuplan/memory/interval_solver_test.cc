#include "npuplan/memory/interval_solver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "npuplan/memory/minimalloc_csv.h"
#include "npuplan/memory/plan_validator.h"
#include "npuplan/support/file_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::memory {
namespace {

using ::npuplan::testing::StatusIs;

// Solves, checks the plan with the independent validator, returns it.
IntervalSolution SolveAndValidate(const IntervalProblem& p, const IntervalSolverOptions& o = {}) {
  absl::StatusOr<IntervalSolution> s = SolveIntervals(p, o);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  const ValidationResult v = ValidateIntervalAssignment(p, s->assignment);
  EXPECT_TRUE(v.ok()) << v.status;
  EXPECT_GE(s->peak, s->lower_bound);
  return *s;
}

// The MiniMalloc README example: optimum 12.
IntervalProblem MinimallocExample() {
  IntervalProblem p;
  p.buffers = {{"b1", 0, 3, 4}, {"b2", 3, 9, 4}, {"b3", 0, 9, 4}, {"b4", 9, 21, 4},
               {"b5", 0, 21, 4}};
  return p;
}

// Random problem: n buffers in [0, horizon), sizes 1..max_size, and each
// time-disjoint pair an extra conflict with probability `extra`.
IntervalProblem RandomProblem(std::mt19937& rng, int n, int horizon, int max_size, double extra) {
  IntervalProblem p;
  std::uniform_int_distribution<int> t(0, horizon - 1), sz(1, max_size);
  for (int i = 0; i < n; ++i) {
    int a = t(rng), b = t(rng);
    if (a > b) std::swap(a, b);
    p.buffers.push_back({absl::StrCat("b", i), a, b + 1, sz(rng)});
  }
  std::bernoulli_distribution coin(extra);
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if (!LifetimesOverlap(p.buffers[i], p.buffers[j]) && coin(rng)) {
        p.extra_conflicts.push_back({i, j});
      }
    }
  }
  return p;
}

// Exact optimum by brute force over all offsets (tiny problems only).
int64_t BruteForcePeak(const IntervalProblem& p) {
  const std::vector<std::vector<int>> conflicts = BuildConflictGraph(p);
  const int n = static_cast<int>(p.buffers.size());
  std::vector<int64_t> off(n, 0);
  for (int64_t peak = ComputeLowerBound(p, conflicts);; ++peak) {
    std::function<bool(int)> place = [&](int i) {
      if (i == n) return true;
      for (int64_t o = 0; o + p.buffers[i].size <= peak; ++o) {
        bool ok = true;
        for (int j : conflicts[i]) {
          if (j < i && o < off[j] + p.buffers[j].size && off[j] < o + p.buffers[i].size) ok = false;
        }
        if (!ok) continue;
        off[i] = o;
        if (place(i + 1)) return true;
      }
      return false;
    };
    if (place(0)) return peak;
  }
}

TEST(IntervalSolverTest, SolvesMinimallocExampleOptimally) {
  const IntervalSolution s = SolveAndValidate(MinimallocExample());
  EXPECT_EQ(s.peak, 12);
  EXPECT_EQ(s.lower_bound, 12);
  EXPECT_TRUE(s.optimal);
  EXPECT_DOUBLE_EQ(s.gap(), 0.0);
}

TEST(IntervalSolverTest, StacksOverlappingBuffersAndReusesDisjointOnes) {
  IntervalProblem p;
  p.buffers = {{"a", 0, 10, 8}, {"b", 0, 5, 4}, {"c", 5, 10, 4}};
  const IntervalSolution s = SolveAndValidate(p);
  EXPECT_EQ(s.peak, 12);
  EXPECT_EQ(s.assignment.offsets[1], s.assignment.offsets[2]);  // b and c share
}

TEST(IntervalSolverTest, FindsOptimumGreedyMisses) {
  // Greedy by size puts the 2-byte buffers at the bottom and fragments the
  // space; the optimum stacks the long 1-byte buffers below instead.
  IntervalProblem p;
  p.buffers = {{"l1", 0, 4, 1}, {"s1", 0, 2, 2}, {"s2", 2, 4, 2}, {"l2", 1, 3, 1},
               {"m", 3, 4, 1}};
  const IntervalSolution s = SolveAndValidate(p);
  EXPECT_EQ(s.peak, BruteForcePeak(p));
}

TEST(IntervalSolverTest, PlacesZeroSizeBuffersAtZero) {
  IntervalProblem p;
  p.buffers = {{"z", 0, 10, 0}, {"a", 0, 10, 4}};
  const IntervalSolution s = SolveAndValidate(p);
  EXPECT_EQ(s.assignment.offsets[0], 0);
  EXPECT_EQ(s.peak, 4);
}

TEST(IntervalSolverTest, SolvesEmptyProblem) {
  const IntervalSolution s = SolveAndValidate(IntervalProblem{});
  EXPECT_EQ(s.peak, 0);
  EXPECT_TRUE(s.optimal);
}

TEST(IntervalSolverTest, RespectsAlignment) {
  IntervalProblem p;
  p.buffers = {{"a", 0, 2, 3}, {"b", 0, 2, 4, 8}, {"c", 1, 3, 5, 4}};
  const IntervalSolution s = SolveAndValidate(p);
  EXPECT_EQ(s.assignment.offsets[1] % 8, 0);
  EXPECT_EQ(s.assignment.offsets[2] % 4, 0);
}

TEST(IntervalSolverTest, KeepsBuffersWithExtraConflictApart) {
  // a and b are disjoint in time (say two streams with no event between
  // them): alone they share offset 0; with an extra conflict they must not.
  IntervalProblem p;
  p.buffers = {{"a", 0, 2, 8}, {"b", 2, 4, 8}};
  EXPECT_EQ(SolveAndValidate(p).peak, 8);
  p.extra_conflicts = {{0, 1}};
  const IntervalSolution s = SolveAndValidate(p);
  EXPECT_EQ(s.peak, 16);
  EXPECT_EQ(s.lower_bound, 16);  // the clique bound sees the extra edge
  EXPECT_NE(s.assignment.offsets[0], s.assignment.offsets[1]);
}

TEST(IntervalSolverTest, KeepsBuffersForbiddenByPredicateApart) {
  IntervalProblem p;
  p.buffers = {{"a", 0, 2, 8}, {"b", 2, 4, 8}, {"c", 4, 6, 8}};
  // Stream of each buffer; buffers on different streams may not share.
  const std::vector<int> stream = {0, 1, 0};
  p.forbid_sharing = [&](int x, int y) { return stream[x] != stream[y]; };
  const IntervalSolution s = SolveAndValidate(p);
  EXPECT_EQ(s.peak, 16);
  EXPECT_EQ(s.assignment.offsets[0], s.assignment.offsets[2]);  // same stream: shared
}

TEST(IntervalSolverTest, GrowsLowerBoundIntoCliqueOfExtraConflicts) {
  IntervalProblem p;
  p.buffers = {{"a", 0, 1, 1}, {"b", 1, 2, 1}, {"c", 2, 3, 1}};
  p.extra_conflicts = {{0, 1}, {1, 2}, {0, 2}};
  const IntervalSolution s = SolveAndValidate(p);
  EXPECT_EQ(s.lower_bound, 3);
  EXPECT_EQ(s.peak, 3);
}

TEST(IntervalSolverTest, ReportsInfeasibleCapacityWithNeededBytes) {
  IntervalProblem p = MinimallocExample();
  p.capacity = 11;
  EXPECT_THAT(SolveIntervals(p),
              StatusIs(absl::StatusCode::kResourceExhausted, "infeasible: needs at least 12 bytes"));
}

TEST(IntervalSolverTest, ProvesInfeasibilityAboveCliqueBound) {
  // The clique bound is 6 but no plan fits in 6 (brute force: 7). An
  // exhaustive probe proves it: the error names the proven bound, and without
  // a capacity the solution is reported optimal at 7.
  IntervalProblem p;
  p.buffers = {{"b0", 3, 5, 2}, {"b1", 4, 6, 3}, {"b2", 0, 4, 1},
               {"b3", 1, 5, 1}, {"b4", 0, 2, 3}, {"b5", 0, 4, 1}};
  p.extra_conflicts = {{1, 4}};
  ASSERT_EQ(ComputeLowerBound(p, BuildConflictGraph(p)), 6);
  ASSERT_EQ(BruteForcePeak(p), 7);
  const IntervalSolution s = SolveAndValidate(p);
  EXPECT_EQ(s.peak, 7);
  EXPECT_EQ(s.lower_bound, 7);
  EXPECT_TRUE(s.optimal);
  p.capacity = 6;
  EXPECT_THAT(SolveIntervals(p), StatusIs(absl::StatusCode::kResourceExhausted,
                                          "infeasible: needs at least 7 bytes"));
}

TEST(IntervalSolverTest, MeetsCapacityGreedyAloneWouldExceed) {
  IntervalProblem p = MinimallocExample();
  p.capacity = 12;
  const IntervalSolution s = SolveAndValidate(p);
  EXPECT_LE(s.peak, 12);
}

// MiniMalloc's question: with stop_at_capacity the search ends at the first
// plan within the capacity; without it, it keeps lowering the peak. On
// MiniMalloc's J (greedy 1,298,432, bound 989,184).
TEST(IntervalSolverTest, StopsAtFirstPlanWithinCapacity) {
  const std::string path = absl::StrCat(NPUPLAN_SOURCE_DIR, "/testdata/minimalloc/J.1048576.csv");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(const std::string text, ReadFile(path));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MinimallocCsv csv, ParseMinimallocCsv(text, path));
  IntervalProblem& p = csv.problem;
  IntervalSolverOptions o;
  o.max_nodes = 20000;
  o.stop_at_capacity = true;
  // A capacity greedy meets: no search at all.
  p.capacity = 1'300'000;
  const IntervalSolution at_greedy = SolveAndValidate(p, o);
  EXPECT_EQ(at_greedy.stats.probes, 0);
  EXPECT_EQ(at_greedy.peak, at_greedy.stats.greedy_peak);
  EXPECT_TRUE(at_greedy.stats.fits_capacity);
  // A capacity greedy misses: the search stops at the first plan within it,
  // after fewer probes than the search that lowers the peak further.
  p.capacity = 1'100'000;
  const IntervalSolution fit = SolveAndValidate(p, o);
  EXPECT_LE(fit.peak, 1'100'000);
  EXPECT_TRUE(fit.stats.fits_capacity);
  EXPECT_GT(fit.stats.probes, 0);
  o.stop_at_capacity = false;
  const IntervalSolution lowered = SolveAndValidate(p, o);
  EXPECT_FALSE(lowered.stats.fits_capacity);
  EXPECT_LT(lowered.peak, fit.peak);
  EXPECT_LT(fit.stats.probes, lowered.stats.probes);
}

TEST(IntervalSolverTest, GreedyOnlySkipsSearch) {
  IntervalSolverOptions o;
  o.search = false;
  const IntervalSolution s = SolveAndValidate(MinimallocExample(), o);
  EXPECT_EQ(s.stats.nodes, 0);
  EXPECT_EQ(s.peak, s.stats.greedy_peak);
}

// FirstDuplicateId against a pairwise scan: the first index whose id
// repeated an earlier one, on ids from a small alphabet (many repeats).
TEST(IntervalProblemTest, FirstDuplicateIdFindsTheFirstRepeat) {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::vector<IntervalBuffer> bufs(1 + rng() % 40);
    const int alphabet = 1 + static_cast<int>(rng() % 80);
    for (IntervalBuffer& b : bufs) b.id = absl::StrCat("t", rng() % alphabet);
    int want = static_cast<int>(bufs.size());
    for (int i = 0; i < static_cast<int>(bufs.size()) && want == static_cast<int>(bufs.size());
         ++i) {
      for (int j = 0; j < i; ++j) {
        if (bufs[j].id == bufs[i].id) want = i;
      }
    }
    EXPECT_EQ(FirstDuplicateId(bufs), want) << "round " << round;
  }
  EXPECT_EQ(FirstDuplicateId({}), 0);
}

// The same on thousands of mostly distinct ids with a few repeats planted at
// random indices (and none), against a std::map of first occurrences.
TEST(IntervalProblemTest, FirstDuplicateIdOnLargeProblems) {
  std::mt19937 rng(5);
  for (int round = 0; round < 20; ++round) {
    std::vector<IntervalBuffer> bufs(1000 + rng() % 20000);
    for (size_t i = 0; i < bufs.size(); ++i) bufs[i].id = absl::StrCat("n", i, ":", rng() % 3);
    const int repeats = static_cast<int>(rng() % 4);
    for (int r = 0; r < repeats; ++r) {
      const size_t from = rng() % bufs.size(), to = rng() % bufs.size();
      bufs[to].id = bufs[from].id;
    }
    std::map<std::string, int> seen;
    int want = static_cast<int>(bufs.size());
    for (int i = 0; i < static_cast<int>(bufs.size()); ++i) {
      if (!seen.emplace(bufs[i].id, i).second) {
        want = i;
        break;
      }
    }
    EXPECT_EQ(FirstDuplicateId(bufs), want) << "round " << round;
  }
}

TEST(IntervalProblemTest, DuplicateIsReportedAfterEarlierBuffersErrors) {
  IntervalProblem p;
  // Buffer 1 both repeats an id and has a bad lifetime: the lifetime rule
  // is checked first; a repeat at 2 is reported before a bad size at 3.
  p.buffers = {{"a", 0, 1, 1}, {"a", 2, 2, 1}};
  EXPECT_THAT(CheckIntervalProblem(p), StatusIs(absl::StatusCode::kInvalidArgument, "lower (2)"));
  p.buffers = {{"a", 0, 1, 1}, {"b", 0, 1, 1}, {"b", 0, 1, 1}, {"c", 0, 1, -1}};
  EXPECT_THAT(CheckIntervalProblem(p),
              StatusIs(absl::StatusCode::kInvalidArgument, "duplicate buffer id 'b'"));
}

TEST(IntervalSolverTest, RejectsInvalidProblemAndOptions) {
  IntervalProblem p;
  p.buffers = {{"a", 3, 3, 1}};
  EXPECT_THAT(SolveIntervals(p), StatusIs(absl::StatusCode::kInvalidArgument, "lower (3)"));
  p.buffers = {{"a", 0, 1, 1}, {"a", 1, 2, 1}};
  EXPECT_THAT(SolveIntervals(p), StatusIs(absl::StatusCode::kInvalidArgument, "duplicate"));
  p.buffers = {{"a", 0, 1, 1}};
  p.extra_conflicts = {{0, 0}};
  EXPECT_THAT(SolveIntervals(p), StatusIs(absl::StatusCode::kInvalidArgument, "extra conflict"));
  p.extra_conflicts.clear();
  IntervalSolverOptions o;
  o.time_limit_seconds = -1;
  EXPECT_THAT(SolveIntervals(p, o), StatusIs(absl::StatusCode::kInvalidArgument, "time limit"));
  o.time_limit_seconds = 1;
  o.max_nodes = -1;
  EXPECT_THAT(SolveIntervals(p, o), StatusIs(absl::StatusCode::kInvalidArgument, "node limit"));
}

// Property: on random problems (with and without extra conflicts) the
// validator accepts every plan, peak >= lower bound, and the search reaches
// the brute-force optimum while never claiming a bound above it.
TEST(IntervalSolverTest, MatchesBruteForceOnRandomSmallProblems) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 150; ++iter) {
    const IntervalProblem p = RandomProblem(rng, 6, 6, 3, iter % 2 ? 0.3 : 0.0);
    SCOPED_TRACE(absl::StrCat("iteration ", iter));
    const IntervalSolution s = SolveAndValidate(p);
    const int64_t optimum = BruteForcePeak(p);
    EXPECT_EQ(s.peak, optimum);
    EXPECT_LE(s.lower_bound, optimum);
  }
}

TEST(IntervalSolverTest, ValidatesOnRandomMediumProblems) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 20; ++iter) {
    IntervalProblem p = RandomProblem(rng, 60, 40, 64, iter % 2 ? 0.05 : 0.0);
    if (iter % 3 == 0) {
      for (IntervalBuffer& b : p.buffers) b.alignment = 1 << (b.size % 4);
    }
    IntervalSolverOptions o;
    o.time_limit_seconds = 0.2;
    SCOPED_TRACE(absl::StrCat("iteration ", iter));
    const IntervalSolution s = SolveAndValidate(p, o);
    EXPECT_LE(s.peak, s.stats.greedy_peak);
  }
}

// `validate = false` drops only the solver's own check of its result: the
// plan is the same (the callers that turn it off check it themselves).
TEST(IntervalSolverTest, WithoutItsOwnCheckTheSolverReturnsTheSamePlan) {
  std::mt19937 rng(17);
  for (int iter = 0; iter < 10; ++iter) {
    const IntervalProblem p = RandomProblem(rng, 60, 40, 64, iter % 2 ? 0.05 : 0.0);
    IntervalSolverOptions checked;
    checked.max_nodes = 2000;
    IntervalSolverOptions unchecked = checked;
    unchecked.validate = false;
    SCOPED_TRACE(absl::StrCat("iteration ", iter));
    const absl::StatusOr<IntervalSolution> a = SolveIntervals(p, checked);
    const absl::StatusOr<IntervalSolution> b = SolveIntervals(p, unchecked);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(a->assignment.offsets, b->assignment.offsets);
    EXPECT_EQ(a->peak, b->peak);
    EXPECT_TRUE(ValidateIntervalAssignment(p, b->assignment).ok());
  }
}

// The search runs on node budgets, not the clock: two solves of the same
// problem explore the same nodes and return the same plan.
TEST(IntervalSolverTest, IsDeterministic) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 5; ++iter) {
    IntervalProblem p = RandomProblem(rng, 80, 50, 16, iter % 2 ? 0.02 : 0.0);
    for (IntervalBuffer& b : p.buffers) b.size *= 1024;  // granularity 1024
    IntervalSolverOptions o;
    o.time_limit_seconds = 600;  // safety net; the node limit stops first
    o.max_nodes = 20000;
    SCOPED_TRACE(absl::StrCat("iteration ", iter));
    const IntervalSolution a = SolveAndValidate(p, o);
    const IntervalSolution b = SolveAndValidate(p, o);
    EXPECT_FALSE(a.stats.timed_out);
    EXPECT_LE(a.stats.nodes, o.max_nodes);
    EXPECT_EQ(a.assignment.offsets, b.assignment.offsets);
    EXPECT_EQ(a.stats.nodes, b.stats.nodes);
    EXPECT_EQ(a.stats.probes, b.stats.probes);
    EXPECT_EQ(a.peak % 1024, 0);
    EXPECT_EQ(a.lower_bound % 1024, 0);
  }
}

// Every combination of the search switches yields valid plans (MiniMalloc's
// option sweep); with all pruning off the search is still exact.
class IntervalSolverOptionsTest
    : public ::testing::TestWithParam<std::tuple<bool, bool, bool, bool, bool>> {};

TEST_P(IntervalSolverOptionsTest, FindsOptimumUnderEverySwitchCombination) {
  IntervalSolverOptions o;
  std::tie(o.canonical_only, o.section_inference, o.unallocated_floor, o.check_dominance,
           o.dynamic_decomposition) = GetParam();
  o.time_limit_seconds = 5;
  std::mt19937 rng(3);
  for (int iter = 0; iter < 20; ++iter) {
    const IntervalProblem p = RandomProblem(rng, 6, 6, 3, iter % 2 ? 0.3 : 0.0);
    SCOPED_TRACE(absl::StrCat("iteration ", iter));
    EXPECT_EQ(SolveAndValidate(p, o).peak, BruteForcePeak(p));
  }
}

INSTANTIATE_TEST_SUITE_P(AllSwitches, IntervalSolverOptionsTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(),
                                            ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Bool()));

}  // namespace
}  // namespace npuplan::memory
