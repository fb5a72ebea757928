#include "npuplan/events/task_count_assignment.h"

#include "npuplan/ir/ffts_regions.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/support/checked_math.h"

namespace npuplan {

namespace {}  // namespace

absl::StatusOr<bool> TaskCountAssignment::Run(Plan& plan, PassContext& ctx) {
  plan.EnsureNodeVectors();
  const Model& m = plan.model;
  // GE's TaskGenerator does not descend into FFTS / FFTS+ subgraphs: the
  // owner's FFTS task runs their nodes, which issue no task of their own.
  const std::vector<uint8_t> ffts = FftsRegionGraphs(m);
  int64_t total = 0;
  bool changed = false;
  EngineRunLookup engines(m.engine_table);
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (i + kNodePrefetch < m.num_nodes()) {  // the lines read below: type, engine, attrs
      const Node& ahead = m.nodes()[i + kNodePrefetch];
      __builtin_prefetch(&ahead.type);
      __builtin_prefetch(&ahead.engine);
      __builtin_prefetch(&ahead.attrs);
    }
    const Node& n = m.nodes()[i];
    if (absl::Status s = CheckTaskAttributes(n); !s.ok()) return s;
    std::string_view rule;
    int64_t t = 0;
    if (ffts.empty() || !ffts[n.graph.index()]) t = NodeTasks(n, engines.Find(n.engine), &rule);
    if (rule == "_node_sqe_num" || rule == "_hccl_task_num") {
      ctx.log.Record(name(), "TaskCountOverridden", "", Field("node", n.name), Field("tasks", t),
                     Field("attr", rule));
    }
    changed |= plan.tasks[i] != t;
    plan.tasks[i] = t;
    total = CheckedAdd(total, t).value_or(INT64_MAX);  // a statistic: saturates (the split checks per stream)
  }
  ctx.stats.Set(name(), "tasks_total", total);
  return changed;
}

}  // namespace npuplan
