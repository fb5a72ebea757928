#include "npuplan/sim/simulator.h"

#include <algorithm>
#include <deque>
#include <nlohmann/json.hpp>

#include "npuplan/plan/task_model.h"
#include "npuplan/sim/dependencies.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::sim {
namespace {

using Kind = ProgramItem::Kind;

// Device tasks of an item and its duration: a node's cost plus one launch
// per task; nothing at all for a node that launches no task.
struct Durations {
  const Plan& plan;
  const SimResult& r;
  const SimOptions& options;

  int64_t TaskCount(const SimItem& it) const {
    return it.attached < 0 ? r.node_tasks[it.node.index()]
                           : AttachedNodeTasks(plan.model.node(it.node));
  }
  double Main(NodeId v) const {
    const int64_t t = r.node_tasks[v.index()];
    return t > 0 ? r.node_cost[v.index()] + static_cast<double>(t) * options.launch_overhead_us
                 : 0.0;
  }
  double Of(const SimItem& it) const {
    return it.attached < 0 ? Main(it.node)
                           : static_cast<double>(TaskCount(it)) * options.launch_overhead_us;
  }
};

// 1. Flatten the queues; returns base, base[s] is stream s's first item.
std::vector<size_t> FlattenQueues(SimResult& r) {
  const PlanProgram& prog = r.program;
  const size_t ns = prog.streams.size();
  std::vector<size_t> base(ns + 1, 0);
  for (size_t s = 0; s < ns; ++s) base[s + 1] = base[s] + prog.streams[s].items.size();
  r.items.resize(base[ns]);
  r.streams.resize(ns);
  for (size_t s = 0; s < ns; ++s) {
    r.streams[s].plan_stream = prog.streams[s].plan_stream;
    for (size_t i = 0; i < prog.streams[s].items.size(); ++i) {
      const ProgramItem& p = prog.streams[s].items[i];
      SimItem& it = r.items[base[s] + i];
      it.kind = p.kind;
      it.node = p.node;
      it.attached = p.attached;
      it.stream = static_cast<int32_t>(s);
      it.sync = p.sync;
      it.run = p.run;
      if (p.kind == Kind::kWait && p.bound_stream >= 0) it.bound = static_cast<int32_t>(base[p.bound_stream] + p.bound_item);
    }
  }
  return base;
}

// 2. Event-driven run: each stream advances until a wait's record is pending.
// pred gets each item's predecessor on the schedule (its stream's previous
// item, or the record that released it).
absl::Status RunStreams(const Durations& durations, const std::vector<size_t>& base, SimResult& r,
                        std::vector<int32_t>& pred) {
  const SimOptions& options = durations.options;
  const PlanProgram& prog = r.program;
  const size_t ns = prog.streams.size();
  std::vector<size_t> pos(ns, 0);
  std::vector<double> now(ns, 0.0);
  std::vector<char> done(r.items.size(), 0);
  pred.assign(r.items.size(), -1);
  std::vector<std::vector<int32_t>> waiters(r.items.size());
  std::deque<int32_t> runnable;
  for (size_t s = 0; s < ns; ++s) runnable.push_back(static_cast<int32_t>(s));
  while (!runnable.empty()) {
    const int32_t s = runnable.front();
    runnable.pop_front();
    while (pos[s] < prog.streams[s].items.size()) {
      const size_t g = base[s] + pos[s];
      SimItem& it = r.items[g];
      if (pos[s] > 0) pred[g] = static_cast<int32_t>(g - 1);
      it.ready = now[s];
      it.start = now[s];
      if (it.kind == Kind::kWait) {
        if (it.bound >= 0) {
          if (!done[it.bound]) {
            waiters[it.bound].push_back(s);
            break;
          }
          const double released = r.items[it.bound].end + options.wait_latency_us;
          if (released > now[s]) {
            it.start = released;
            pred[g] = it.bound;
          }
        }
        it.end = it.start;
      } else if (it.kind == Kind::kTask) {
        it.end = it.start + durations.Of(it);
        r.streams[s].busy_us += it.end - it.start;
        // A statistic of plan values (a plan may claim 2^62 tasks per node): saturates.
        r.streams[s].tasks =
            CheckedAdd(r.streams[s].tasks, durations.TaskCount(it)).value_or(INT64_MAX);
        r.total_work += it.end - it.start;
      } else {
        it.end = it.start + options.record_us;
        r.streams[s].busy_us += options.record_us;
        for (int32_t w : waiters[g]) runnable.push_back(w);
        waiters[g].clear();
      }
      done[g] = 1;
      now[s] = it.end;
      ++pos[s];
    }
  }
  for (size_t s = 0; s < ns; ++s) {
    NPUPLAN_RET_CHECK(pos[s] == prog.streams[s].items.size()) << "stream " << prog.streams[s].plan_stream
                                                              << " blocked after the deadlock check passed";
  }
  return absl::OkStatus();
}

// Makespan, utilisation and the schedule path back from the last item.
void SchedulePath(const std::vector<int32_t>& pred, SimResult& r) {
  int32_t last = -1;
  for (size_t g = 0; g < r.items.size(); ++g) {
    if (last < 0 || r.items[g].end > r.items[last].end) last = static_cast<int32_t>(g);
  }
  r.makespan = last < 0 ? 0.0 : r.items[last].end;
  for (SimStreamStats& st : r.streams) st.utilisation = r.makespan > 0 ? st.busy_us / r.makespan : 0.0;
  for (int32_t g = last; g >= 0; g = pred[g]) {
    if (r.items[g].kind == Kind::kTask && r.items[g].attached < 0) r.schedule_path.push_back(r.items[g].node);
  }
  std::reverse(r.schedule_path.begin(), r.schedule_path.end());
}

// 3. Critical path of the dependency DAG over the node runs (the unrolled
// order is topological for it).
void CriticalPath(const Durations& durations, SimResult& r) {
  const Plan& plan = durations.plan;
  const PlanProgram& prog = r.program;
  const ControlFlow& flow = prog.control_flow;
  const auto deps = BuildDependencies(plan, &flow);
  const size_t n = plan.model.num_nodes();
  std::vector<int64_t> first_run(n + 1, 0);  // index of a node's run 0 among all runs
  for (size_t i = 0; i < n; ++i) first_run[i + 1] = first_run[i] + flow.runs[i];
  std::vector<double> dist(first_run[n], 0.0);
  std::vector<int64_t> from(first_run[n], -1);
  std::vector<int32_t> node_of_run(first_run[n], 0);
  int64_t end_run = -1;
  for (const Instance& in : flow.order) {
    const NodeId v = in.node;
    if (prog.main_stream[v.index()] < 0) continue;
    const int64_t at = first_run[v.index()] + in.run;
    node_of_run[at] = v.value;
    const size_t depth = flow.depth(plan.model.node(v));
    double best = 0;
    for (const Dependency& d : deps[v.index()]) {
      const int64_t need = std::min(RequiredRuns(flow, d, depth, flow.depth(plan.model.node(d.producer)), in.run),
                                    flow.runs[d.producer.index()]);
      if (need <= 0) continue;
      const int64_t p = first_run[d.producer.index()] + need - 1;
      if (dist[p] > best) {
        best = dist[p];
        from[at] = p;
      }
    }
    dist[at] = best + durations.Main(v);
    if (end_run < 0 || dist[at] > dist[end_run]) end_run = at;
  }
  if (end_run < 0) return;
  r.critical_path_us = dist[end_run];
  for (int64_t at = end_run; at >= 0; at = from[at]) {
    const NodeId v(node_of_run[at]);
    r.critical_path.push_back(v);
    r.critical_path_runs.push_back(static_cast<int32_t>(at - first_run[v.index()]));
  }
  std::reverse(r.critical_path.begin(), r.critical_path.end());
  std::reverse(r.critical_path_runs.begin(), r.critical_path_runs.end());
}

}  // namespace

absl::StatusOr<SimResult> Simulate(const Plan& plan, const SimOptions& options) {
  SimResult r;
  r.node_cost = NodeCosts(plan, options.cost);
  r.node_tasks = NodeTaskCounts(plan);
  std::vector<double> work(plan.model.num_nodes(), 0.0);
  for (size_t i = 0; i < work.size(); ++i) {
    if (r.node_tasks[i] > 0)
      work[i] = r.node_cost[i] + static_cast<double>(r.node_tasks[i]) * options.launch_overhead_us;
  }
  NPUPLAN_ASSIGN_OR_RETURN(ControlFlow cf, ResolveControlFlow(plan, options.control_flow, work));
  NPUPLAN_ASSIGN_OR_RETURN(r.program, BuildPlanProgram(plan, std::move(cf)));
  const Durations durations{plan, r, options};
  const std::vector<size_t> base = FlattenQueues(r);
  std::vector<int32_t> pred;
  NPUPLAN_RETURN_IF_ERROR(RunStreams(durations, base, r, pred));
  SchedulePath(pred, r);
  CriticalPath(durations, r);
  size_t busy_streams = 0;
  for (const SimStreamStats& st : r.streams) busy_streams += st.tasks > 0 ? 1 : 0;
  r.lower_bound = std::max(r.critical_path_us, busy_streams > 0 ? r.total_work / static_cast<double>(busy_streams) : 0.0);
  return r;
}

std::string SimReportJson(const Plan& plan, const SimResult& r, const SimOptions& options) {
  using nlohmann::json;
  auto names = [&](const std::vector<NodeId>& ids) {
    json a = json::array();
    for (NodeId id : ids) a.push_back(plan.model.node(id).name);
    return a;
  };
  json streams = json::array();
  for (const SimStreamStats& s : r.streams) {
    streams.push_back({{"stream", s.plan_stream}, {"tasks", s.tasks}, {"busy_us", s.busy_us},
                       {"utilisation", s.utilisation}});
  }
  json j = {{"format", "npuplan.sim/1"},
            {"graph", plan.model.name()},
            {"makespan_us", r.makespan},
            {"total_work_us", r.total_work},
            {"critical_path_us", r.critical_path_us},
            {"lower_bound_us", r.lower_bound},
            {"makespan_over_lower_bound", r.lower_bound > 0 ? r.makespan / r.lower_bound : 1.0},
            {"critical_path", names(r.critical_path)},
            {"schedule_path", names(r.schedule_path)},
            {"streams", std::move(streams)},
            {"tasks", r.program.num_tasks},
            {"skipped_events", r.program.skipped.size()},
            {"options",
             {{"launch_overhead_us", options.launch_overhead_us},
              {"record_us", options.record_us},
              {"wait_latency_us", options.wait_latency_us},
              {"branch", BranchFlagName(options.control_flow.branch)},
              {"loop_iterations", options.control_flow.loop_iterations}}}};
  const ControlFlow& cf = r.program.control_flow;
  json branches = json::array();
  for (const BranchChoice& c : cf.branches) {
    branches.push_back({{"node", plan.model.node(c.node).name}, {"type", plan.model.node(c.node).type},
                        {"chosen", c.chosen}, {"work_us", c.work}});
  }
  json loops = json::array();
  for (NodeId l : cf.loops) loops.push_back(plan.model.node(l).name);
  j["control_flow"] = {{"branches", std::move(branches)},
                       {"loops", std::move(loops)},
                       {"loop_iterations", cf.iterations()},
                       {"branch_rule", BranchFlagName(cf.options.branch)}};
  return j.dump(1) + "\n";
}

std::string SimReportText(const Plan& plan, const SimResult& r, size_t max_path_nodes) {
  std::string out = fmt::format(
      "makespan {:.3f} us, lower bound {:.3f} us (critical path {:.3f} us, total work {:.3f} us over {} streams), "
      "ratio {:.3f}\n",
      r.makespan, r.lower_bound, r.critical_path_us, r.total_work, r.streams.size(),
      r.lower_bound > 0 ? r.makespan / r.lower_bound : 1.0);
  for (const SimStreamStats& s : r.streams) {
    out += fmt::format("  stream {}: {} tasks, busy {:.3f} us, utilisation {:.1f}%\n", s.plan_stream, s.tasks,
                       s.busy_us, 100.0 * s.utilisation);
  }
  std::vector<std::string> path;
  for (size_t i = 0; i < r.critical_path.size() && i < max_path_nodes; ++i) {
    path.push_back(EchoName(plan.model.node(r.critical_path[i]).name));
  }
  if (r.critical_path.size() > max_path_nodes) path.push_back(StrCat("... (", r.critical_path.size(), " nodes)"));
  out += StrCat("critical path: ", StrJoin(path, " -> "), "\n");
  for (const std::string& line : DescribeControlFlow(plan, r.program.control_flow)) out += line + "\n";
  if (!r.program.skipped.empty()) out += StrCat("skipped events: ", SkippedSummary(r.program), "\n");
  return out;
}

}  // namespace npuplan::sim
