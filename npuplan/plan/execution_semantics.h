// Execution semantics: what orders what on the device, as both the passes
// that build a plan and the verifier that checks it read them. Definitions
// only — no decision of a pass lives here; the events passes and
// npuplan/verify/ use the same definitions and differ in everything they
// compute from them (verify/sync_verifier.h says what each recomputes).
//
//   activation     a stream runs only once activated: `_stream_label` /
//                  `_active_label_list` / `subgraph_first_active` /
//                  `active_stream_list` say who activates which streams
//                  (ComputeActivation);
//   dynamic path   in a dynamic-mode plan the root and unknown-shape
//                  subgraphs carry events as node attributes and run a
//                  node's subgraphs inside it (DynamicPathGraphs, …);
//   stream opening where a physical stream may start (MayOpenStream, Enclosure);
//   task budget    the tasks GE reserves per stream and adds per event.
#ifndef NPUPLAN_PLAN_EXECUTION_SEMANTICS_H_
#define NPUPLAN_PLAN_EXECUTION_SEMANTICS_H_

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/plan/plan.h"

namespace npuplan {

// GE kReservedTaskNum: 7 profiling (DFX) tasks + 20 spare per physical stream.
inline constexpr int64_t kReservedTasks = 27;
// GE kMaxNotifyNum.
inline constexpr int64_t kMaxNotifies = 1024;
// Tasks an event adds before its Send/Recv nodes exist: 1 record, 2 wait+reset.
inline constexpr int64_t kSendTasks = 1;
inline constexpr int64_t kRecvTasks = 2;

// Who activates which streams (GE SetActiveStreamsByLabel +
// SetActiveStreamsForSubgraphs bookkeeping), derived from the attributes:
//   `_stream_label` L on nodes            → labelled streams of L;
//   `_active_label_list` [L…] on node A   → A activates the labelled streams;
//   `subgraph_first_active` on node A     → A activates the streams of the
//                                           unlabelled nodes of its graph but its own;
//   `active_stream_list` on node A        → taken as is (written by stream-activation).
struct ActivationInfo {
  std::map<int32_t, std::vector<int64_t>> activated;  // NodeId value → streams (sorted)
  std::map<int64_t, std::vector<NodeId>>
      activators_of_stream;  // stream → activators (execution order)
  std::map<std::string, std::vector<NodeId>> activators_of_label;
  std::map<std::string, std::set<int64_t>> labeled_streams;
};
// Streams are logical ids; with `split_to_logical` each logical id is expanded
// to itself plus the physical streams split from it. `order`: the nodes to
// read, in execution order (nodes without attributes may be left out).
ActivationInfo ComputeActivation(const Model& model, std::span<const NodeId> order,
                                 const std::map<int64_t, int64_t>* split_to_logical = nullptr);

// GE NeedSplitNewStream without the count test: a physical stream may start
// at this node (no subgraphs, not a subgraph's first StreamActive, not
// LabelSet / LabelGotoEx / LabelSwitchByIndex).
bool MayOpenStream(const Node& node);

// True when `n` lies in a subgraph of `owner` (at any depth). A node whose
// previous slot on its logical stream encloses it does not open a physical
// stream: the split event's Send would follow the owner in the owner's graph,
// i.e. after the whole subgraph in execution order, and the event would run
// backwards (a deadlock when the owner's stream waits inside the subgraph).
// GE never meets this case: its lowered subgraphs start with a LabelSet on the
// parent's stream, which may not open a stream either.
// Answered in O(subgraphs of owner) from the pre-order intervals of the
// graph tree, computed once per model (a walk up from n per question is
// quadratic on deeply nested graphs).
class Enclosure {
 public:
  explicit Enclosure(const Model& model);
  bool operator()(NodeId owner, NodeId n) const;
  // True when `n` lies in a loop body or If/Case branch (a subgraph of an
  // IsLoopNode / IsBranchNode owner, at any depth). No physical stream opens
  // at such a node, nor at the node after one on its logical stream
  // (MayOpenAfter): a split event orders one run, not every run. In a loop
  // the next iteration's work on the old stream would not wait for this
  // one's on the new stream, and an event recorded in every iteration would
  // be waited once; in a branch, the stream opened there carries on after
  // the owner ordered only behind that branch, so when the other branch
  // runs nothing orders it (and the events optimisation, reading one pass of
  // the order, drops events such a path seemed to imply; property seeds 205,
  // 232, 537, 1303). GE splits there and orders runs through its labels.
  bool InConditional(NodeId n) const {
    return !conditional_.empty() && conditional_[model_.node(n).graph.index()];
  }
  bool AnyConditional() const { return !conditional_.empty(); }
  // Whether `open` may begin a physical stream after `pre`, its previous
  // slot's node on the logical stream (the rule above and operator()).
  bool MayOpenAfter(NodeId pre, NodeId open) const {
    return !(*this)(pre, open) && !InConditional(open) && !InConditional(pre);
  }

 private:
  const Model& model_;
  std::vector<int32_t> first_,
      last_;  // per graph: pre-order index of itself and of its last descendant
  std::vector<uint8_t> conditional_;  // per graph; empty when there is no loop body or branch
};

// Whether each graph is unknown-shape (runs on GE's dynamic-shape path in a
// dynamic mode), indexed by GraphId: the root by the partition's decision
// (whole-dynamic or partitioned), a graph by its partition subgraph's kind
// (the first of that name), else by its owner's `_is_unknown_shape`, else as
// its parent. One memoised walk up the parents: linear however deep Ifs nest;
// a graph on an ownership cycle (malformed; the structure check names it)
// counts as known-shape.
std::vector<uint8_t> UnknownShapeGraphs(const Plan& plan);

// GE's dynamic-shape path (ge-reference §3, "Events"): in a plan whose
// streams were assigned in a dynamic mode, the root graph and unknown-shape
// subgraphs carry their events as node attributes `_send_event_ids` /
// `_recv_event_ids` instead of Send/Recv nodes. Per graph: true when it is on
// that path (all false for static plans).
std::vector<bool> DynamicPathGraphs(const Plan& plan);
// An event both of whose ends are main-stream slots of dynamic-path graphs
// (and not a notify): it is written as attributes.
bool OnDynamicPath(const Plan& plan, const std::vector<bool>& dynamic_graphs, const SyncEvent& e);
// True when subgraph g and its parent's graph are both on the dynamic path:
// GE's dynamic InsertEvents adds no subgraph entry/end events there.
bool DynamicSubgraphBoundary(const Model& m, const std::vector<bool>& dynamic_graphs, GraphId g);
// The node whose `_send_event_ids` carry a dynamic-path event: the sender's
// ancestor (or itself) in the receiver's graph. Insertion names that node as
// the sender, so for a table it wrote this is the sender itself.
NodeId DynamicAttrNode(const Model& m, NodeId send, NodeId recv);

// Distinct ids per kind; true when each kind's ids are exactly 0..m-1 (GE's
// runtime rejects holes).
bool IdsContinuous(const EventTable& table, int64_t* events, int64_t* notifies);

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_EXECUTION_SEMANTICS_H_
