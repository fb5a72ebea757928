// Kernel cache planning driver (Q1 + Q2 + Q3): builds candidate schedules,
// allocates each with the chosen strategy, verifies every candidate with the
// independent evaluator and keeps the best one for the objective.
//
//   strategy seed : Q1 schedule -> AllocateSeed (the baseline, as written)
//   strategy best : Q1 schedule and unit orders (natural, band orders) with
//                   best-fit placement, and the `oldest_free_orders` orders of
//                   least traffic again with oldest-free placement; the
//                   seed plan is also a candidate, so best never moves more
//                   data than seed.
//   Q3            : the best candidates of each ranking are re-sequenced by
//                   ReorderForMakespan (same traffic), and the best plan's
//                   operation order is allocated again and re-sequenced
//                   (`realloc_rounds`); then PipelinedSchedule on the
//                   least-traffic orders (kept at no more traffic than its
//                   base), a local search over the unit order
//                   (UnitOrderSearch) and a perturbed-priority improvement
//                   search.
//   objective     : traffic  = min extra movement, then makespan
//                   time     = min makespan, then extra movement
//                   balanced = among candidates moving no more than the seed
//                              plan, min  w*(E-Emin)/Emin + (T-Tmin)/Tmin
//                              (E movement, T makespan, w = balanced_traffic_weight)
#ifndef NPUPLAN_KERNEL_PLANNER_H_
#define NPUPLAN_KERNEL_PLANNER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/kernel/evaluator.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/scheduler.h"
#include "npuplan/kernel/solution.h"
#include "npuplan/pass/decision_log.h"

namespace npuplan::kernel {

enum class Strategy { kSeed, kBest };
enum class Objective { kTraffic, kTime, kBalanced };

absl::StatusOr<Strategy> ParseStrategy(std::string_view s);
absl::StatusOr<Objective> ParseObjective(std::string_view s);
std::string_view ObjectiveName(Objective o);

struct PlanOptions {
  Strategy strategy = Strategy::kBest;
  Objective objective = Objective::kBalanced;
  int max_band_width = 8;        // widest band order tried
  double balanced_traffic_weight = 1.0;  // kBalanced: weight of relative movement vs makespan
  int oldest_free_orders = 4;    // orders (least traffic first) also tried with oldest-free placement
  // Q3 (best only): this many candidates of each ranking (objective, traffic)
  // are re-sequenced by ReorderForMakespan with both priorities; 0 = off.
  int reorder_candidates = 3;
  int realloc_rounds = 2;         // re-allocation rounds after reordering (best only)
  // Paired band orders (best only, after every other stage): each band order
  // with consecutive units interleaved chunk by chunk (PairInterleavedTargets),
  // allocated oldest-free and re-sequenced, the best one re-allocated once.
  // Results join only at no more traffic than the plan chosen without them,
  // and only if one of them is chosen (else the choice stays as it was).
  bool paired_orders = true;
  // Software pipelining (best only): the operation orders of the
  // `pipeline_bases` least-traffic plans are re-scheduled by PipelinedSchedule
  // with each lookahead. A result joins the candidates only when it moves no
  // more data than its base (every result is a Pareto point).
  std::vector<int> pipeline_lookaheads = {2, 8, 32, 128};
  int pipeline_bases = 1;
  int64_t pipeline_budget = 200'000;  // a lookahead runs only if operations x (lookahead + 1) <= this
  // Improvement search on the plan the objective ranks first and on the
  // least-traffic plan: ReorderForMakespan with bottom levels perturbed by a
  // seeded generator (noise 2-29 %), the best result kept (same memory
  // decisions, so the same traffic). Deterministic: improve_budget / nodes
  // steps (at most improve_max_steps), never a clock.
  int64_t improve_budget = 1'000'000;
  int improve_max_steps = 100;
  // Unit-order search (best only) from the plan the objective ranks first and
  // from the least-traffic plan: moves of units evaluated as full plans
  // (UnitOrderSearch), kept at no more traffic than the start plan; skipped
  // for a start whose makespan is within 2 % of its busiest pipe's work.
  // Deterministic: unit_search_budget / nodes evaluations per start (at most
  // unit_search_max_steps).
  int64_t unit_search_budget = 4'000'000;
  // ... and stops after max(20, this / nodes) steps without a lower key.
  int64_t unit_search_patience_budget = 2'000'000;
  // Each step re-plans the whole graph: above this many nodes the search is
  // off (the 30,976-node matmul keeps its 2 s planning budget).
  int unit_search_max_nodes = 20'000;
  int unit_search_max_steps = 600;
  // Decisions of the chosen candidate (allocator, reorder) and CandidateChosen
  // go here when non-null and enabled.
  DecisionLog* log = nullptr;
};

struct CandidateReport {
  std::string name;
  int64_t extra_movement = -1;  // -1: failed
  int64_t makespan = -1;
  std::string error;
};

// A (traffic, makespan) point of a verified plan the planner built.
struct ParetoPoint {
  int64_t extra_movement = 0;
  int64_t makespan = 0;
  std::string candidate;
};

// The non-dominated points of `candidates` (failed ones skipped), by traffic.
std::vector<ParetoPoint> ParetoFrontier(const std::vector<CandidateReport>& candidates);

struct PlanResult {
  Q1Result q1;
  KernelMetrics q1_metrics;  // Q1 schedule alone (L0 rule, no memory)
  KernelSolution solution;
  KernelMetrics metrics;
  std::string chosen;        // candidate name
  std::vector<CandidateReport> candidates;
  std::vector<ParetoPoint> pareto;  // ParetoFrontier(candidates)
};

absl::StatusOr<PlanResult> PlanKernel(const KernelGraph& g, const CacheConfig& config,
                                      const PlanOptions& options = {});

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_PLANNER_H_
