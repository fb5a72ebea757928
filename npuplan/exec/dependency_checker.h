// DependencyChecker (SPEC R3): watches a plan run and flags every task that
// starts before one of its producers has finished. The producers are those of
// npuplan/sim/dependencies.h — data and control edges, subgraph inputs
// (a subgraph Data node with _parent_node_index i waits for the producer of
// its parent's input i) and outputs (a consumer of a node that owns subgraphs
// waits for the producers of their NetOutputs), looking through nodes without
// a task — and, for attached-stream tasks, the attached-value and
// attached-end rules of BuildAttachedDependencies. Each task is a slot: a
// node's main task or one of its attached tasks. It never looks at streams
// or events, so a plan whose events are wrong cannot fool it; only timing can
// hide a race, which is what the CPU back end's jitter is for.
//
// Control flow (npuplan/sim/control_flow.h): given the program's ControlFlow,
// nodes in a branch that does not run have no task, and a task inside loops
// runs once per iteration: run r of a consumer needs the producer runs
// sim::RequiredRuns names (the same iteration; for a loop-carried value, the
// iteration before). Not checked: a producer running ahead into the next
// iteration while a consumer of the previous one still reads (write after
// read) — the checker sees starts and finishes, not buffers.
//
// Thread-safe: OnStart/OnFinish are called from the stream workers. A task's
// state is an atomic 2·(finished runs) + (1 while running); OnStart reads its
// producers' states with acquire ordering, OnFinish publishes with release.
#ifndef NPUPLAN_EXEC_DEPENDENCY_CHECKER_H_
#define NPUPLAN_EXEC_DEPENDENCY_CHECKER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "npuplan/plan/plan.h"
#include "npuplan/sim/control_flow.h"
#include "npuplan/sim/dependencies.h"

namespace npuplan::exec {

struct Violation {
  NodeId consumer;     // started too early
  NodeId producer;     // had not finished
  NodeId via;          // the direct producer the dependency comes through
  std::string kind;    // a sim::Dependency kind
  bool producer_started = false;  // the producer was running (vs. not started yet)
  int32_t consumer_attached = -1;  // -1 main task, else the attached task that started
  int32_t producer_attached = -1;  // -1 main task, else the attached task that had not finished
  int64_t consumer_run = 0;        // the consumer's run (loop iterations)
  int64_t producer_runs_needed = 1;  // producer runs that had to be finished
  int64_t producer_runs_done = 0;    // producer runs finished at the consumer's start
};

class DependencyChecker {
 public:
  // `control_flow` (optional, must outlive the checker): the branches and
  // loop iterations the run executes; nullptr = every node runs once.
  explicit DependencyChecker(const Plan& plan, const sim::ControlFlow* control_flow = nullptr);
  DependencyChecker(const DependencyChecker&) = delete;
  DependencyChecker& operator=(const DependencyChecker&) = delete;

  // Forgets every start, finish and violation (before another run).
  void Reset();
  // Run `run` of a node's main task (attached = -1) or attached task starts
  // / finishes. Thread-safe.
  void OnStart(NodeId n, int32_t attached = -1, int64_t run = 0);
  void OnFinish(NodeId n, int32_t attached = -1, int64_t run = 0);

  // Violations so far, sorted by (consumer, consumer_attached, producer,
  // producer_attached).
  std::vector<Violation> violations() const;
  // Nodes with a main or attached task that has not finished all its runs
  // (after a complete run: none).
  std::vector<NodeId> Unfinished() const;
  // "'c' (stream 1) started before its producer 'b' (stream 0) finished [data-edge]".
  std::string Describe(const Violation& v) const;

  const std::vector<std::vector<sim::Dependency>>& dependencies() const { return deps_; }

 private:
  static constexpr int64_t kNoTask = -1;  // runs_ of a slot without a task
  // Slot index: a node's main task is its NodeId index; attached task a of
  // node v is num_nodes + attached_begin_[v] + a.
  size_t Slot(NodeId n, int32_t attached) const {
    return attached < 0 ? n.index() : num_nodes_ + attached_begin_[n.index()] + static_cast<size_t>(attached);
  }
  void Check(NodeId n, int32_t attached, int64_t run, const std::vector<sim::Dependency>& deps);

  const Plan& plan_;
  const sim::ControlFlow* cf_;
  size_t num_nodes_ = 0;
  std::vector<std::vector<sim::Dependency>> deps_;
  sim::AttachedDependencies attached_deps_;
  std::vector<size_t> attached_begin_;  // per node, prefix sums of attached counts
  std::vector<int64_t> runs_;           // per slot: runs in a complete run, kNoTask without a task
  std::unique_ptr<std::atomic<int64_t>[]> state_;  // per slot: 2 · finished runs + running
  mutable std::mutex mu_;  // guards violations_
  std::vector<Violation> violations_;
};

}  // namespace npuplan::exec

#endif  // NPUPLAN_EXEC_DEPENDENCY_CHECKER_H_
