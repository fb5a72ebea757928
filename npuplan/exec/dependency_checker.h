// DependencyChecker (SPEC R3): watches a plan run and flags every task that
// starts before one of its producers has finished. The producers are those of
// npuplan/sim/dependencies.h — data and control edges, subgraph inputs
// (a subgraph Data node with _parent_node_index i waits for the producer of
// its parent's input i) and outputs (a consumer of a node that owns subgraphs
// waits for the producers of their NetOutputs), looking through nodes without
// a task. It never looks at streams or events, so a plan whose events are
// wrong cannot fool it; only timing can hide a race, which is what the CPU
// back end's jitter is for.
//
// Thread-safe: OnStart/OnFinish are called from the stream workers. A node's
// state is an atomic (not started / running / finished); OnStart reads its
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
#include "npuplan/sim/dependencies.h"

namespace npuplan::exec {

struct Violation {
  NodeId consumer;     // started too early
  NodeId producer;     // had not finished
  NodeId via;          // the direct producer the dependency comes through
  std::string kind;    // "data-edge" | "control-edge" | "subgraph-input" | "subgraph-output"
  bool producer_started = false;  // the producer was running (vs. not started yet)
};

class DependencyChecker {
 public:
  explicit DependencyChecker(const Plan& plan);
  DependencyChecker(const DependencyChecker&) = delete;
  DependencyChecker& operator=(const DependencyChecker&) = delete;

  // Forgets every start, finish and violation (before another run).
  void Reset();
  // A node's task starts / finishes. Thread-safe.
  void OnStart(NodeId n);
  void OnFinish(NodeId n);

  // Violations so far, sorted by (consumer, producer) NodeId.
  std::vector<Violation> violations() const;
  // Nodes with a task that have not finished (after a complete run: none).
  std::vector<NodeId> Unfinished() const;
  // "'c' (stream 1) started before its producer 'b' (stream 0) finished [data-edge]".
  std::string Describe(const Violation& v) const;

  const std::vector<std::vector<sim::Dependency>>& dependencies() const { return deps_; }

 private:
  enum : uint8_t { kNotStarted = 0, kRunning = 1, kFinished = 2 };
  const Plan& plan_;
  std::vector<std::vector<sim::Dependency>> deps_;
  std::vector<char> has_task_;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  mutable std::mutex mu_;  // guards violations_
  std::vector<Violation> violations_;
};

}  // namespace npuplan::exec

#endif  // NPUPLAN_EXEC_DEPENDENCY_CHECKER_H_
