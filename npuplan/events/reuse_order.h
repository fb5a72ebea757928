// The reuse order of sync edges (issue 23, docs/events.md "Device event
// ids"): which edges may share one device event / notify id, for
// event-id-allocation (the verifier proves shared ids with its own code).
//
// Run contexts. A graph runs with its owner when the owner is a
// PartitionedCall (same context); the branches of an If / Case are contexts of
// their own — a branch runs once or not at all, and sibling branches never
// both run; every other owner's subgraphs (While, For, …), and everything in
// a plan with loop events or StreamSwitch / Enter / NextIteration / LoopCond
// nodes, may run many times ("repeats": nothing there shares an id). An edge
// is eligible when both ends are in one context that does not repeat and it
// is not a loop event.
//
// Within a context c, e1 ≺ e2 (e2 may take e1's id after it) when
//   (A) recv(e1) ⪯ the sender slot of e2 and ⪯ the slot its Send runs after
//       (when that slot is in c: a subgraph owner's Send follows its subgraphs);
//   (B) recv(e1) ⪯ the slot before recv(e2) on its physical stream that is in
//       c (none: e2's wait may be pending from the stream's start).
// ⪯ is happens-before over c's slots only — stream order, c's events and
// stream activation inside c — so every path it uses exists whenever c runs.
// Vector clocks over the logical streams, positions counted within c.
#ifndef NPUPLAN_EVENTS_REUSE_ORDER_H_
#define NPUPLAN_EVENTS_REUSE_ORDER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "npuplan/events/sync_view.h"
#include "npuplan/plan/plan.h"

namespace npuplan::events {

struct RunContexts {
  std::vector<int32_t> of_graph;  // context per graph (0 = the root's)
  std::vector<uint8_t> repeats;   // per context: may run more than once
  std::vector<int32_t>
      owner;  // per context: the If / Case whose branch it is (NodeId value; -1 root)
  std::vector<int32_t> branch;  // per context: its branch index in the owner
  size_t size() const { return repeats.size(); }
};
RunContexts ComputeRunContexts(const Plan& plan);

// Per event-table entry.
struct EdgeFacts {
  std::vector<int32_t> context;   // both ends' context (-1: they differ, or the edge is malformed)
  std::vector<uint8_t> eligible;  // may share an id
  std::vector<uint8_t> has_pred;  // (B) can hold
  std::vector<int32_t> own, sendslot, recv, before_recv;  // slots (-1 = none)
  std::vector<int64_t> start, end;  // execution-order interval: e1 ≺ e2 needs end(e1) <= start(e2)
};
EdgeFacts CollectFacts(const Plan& plan, const SyncView& view, const RunContexts& contexts);

// Called by ReuseOrder::Sweep, in execution order within one context:
// Right for each eligible edge with (B) possible, at its receiver — e1 ≺ e
// iff ready[stream of e1's receiver] >= e1's position — then Left for each
// eligible edge received there (its logical stream, its position in c).
class ReuseVisitor {
 public:
  virtual ~ReuseVisitor() = default;
  virtual void Right(uint32_t edge, const int32_t* ready) = 0;
  virtual void Left(uint32_t edge, int32_t stream, int32_t pos) = 0;
};

// The happens-before sweeps, one context at a time. A context's clocks count
// positions per logical stream when the split keeps each logical stream's
// order inside the context — every split event between two of its slots on
// one logical stream is itself in the context; otherwise (a split inside a
// loop body or a branch) per physical stream.
class ReuseOrder {
 public:
  ReuseOrder(const Plan& plan, const SyncView& view, const RunContexts& contexts,
             const EdgeFacts& facts);
  ~ReuseOrder();
  // Contexts that hold an eligible edge, in id order.
  const std::vector<int32_t>& contexts() const { return busy_; }
  // Chooses the context's clock dimensions; returns their number (the
  // streams Left and Right index).
  size_t Prepare(int32_t context);
  // Sweeps the context Prepare chose for.
  void Sweep(int32_t context, ReuseVisitor& visitor);

 private:
  const SyncView& view_;
  const EdgeFacts& f_;
  size_t k_ = 1;
  int32_t prepared_ = -1;
  std::vector<int32_t> dim_;       // per slot: its clock dimension in the prepared context
  std::vector<int64_t> physical_;  // per slot: physical stream
  struct Split {
    int64_t stream, send_rank, recv_rank;
    int32_t context;
  };
  std::vector<Split> splits_;
  std::vector<int32_t> context_of_slot_;
  std::vector<uint32_t> bucket_begin_;  // per context: its slots in bucket_ (execution order)
  std::vector<int32_t> bucket_;
  std::vector<uint32_t> in_begin_;  // per slot: edges received there with both ends in one context
  std::vector<uint32_t> in_edges_;
  std::vector<uint32_t> act_begin_;  // per slot: activators of it
  std::vector<int32_t> act_from_;
  std::vector<int32_t> busy_;
  class Clocks;
  std::unique_ptr<Clocks> clocks_;
  std::vector<int32_t> local_pos_, pred_;  // per slot, filled by the sweep of its context
};

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_REUSE_ORDER_H_
