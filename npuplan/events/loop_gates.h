// Loop gates (part of stream-activation; the definition is in
// plan/loop_order.h, "Loop boundaries"): an event recorded outside a static
// loop and waited inside it waits at the loop's entry gate on its stream
// instead, and one recorded inside and waited outside records at the loop's
// exit gate on its stream, so each is recorded once and waited once per run
// of the loop — on a wait-reset device the second iteration's wait would
// block, or the wait after the loop pass on the first iteration's record.
//
//   before:  x (s0) --e--> b (s1, in the body: waited every iteration)
//   after:   x (s0) --e--> While_LoopEntry_1 (s1, before While) ... b (s1)
//
// The entry gate precedes every slot of the loop on its stream (execution
// order: the owner, then its subgraphs), so the stream's queue orders it
// before b; the exit gate follows them all. Happens-before only grows: every
// order the event gave still holds. Both ends may move (an event from one
// loop into another). Events that become equal are merged. An event into a
// While's body from a sender that also waits at the gate of a stream with a
// task at the cond's top level is dropped (side=implied): the cond's
// loop-fork events order the body after it. An end on an attached stream (no
// gate can sit there) moves to a gate on the loop's hub stream: a wait to
// its entry gate, which the hub's head gate and its event into that
// attached stream follow; a record to its exit gate, which follows its tail
// gate, the barrier's meeting point (docs/events.md, "Loop boundaries").
//
// A static If/Case branch is such a boundary too (it runs once or not at
// all): its gates sit right before / after the If/Case owner, and an
// attached end inside a branch, which has no hub, is split at a head / tail
// gate first / last in the branch on the node's main stream; so is an end
// on a stream the branch activates (`subgraph_first_active`: it runs only
// with the branch), on the activator's stream (docs/events.md, "Branch
// boundaries").
//
// Decision keyword: LoopGate loop= side=entry|exit|implied|head|tail gate= from= to=
#ifndef NPUPLAN_EVENTS_LOOP_GATES_H_
#define NPUPLAN_EVENTS_LOOP_GATES_H_

#include <functional>
#include <map>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "npuplan/pass/pass.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/loop_order.h"

namespace npuplan::events {

enum class LoopGateSide { kEntry, kExit, kTail, kHead };

// The loop gates a pass adds: a LoopGate node (no task, engine DNN_VM_RTS) on
// the physical and logical stream of `end`'s main slot, one per (loop, side,
// stream), created on first use and placed by Place(): entry gates right
// before the loop's owner, exit gates right after it (in the owner's graph),
// tail gates at the end of `run` (the loop's last run, a graph of the loop:
// stream-activation's loop-next barrier, events/loop_order_events.h; any run
// of a loop the host runs, events/host_join_events.h), head
// gates at the start of `run` (its first run: the barrier's way into an
// attached-only stream), in the order they were first asked for. Place()
// renumbers topo ids; node ids of the model stay as they are.
class LoopGateNodes {
 public:
  explicit LoopGateNodes(Plan& plan) : plan_(plan) {}
  LoopGateNodes(const LoopGateNodes&) = delete;
  LoopGateNodes& operator=(const LoopGateNodes&) = delete;

  NodeId For(NodeId loop, LoopGateSide side, NodeId end, GraphId run = GraphId());
  void Place();

 private:
  Plan& plan_;
  // (loop, side, stream, run graph for tail and head gates)
  std::map<std::tuple<int32_t, int, int64_t, int32_t>, NodeId> gates_;
  // Per run graph, its tail gates in the order they were asked for (the
  // hub's first: its records release the others), and its head gates.
  std::map<int32_t, std::vector<NodeId>> tails_, heads_;
};

// Where AddLoopGates puts the branch gates of an event's end `end` (the
// other end `other`; `attached` its attached index, -1 for its main slot)
// before anything else: when `end` lies inside a static If/Case branch that
// `other` is outside of, and is an attached slot or lies on a stream only
// `subgraph_first_active` nodes of that branch activate, the node on whose
// main stream its head or tail gate goes (`end` itself, or the activator),
// with the branch's owner and the branch; `via` invalid otherwise. The gates add a wait and a
// record on that stream. `stream` holds each node's stream and `activation` gives who activates
// which of them (asked for only when an end on a main stream lies in a branch):
// physical ones when the gates are added, logical ones when
// physical-stream-split counts those tasks before (a stream never opens
// inside a branch, so the two agree).
struct BranchGate {
  NodeId via, owner;
  GraphId branch;
};
BranchGate BranchGateVia(const Model& m, const StaticLoopNesting& nesting,
                         const std::function<const ActivationInfo&()>& activation,
                         std::span<const int64_t> stream, NodeId end, NodeId other,
                         int32_t attached);

// Moves the plan's loop-crossing events (main-stream ends) to loop gates,
// creating the gates it needs (physical stream of the end, no task) and
// renumbering topo ids. `loops`: LoopsToOrder of the plan before the gates
// (for the entries their loop-fork events imply). Returns whether it changed
// the plan.
bool AddLoopGates(std::string_view pass, Plan& plan, PassContext& ctx,
                  const std::vector<OrderedLoop>& loops);

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_LOOP_GATES_H_
