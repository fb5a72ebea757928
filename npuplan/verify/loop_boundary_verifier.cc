// verifier[loop-boundary]: no event is recorded outside a static loop and
// waited inside it, or recorded inside and waited outside (plan/loop_order.h,
// "Loop boundaries"). One device object for a record made once and a wait
// made every iteration (or the reverse) breaks on a wait-reset device: the
// second iteration's wait finds no record, or the wait after the loop passes
// on the first iteration's record. The ends are where the event is recorded
// and awaited — its Send / Recv nodes once they exist — not the nodes the
// table names. Ends on attached streams too: their gates sit on the loop's
// hub stream (docs/events.md, "Loop boundaries"). A static If/Case branch is
// such a boundary too: it runs once or not at all, so a wait inside it may
// leave its record pending and a record inside it may never come
// (docs/events.md, "Branch boundaries"). And no task outside a branch may
// sit on a stream that only activators inside branches activate (GE's
// `subgraph_first_active`: a branch's first node activates the branch's
// streams): such a stream runs only when that branch does, so the task may
// never run — a record there never comes, a wait leaves its record pending —
// and one that comes first waits for the branch.
#include <string>
#include <utility>

#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/plan/loop_order.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {
namespace {

std::string LoopBoundaryEnd(const Model& m, const SyncView& view, int32_t slot) {
  return StrCat("'", m.node(view.node_of(slot)).name, "' on stream ", view.stream(slot));
}

}  // namespace

absl::Status VerifyLoopBoundaries(const Plan& plan) {
  Verification run(plan);
  return VerifyLoopBoundaries(run);
}

absl::Status VerifyLoopBoundaries(Verification& run) {
  const Plan& plan = run.plan();
  const Model& m = plan.model;
  if (m.num_graphs() <= 1) return absl::OkStatus();  // no loop
  const StaticLoopNesting nesting(plan, NestingScopes::kLoopsAndBranches);
  if (nesting.empty()) return absl::OkStatus();
  const bool physical = Has(plan.established, IrProperty::kPhysicalStreams);
  const SyncView& view = run.View(physical);
  const SyncNodeIndex& sync = run.SyncNodes();
  RecordSlots record_slot(plan, view);
  const ActivationInfo& activation = run.Activation(physical);
  if (!activation.activators_of_stream.empty()) {
    // Per slot, in execution order: the branch owner around every activator
    // of its stream but not around the slot (none: the stream is active when
    // the slot runs — not activated, or by some activator outside a branch).
    for (const int32_t slot : view.slot_order()) {
      if (view.stream(slot) < 0) continue;
      const auto it = activation.activators_of_stream.find(view.stream(slot));
      if (it == activation.activators_of_stream.end() || it->second.empty()) continue;
      const NodeId n = view.node_of(slot);
      NodeId owner, activator;
      for (NodeId a : it->second) {
        const NodeId around = nesting.OutermostLoopLeft(a, n);
        if (!around.valid() || !IsBranchNode(m.node(around))) {
          owner = NodeId();
          break;
        }
        if (!owner.valid()) {
          owner = around;
          activator = a;
        }
      }
      if (!owner.valid()) continue;
      return absl::InternalError(StrCat(
          "verifier[loop-boundary]: '", m.node(n).name, "' on stream ", view.stream(slot),
          " runs only when a branch of '", m.node(owner).name, "' runs ('", m.node(activator).name,
          "' activates the stream there) but is outside that branch: ",
          "when the branch is not taken it never runs (a record there never comes, a wait there ",
          "leaves its record pending), and before the branch it waits for it; put it on a stream ",
          "active outside the branch"));
    }
  }
  for (const SyncEvent& e : plan.events.events) {
    if (!e.send.valid() || !e.recv.valid() || e.send.index() >= m.num_nodes() ||
        e.recv.index() >= m.num_nodes() || e.send_attached >= view.num_attached(e.send) ||
        e.recv_attached >= view.num_attached(e.recv) || e.reason == SyncReason::kLoop) {
      continue;  // verifier[happens-before] names what is wrong with these
    }
    const std::pair<int32_t, int32_t> ends = sync.EventSlots(view, e, record_slot.ForEvent(e));
    const int32_t rec = ends.first, wait = ends.second;  // (a lambda below captures them)
    if (rec < 0 || wait < 0) continue;
    const NodeId r = view.node_of(rec), w = view.node_of(wait);
    auto what = [&] {  // only for a failure: the check runs per event
      return StrCat(e.kind == SyncKind::kNotify ? "notify " : "event ", e.id, " (",
                    SyncReasonName(e.reason), ") recorded at ", LoopBoundaryEnd(m, view, rec),
                    " and waited at ", LoopBoundaryEnd(m, view, wait));
    };
    if (const NodeId into = nesting.OutermostLoopLeft(w, r); into.valid()) {
      const std::string& name = m.node(into).name;
      return absl::InternalError(
          IsBranchNode(m.node(into))
              ? StrCat("verifier[loop-boundary]: ", what(), ": recorded outside a branch of '",
                       name, "' and waited inside it (when the branch is not taken the record ",
                       "stays pending and a later wait on the id passes on it); wait at a gate ",
                       "before '", name, "' instead")
              : StrCat("verifier[loop-boundary]: ", what(), ": recorded once outside loop '", name,
                       "' and waited in every iteration (a wait-reset device blocks in ",
                       "the second); wait at a loop gate before the loop instead"));
    }
    if (const NodeId out_of = nesting.OutermostLoopLeft(r, w); out_of.valid()) {
      const std::string& name = m.node(out_of).name;
      return absl::InternalError(
          IsBranchNode(m.node(out_of))
              ? StrCat("verifier[loop-boundary]: ", what(), ": recorded inside a branch of '", name,
                       "' and waited outside it (when the branch is not taken nothing ",
                       "records it and the wait blocks); record at a gate after '", name,
                       "' instead")
              : StrCat("verifier[loop-boundary]: ", what(), ": recorded in every iteration of ",
                       "loop '", name, "' and waited once after it (the wait may pass on the ",
                       "first iteration's record); record at a loop gate after the loop instead"));
    }
  }
  return absl::OkStatus();
}

}  // namespace npuplan::verify
