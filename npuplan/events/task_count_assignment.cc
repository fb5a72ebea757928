#include "npuplan/events/task_count_assignment.h"

#include "npuplan/events/sync_verifier.h"

namespace npuplan {
namespace events {

int64_t NodeTasks(const Node& node, const EngineTable& engines, std::string* source) {
  const bool is_recv = node.type == "Recv" || node.type == "RecvNotify" || node.type == "RecvMem";
  auto set_source = [&](const char* s) {
    if (source) *source = s;
  };
  if (auto sqe = GetIntAttr(node.attrs, "_node_sqe_num")) {
    set_source("_node_sqe_num");
    return *sqe + (is_recv ? 1 : 0);
  }
  const EngineConfig* engine = engines.Find(node.engine);
  if (engine != nullptr && engine->skip_assign_stream) {
    set_source("skip-engine");
    return 0;
  }
  if (node.engine == "DNN_HCCL") {
    if (auto n = GetIntAttr(node.attrs, "_hccl_task_num")) {
      set_source("_hccl_task_num");
      return *n + (is_recv ? 1 : 0);
    }
  }
  set_source("default");
  return is_recv ? 2 : 1;
}

int64_t AttachedTasks(const Node& node) {
  return GetIntAttr(node.attrs, "_hccl_attached_task_num").value_or(1);
}

}  // namespace events

namespace {
[[maybe_unused]] const bool kChecks = events::RegisterEventStageChecks();
}  // namespace

absl::StatusOr<bool> TaskCountAssignment::Run(Plan& plan, PassContext& ctx) {
  plan.EnsureNodeVectors();
  const Model& m = plan.model;
  int64_t total = 0;
  bool changed = false;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const Node& n = m.nodes()[i];
    std::string source;
    int64_t t = events::NodeTasks(n, m.engine_table, &source);
    if (source == "_node_sqe_num" || source == "_hccl_task_num") {
      ctx.log.Record(name(), "TaskCountOverridden", "", Field("node", n.name), Field("tasks", t),
                     Field("attr", source));
    }
    changed |= plan.tasks[i] != t;
    plan.tasks[i] = t;
    total += t;
  }
  ctx.stats.Set(name(), "tasks_total", total);
  return changed;
}

}  // namespace npuplan
