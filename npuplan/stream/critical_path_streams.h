// CriticalPathStreams (`critical-path-streams`, npuplan's extension
// `ge.autoMultistreamParallelMode=CriticalPath:N`; docs/auto-streams.md).
//
// Schedule-aware auto multi-stream: with the DAG modes' cost model
// (StreamCostModel) and an event-latency term, each graph's nodes are placed,
// in execution (topological) order, on the stream where they can start
// earliest: start = max(stream free, max over producers of finish +
// event_latency if the producer is on another stream). Ties go to the stream
// of the producer with the longest remaining path (bottom level: the critical
// chain stays on one stream), then to the lowest id; a new stream is opened
// only while fewer than N are in use and only when it starts strictly
// earlier. Streams run their nodes in execution order, so the estimate is
// exactly that of EstimateMakespan. A second schedule (critical-chain) keeps
// the nodes of one longest path on stream 0 and all other nodes off it. Both
// also run with N/2, N/4, ... ≥ 2 streams (fewer streams, fewer events). The
// pass then keeps, per graph, the best estimated makespan among: these
// schedules, LoadBalance:N, MainStream:N and one stream, and improves it by
// local search: single-node moves between the streams in use (not pinned or
// serial-label nodes), kept when the estimate drops, within a fixed budget
// of estimate evaluations × graph size (≈ 2·10^7 node and edge visits). Serial labels keep one
// stream each (as in the DAG modes); nodes without a stream, NetOutput and `_rts_label_node` are
// not written.
//
// Dynamic-shape graphs (main stream given): the forced-main-stream nodes are
// pinned to the main stream in the schedule and in the estimates, since the
// final refresh puts them there; the schedule then prices the events between
// them and the rest, and may keep small subgraphs on the main stream. A
// pinned subgraph owner costs its subgraphs' estimated makespan (they hold
// the main stream after it); the driver estimates subgraphs bottom-up first.
// Nodes that launch no task (Data, Const, NetOutput, GE_LOCAL ops) cost 0,
// as in the simulator, but still hold their place on the main stream.
//
// Reorder (npuplan.stream.reorder=true): the pass may also rewrite the
// graph's execution order. Candidates are then re-run in priority orders
// (PriorityOrder) and dynamic-level schedules (DynamicLevelSchedule) choose
// order and streams together; each order's best candidate gets the local
// search and the best over all orders wins (the graph's own order on ties),
// so the estimate never gets worse. Constants stay first in every order.
//
// Lower bound: max(critical path, total work / N).
//
// Decision keywords: CriticalPathStreams (graph, chosen=critical-path /
// critical-chain / dynamic-level / LoadBalance / MainStream / single /
// default (the graph's assignment before the mode ran), with
// "+reorder" when the order was rewritten and "+search" when the local
// search moved nodes; streams, makespan, lower_bound), CriticalPathOrder
// (graph, moved, nodes).
#ifndef NPUPLAN_STREAM_CRITICAL_PATH_STREAMS_H_
#define NPUPLAN_STREAM_CRITICAL_PATH_STREAMS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "npuplan/stream/dag_stream_allocator.h"

namespace npuplan::stream {

class CriticalPathStreams {
 public:
  static constexpr std::string_view kName = "critical-path-streams";
  // Stream index per local node (-1 = not written) of the list schedule alone.
  // `pinned` (optional, per local node): nodes that must run on index 0 —
  // the main stream of a dynamic-shape graph, which other nodes may share.
  // `chain`: the critical-chain variant — the nodes of the longest path
  // (zero slack, costs only) all go to index 0 and no other node does while
  // another stream is open or may be opened, so that the chain never queues
  // behind off-path work on an in-order stream.
  static std::vector<int32_t> Schedule(const StreamDag& dag, int64_t limit, int64_t event_latency,
                                       const std::vector<uint8_t>* pinned = nullptr, bool chain = false);

  // A topological order of the DAG: Kahn's algorithm taking the ready node
  // with the highest bottom level (costs, plus `edge` per edge) first.
  static std::vector<int32_t> PriorityOrder(const StreamDag& dag, int64_t edge);

  // Dynamic-level list scheduling (Sih & Lee): constants first, then
  // repeatedly the (ready node, stream) pair with the highest bottom level
  // minus earliest start, among the 64 ready nodes of highest bottom level;
  // streams as in Schedule (at most `limit`, pinned nodes on index 0, serial
  // labels apart). Returns the stream per local node and, in `order`, the
  // order in which nodes were taken — topological, and each stream's nodes
  // in start order, so EstimateMakespan over that order is the schedule's.
  static std::vector<int32_t> DynamicLevelSchedule(const StreamDag& dag, int64_t limit, int64_t event_latency,
                                                   const std::vector<uint8_t>* pinned, std::vector<int32_t>& order);

  struct Result {
    int64_t streams = 0;
    int64_t makespan = 0;
    int64_t lower_bound = 0;
    std::string chosen;
  };
  // Rewrites graph g's streams to base + index. With main_stream >= 0 (a
  // dynamic-shape graph under ENABLE_DYNAMIC_SHAPE_MULTI_STREAM), GE's
  // forced-main-stream nodes (DynamicStreamAllocator::IsForcedMainStreamNode,
  // nodes without a stream) are pinned to that stream in every candidate and
  // the schedule may put other nodes there too (index 0 = main_stream, index
  // k ≥ 1 = base + k − 1; N counts the main stream); `streams` then counts
  // the ids used from base.
  //
  // `subtree` (optional, indexed by GraphId): what Estimate gave for each
  // subgraph. With a main stream, a subgraph owner — pinned there — then
  // costs the sum of its subgraphs' makespans: they run on the main stream
  // right after it in execution order, so the main stream and the owner's
  // consumers wait for them. Result::makespan and lower_bound then cover the
  // graph's whole subtree (the bound: owners at their subgraphs' bounds, a
  // valid bound since GE's forced chain runs them one after the other, and
  // the subtree's work / N).
  struct Subtree {
    std::vector<int64_t> makespan, lower_bound, work;
  };
  // `reorder`: may rewrite g's node order (Graph::nodes, topo_id) to the
  // chosen schedule's.
  // `home` (static graphs, main_stream < 0; -1 = none): the graph's home
  // stream (dag_stream_allocator.h). Its NetOutput is pinned to index 0,
  // which is written as `home` (index k ≥ 1 as base + k − 1), so a plan
  // whose choice is one stream has one stream. `fresh_home` (a static
  // subgraph): index 0 and the NetOutput go to `base` (index k to base + k).
  // `never_worse` (npuplan.autoStreams.neverWorse): every choice includes the
  // graph's current assignment (candidate "default"), so the estimate is never
  // worse than the default's; false: no such candidate nor fallback (main's
  // behaviour before issue 22; the caller then passes no home).
  static Result Run(Model& model, GraphId g, int64_t limit, int64_t base,
                    DecisionLog* log = nullptr, const StreamCostModel& costs = {},
                    int64_t main_stream = -1, const Subtree* subtree = nullptr,
                    bool reorder = false, int64_t home = -1, bool fresh_home = false,
                    bool never_worse = true);
  // What Run would choose for graph g, without writing anything (pin_main:
  // as Run with a main stream): makespan, lower bound and work of its subtree
  // (its own only when `subtree` is null), stored at g's index of `out`.
  static void Estimate(const Model& model, GraphId g, int64_t limit, const StreamCostModel& costs,
                       bool pin_main, Subtree& out, bool reorder = false, int64_t home = -1,
                       bool fresh_home = false, bool never_worse = true);
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_CRITICAL_PATH_STREAMS_H_
