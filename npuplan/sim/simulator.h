// Discrete-event simulator of a plan (SPEC R4): the plan's streams run the
// same queues as on the CPU back end (PlanProgram), with task durations from
// the cost model. Every stream is an in-order queue; it advances until it
// reaches a wait whose record has not executed yet and sleeps until that
// record wakes it.
//
//   task    occupies its stream for cost(node) + tasks · launch_overhead_us,
//           tasks = the node's device tasks (cost_model.h: Plan::tasks, else
//           the default task model); a node with 0 tasks (Data, Const,
//           NetOutput, GE_LOCAL ops, If/While owners, ...) launches nothing
//           and takes no time, but keeps its place in the queue (its waits
//           and records still order the stream); an attached-stream task:
//           attached tasks · launch_overhead_us
//   record  occupies the sender's stream for record_us
//   wait    done at max(stream free, bound record done + wait_latency_us);
//           a wait bound to no record costs nothing
//
//   s0: [a      ][rec e0]
//   s1: [b][wait e0 ~~~~~~~~~~~~]+lat[c    ]
//
// Control flow: the program runs one branch of each If/Case and repeats loop
// bodies (control_flow.h, SimOptions::control_flow); the critical path is
// taken over the runs, with loop-carried dependencies between iterations.
//
// Reports: makespan; per-stream busy time (tasks, records) and utilisation
// (busy / makespan); the critical path — the longest chain of the node
// dependency DAG (npuplan/sim/dependencies.h) weighted by task durations,
// independent of the streams; total work (Σ task durations); the lower bound
// max(critical path, total work / streams that launch tasks); and the schedule path:
// the chain of queue-order and event edges that ends at the makespan.
#ifndef NPUPLAN_SIM_SIMULATOR_H_
#define NPUPLAN_SIM_SIMULATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/plan/plan.h"
#include "npuplan/sim/cost_model.h"
#include "npuplan/sim/plan_program.h"

namespace npuplan::sim {

struct SimOptions {
  CostModelOptions cost;           // node costs (µs)
  double launch_overhead_us = 1.0;  // per device task launched (0-task nodes: none)
  double record_us = 0.5;           // an event/notify record occupies the sender's stream
  double wait_latency_us = 1.0;     // from a record's completion until its waiter may go on
  // Branches and loop iterations (control_flow.h): by default the longer
  // branch of each If/Case (by these costs and launch overhead) and one
  // iteration of every loop.
  ControlFlowOptions control_flow;
};

struct SimStreamStats {
  int64_t plan_stream = 0;
  int64_t tasks = 0;        // device tasks launched (Σ task counts of its items)
  double busy_us = 0;       // time running tasks and records
  double utilisation = 0;   // busy / makespan (0 when the makespan is 0)
};

// One executed queue item (tasks, records, waits) with its times.
struct SimItem {
  ProgramItem::Kind kind = ProgramItem::Kind::kTask;
  NodeId node;
  int32_t attached = -1;
  int32_t stream = 0;     // index into SimResult::streams
  int32_t sync = -1;      // PlanProgram sync index (records, waits)
  double ready = 0;       // when the stream reached the item
  double start = 0;
  double end = 0;
  int32_t bound = -1;     // waits: index in SimResult::items of the record it waited for
  int32_t run = 0;        // the node's run (loop iterations)
};

struct SimResult {
  double makespan = 0;
  double total_work = 0;
  double critical_path_us = 0;
  double lower_bound = 0;
  std::vector<NodeId> critical_path;  // dependency DAG, source → sink
  std::vector<int32_t> critical_path_runs;  // the run of each critical_path node
  std::vector<NodeId> schedule_path;  // tasks on the chain that ends at the makespan
  std::vector<SimStreamStats> streams;
  std::vector<SimItem> items;         // by stream, in queue order
  std::vector<double> node_cost;      // cost model output, per NodeId
  std::vector<int64_t> node_tasks;    // main-stream device tasks, per NodeId (NodeTaskCounts)
  PlanProgram program;
};

// Simulates the plan. Errors are BuildPlanProgram's (bad events, deadlock).
absl::StatusOr<SimResult> Simulate(const Plan& plan, const SimOptions& options = {});

// Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): one track
// (thread) per stream named "stream <id>", tasks as complete events named
// after their node, records and waits as "record e<id>" / "wait e<id>"
// slices (n<id> for notifies, a<node> for activations), and a flow arrow
// from each record to each wait it released. Times in µs.
std::string ChromeTraceJson(const Plan& plan, const SimResult& result);

// The report as JSON (sorted keys): makespan, lower bound, critical path,
// per-stream stats, options.
std::string SimReportJson(const Plan& plan, const SimResult& result, const SimOptions& options);
// The report as text lines (for the CLI).
std::string SimReportText(const Plan& plan, const SimResult& result, size_t max_path_nodes = 20);

}  // namespace npuplan::sim

#endif  // NPUPLAN_SIM_SIMULATOR_H_
