// verifier[loop-order]: every run of a static loop whose tasks use several
// streams is ordered after the run before it (plan/loop_order.h gives the
// runs and their per-region first/last tasks; this file checks the order
// the plan's events give, without reading which pass added which event):
//   * inside an iteration, each stream's last task of a run happens before
//     each other stream's first task of the next run (one-pass
//     happens-before, over events — on their Send/Recv nodes once they
//     exist — stream order and activation);
//   * into the next iteration, each stream's last task of the last run
//     happens before (one pass) a slot on each other stream at the last
//     run's top level (the barrier's tail gates: that stream's queue then
//     orders it before the next iteration there). Into a stream reached
//     only through attached slots (no gate there): through another stream
//     whose top-level slot in the last run the last task happens before, and
//     whose first slot in the loop happens before the first task (its queue
//     runs the next iteration after that slot);
//   * each event recorded and waited once per iteration (kind event, both
//     ends in this loop and no deeper one): its wait in one iteration
//     happens before its record in the next, through some stream of the
//     loop (one device object: a wait-reset device would otherwise lose a
//     record or let the wait consume the next one). The order above covers
//     a wait at or before its stream's last task; a wait at a tail gate
//     needs the barrier's structure.
//   * in a loop the host runs (GE's dynamic path: it synchronizes the
//     owner's stream after each run), each other stream's last task of a
//     run (per region) happens before the run's last slot on the owner's
//     stream (the loop-join events' order).
// Happens-before between two slots of a loop only passes through the
// slots between them in execution order, so one clock sweep over the
// loop's window of ranks answers it.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "npuplan/ir/verifier.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/plan/loop_order.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {
namespace {

absl::Status LoopOrderFail(std::string_view what) {
  return absl::InternalError(StrCat("verifier[loop-order]: ", what));
}

std::string LoopTaskName(const Model& m, const SyncView& view, int32_t slot) {
  const Node& n = m.node(view.node_of(slot));
  const int32_t a = view.attached_of(slot);
  return StrCat("'", n.name, "'", a >= 0 ? StrCat(" (attached ", a, ")") : std::string(),
                " on stream ", view.stream(slot));
}

// Vector clocks of the slots ranked lo..hi, over the streams those slots
// use (a loop's few, not the plan's); edges (to, from) sorted by the
// target's rank.
class WindowClocks {
 public:
  WindowClocks(const SyncView& view, int32_t lo, int32_t hi,
               const std::vector<std::pair<int32_t, int32_t>>& edges)
      : view_(view), lo_(lo) {
    const auto slot_order = view.slot_order();
    for (int32_t r = lo; r <= hi; ++r) {
      const int64_t s = view.stream(slot_order[static_cast<size_t>(r)]);
      if (s >= 0 && std::find(streams_.begin(), streams_.end(), s) == streams_.end())
        streams_.push_back(s);
    }
    std::sort(streams_.begin(), streams_.end());
    k_ = std::max<size_t>(streams_.size(), 1);
    first_.assign(streams_.size(), -1);
    last_.assign(streams_.size(), -1);
    clock_.assign(static_cast<size_t>(hi - lo + 1) * k_, -1);
    auto edge = std::lower_bound(edges.begin(), edges.end(), lo,
                                 [&](const auto& e, int32_t r) { return view.rank(e.first) < r; });
    for (int32_t r = lo; r <= hi; ++r) {
      const int32_t v = slot_order[static_cast<size_t>(r)];
      const int32_t s = Local(view.stream(v));
      int32_t* cv = Row(r);
      if (s >= 0) {
        if (const int32_t p = view.pos(v); p > 0)
          Join(cv, view.stream_slots(view.stream(v))[p - 1]);
      }
      for (; edge != edges.end() && view.rank(edge->first) == r; ++edge) {
        if (s >= 0) Join(cv, edge->second);
      }
      if (s >= 0) {
        cv[s] = std::max(cv[s], view.pos(v));
        if (first_[s] < 0) first_[s] = v;
        last_[s] = v;
      }
    }
  }
  // a happens before b, or is b.
  bool Before(int32_t a, int32_t b) const {
    if (a == b) return true;
    const int32_t ra = view_.rank(a), rb = view_.rank(b);
    const int32_t sa = Local(view_.stream(a));
    if (ra < lo_ || rb < lo_ || ra > rb || sa < 0 ||
        static_cast<size_t>(rb - lo_) * k_ >= clock_.size())
      return false;
    return Row(rb)[sa] >= view_.pos(a);
  }
  // `a` in one iteration happens before `b` in the next: through some
  // stream of the window, from `a` to its last slot there in this
  // iteration, then its queue, then from its first slot to `b` in the next.
  bool ReachesAgain(int32_t a, int32_t b) const {
    for (size_t c = 0; c < streams_.size(); ++c) {
      if (Before(a, last_[c]) && Before(first_[c], b)) return true;
    }
    return false;
  }
  // The same, leaving iteration i from the slot `tail(stream)` names (-1:
  // none): a stream's top-level slot at the end of the loop's last run.
  template <typename Tail>
  bool ReachesThroughTail(int32_t a, int32_t b, Tail&& tail) const {
    for (size_t c = 0; c < streams_.size(); ++c) {
      const int32_t t = tail(streams_[c]);
      if (t >= 0 && Before(a, t) && Before(first_[c], b)) return true;
    }
    return false;
  }

 private:
  // The stream's index among the window's streams; -1 when none of its slots is in it.
  int32_t Local(int64_t s) const {
    const auto it = std::lower_bound(streams_.begin(), streams_.end(), s);
    return it != streams_.end() && *it == s ? static_cast<int32_t>(it - streams_.begin()) : -1;
  }
  int32_t* Row(int32_t rank) { return clock_.data() + static_cast<size_t>(rank - lo_) * k_; }
  const int32_t* Row(int32_t rank) const {
    return clock_.data() + static_cast<size_t>(rank - lo_) * k_;
  }
  void Join(int32_t* into, int32_t from) {
    const int32_t r = view_.rank(from);
    if (r < lo_ || Local(view_.stream(from)) < 0)
      return;  // outside the window: no path back into it
    const int32_t* cf = Row(r);
    for (size_t i = 0; i < k_; ++i) into[i] = std::max(into[i], cf[i]);
  }

  const SyncView& view_;
  int32_t lo_;
  std::vector<int32_t> first_, last_;  // per window stream: its first and last slot in the window
  std::vector<int64_t> streams_;
  size_t k_ = 1;
  std::vector<int32_t> clock_;
};

}  // namespace

absl::Status VerifyLoopOrder(const Plan& plan) {
  Verification run(plan);
  return VerifyLoopOrder(run);
}

absl::Status VerifyLoopOrder(Verification& run) {
  const Plan& plan = run.plan();
  const Model& m = plan.model;
  if (m.num_graphs() <= 1) return absl::OkStatus();  // no loop
  const bool physical = Has(plan.established, IrProperty::kPhysicalStreams);
  const SyncView& view = run.View(physical);
  const std::vector<OrderedLoop> loops = LoopsToOrder(plan, view);
  const std::vector<OrderedLoop> host_loops = HostRunLoops(plan, view);
  if (loops.empty() && host_loops.empty()) return absl::OkStatus();

  // Order edges (to, from) of one pass.
  const SyncNodeIndex& sync = run.SyncNodes();
  RecordSlots record_slot(plan, view);
  std::vector<std::pair<int32_t, int32_t>> edges;
  // The forward events (kind event) as (record, wait, table index).
  std::vector<std::tuple<int32_t, int32_t, size_t>> forward;
  for (size_t i = 0; i < plan.events.events.size(); ++i) {
    const SyncEvent& e = plan.events.events[i];
    if (!e.send.valid() || !e.recv.valid() || e.send.index() >= m.num_nodes() ||
        e.recv.index() >= m.num_nodes() || e.send_attached >= view.num_attached(e.send) ||
        e.recv_attached >= view.num_attached(e.recv) || e.reason == SyncReason::kLoop) {
      continue;  // verifier[happens-before] names what is wrong with these
    }
    const auto [from, to] = sync.EventSlots(view, e, record_slot.ForEvent(e));
    if (view.stream(from) < 0 || view.stream(to) < 0) continue;
    if (!OrdersNextIteration(e) && view.rank(from) < view.rank(to)) {
      edges.emplace_back(to, from);
      if (e.kind == SyncKind::kEvent) forward.emplace_back(from, to, i);
    }
  }
  const std::vector<int32_t> innermost = InnermostLoopOwners(m);
  auto loop_of = [&](int32_t slot) {
    const GraphId g = m.node(view.node_of(slot)).graph;
    return innermost.empty() || !g.valid() || g.index() >= innermost.size() ? -1
                                                                            : innermost[g.index()];
  };
  for (const auto& [from, to] : ActivationEdges(view, run.Activation(physical)))
    edges.emplace_back(to, from);
  std::sort(edges.begin(), edges.end(), [&view](const auto& a, const auto& b) {
    const int32_t ra = view.rank(a.first), rb = view.rank(b.first);
    return ra != rb ? ra < rb : a < b;
  });

  // A loop the host runs: it synchronizes the owner's stream alone after
  // each run before it enqueues the next, so each other stream's last task
  // (per region) of a run must happen before the run's last slot on that
  // stream.
  for (const OrderedLoop& loop : host_loops) {
    const int64_t hub = view.stream(view.slot(loop.owner, -1));
    const std::string name = StrCat("loop '", m.node(loop.owner).name, "' (run by the host)");
    for (const LoopRun& r : loop.runs) {
      // The owner stream's last slot in the run (a gate or Recv node too:
      // the host's synchronization waits for all of them).
      int32_t end = -1;
      if (hub >= 0) {
        const auto slots = view.stream_slots(hub);
        auto pos = std::upper_bound(slots.begin(), slots.end(), r.last_rank,
                                    [&](int32_t rank, int32_t s) { return rank < view.rank(s); });
        if (pos != slots.begin() && view.rank(*std::prev(pos)) >= r.first_rank)
          end = *std::prev(pos);
      }
      const WindowClocks hb(view, r.first_rank, r.last_rank, edges);
      for (const LoopRegionEnds& e : r.ends) {
        if (e.stream == hub || (end >= 0 && hb.Before(e.last, end))) continue;
        return LoopOrderFail(StrCat(
            name, ": ", LoopTaskName(m, view, e.last), ", the last task of run '",
            m.graph(r.graph).name, "' there, is not ordered before ",
            end < 0 ? StrCat("any slot of the run on stream ", hub) : LoopTaskName(m, view, end),
            ", where the host synchronizes before it enqueues the next run (the owner's stream): "
            "the next run may start while it runs, and its events' next records find the last "
            "ones unconsumed"));
      }
    }
  }

  for (const OrderedLoop& loop : loops) {
    const int32_t lo = loop.runs.front().first_rank, hi = loop.runs.back().last_rank;
    const WindowClocks hb(view, lo, hi, edges);
    const std::string name = StrCat("loop '", m.node(loop.owner).name, "'");
    // Per stream, its latest slot at the last run's top level (-1: none).
    const LoopRun& last = loop.runs.back();
    std::map<int64_t, int32_t> tail;
    auto tail_of = [&](int64_t stream) {
      auto [it, fresh] = tail.try_emplace(stream, -1);
      if (!fresh) return it->second;
      const auto slots = view.stream_slots(stream);
      auto pos = std::upper_bound(slots.begin(), slots.end(), last.last_rank,
                                  [&](int32_t r, int32_t s) { return r < view.rank(s); });
      while (pos != slots.begin()) {
        const int32_t s = *--pos;
        if (view.rank(s) < last.first_rank) break;
        if (LoopRegionOf(m, view.node_of(s), last.graph) ==
            static_cast<int32_t>(last.graph.index())) {
          it->second = s;
          break;
        }
      }
      return it->second;
    };
    auto run_name = [&](const LoopRun& r) { return StrCat("'", m.graph(r.graph).name, "'"); };
    for (size_t j = 0; j < loop.runs.size(); ++j) {
      const LoopRun& before = loop.runs[j];
      const LoopRun& after = loop.next(j);
      const bool carried = loop.carried_after(j);
      for (const LoopRegionEnds& from : before.ends) {
        for (const LoopRegionEnds& to : after.ends) {
          if (from.stream == to.stream) continue;
          if (!carried) {
            if (hb.Before(from.last, to.first)) continue;
            return LoopOrderFail(
                StrCat(name, ": ", LoopTaskName(m, view, from.last), ", the last task of run ",
                       run_name(before), " there, is not ordered before ",
                       LoopTaskName(m, view, to.first), ", the first of the next run ",
                       run_name(after), " there: the runs of one iteration may overlap"));
          }
          if (view.attached_of(to.first) < 0) {
            const int32_t gate = tail_of(to.stream);
            if (gate >= 0 && hb.Before(from.last, gate)) continue;
            return LoopOrderFail(StrCat(
                name, ": nothing orders ", LoopTaskName(m, view, from.last),
                ", the last task of run ", run_name(before), " there, before the end of run ",
                run_name(before), " on stream ", to.stream,
                " (a slot at its top level: the loop's tail gate there), so ",
                LoopTaskName(m, view, to.first), ", the first of run ", run_name(after),
                " there, may start the next iteration before it ends: iterations may overlap"));
          }
          if (hb.ReachesThroughTail(from.last, to.first, tail_of)) continue;
          return LoopOrderFail(StrCat(
              name, ": nothing orders ", LoopTaskName(m, view, from.last),
              ", the last task of run ", run_name(before), " there, before ",
              LoopTaskName(m, view, to.first), ", the first of run ", run_name(after),
              " there, in the next iteration (no stream's top-level slot in run ", run_name(before),
              " follows the last task while its first slot in the loop precedes the first task): "
              "iterations may overlap"));
        }
      }
    }
    // An event recorded and waited once per iteration is one device object
    // (a wait-reset device: the wait consumes the record): its wait in
    // iteration i must come before its record in iteration i + 1. That holds
    // when some stream C is reached from the wait in iteration i (C's last
    // slot in the loop) and reaches the record in iteration i + 1 (from C's
    // first slot): C's queue runs iteration i before i + 1. A wait at or
    // before its stream's last task is covered by the order between
    // iterations checked above; a wait after it (at a tail gate) needs this.
    for (const auto& f : forward) {
      // Not structured bindings: the lambda below captures them (clang 14 cannot).
      const int32_t rec = std::get<0>(f), wait = std::get<1>(f);
      const size_t index = std::get<2>(f);
      if (view.rank(rec) < lo || view.rank(wait) > hi || loop_of(rec) != loop.owner.value ||
          loop_of(wait) != loop.owner.value) {
        continue;
      }
      if (hb.ReachesAgain(wait, rec)) continue;
      const SyncEvent& e = plan.events.events[index];
      return LoopOrderFail(StrCat(
          name, ": event ", e.id, " from ", LoopTaskName(m, view, rec), " to ",
          LoopTaskName(m, view, wait),
          " is recorded and waited once per iteration, but nothing orders its wait before its "
          "record in the next iteration: a wait-reset device may lose a record or consume the "
          "wrong one"));
    }
  }
  return absl::OkStatus();
}

}  // namespace npuplan::verify
