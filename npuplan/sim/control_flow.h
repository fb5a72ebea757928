// Control flow as the simulator and the CPU back end run it (docs/execution.md,
// "Control flow"). A plan holds every branch of an If/Case and one copy of a
// loop body; a run takes one branch and repeats the body:
//
//   If / _If / StatelessIf / Case / StatelessCase   one subgraph runs: the
//       one ControlFlowOptions::branch names (then = 0, else = 1, a Case's
//       index; an index beyond the node's last branch takes the last, as
//       Case does), or by default the branch with the most work (Σ task
//       durations, nested control flow resolved the same way) — the worst
//       case; ties take the lower index;
//   While / _While / StatelessWhile / For / Loop     the subgraphs (a While's
//       cond and body) run loop_iterations times, in subgraph order.
//
// The result is the unrolled execution order: ExecutionOrder (each node
// followed by the nodes of its subgraphs) with the branches not taken left
// out and loop subgraphs repeated, each entry a node and its run number (how
// many times it ran before). Nodes in a branch not taken have 0 runs.
//
// Loops: loop_chain(g) lists the loop owners around graph g, outermost first.
// With K iterations a node inside d loops runs K^d times; run r has the
// base-K digits (d1 … dd), d1 the outermost loop's iteration.
#ifndef NPUPLAN_SIM_CONTROL_FLOW_H_
#define NPUPLAN_SIM_CONTROL_FLOW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/plan/plan.h"
#include "npuplan/sim/cost_model.h"

namespace npuplan::sim {

struct ControlFlowOptions {
  // Branch of every If/Case: kLongestBranch, kDrawnBranch, or a branch index.
  static constexpr int32_t kLongestBranch = -1;
  // Each If/Case takes a branch drawn from (branch_seed, its NodeId): nested
  // and sibling Ifs mix their branches, which one index for all cannot.
  static constexpr int32_t kDrawnBranch = -2;
  int32_t branch = kLongestBranch;
  uint64_t branch_seed = 0;
  int64_t loop_iterations = 1;  // runs of every loop body, >= 1
  // At most this many node runs in all (nested loops multiply).
  int64_t max_runs = 20'000'000;
};

using ::npuplan::IsBranchNode;  // npuplan/ir/control_flow_types.h
using ::npuplan::IsLoopNode;

struct BranchChoice {
  NodeId node;
  int32_t chosen = 0;
  std::vector<double> work;  // per branch: Σ task durations (µs), nested control flow resolved
  bool clamped = false;      // the requested index was beyond the last branch
};

struct Instance {
  NodeId node;
  int32_t run = 0;
};

struct ControlFlow {
  ControlFlowOptions options;
  std::vector<int64_t> runs;             // per NodeId: times the node runs (0: branch not taken)
  std::vector<Instance> order;           // the unrolled execution order
  std::vector<BranchChoice> branches;    // If/Case owners that run, in execution order
  std::vector<NodeId> loops;             // loop owners that run, in execution order
  std::vector<std::vector<NodeId>> loop_chain;  // per GraphId: enclosing loop owners, outermost first

  int64_t iterations() const { return options.loop_iterations; }
  size_t depth(const Node& n) const { return loop_chain[n.graph.index()].size(); }
  // K^d (no overflow: bounded by max_runs).
  int64_t Pow(size_t d) const;
};

// Work of each node as the simulator times it: cost + tasks × launch
// overhead for a node with a main stream and at least one task, else 0.
std::vector<double> NodeWork(const Plan& plan, const CostModelOptions& cost, double launch_overhead_us);

// Resolves the control flow. InvalidArgument for loop_iterations < 1 or a
// plan whose unrolled order would exceed max_runs node runs.
absl::StatusOr<ControlFlow> ResolveControlFlow(const Plan& plan, const ControlFlowOptions& options,
                                               const std::vector<double>& node_work);

// "If 'x': then (12.5 us; else 3 us)" lines and the loop line, for reports.
std::vector<std::string> DescribeControlFlow(const Plan& plan, const ControlFlow& cf, size_t max_lines = 10);

// Parses --branch: "then" (0), "else" (1), "longest" (kLongestBranch) or a
// non-negative index. InvalidArgument otherwise.
absl::StatusOr<int32_t> ParseBranchFlag(const std::string& text);
std::string BranchFlagName(int32_t branch);

}  // namespace npuplan::sim

#endif  // NPUPLAN_SIM_CONTROL_FLOW_H_
