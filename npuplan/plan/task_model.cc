#include "npuplan/plan/task_model.h"

#include <algorithm>

#include "npuplan/ir/attribute.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

bool IsRecv(const Node& node) {
  return node.type == "Recv" || node.type == "RecvNotify" || node.type == "RecvMem";
}

}  // namespace

int64_t NodeTasks(const Node& node, const EngineTable& engines, std::string_view* rule) {
  return NodeTasks(node, engines.Find(node.engine), rule);
}

int64_t NodeTasks(const Node& node, const EngineConfig* engine, std::string_view* rule) {
  auto decided = [&](std::string_view r, int64_t tasks) {
    if (rule) *rule = r;
    return std::max<int64_t>(0, tasks);
  };
  const int64_t reset = IsRecv(node) ? 1 : 0;
  // The sums saturate: CheckTaskAttributes refuses the values that overflow.
  auto plus_reset = [&](int64_t n) { return CheckedAdd(n, reset).value_or(INT64_MAX); };
  if (auto sqe = GetIntAttr(node.attrs, "_node_sqe_num"))
    return decided("_node_sqe_num", plus_reset(*sqe));
  if (engine != nullptr && engine->skip_assign_stream) return decided("skip-engine", 0);
  // Only its Send / Recv nodes run: the gate marks where on the stream.
  if (IsLoopGate(node)) return decided("loop-gate", 0);
  if (node.engine == "DNN_HCCL") {
    if (auto n = GetIntAttr(node.attrs, "_hccl_task_num")) return decided("_hccl_task_num", plus_reset(*n));
  }
  return decided("default", 1 + reset);
}

int64_t AttachedNodeTasks(const Node& node) {
  return std::max<int64_t>(0, GetIntAttr(node.attrs, "_hccl_attached_task_num").value_or(1));
}

absl::Status CheckTaskAttributes(const Node& node) {
  if (node.attrs.empty()) return absl::OkStatus();  // every task attribute is an attribute
  for (const char* attr : {"_node_sqe_num", "_hccl_task_num", "_hccl_attached_task_num"}) {
    auto v = GetIntAttr(node.attrs, attr);
    if (v && *v < 0) {
      return absl::InvalidArgumentError(
          StrCat("node '", node.name, "': attribute ", attr, " is ", *v, "; a task count must be >= 0"));
    }
    // A Recv adds its reset task to the count.
    if (v && IsRecv(node) && !CheckedAdd(*v, 1)) {
      return absl::InvalidArgumentError(StrCat("node '", node.name, "': attribute ", attr, " is ", *v,
                                               "; with the Recv's reset task the count overflows int64"));
    }
  }
  return absl::OkStatus();
}

}  // namespace npuplan
