// DagStreamAllocator (`dag-stream-allocator`, SPEC S8/D4; GE's MiniDAG
// custom stream pass, ge-reference §6): ge.autoMultistreamParallelMode =
// LoadBalance:N | MainStream:N | WeightedLoadBalance:N, run per graph after
// the logical streams and before the final continuity refresh.
//
// Per graph:
//   1. a DAG of the graph's nodes (topological order, data + control edges)
//      with costs (StreamCostModel: the simulator's node cost + launch, ns;
//      0 for nodes without a stream or of a no-task engine);
//      `_stream_label` / `_user_stream_label` = serial label;
//   2. minimum vertex-disjoint path cover of the residual DAG (serial-label and
//      zero-cost nodes split out, edges bridged through them) by Hopcroft–Karp
//      on the split bipartite graph (left i → right j per edge i→j);
//      routes = chains of matched edges;
//   3. routes merged into at most N streams with GE's scores (levels =
//      longest-path depth; routes by earliest level, then size):
//      LoadBalance: 3·cross-edges + 4·(window peak + variance) +
//        1·(stream size + route size) + 2·[new stream];
//      MainStream: 3·cross-edges + 4·Σ_window(route × stream level histogram)
//        + 2·[new] − 4·solo-mass·[stream 0]; routes starting on a level with one
//        node (or living only on such levels) are forced to stream 0;
//      WeightedLoadBalance: LoadBalance with cost-weighted histograms;
//      window = 6 levels from the route's earliest level, ≤ 6 candidates;
//   4. one extra stream per serial label (in order of first appearance), not
//      limited by N; zero-cost nodes follow their first assigned producer
//      (else consumer, else stream 0);
//   5. write-back: stream = base + index, skipping NetOutput, `_rts_label_node`
//      and nodes without a stream (static graphs: index 0 = the NetOutput's
//      stream, see Run). The caller then refreshes continuity.
//
//   time →      route r0: a─b─d─f        streams (N=2): s0 = r0
//   levels 0..3 route r1: c─e            s1 = r1 (+ serial label L)
//
// Decision keywords: DagRoutes (graph, nodes, residual, routes, matching),
// DagStreams (graph, mode, streams, serial_streams, makespan, lower_bound),
// DagStreamsKeptDefault (graph, mode, makespan, default_makespan).
#ifndef NPUPLAN_STREAM_DAG_STREAM_ALLOCATOR_H_
#define NPUPLAN_STREAM_DAG_STREAM_ALLOCATOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"
#include "npuplan/pass/decision_log.h"
#include "npuplan/sim/simulator.h"
#include "npuplan/stream/stream_options.h"

namespace npuplan::stream {

inline constexpr char kAttrCost[] = "_cost";

// The cost model shared by the DAG modes and CriticalPath, in nanoseconds,
// taken from the simulator (npuplan/sim, SimOptions defaults) so that the
// allocator's estimates and a simulated plan agree:
//   node    sim::NodeCost (`_cost` µs if set, else the engine's formula) +
//           one launch overhead per device task (NodeTasks, npuplan/plan/task_model.h);
//           0 without a stream or without a task (a skipped engine: Data,
//           Const, NetOutput, GE_LOCAL ops — the simulator charges them
//           nothing either), and 0 for `_cost` 0 (GE's zero-cost nodes);
//   event   a cross-stream dependency p → v is one event per (p, v's stream):
//           it occupies p's stream for `event_record` after p, releases v
//           `event_latency` later, and takes v's stream `event_recv` before v.
// Static plans materialise events as Send/Recv nodes (DNN_VM_RTS): record =
// record + the Send task (RTS fixed time + 1 launch), recv = the Recv task
// (RTS fixed time + 2 launches: wait + reset). Dynamic-shape graphs carry
// them as node attributes (no tasks): record only, recv 0.
struct StreamCostModel {
  StreamCostModel() : StreamCostModel(sim::SimOptions{}, /*sync_nodes=*/true) {}
  StreamCostModel(const sim::SimOptions& sim, bool sync_nodes);
  sim::CostModelOptions node_costs;
  int64_t launch = 1000;
  int64_t event_record = 1500;
  int64_t event_latency = 1000;
  int64_t event_recv = 1000;
  // Cost of a node (≥ 0, ns); 0 when it has no stream or no task; at most
  // MaxNodeCost(model), so that sums over the model's nodes fit in int64.
  int64_t Cost(const Model& model, NodeId node) const;
  static int64_t MaxNodeCost(const Model& model);
  // What the list schedule charges a cross-stream edge: record + latency + recv.
  int64_t EdgeLatency() const { return event_record + event_latency + event_recv; }
};

// One graph as a DAG over local indices (position in Graph::nodes).
struct StreamDag {
  GraphId graph;
  std::vector<NodeId> nodes;          // topological order
  std::vector<int64_t> cost;          // per local index
  std::vector<std::string> serial;    // serial label ("" = none)
  std::vector<uint8_t> writable;      // write-back target (has a stream, not NetOutput / rts label)
  // Constants and variables (Const, Constant, ConstPlaceHolder, FileConstant,
  // Variable, VariableV2): ready before the model starts, so the estimate and
  // the schedule charge no event from them (the events stage's `exact`
  // optimisation, the default, leaves none; the simulator waits for none).
  std::vector<uint8_t> constant;
  std::vector<uint32_t> succ_offsets; // CSR, local indices, deduplicated
  std::vector<int32_t> succ;
  std::vector<uint32_t> pred_offsets;
  std::vector<int32_t> pred;
  size_t size() const { return nodes.size(); }
};

StreamDag BuildStreamDag(const Model& model, GraphId g, const StreamCostModel& costs);
// Builds a DAG directly from CSR successors (benchmarks, tests).
StreamDag BuildStreamDagFromEdges(std::vector<int64_t> cost, const std::vector<std::pair<int32_t, int32_t>>& edges);
// The same DAG with its nodes in another topological order: local index k of
// the result is local index order[k] of `dag` (order must be a topological
// permutation of 0..n-1).
StreamDag PermuteStreamDag(const StreamDag& dag, const std::vector<int32_t>& order);

struct PathCover {
  std::vector<std::vector<int32_t>> routes;  // local indices, in edge order
  int64_t residual_nodes = 0;
  int64_t residual_edges = 0;
  int64_t matching = 0;
};
// Minimum path cover of the nodes with keep[i] != 0, edges bridged through the
// others (each bridge set capped at `bridge_cap` nodes).
PathCover MinimumPathCover(const StreamDag& dag, const std::vector<uint8_t>& keep, size_t bridge_cap = 32);

enum class MergeAlgorithm { kLoadBalance, kMainStream, kWeightedLoadBalance };
// Stream index (0..k-1, k ≤ limit) of each route, GE's scores.
std::vector<int32_t> MergeRoutes(const StreamDag& dag, const PathCover& cover, MergeAlgorithm algorithm, int64_t limit);

// Makespan when every stream runs its nodes in topological order and a
// cross-stream edge costs `event_latency` (stream_of[i] < 0 = no task, passes
// readiness through).
int64_t EstimateMakespan(const StreamDag& dag, const std::vector<int32_t>& stream_of, int64_t event_latency);
// The same with StreamCostModel's event costs, as the simulator runs them,
// with the events an optimiser keeps: a node waits for one event per other
// stream among its producers — from the last of them on that stream, and
// none when its stream already waited for that node or a later one of the
// same stream (streams run in order; GE's recv-side rule, and the part of
// `exact` that needs no third stream) — event_recv each on its stream before
// it, the wait ending event_latency after the producer's records; a node
// records (event_record each, after its task) once per stream that waits
// for it. Constants (StreamDag::constant) record nothing and are never
// waited for.
int64_t EstimateMakespan(const StreamDag& dag, const std::vector<int32_t>& stream_of, const StreamCostModel& costs);
// Longest cost path and total work: the lower bound max(cp, work / n).
int64_t CriticalPathLength(const StreamDag& dag);
int64_t TotalWork(const StreamDag& dag);

// The home stream of a static graph (npuplan's difference from GE): the
// stream of its NetOutput before the auto mode runs, when no other graph
// keeps a node there (the driver decides: logical_stream_assignment.cc).
// The NetOutput is never written back, so an auto assignment maps its stream
// index 0 onto the home stream instead of a fresh id: the NetOutput then
// shares a stream with the nodes that feed it rather than holding a stream
// (and the events into it) of its own.
// The nodes an auto assignment leaves on the home stream (index 0): not
// written back (NetOutput, `_rts_label_node`) and on `home`.
std::vector<uint8_t> HomePinned(const Model& model, const StreamDag& dag, int64_t home);
// The graph's current assignment (the default chain's, or the dynamic
// allocator's) as stream indices: pinned nodes and nodes on `home` → 0, the
// other ids ascending → 1, 2, … (from 0 when home < 0 and nothing is
// pinned); -1 for nodes without a stream and unpinned nodes that are not
// written back — the shape of every candidate the auto modes compare.
std::vector<int32_t> CurrentAssignment(const Model& model, const StreamDag& dag,
                                       const std::vector<uint8_t>& pinned, int64_t home);

// A static graph without a home stream (its NetOutput's stream is shared
// with other graphs' nodes, so the assignment takes fresh ids and the
// NetOutput stays where it is): the estimate of `stream_of` (over `dag`, in
// its order) with the NetOutput on a stream of its own, and of the current
// assignment (over `own`, the graph's own order). The driver keeps the
// current one when it is lower.
struct GuardEstimates {
  int64_t mode = 0;
  int64_t current = 0;
};
GuardEstimates EstimateWithoutHome(const Model& model, const StreamDag& dag,
                                   const std::vector<int32_t>& stream_of, const StreamDag& own,
                                   const StreamCostModel& costs);

// The estimate over a whole static model with the nodes' current streams
// and orders (the per-graph estimates cannot see that graphs on streams of
// their own overlap, nor the events between an owner and its subgraphs):
// one DAG of every graph's nodes, each subgraph's nodes just before its
// owner, the owner's producers feeding the subgraph's nodes that have no
// producer in it, and its last nodes feeding the owner; EstimateMakespan
// over it.
int64_t EstimateModelMakespan(const Model& model, const StreamCostModel& costs);

// Full per-graph assignment (steps 1–4) without writing it back: stream index
// per local node (-1 = not written).
struct DagAssignment {
  std::vector<int32_t> stream_of;
  int64_t streams = 0;         // residual streams
  int64_t serial_streams = 0;  // one per serial label
  int64_t routes = 0;
  int64_t matching = 0;
};
DagAssignment AssignDag(const StreamDag& dag, MergeAlgorithm algorithm, int64_t limit);

class DagStreamAllocator {
 public:
  static constexpr std::string_view kName = "dag-stream-allocator";
  struct Result {
    int64_t streams = 0;  // ids used from base
    int64_t makespan = 0;
    int64_t lower_bound = 0;
  };
  // Rewrites graph g's streams to base + index for `mode` (a DAG mode).
  // `home` (a static graph's home stream, -1 = none): index 0 goes to it
  // and index k ≥ 1 to base + k − 1,
  // and when the estimate of that assignment (the NetOutput on the home
  // stream) is above the estimate of the graph's current assignment, the
  // current one is kept (DagStreamsKeptDefault) — so the mode is never worse
  // than the default under the cost model. `main_pin` (a dynamic graph
  // under ENABLE_DYNAMIC_SHAPE_MULTI_STREAM): the same comparison with the
  // forced-main-stream nodes on a main stream of their own beside the merged
  // streams (where the driver's refresh puts them) against the dynamic
  // allocator's assignment. `fresh_home` (a static subgraph): index 0 and the
  // NetOutput go to `base` instead of `home` (index k to base + k), so the
  // graph keeps streams of its own; the current assignment is still
  // estimated with the NetOutput on `home`. `never_worse`
  // (npuplan.autoStreams.neverWorse) false: no comparison, the mode's
  // assignment is always written (main's behaviour before issue 22; the
  // caller then passes no home).
  static absl::StatusOr<Result> Run(Model& model, GraphId g, const AutoMode& mode, int64_t base,
                                    DecisionLog* log = nullptr, const StreamCostModel& costs = {},
                                    int64_t home = -1, bool main_pin = false,
                                    bool fresh_home = false, bool never_worse = true);
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_DAG_STREAM_ALLOCATOR_H_
