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
  std::string kind;    // a sim::Dependency kind
  bool producer_started = false;  // the producer was running (vs. not started yet)
  int32_t consumer_attached = -1;  // -1 main task, else the attached task that started
  int32_t producer_attached = -1;  // -1 main task, else the attached task that had not finished
};

class DependencyChecker {
 public:
  explicit DependencyChecker(const Plan& plan);
  DependencyChecker(const DependencyChecker&) = delete;
  DependencyChecker& operator=(const DependencyChecker&) = delete;

  // Forgets every start, finish and violation (before another run).
  void Reset();
  // A node's main task (attached = -1) or attached task starts / finishes.
  // Thread-safe.
  void OnStart(NodeId n, int32_t attached = -1);
  void OnFinish(NodeId n, int32_t attached = -1);

  // Violations so far, sorted by (consumer, consumer_attached, producer,
  // producer_attached).
  std::vector<Violation> violations() const;
  // Nodes with a main or attached task that has not finished (after a
  // complete run: none).
  std::vector<NodeId> Unfinished() const;
  // "'c' (stream 1) started before its producer 'b' (stream 0) finished [data-edge]".
  std::string Describe(const Violation& v) const;

  const std::vector<std::vector<sim::Dependency>>& dependencies() const { return deps_; }

 private:
  enum : uint8_t { kNotStarted = 0, kRunning = 1, kFinished = 2 };
  // Slot index: a node's main task is its NodeId index; attached task a of
  // node v is num_nodes + attached_begin_[v] + a.
  size_t Slot(NodeId n, int32_t attached) const {
    return attached < 0 ? n.index() : num_nodes_ + attached_begin_[n.index()] + static_cast<size_t>(attached);
  }
  void Check(NodeId n, int32_t attached, const std::vector<sim::Dependency>& deps);

  const Plan& plan_;
  size_t num_nodes_ = 0;
  std::vector<std::vector<sim::Dependency>> deps_;
  sim::AttachedDependencies attached_deps_;
  std::vector<size_t> attached_begin_;  // per node, prefix sums of attached counts
  std::vector<char> has_task_;          // per slot
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  mutable std::mutex mu_;  // guards violations_
  std::vector<Violation> violations_;
};

}  // namespace npuplan::exec

#endif  // NPUPLAN_EXEC_DEPENDENCY_CHECKER_H_
