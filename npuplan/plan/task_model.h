// The device-task model (SPEC T1): how many tasks a node issues on its main
// stream and on each attached stream. One definition for every reader:
// task-count-assignment writes it into Plan::tasks, the physical split and the
// events verifier count attached-stream tasks with it, and the simulator and
// the auto multi-stream allocator use it for plans that have no task counts yet.
//
// Main stream (docs/events.md):
//   `_node_sqe_num` (a Recv adds its reset task)      → that
//   engine with skip_assign_stream (GE_LOCAL, …)      → 0
//   DNN_HCCL with `_hccl_task_num` (+1 for a Recv)     → that
//   Recv / RecvNotify / RecvMem                       → 2 (event wait + reset)
//   anything else                                     → 1
// Attached streams: `_hccl_attached_task_num` each (default 1).
// Negative attribute values are bad input: CheckTaskAttributes names them;
// the counting functions clamp them to 0 for readers that run unchecked.
#ifndef NPUPLAN_PLAN_TASK_MODEL_H_
#define NPUPLAN_PLAN_TASK_MODEL_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "npuplan/ir/engine_table.h"
#include "npuplan/ir/graph.h"

namespace npuplan {

// Main-stream tasks of `node`; `rule` (optional) receives the rule that
// decided: "_node_sqe_num", "skip-engine", "loop-gate" (a LoopGate node:
// none), "_hccl_task_num" or "default".
int64_t NodeTasks(const Node& node, const EngineTable& engines, std::string_view* rule = nullptr);
// The same with `engine` = engines.Find(node.engine), looked up by the
// caller (a walk over many nodes of few engines looks each up once).
int64_t NodeTasks(const Node& node, const EngineConfig* engine, std::string_view* rule = nullptr);

// EngineTable::Find for a walk over many nodes: consecutive nodes mostly
// share an engine, so each run of equal names is looked up once. `name`
// must stay alive until the next call (a Node's engine, not written meanwhile).
class EngineRunLookup {
 public:
  explicit EngineRunLookup(const EngineTable& engines) : engines_(engines) {}
  const EngineConfig* Find(std::string_view name) {
    if (!found_ || name != last_) {
      last_ = name;
      engine_ = engines_.Find(name);
      found_ = true;
    }
    return engine_;
  }

 private:
  const EngineTable& engines_;
  std::string_view last_;
  const EngineConfig* engine_ = nullptr;
  bool found_ = false;
};

// Tasks on each attached stream of `node`.
int64_t AttachedNodeTasks(const Node& node);

// InvalidArgument naming the node and attribute when `_node_sqe_num`,
// `_hccl_task_num` or `_hccl_attached_task_num` is negative.
absl::Status CheckTaskAttributes(const Node& node);

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_TASK_MODEL_H_
