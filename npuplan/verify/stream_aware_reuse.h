// Stream-aware reuse (issue #7 item 2): when may two logical buffers share
// device memory?
//
// Only when their lifetimes cannot overlap in *any* execution: every use of
// one happens before every use of the other. Within one stream, plan order is
// execution order. Across streams a topological index proves nothing; the
// order must come from the happens-before relation H:
//   H = same-stream order (plan order of each logical stream's nodes)
//     ∪ data and control edges u→v between streamed nodes (except out of
//       Enter/RefEnter and StreamSwitch, which the events stage leaves to loop
//       and branch activation)
//     ∪ the parent input a streamless subgraph Data passes on → the Data's
//       readers (the events stage's subgraph-input dependency)
//     ∪ subgraph entry (each input of a parent node → the subgraph's
//       input-less nodes) and subgraph end (the subgraph's end node / NetOutput
//       → the parent's successors); at a boundary on GE's dynamic-shape path
//       (DynamicSubgraphBoundary) only the Data nodes with
//       `_parent_node_index` get the entry and the end is the NetOutput, as
//       the events stage orders there,
// closed transitively. Memory planning runs before event insertion (GE:
// logical streams → memory → GenTask/events), so H uses no event: it is
// exactly the dependency list the events stage must order and its verifier
// checks (docs/events.md "Dependencies"); every fact in H therefore holds in
// the final plan (docs/memory.md "Graph-level planning"). Send/Recv nodes and
// loop gates are not in H: they carry the events' order.
//
// H is represented by vector clocks over the plan order: clock(v)[l] = the
// highest position on lane l of a node that happens before v (strictly).
//
//   s0:  a ──────► c          a:0 may share with d:0 (a, c ⇝ d via c→d)
//   s1:  b              d     b:0 may NOT share with d:0: nothing orders b
//                  (c→d)      before d, although b precedes d in plan order
//
// A *lane* is a chain of logical streams that H orders one after another:
// a stream whose first node comes after a lane's last node in plan order,
// and that H orders after it, continues that lane. Vector clocks are exact
// over any partition of the nodes into chains of H, and the tables below
// cost n × lanes: the auto-stream modes give every subgraph streams of its
// own (GE's MiniDAG, ge-reference §6), so a graph of 2,000 loops has 2,000
// streams but a handful of lanes. Two streams that share an enclosing loop
// never share a lane (the loop's next iteration is not ordered after this
// one's later stream), and neither do any under flat loops (lanes off).
// Everything below that says "stream" of a clock, a position or a release
// time means a lane; SameStream and the decision log use the real streams.
//
// A run takes one branch of each If/Case: H states only what holds in every
// run that runs both nodes (branch_runs.h). There a stream whose lane
// predecessor need not run with a node, and whose lane holds another
// stream's nodes before it that the node cannot claim, continues on another
// lane from that node (JoinLane again); lane_of_stream gives its last lane.
#ifndef NPUPLAN_VERIFY_STREAM_AWARE_REUSE_H_
#define NPUPLAN_VERIFY_STREAM_AWARE_REUSE_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/verify/branch_runs.h"
#include "npuplan/verify/tensor_lifetimes.h"

namespace npuplan::memory {

// A buffer as the memory planner's stream-aware sweep places it
// (npuplan/memory/stream_sweep.h); StreamAwareReuse::SweepInput fills it.
struct SweepBuffer {
  int64_t lower = 0, upper = 0;  // plan-order lifetime, half-open
  int64_t size = 0;              // bytes (0: placed at 0, conflicts with nothing)
  int64_t alignment = 1;
  std::vector<int> streams;        // streams of its uses, by first use (empty: reuses nothing)
  std::vector<int64_t> first_use;  // per entry of `streams`: first use on it (plan position)
  // Per stream (index = stream, size = num_streams): release time R_t;
  // kNever when t never waits for it.
  std::vector<int64_t> release;
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
};

// The same buffers in flat tables (one row per buffer), as SweepInputTable
// fills them for the planner: a million buffers would otherwise be three
// small heap blocks each.
struct SweepBuffers {
  size_t k = 0;  // streams: each row of `release` has k entries
  BigVector<int64_t> lower, upper, size, alignment;
  BigVector<int32_t> stream_begin = BigVector<int32_t>(1, 0);  // row i: [stream_begin[i], [i + 1])
  BigVector<int32_t> streams;                                  // as SweepBuffer::streams
  BigVector<int64_t> first_use;                                // parallel to `streams`
  BigVector<int64_t> release;                                  // n x k, as SweepBuffer::release
  size_t count() const { return lower.size(); }
  std::span<const int32_t> Streams(size_t i) const {
    return {streams.data() + stream_begin[i], streams.data() + stream_begin[i + 1]};
  }
  std::span<const int64_t> FirstUse(size_t i) const {
    return {first_use.data() + stream_begin[i], first_use.data() + stream_begin[i + 1]};
  }
  const int64_t* Release(size_t i) const { return release.data() + i * k; }
  // Appends one buffer (its release padded with kNever, or cut, to k entries).
  void Append(const SweepBuffer& b);
};

// The number of entries of an ascending list of plan positions (each in
// [0, steps)) below a position, in one table lookup instead of a binary
// search over the list (a cache miss per probe at a million nodes).
class PositionRanks {
 public:
  void Build(std::span<const int64_t> positions, int64_t steps);
  // Entries < x (x may lie outside [0, steps]).
  int32_t Below(int64_t x) const {
    if (x <= 0) return 0;
    return below_[static_cast<size_t>(std::min<int64_t>(x, steps_))];
  }

 private:
  int64_t steps_ = 0;
  BigVector<int32_t> below_ = BigVector<int32_t>(1, 0);  // below_[x] for x in [0, steps]
};

// The happens-before relation H over the nodes of a model (see above).
class HappensBefore {
 public:
  // `order`: the plan order (Model::ExecutionOrder). Edges that do not go
  // forward in it are ignored (they cannot be dependencies of a valid plan).
  // `model_read` (optional) is called once the model is no longer read,
  // before the sweep: memory planning releases the model there.
  // `lanes`: chain streams into lanes (above); false: one lane per stream.
  // `dynamic_graphs`: DynamicPathGraphs of the plan (empty: a static plan).
  HappensBefore(const Model& model, const std::vector<NodeId>& order,
                const std::function<void()>& model_read = nullptr, bool lanes = true,
                const std::vector<bool>& dynamic_graphs = {});

  int64_t num_lanes() const { return lanes_; }
  // Lane of a node (-1 = no stream: runs no task, orders nothing).
  int64_t lane(NodeId n) const {
    const int32_t s = Row(n)[kLane];
    return s < 0 ? -1 : s & ~kOrdersNothing;
  }
  // Position of a node on its lane (-1 when streamless or not in the order).
  int32_t lane_pos(NodeId n) const { return Row(n)[kPos]; }
  // Logical stream of a node (-1 = none).
  int64_t stream(NodeId n) const { return stream_.empty() ? lane(n) : stream_[n.index()]; }
  // The lane of logical stream s's nodes (-1: s has none in the order); its
  // last lane when a branch made it continue on another (see above).
  int64_t lane_of_stream(int64_t s) const;
  // clock(n)[l]: highest position on lane l that happens strictly before n (-1 none).
  const int32_t* clock(NodeId n) const { return Row(n) + kClock; }
  // True when a's task finishes before b's starts in every execution (a != b).
  bool Before(NodeId a, NodeId b) const;
  // Per lane: its nodes in lane order (the nodes with a lane position).
  std::vector<std::vector<NodeId>> LaneOrders() const;

 private:
  // A parent node's subgraph entry: its inputs by plan position and the join
  // of the inclusive clocks of those before `next`.
  struct Entry {
    std::vector<NodeId> inputs;
    size_t next = 0;
    std::vector<int32_t> clock;
  };
  struct Predecessors {
    // Per node: subgraph end predecessors (empty without subgraphs); its
    // data and control edges are read from the model.
    std::vector<std::vector<NodeId>> ends;
    std::vector<int32_t> entry_of;           // per node: its subgraph entry (-1 none)
    std::vector<Entry> entries;
    // Per streamed node (by index): its data and control predecessors that
    // can order it (streamed, out-edges ordering something), read from the
    // model in node order: the sweep goes in plan order, where each node's
    // own entry in the node table would be a cache miss.
    BigVector<int32_t> edge_begin;  // num_nodes + 1
    BigVector<NodeId> edges;
  };
  // What the sweep knows of a lane's last node.
  struct LaneTail {
    int32_t pos = -1;       // its lane position
    int64_t last_seq = -1;  // plan position of its stream's last node
    int32_t loop = -1;      // its outermost enclosing loop (-1 none)
    int32_t start = 0;      // lane position where its stream took the lane
  };
  // What the sweep needs to chain streams into lanes (empty: one per stream).
  struct LanePlan {
    int initial_lanes = 1;          // the streams' widest plan-order overlap
    std::vector<int64_t> last_seq;  // per stream: plan position of its last node
    // Per stream: the outermost loop owner around its first / last node (-1 none).
    std::vector<int32_t> first_loop, last_loop;
    // Per node: its outermost loop owner (-1 none); only with branches and
    // loops, where a stream may continue on another lane at any node.
    std::vector<int32_t> node_loop;
  };
  Predecessors CollectPredecessors(const Model& model, const BigVector<int64_t>& seq,
                                   const std::vector<bool>& dynamic_graphs) const;
  int32_t AddEntry(const Node& parent, const BigVector<int64_t>& seq,
                   std::vector<Entry>& entries) const;
  // Streams' plan spans and loops when some stream ends before another
  // starts (else lanes are the streams: nothing to chain).
  // `stream`: per node, its stream as the rows hold it (-1: none).
  std::optional<LanePlan> PlanLanes(const Model& model, const std::vector<NodeId>& order,
                                    const BigVector<int32_t>& stream, const BranchRuns* runs) const;
  // `seq` (plan position by node) is only filled for models with subgraphs.
  // `runs`: null without If/Case branches.
  void Sweep(const std::vector<NodeId>& order, const BigVector<int64_t>& seq, Predecessors& preds,
             const std::optional<LanePlan>& lanes, BranchRuns* runs);
  // The lane a stream's first node v (clock cv, plan position `at`) joins: the
  // first closed lane whose last node happens before v, else a new one.
  int32_t JoinLane(const int32_t* cv, int64_t at, int32_t loop, std::vector<LaneTail>& tails);
  // With branches a node's clock may know less than its lane predecessor's
  // (an else node after a then node): each clock becomes the minimum over
  // its lane's later clocks, so that clocks grow along a lane again, as the
  // release searches need (lowering a clock keeps every fact it states).
  void LowerToLaterClocks(const std::vector<NodeId>& order);
  // Makes room for at least `lanes` clock entries per row.
  void Widen(size_t lanes, Predecessors& preds);

  // One row per node: its lane position, its lane (with kOrdersNothing
  // when its data and control out-edges order nothing, see OrdersNothing;
  // before the sweep reaches the node, its stream), then its clock. The
  // sweep reads all three of every predecessor, which sits anywhere in the
  // graph: one row is one cache miss, not three.
  // Built twice per compile (planner, verifier): a BigVector reuses the
  // freed block instead of faulting in fresh pages.
  static constexpr size_t kPos = 0, kLane = 1, kClock = 2;
  static constexpr int32_t kOrdersNothing = int32_t{1} << 30;
  const int32_t* Row(NodeId n) const { return rows_.data() + n.index() * stride_; }
  int32_t* Row(NodeId n) { return rows_.data() + n.index() * stride_; }
  int64_t k_ = 0;      // logical streams
  int64_t lanes_ = 0;  // lanes
  size_t stride_ = kClock;
  BigVector<int32_t> rows_;              // num_nodes × stride_ (stride_ >= kClock + lanes)
  std::vector<int32_t> lane_size_;       // per lane: its nodes with a position
  std::vector<int32_t> lane_of_stream_;  // empty: lane = stream
  BigVector<int32_t> stream_;            // per node: its stream, when lanes chain streams
};

// Per buffer of a TensorLifetimes: where its uses sit on the streams, in
// flat tables (one row per buffer).
struct BufferUses {
  size_t k = 0;  // streams
  // (stream, highest use position on it) per stream it is used on, by stream.
  BigVector<int32_t> last_begin;  // row b: last[last_begin[b] .. last_begin[b + 1])
  BigVector<std::pair<int32_t, int32_t>> last;
  // Elementwise min of its uses' clocks (k entries; int32 max without uses).
  BigVector<int32_t> meet;
  std::span<const std::pair<int32_t, int32_t>> Last(size_t b) const {
    return {last.data() + last_begin[b], last.data() + last_begin[b + 1]};
  }
  const int32_t* Meet(size_t b) const { return meet.data() + b * k; }
};

// Sharing decisions over the buffers of a TensorLifetimes.
class StreamAwareReuse {
 public:
  // `model_read` (optional) is called once the model is no longer read
  // (neither here nor by any other member): the happens-before sweep and
  // the tables built from it read only `lifetimes` and their own data.
  // `dynamic_graphs`: DynamicPathGraphs of the plan (empty: a static plan).
  StreamAwareReuse(const Model& model, const TensorLifetimes& lifetimes,
                   const std::function<void()>& model_read = nullptr,
                   const std::vector<bool>& dynamic_graphs = {});

  const HappensBefore& happens_before() const { return hb_; }
  // Every use of buffer a happens before every use of buffer b (indices into
  // lifetimes.buffers). False for pinned buffers, for a graph output a, and
  // under flat loops unless all uses of both are on one stream.
  bool Ordered(int a, int b) const;
  // a and b may share memory: Ordered(a, b) || Ordered(b, a).
  bool MayShare(int a, int b) const { return Ordered(a, b) || Ordered(b, a); }
  // True when every use of both buffers runs on one stream.
  bool SameStream(int a, int b) const;
  // Pairs (i, j), i < j, of positions in `buffers` (indices into
  // lifetimes.buffers) that are disjoint in plan order but may not share:
  // the extra conflicts of the interval problem. O(n^2) pair tests.
  std::vector<std::pair<int, int>> ExtraConflicts(const std::vector<int>& buffers) const;

  // The same constraints in a form whose size stays near-linear: a buffer `a`
  // whose cross-stream conflicts with later buffers number at most
  // `max_pairs_per_buffer` lists them exactly (`pairs`); one with more gets
  // its `upper` raised to its *release point* E(a) instead: every buffer
  // starting at or after E(a) is provably ordered after a, so the interval
  // [lower, E(a)) is a sound (conservative) stand-in for those pairs.
  // Buffers that nothing can be ordered against (pinned, without uses,
  // graph outputs) span the whole plan. Cost O(n k^2 log n + pairs) for k
  // streams instead of O(n^2). Under flat loops (rare, small graphs) it
  // falls back to ExtraConflicts.
  struct PlanningConflicts {
    std::vector<std::pair<int, int>> pairs;  // positions in `buffers`, i < j, sorted
    std::vector<int64_t> lower, upper;       // per position: the lifetime to plan with
    int64_t extended = 0;                    // buffers whose lifetime was widened
  };
  PlanningConflicts Conflicts(const std::vector<int>& buffers, int64_t max_pairs_per_buffer) const;

  // The buffers as input of SweepStreamAware (stream_sweep.h): lifetime,
  // size, streams of the uses and per stream t the release time F_t(a) = the
  // plan position of the first node of t whose clock covers all of a's last
  // uses (kNever if none, or if a can precede nothing: pinned, no uses, graph
  // output; under flat loops only a single-stream buffer's own stream).
  std::vector<SweepBuffer> SweepInput(const std::vector<int>& buffers, int64_t alignment) const;
  // The same in flat tables.
  SweepBuffers SweepInputTable(const std::vector<int>& buffers, int64_t alignment) const;

 private:
  const TensorLifetimes& lt_;
  // Per loop with iteration-local buffers (NodeId value): plan position just
  // past it. Before hb_: read from the model before hb_'s sweep.
  std::map<int32_t, int64_t> loop_end_;
  HappensBefore hb_;
  BufferUses uses_;
  // Per buffer: the single stream of all its uses (-1 none / several).
  BigVector<int32_t> only_stream_;
  // Per lane: its nodes in lane order. Made on first use (StreamNodes):
  // the conflicts and release times need them, the pairwise tests
  // (the memory verifier's) do not.
  const std::vector<std::vector<NodeId>>& StreamNodes() const;
  mutable std::once_flag stream_nodes_once_;
  mutable std::vector<std::vector<NodeId>> stream_nodes_;

  // What ReleasePositions searches with. With few streams, per stream pair
  // (t, s) the answer for every position p on s: cover[t * k + s][p] = the
  // first node of t whose clock covers position p of s (clocks grow along a
  // stream: one merge per stream builds it), and each stream's plan
  // positions; otherwise (both empty) binary searches from `hints` (k x k
  // entries): where the last search on stream t for a use on stream s ended
  // (callers going through buffers in plan order keep them between calls, so
  // each search starts next to its answer).
  struct ReleaseSearch {
    std::vector<size_t> hints;
    std::vector<BigVector<int32_t>> cover;
    std::vector<BigVector<int64_t>> positions;
  };
  // `buffers`: how many buffers it will serve (the tables are built only
  // while their size stays within a few entries per buffer).
  ReleaseSearch MakeReleaseSearch(size_t buffers) const;
  // F_t(a) for every stream t (out[t]), as plan positions (int64 max when none).
  void ReleasePositions(int a, int64_t* out, ReleaseSearch& search) const;
};

}  // namespace npuplan::memory

#endif  // NPUPLAN_VERIFY_STREAM_AWARE_REUSE_H_
