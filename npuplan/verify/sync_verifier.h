// The events verifier (SPEC G4 stage checks for E1–E6, T2–T5; rows of
// stage_checks.def).
//
// Independence, precisely. Shared with the events passes: the definitions of
// what the plan means — the execution view (npuplan/plan/execution_view.h:
// execution order, slots, per-stream order, where a Send runs and where an
// event is recorded) and the execution semantics
// (npuplan/plan/execution_semantics.h: who activates which stream, which
// graphs are on the dynamic path, where a physical stream may open, the task
// constants, id continuity), and what a run of a plan holding every branch
// is (npuplan/plan/branch_chains.h: a run takes one branch of each If/Case,
// so a stream's state inside and after one). A mistake there is shared by
// both sides; the property test's CPU runs of each branch check it apart.
// Recomputed here, with no pass header included and no pass code called:
// the dependencies that must be ordered (CollectDeps in
// sync_dependencies.cc, StreamSources: a depth-first walk, not the
// insertion's sweep), the proof that each is
// ordered (a vector-clock sweep over same-stream order + event edges +
// activation edges, then a lookup per dependency — not the optimiser's
// reductions), the task count of each physical stream, the matching of
// Send/Recv nodes and attributes to events, and the safety of shared device
// ids (id_reuse_verifier.cc, not events/reuse_order.*). So an insertion,
// optimisation, split or id-allocation bug cannot hide behind shared code.
//
// Checks:
//   sync-events       → [happens-before] every cross-stream dependency — data
//                       and control edges (through producers without a
//                       stream: a subgraph's Data node stands for the parent's
//                       input), subgraph entry/end, attached-stream
//                       value dependencies, logical order across a split — is
//                       ordered; no event runs backwards; [event-minimum]
//                       event_counts.minimum, when present, is recomputed and
//                       the table holds that many events; [event-ids] ids
//                       continuous from 0 per kind, counts match, ≤ 1024 notifies;
//                       [event-id-reuse] every id several edges share is
//                       shared safely (id_reuse_verifier.cc)
//   physical-streams  → [physical-streams] every node has a physical stream
//                       that maps back to its logical one; task limits hold
//                       (physical_stream_verifier.cc)
//   active-streams    → [active-streams] lists name existing streams; no node
//                       activates its own stream; [loop-order] each run of a
//                       static loop with tasks on several streams follows
//                       the run before it, also into the next iteration
//                       (loop_order_verifier.cc); [loop-boundary] no event
//                       is recorded and waited at different levels of a
//                       static loop (loop_boundary_verifier.cc)
//   sync-nodes        → [sync-nodes] every event has its Send and Recv node
//                       (id attr, control edge, stream) and nothing else does;
//                       [dynamic-senders] every dynamic-path event's listed
//                       sender is the node whose `_send_event_ids` carry its id
#ifndef NPUPLAN_VERIFY_SYNC_VERIFIER_H_
#define NPUPLAN_VERIFY_SYNC_VERIFIER_H_

#include <vector>

#include "absl/status/status.h"
#include "npuplan/plan/plan.h"

namespace npuplan {
class SyncView;         // plan/execution_view.h
struct ActivationInfo;  // plan/execution_semantics.h
}  // namespace npuplan

namespace npuplan::verify {

class Verification;  // verification.h
class NodeTypes;     // verification.h

// Each check that reads an execution view, the activation or the Send/Recv
// nodes also takes the run it belongs to (verify::VerifyPlan shares those
// between its checks); the Plan overload runs it alone.
absl::Status VerifyHappensBefore(const Plan& plan);
absl::Status VerifyHappensBefore(Verification& run);
absl::Status VerifyEventIds(const Plan& plan);
absl::Status VerifyPhysicalStreams(const Plan& plan);
absl::Status VerifyPhysicalStreams(Verification& run);
absl::Status VerifyActiveStreams(const Plan& plan);
absl::Status VerifyActiveStreams(Verification& run);
// Every run of a static loop with tasks on several streams is ordered after
// the run before it (loop_order_verifier.cc, plan/loop_order.h).
absl::Status VerifyLoopOrder(const Plan& plan);
absl::Status VerifyLoopOrder(Verification& run);
// No event is recorded and waited at different levels of a static loop
// (loop_boundary_verifier.cc, plan/loop_order.h "Loop boundaries").
absl::Status VerifyLoopBoundaries(const Plan& plan);
absl::Status VerifyLoopBoundaries(Verification& run);
absl::Status VerifySyncNodes(const Plan& plan);
absl::Status VerifySyncNodes(Verification& run);
// Shared device ids are safe (issue 23; id_reuse_verifier.cc).
absl::Status VerifyEventIdReuse(const Plan& plan);
absl::Status VerifyEventIdReuse(Verification& run);
absl::Status VerifyDynamicSenders(const Plan& plan);
absl::Status VerifyDynamicSenders(Verification& run);

// One ordering the plan must guarantee: slot `from` before slot `to`.
struct Dep {
  int32_t from;
  int32_t to;
  const char* why;
};
// The verifier's own enumeration of what must be ordered (docs/events.md,
// "Dependencies") on `view`'s slots; with `logical`, also the logical order
// across a split. `types` and `dynamic_graphs` are the run's NodeTypes and
// DynamicPathGraphs of the plan.
std::vector<Dep> CollectDeps(const Plan& plan, const SyncView& view, const SyncView* logical,
                             const NodeTypes& types, const std::vector<bool>& dynamic_graphs);
// [event-minimum] (event_minimum_verifier.cc): `event_counts.minimum` is the
// size of the transitive reduction of the plan's orderings and the table holds
// exactly that many events. Called by VerifyHappensBefore (after it proved
// every dependency ordered) with its views, activation and dependencies
// (`view` physical once split, `logical` the logical view, else the same).
absl::Status VerifyEventMinimum(const Plan& plan, const SyncView& view, const SyncView& logical,
                                const ActivationInfo& act, const std::vector<Dep>& deps,
                                const NodeTypes& types);

}  // namespace npuplan::verify

#endif  // NPUPLAN_VERIFY_SYNC_VERIFIER_H_
