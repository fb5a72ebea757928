// PlanProgram: what each device stream executes for a plan, shared by the CPU
// back end (npuplan/exec) and the simulator, so that both run the same queues.
//
// Execution order (npuplan/plan/execution_view.h): the root
// graph's nodes in Graph::nodes (topological) order, each node immediately
// followed by the nodes of its subgraphs (recursively, subgraph-index order).
// A node's slots are its main stream, then its attached streams in
// attached_stream_ids order. Every slot with a stream becomes, on that stream:
//
//   [wait e..]  [task node]  [record e..]
//
// waits: the SyncEvents whose receiver is this slot, in event-table order;
// records: the SyncEvents whose sender is this slot, in event-table order.
// Items are enqueued in execution order across all streams (the global
// `enqueue` list), which is what binds each wait to a record:
//   * event  (CUDA semantics): a wait binds to the latest record of the same
//     event id enqueued before it; none = no-op;
//   * notify (wait-and-reset): the k-th wait on an id pairs with its k-th record.
// Activation (`active_stream_list` on a node, written by stream-activation):
// the first slot of each activated stream after the activator waits on an
// implicit "activation" sync recorded after the activator's task.
//
// Streams: a node's main stream is plan.physical_stream[n] when >= 0, else
// Node::stream_id; attached streams come from streams.attached_physical when
// present, else attached_stream_ids. A node whose main stream is -1 (Const,
// skipped engines) has no slot at all and is complete from the start.
//
// Control flow (control_flow.h): the order is the unrolled one — only the
// branch of each If/Case that runs, loop subgraphs repeated per iteration —
// and every item carries its node's run number. Waits and records come from
// the event table per slot, so every run of a slot waits and records the
// same events; a wait binds per run by the rules above (an event recorded
// before a loop and waited for inside it binds to that one record in every
// iteration). Activation is per run of the activator.
//
// Host syncs: on the dynamic path the host runs a loop whose owner lies in a
// dynamic-path graph, and synchronizes the owner's stream after each run of
// the cond subgraph (of the body for For / ONNX Loop) to read the condition
// before it enqueues anything more; every other stream's first slot after
// that point waits on an implicit sync recorded after the owner stream's
// last slot up to it.
//
// An If/Case owner records its outgoing events once its subgraph is done,
// whichever branch ran. On the dynamic path the event table names the owner
// (its `_send_event_ids`, or a Send node after it when an end is attached)
// and the record follows the last node of its subtree on its stream that
// runs — a node of the branch that ran, else the owner — once per run of the
// owner (a loop owner: after its last iteration).
// There a plan may also write the record on a node of one branch; when that
// branch does not run, the record is made by the last node of the owner's
// subtree that runs on the same stream (else by the owner). `moved_records`
// counts the records of both kinds that are not where they would be if every
// branch ran.
//
// Skipped (reported, not enqueued): events with reason "loop" (GE's FpBp
// loop-carried events to a StreamSwitch, not part of one pass), events whose
// sender does not come before the receiver in execution order ("backward"),
// and events with an end in a branch that does not run ("branch-not-taken").
// Of the last, a static plan's event with its other end outside the branch
// keeps that end, as on a device: a record nothing waits for, or a wait with
// no record (the CPU device reports both; verify refuses such plans: the
// If/Case gates, docs/events.md "Branch boundaries").
// A backward "loop-next" event into an attached slot (as npuplan wrote them
// before head gates; verify refuses them) is enqueued when a loop encloses both ends:
// its wait binds to the record of the previous iteration (in the first, to
// none: the CPU device reports where a wait-reset device blocks).
#ifndef NPUPLAN_SIM_PLAN_PROGRAM_H_
#define NPUPLAN_SIM_PLAN_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/plan/plan.h"
#include "npuplan/sim/control_flow.h"

namespace npuplan::sim {

// One device sync object: a plan event id, a plan notify id, or an implicit
// sync: an activation (one per activating node) or a host sync (one per
// loop the host runs on the dynamic path).
struct SyncObject {
  enum class Kind { kEvent, kNotify, kActivation, kHostSync };
  Kind kind = Kind::kEvent;
  int64_t id = 0;  // plan event/notify id; activator / loop owner NodeId value for implicit syncs
};

struct ProgramItem {
  enum class Kind { kWait, kTask, kRecord };
  Kind kind = Kind::kTask;
  NodeId node;            // the node whose slot this item belongs to
  int32_t attached = -1;  // -1 main stream, else attached index
  int32_t sync = -1;      // index into PlanProgram::syncs (waits and records)
  int64_t event = -1;     // index into plan.events.events (-1 for activations and tasks)
  // Waits only: the record this wait binds to, as (stream index, item index),
  // or -1/-1 when it binds to nothing (a no-op).
  int32_t bound_stream = -1;
  int32_t bound_item = -1;
  int32_t run = 0;        // the node's run (loop iterations; 0 outside loops)
};

struct ProgramStream {
  int64_t plan_stream = 0;          // the plan's (physical) stream id
  std::vector<ProgramItem> items;   // in queue order
};

struct SkippedEvent {
  int64_t event = 0;  // index into plan.events.events
  std::string reason;
};

struct PlanProgram {
  std::vector<ProgramStream> streams;        // ascending plan stream id
  std::vector<SyncObject>
      syncs;  // events, notifies (ascending ids), then activations and host syncs
  std::vector<std::pair<int32_t, int32_t>> enqueue;  // global enqueue order: (stream, item)
  std::vector<NodeId> order;                 // static execution order of all nodes (every branch, loops once)
  ControlFlow control_flow;                  // branches taken, loop iterations, the unrolled order
  std::vector<int32_t> main_stream;          // per NodeId: stream index, -1 = no slot
  std::vector<int32_t> main_task;            // per NodeId: item index of the first run's main task, -1 = none
  std::vector<SkippedEvent> skipped;
  size_t moved_records = 0;                  // owner records moved for the branch run (below)
  size_t num_tasks = 0;                      // task items (main + attached)
};



// Main (physical if set) stream of node n, or -1.
int64_t MainStreamOf(const Plan& plan, NodeId n);
// Stream of the node's a-th attached stream.
int64_t AttachedStreamOf(const Plan& plan, NodeId n, int32_t a);

// Builds the program. InvalidArgument when an event names an unknown node or
// attached stream, touches a node without a stream, or when the waits and
// records can never all complete (a notify wait without its record, or a
// cycle through the stream queues: the plan would deadlock).
absl::StatusOr<PlanProgram> BuildPlanProgram(const Plan& plan, ControlFlow control_flow);
// With the default control flow (the longer branch by the default cost
// model and a 1 us launch overhead, loops once).
absl::StatusOr<PlanProgram> BuildPlanProgram(const Plan& plan);

// "12 (3 loop-carried, 9 branch-not-taken)": the skipped events by reason.
std::string SkippedSummary(const PlanProgram& program);

// "'name' (attached 1) on stream 3" for messages.
std::string SlotName(const Plan& plan, NodeId n, int32_t attached);

}  // namespace npuplan::sim

#endif  // NPUPLAN_SIM_PLAN_PROGRAM_H_
