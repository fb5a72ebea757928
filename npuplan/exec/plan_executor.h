// PlanExecutor (SPEC R3): runs a plan on a runtime::Device — one device
// stream per plan stream, one device event per plan event id, one device
// notify per notify id — and checks every task's start against its producers
// with a DependencyChecker, and the plan's memory against the program's order
// with a MemoryRaceChecker (once, in Create: it does not depend on timing). A plan event id is one
// device object (runtime::kEventWaitReset, as on Ascend where a Recv is wait + reset), so sync
// edges that share an id wrongly are caught at run time: a second record while the first is
// pending, or a pending wait that could consume another edge's record (ExecResult::event_misuses).
// Edges in different branches of one If / Case may share an id (only one branch runs); each
// branch's edges get their own object, a safeguard from when this back end ran every branch.
//
// What each stream runs is npuplan/sim/plan_program.h's PlanProgram (the same
// queues the simulator times): in the whole-graph execution order, for each
// slot (node × main/attached stream) [waits][task][records]; all items are
// enqueued in that global order, so each event wait binds to the latest record
// of its id enqueued before it, and notifies pair k-th wait with k-th record.
// Nodes without a stream take no task and count as finished from the start.
// Control flow: one branch of each If/Case runs, loop bodies run
// `control_flow.loop_iterations` times (each task run checked against the
// producer runs of its iteration, loop-carried values against the iteration
// before).
//
// A task sleeps for cost(node) × time_scale µs (cost model of
// npuplan/sim/cost_model.h; time_scale 0 = no-op) plus, with jitter, a
// deterministic pseudo-random 0..jitter_max_us µs drawn from (seed, node,
// stream slot). All sleeping happens inside the task, between its start and
// its finish — on the producer side — so a consumer that is not ordered after
// its producer sees the producer unfinished. Every stream first waits on a
// start gate that opens once everything is enqueued, so all streams start
// together and a missing event shows up on the first runs. With
// stream_skew_us, each stream starts after its own random delay instead, which
// exposes races whose consumer sits far down its queue.
//
//   s0: [gate][a ~~jitter~~][rec e0][b ~~~~]
//   s1: [gate][wait e0 ------------][c]        c checks a and b finished
#ifndef NPUPLAN_EXEC_PLAN_EXECUTOR_H_
#define NPUPLAN_EXEC_PLAN_EXECUTOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/exec/dependency_checker.h"
#include "npuplan/exec/memory_race_checker.h"
#include "npuplan/plan/plan.h"
#include "npuplan/runtime/device.h"
#include "npuplan/sim/cost_model.h"
#include "npuplan/sim/plan_program.h"

namespace npuplan::exec {

// The longest a task, a jitter draw or a stream's start may sleep: 10 s.
// Options and costs beyond it are rejected (a 2^63 µs sleep never ends).
inline constexpr int64_t kMaxSleepUs = 10'000'000;

struct ExecOptions {
  double time_scale = 0.0;     // µs slept per µs of modelled cost (0 = tasks are no-ops)
  sim::CostModelOptions cost;  // the modelled cost
  bool jitter = false;         // add a random sleep to every task
  uint64_t jitter_seed = 0;    // seed of run r is jitter_seed + r
  int64_t jitter_max_us = 200;  // largest jitter sleep
  // With jitter: each stream starts a pseudo-random 0..stream_skew_us µs after
  // the gate opens, so a producer at the head of a late stream can lose the
  // race against a consumer deep in another stream's queue.
  int64_t stream_skew_us = 0;
  int32_t stream_priority = 0;  // priority of the device streams created
  // Which branch of each If/Case runs and how often loop bodies run
  // (npuplan/sim/control_flow.h); the default branch is the one with the
  // most work by `cost` and a 1 us launch overhead, as the simulator picks.
  sim::ControlFlowOptions control_flow;
  // Check the plan's memory against the run's order (MemoryRaceChecker):
  // done once in Create, reported by every Run.
  bool check_memory = true;
  uint64_t memory_check_budget = kDefaultMemoryCheckBudget;  // MemoryRaceChecker::Check
};

struct ExecResult {
  size_t tasks = 0;    // tasks run (main and attached)
  size_t streams = 0;  // device streams used
  std::vector<Violation> violations;
  std::vector<std::string> messages;  // Describe() of each violation, then each event misuse
  // Misuses of a device event id shared by several sync edges (one device
  // object per id, runtime::kEventWaitReset), described, in report order.
  std::vector<std::string> event_misuses;
  // Buffers placed over the same bytes that the run's order does not keep
  // apart, and a buffer's writes it does not order with its other touches
  // (MemoryRaceChecker races and hazards, the same for every run of one
  // executor): how many, and the first ones described.
  size_t memory_race_count = 0;
  std::vector<std::string> memory_races;
  std::string memory_check_skipped;  // non-empty: why the check did not run
  double wall_ms = 0;  // from opening the gate to the end of Synchronize
  // What `npuplan run` counts as violations: dependencies, device id
  // misuses, memory races and hazards (0: the run was clean).
  size_t problems() const { return violations.size() + event_misuses.size() + memory_race_count; }
};

class PlanExecutor {
 public:
  // Builds the program and the checker. InvalidArgument on a plan that cannot
  // run (see BuildPlanProgram). `plan` must outlive the executor.
  static absl::StatusOr<std::unique_ptr<PlanExecutor>> Create(const Plan& plan, ExecOptions options = {});

  // One run on `device` (run index `run` picks the jitter seed). Streams,
  // events and notifies are created for the run and destroyed after it.
  // Internal if a task fails or a node never ran; violations are results.
  absl::StatusOr<ExecResult> Run(runtime::Device& device, uint64_t run = 0);

  const sim::PlanProgram& program() const { return program_; }
  const MemoryRaceReport& memory_races() const { return memory_races_; }

 private:
  PlanExecutor(const Plan& plan, ExecOptions options, sim::PlanProgram program);
  void BuildEventObjects();
  int32_t ObjectOf(const sim::ProgramItem& item) const;
  std::string DescribeMisuse(const runtime::EventMisuse& m, size_t object,
                             const std::map<uint64_t, size_t>& stream_of) const;
  const Plan& plan_;
  const ExecOptions options_;
  const sim::PlanProgram program_;
  std::vector<double> cost_;
  DependencyChecker checker_;
  MemoryRaceReport memory_races_;
  // Device event objects (BuildEventObjects): the program sync of each, the
  // object of each plan event (-1: its sync's first), of each sync, and each
  // object's records in enqueue order (plan event indices).
  std::vector<int32_t> object_sync_, object_of_edge_, object_of_sync_;
  std::vector<std::vector<int64_t>> records_of_object_;
};

}  // namespace npuplan::exec

#endif  // NPUPLAN_EXEC_PLAN_EXECUTOR_H_
