// Loop order: what orders one iteration of a static loop after the one
// before, shared by the pass that adds the events (stream-activation,
// events/loop_order_events.h) and the check that refuses a plan without them
// (verifier[loop-order]), as Enclosure is shared by the split and its check.
//
// Events are placed for one pass over the execution order, but a loop (While,
// For, ONNX Loop: IsLoopNode) runs its subgraphs again and again: cond, body,
// cond, body, … (its subgraphs in index order, per iteration; each such
// subgraph is a *run*). When the tasks of a loop's runs use more than one
// stream, nothing in one pass orders iteration i + 1's work on one stream
// after iteration i's on another: a loop-carried value, or a buffer the next
// iteration writes, races. So at every boundary between consecutive runs
// that have tasks — run j to run j + 1 in one iteration, and the last run to
// the first of the next iteration — each stream's last task of the run before
// is ordered before each *other* stream's first task of the run after (the
// same stream is ordered by its queue). Then every task of a run waits for
// every task of the run before it, and iterations cannot overlap.
//
// Into the next iteration the order is a barrier at the end of the last run,
// made of forward events only: each stream's last task (per region) → the
// tail gate of one stream (the hub) → the tail gate of each other stream with
// a task in the first run. A tail gate (a LoopGate node, no task) ends the
// last run on its stream, so its stream's queue orders it before that
// stream's work of the next iteration. Every event of the loop is then
// recorded and waited once per iteration, a wait before the next record of
// its event: on a wait-reset device (Ascend: a Recv is wait + reset) a wait
// whose record comes later in the order would find none in the first
// iteration and block. A stream reached only through attached slots cannot
// hold a gate: its first slot at the first run's top level waits for a
// forward event from the hub's *head gate* (a LoopGate at the start of the
// first run), which the hub's queue runs after its tail gate; a first slot
// in a nested region, for one from the earliest main slot that starts a
// gated stream's part of that region before it (not its own owner's: an
// attached task may have to run beside its owner's main one), else, in a
// nested loop, from the head gate too (the loop gates move its wait to that
// loop's entry gate on its hub stream).
//
// Regions: a task inside an If/Case branch, or inside a nested loop's
// subgraph, may not run in a given run. First and last tasks are therefore
// taken per region — the run's own graph, and each innermost branch or
// nested-loop subgraph under it — so that whichever branch runs, the tasks
// that do run are ordered.
//
// Send/Recv nodes (sync-node-generation) are not tasks here: they carry the
// events between tasks.
//
// Loops left out: those whose subgraphs run on GE's dynamic path (the host
// runs each iteration), inside or owning an FFTS region (one FFTS task), or
// under a `_thread_scope_id` owner — as sync-event-insertion leaves them.
#ifndef NPUPLAN_PLAN_LOOP_ORDER_H_
#define NPUPLAN_PLAN_LOOP_ORDER_H_

#include <cstdint>
#include <vector>

#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/plan/plan.h"

namespace npuplan {

// The first and last slot of one stream in one region of a run.
struct LoopRegionEnds {
  int32_t region = -1;  // GraphId index of the region
  int64_t stream = -1;
  int32_t first = -1, last = -1;  // slots (SyncView)
};

// One run of a loop that has tasks: its graph, the rank range of its
// subtree's slots (Send/Recv nodes included), and its region ends sorted by
// (region, stream).
struct LoopRun {
  GraphId graph;
  int32_t first_rank = -1, last_rank = -1;
  std::vector<LoopRegionEnds> ends;
};

// A loop whose runs use more than one stream: its runs with slots, in
// execution order (one run when only the body has tasks).
struct OrderedLoop {
  NodeId owner;
  std::vector<LoopRun> runs;
  // The boundary after run j is "carried" (to the first run of the next
  // iteration) when j is the last run.
  bool carried_after(size_t j) const { return j + 1 == runs.size(); }
  const LoopRun& next(size_t j) const { return runs[(j + 1) % runs.size()]; }
};

// Whether some subgraph belongs to a loop owner: O(graphs), no view needed.
bool HasLoopSubgraph(const Model& m);
// Whether some subgraph belongs to an If/Case owner.
bool HasBranchSubgraph(const Model& m);
// Per GraphId, the innermost loop owner around the graph (NodeId value), -1
// outside every loop; empty when no subgraph belongs to a loop. Two slots
// whose graphs differ here run a different number of times.
std::vector<int32_t> InnermostLoopOwners(const Model& m);
// The same with the outermost loop owner: two slots inside a common loop
// have the same one.
std::vector<int32_t> OutermostLoopOwners(const Model& m);
// Whether the event table already holds loop-fork / loop-next events.
bool HasLoopOrderEvents(const Plan& plan);

// The loops to order, in execution order of their owners. Empty (and cheap)
// for a model without a loop subgraph. `view` gives the streams (physical
// or logical) and ranks.
std::vector<OrderedLoop> LoopsToOrder(const Plan& plan, const SyncView& view);

// Loops the host runs (GE's dynamic path: the owner lies in a dynamic-path
// graph, and the hybrid executor's While task runs each subgraph, then
// synchronizes the owner's stream — the model's main stream — before it
// enqueues the next), whose runs use more than one stream; in execution
// order of their owners. Nothing orders a run's other streams before the
// next run but the plan's events: each stream's last task of a region must
// happen before the run's last slot on the owner's stream (events reason
// loop-join, events/host_join_events.h; verifier[loop-order]).
bool RunsOnHost(const Plan& plan, const std::vector<bool>& dynamic_graphs, NodeId owner);
std::vector<OrderedLoop> HostRunLoops(const Plan& plan, const SyncView& view);

// The events that order `loops` (LoopsToOrder over `view`): at each
// boundary inside an iteration, from each (region, stream)'s last slot of
// the run before to each (region, other stream)'s first slot of the run
// after (reason loop-fork); after the last run, the barrier above (reason
// loop-next). Kind event, id 0. One per (sender, receiver), in loop,
// boundary, sender, receiver order. Both stream-activation (which adds them)
// and physical-stream-split (which counts their Send/Recv tasks before they
// exist) read this list.
struct LoopOrderEvent {
  SyncEvent event;
  NodeId loop;  // the owner of the loop it orders
  // An end at the loop's tail gate on that end's stream (in `tail_run`, the
  // last run's graph): until the gate exists, the event names a slot of the
  // loop on the same physical stream (a loop is never split, so its tasks
  // count on the same piece).
  bool send_at_tail = false, recv_at_tail = false;
  GraphId tail_run;
  // A sender at the loop's head gate on that end's stream (at the start of
  // `head_run`, the first run's graph; the same stand-in until it exists).
  bool send_at_head = false;
  GraphId head_run;
};
std::vector<LoopOrderEvent> LoopOrderEvents(const std::vector<OrderedLoop>& loops,
                                            const SyncView& view);

// The region of node `n` in run graph `run` (GraphId index): the innermost
// If/Case or loop subgraph between them, else `run`. -1 when `n` does not
// lie in `run`'s subtree.
int32_t LoopRegionOf(const Model& m, NodeId n, GraphId run);

// Loop boundaries. An event whose record lies outside a static loop and
// whose wait lies inside it is recorded once and waited every iteration; one
// recorded inside and waited outside the reverse. On a wait-reset device (a
// wait consumes the record, as on Ascend) the second iteration's wait blocks,
// or the wait after the loop passes on the first iteration's record. Such an
// event is made once against once at the loop's boundary instead: a LoopGate
// node (IsLoopGate) on the waiting / recording stream, in the loop owner's
// graph right before / after the owner (events/loop_gates.h), and the
// verifier refuses an event that still crosses (verifier[loop-boundary]).
//
// Branch boundaries are the same rule for a static If/Case branch, which
// runs once or not at all: a wait inside a branch not taken leaves its record
// pending (a later wait on the device id passes on it: the next run of the
// model, the next iteration, or another event sharing the id), and a record
// inside it never comes (the wait after the owner blocks). The gates of a
// branch sit before / after its owner, which always runs.
//
// The static loops are those LoopsToOrder may order — not on the dynamic
// path, not FFTS, not under a thread scope — whatever streams they use; a
// static branch is a subgraph of an If/Case owner under the same conditions.
enum class NestingScopes { kLoops, kLoopsAndBranches };
class StaticLoopNesting {
 public:
  explicit StaticLoopNesting(const Plan& plan, NestingScopes scopes = NestingScopes::kLoops);
  // No static loop (or branch, when asked for) in the model.
  bool empty() const { return owner_.empty(); }
  // The outermost scope — a static loop, or with kLoopsAndBranches also a
  // static branch — around `inside` that is not around `outside`: its owner;
  // invalid when there is none. A loop's subgraphs are one scope (they run
  // together), each branch is one. O(nesting depth).
  NodeId OutermostLoopLeft(NodeId inside, NodeId outside) const;
  // Whether a physical stream may open at `open` after `pre` (the previous
  // node on its logical stream) although one of them lies in a loop body or
  // branch (Enclosure::MayOpenAfter refuses): when every loop body or branch
  // around either is a static loop's and none is around both. The split
  // event then enters or leaves whole static loops — recorded or waited
  // once per loop run once stream-activation moves it to loop gates — and
  // every run of each loop stays on one physical stream. Without it a
  // logical stream made of loops back to back (the auto-stream modes after
  // stream-budget merged their streams) could not be split at all.
  bool MayOpenAcrossLoops(NodeId pre, NodeId open) const;

 private:
  int32_t Innermost(NodeId n) const;  // innermost scope around n, -1 none
  int32_t Depth(int32_t scope) const { return scope < 0 ? 0 : depth_[static_cast<size_t>(scope)]; }
  int32_t Up(int32_t scope) const { return up_[static_cast<size_t>(scope)]; }

  const Model* model_;
  std::vector<int32_t> innermost_;  // per GraphId: the innermost scope around it, -1 none
  std::vector<NodeId> owner_;       // per scope: the loop or If/Case owner
  std::vector<int32_t> up_;         // per scope: the scope around it, -1 none
  std::vector<int32_t> depth_;      // per scope: scopes around its graphs, itself included
};

// The physical split's rule, which verifier[physical-streams] checks: a
// stream may open at `open` after `pre` (the previous node on its logical
// stream) where Enclosure::MayOpenAfter allows it (kYes), or across whole
// static loops (kAcrossLoops: MayOpenAcrossLoops, `pre` not the owner of
// `open`'s graph) on a main stream — loop gates are main-stream nodes.
enum class StreamOpening { kNo, kYes, kAcrossLoops };
StreamOpening MayOpenStreamAfter(const Enclosure& encloses, const StaticLoopNesting& loops,
                                 NodeId pre, NodeId open, bool main_stream);

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_LOOP_ORDER_H_
