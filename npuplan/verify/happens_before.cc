// The happens-before relation H (HappensBefore, stream_aware_reuse.h): the
// predecessor lists read from the model, then one vector-clock sweep in
// plan order.
#include <algorithm>
#include <limits>
#include <string_view>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/ffts_regions.h"
#include "npuplan/ir/owner_control_inputs.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/loop_order.h"
#include "npuplan/verify/stream_aware_reuse.h"

namespace npuplan::memory {
using namespace std::string_view_literals;
namespace {

// Edges whose order the events stage leaves to loop/branch activation.
bool OrdersNothing(const Node& from) {
  const std::string_view t = from.type;  // string_view == checks the length first
  return t == "Enter"sv || t == "RefEnter"sv || t == "StreamSwitch"sv;
}

// The parent's input a streamless subgraph Data passes on (invalid when u is
// none, its parent runs the subgraph inside its own task — a thread scope —
// or the graph lies in an FFTS region, `ffts` per graph as FftsRegionGraphs).
// The same source the sync verifier's dependency list takes (StreamSources),
// one level deep.
NodeId ParentInputOf(const Model& model, const std::vector<uint8_t>& ffts, NodeId u) {
  const Node& data = model.node(u);
  if (data.stream_id >= 0 || data.type != "Data"sv) return NodeId();
  const NodeId parent = model.graph(data.graph).parent_node;
  if (!parent.valid() || (!ffts.empty() && ffts[data.graph.index()])) return NodeId();
  const Node& p = model.node(parent);
  if (HasAttr(p.attrs, "_thread_scope_id")) return NodeId();
  const std::optional<int64_t> idx = GetIntAttr(data.attrs, "_parent_node_index");
  if (!idx || *idx < 0 || static_cast<size_t>(*idx) >= p.inputs.size()) return NodeId();
  return p.inputs[static_cast<size_t>(*idx)].node;
}

}  // namespace

HappensBefore::HappensBefore(const Model& model, const std::vector<NodeId>& order,
                             const std::function<void()>& model_read, bool lanes,
                             const std::vector<bool>& dynamic_graphs) {
  const size_t n = model.num_nodes();
  // Streams and whether each node's out-edges order anything, read here in
  // node order: the sweep meets a node's predecessors anywhere in the graph.
  BigVector<int32_t> stream(n);
  size_t edges = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = model.nodes()[i];
    k_ = std::max(k_, node.stream_id + 1);
    // Send/Recv nodes and loop gates carry the events' order, which H leaves
    // out, and edges only to and from their own node: H loses nothing
    // without them, and a stream a Recv opens can still continue a lane.
    const bool carries_events = CarriesOnlyOrder(node);
    stream[i] = node.stream_id < 0 || carries_events ? -1
                : OrdersNothing(node) ? static_cast<int32_t>(node.stream_id) | kOrdersNothing
                                      : static_cast<int32_t>(node.stream_id);
    if (node.stream_id >= 0) edges += node.inputs.size() + node.control_inputs.size();
  }
  // One run takes one branch: what the sweep needs to claim only what
  // every run that runs a node orders before it (branch_runs.h).
  std::optional<BranchRuns> runs;
  if (model.num_graphs() > 1) {
    runs.emplace(model);
    if (!runs->active()) runs.reset();
  }
  BranchRuns* const branch_runs = runs ? &*runs : nullptr;
  std::optional<LanePlan> lane_plan;
  if (lanes) lane_plan = PlanLanes(model, order, stream, branch_runs);
  // The widest plan-order overlap of streams needs as many lanes; more come
  // when a closed lane's last node does not happen before a new stream.
  stride_ = kClock +
            (lane_plan ? static_cast<size_t>(lane_plan->initial_lanes) : static_cast<size_t>(k_));
  rows_.assign(n * stride_, -1);
  for (size_t i = 0; i < n; ++i) rows_[i * stride_ + kLane] = stream[i];
  // Plan positions: only subgraph entries compare them (the sweep itself
  // tells predecessors earlier in the plan by their assigned stream position).
  BigVector<int64_t> seq;
  if (model.num_graphs() > 1) {
    seq.assign(n, -1);
    for (size_t i = 0; i < order.size(); ++i) seq[order[i].index()] = static_cast<int64_t>(i);
  }
  Predecessors preds = CollectPredecessors(model, seq, dynamic_graphs);
  // A streamless predecessor never gets a stream position (the sweep would
  // skip it), nor does one whose out-edges order nothing join.
  preds.edge_begin.assign(n + 1, 0);
  preds.edges.reserve(edges);
  auto orders = [&](NodeId u) {
    return stream[u.index()] >= 0 && !(stream[u.index()] & kOrdersNothing);
  };
  // A subgraph's Data runs no task: its reader waits for the parent's input
  // that the Data passes on (the events stage's subgraph-input rule).
  const std::vector<uint8_t> ffts =
      model.num_graphs() > 1 ? FftsRegionGraphs(model) : std::vector<uint8_t>();
  // A subgraph's source runs after its owners' control inputs (the events
  // stage's owner-control rule): a source with a stream waits for them, one
  // without passes them on to its readers.
  const OwnerControlInputs owner_controls(model);
  auto add_owner_controls = [&](const Node& source) {
    if (!owner_controls.any() || !IsGraphSource(model, source)) return;
    for (NodeId c : owner_controls.Of(source.graph)) {
      if (orders(c)) preds.edges.push_back(c);
    }
  };
  auto add = [&](NodeId u) {
    if (orders(u)) {
      preds.edges.push_back(u);
      return;
    }
    if (const NodeId src = ParentInputOf(model, ffts, u); src.valid() && orders(src)) {
      preds.edges.push_back(src);
    }
    if (stream[u.index()] < 0) add_owner_controls(model.node(u));
  };
  for (size_t i = 0; i < n; ++i) {
    preds.edge_begin[i] = static_cast<int32_t>(preds.edges.size());
    if (stream[i] < 0) continue;
    const Node& node = model.nodes()[i];
    for (const OutputRef& in : node.inputs) add(in.node);
    for (NodeId c : node.control_inputs) add(c);
    add_owner_controls(node);
  }
  preds.edge_begin[n] = static_cast<int32_t>(preds.edges.size());
  if (lane_plan) {
    for (int32_t& s : stream) s = s < 0 ? -1 : s & ~kOrdersNothing;
    stream_ = std::move(stream);
  } else {
    FreeStorage(stream);
  }
  if (model_read) model_read();
  Sweep(order, seq, preds, lane_plan, branch_runs);
  if (runs) LowerToLaterClocks(order);
  if (!lane_plan) return;
  // Nodes the order left out still hold their stream: give them its lane.
  for (size_t i = 0; i < n; ++i) {
    int32_t* r = rows_.data() + i * stride_;
    if (r[kPos] >= 0 || r[kLane] < 0) continue;
    const int32_t l = lane_of_stream_[static_cast<size_t>(r[kLane] & ~kOrdersNothing)];
    r[kLane] = l < 0 ? -1 : l | (r[kLane] & kOrdersNothing);
  }
  if (lanes_ == k_) {
    bool identity = true;
    for (int64_t s = 0; s < k_; ++s) identity = identity && lane_of_stream_[s] == s;
    if (identity) {  // nothing chained: as without lanes
      lane_of_stream_.clear();
      FreeStorage(stream_);
    }
  }
}

std::optional<HappensBefore::LanePlan> HappensBefore::PlanLanes(const Model& model,
                                                                const std::vector<NodeId>& order,
                                                                const BigVector<int32_t>& stream,
                                                                const BranchRuns* runs) const {
  const size_t k = static_cast<size_t>(k_);
  std::vector<int64_t> first(k, -1), last(k, -1);
  for (size_t i = 0; i < order.size(); ++i) {
    if (stream[order[i].index()] < 0) continue;
    const int32_t s = stream[order[i].index()] & ~kOrdersNothing;
    if (first[s] < 0) first[s] = static_cast<int64_t>(i);
    last[s] = static_cast<int64_t>(i);
  }
  // Overlap depth of the streams' plan spans [first, last].
  std::vector<std::pair<int64_t, int>> ends;
  for (size_t s = 0; s < k; ++s) {
    if (first[s] < 0) continue;
    ends.emplace_back(first[s], +1);
    ends.emplace_back(last[s] + 1, -1);
  }
  std::sort(ends.begin(), ends.end());  // at one position, an end (-1) before a start
  int depth = 0, widest = 0;
  for (const auto& e : ends) widest = std::max(widest, depth += e.second);
  if (2 * static_cast<size_t>(widest) == ends.size()) return std::nullopt;  // all overlap
  LanePlan plan;
  plan.initial_lanes = std::max(widest, 1);
  // Loops: two streams inside a common one never share a lane.
  const std::vector<int32_t> loop_of_graph = OutermostLoopOwners(model);
  auto loop_of = [&](int64_t seq) {
    return seq < 0 || loop_of_graph.empty()
               ? -1
               : loop_of_graph[model.node(order[static_cast<size_t>(seq)]).graph.index()];
  };
  plan.first_loop.resize(k);
  plan.last_loop.resize(k);
  for (size_t s = 0; s < k; ++s) {
    plan.first_loop[s] = loop_of(first[s]);
    plan.last_loop[s] = loop_of(last[s]);
  }
  plan.last_seq = std::move(last);
  // With branches a stream may continue on another lane at any node (Sweep).
  if (runs && !loop_of_graph.empty()) {
    plan.node_loop.assign(model.num_nodes(), -1);
    for (size_t i = 0; i < model.num_nodes(); ++i)
      plan.node_loop[i] = loop_of_graph[model.nodes()[i].graph.index()];
  }
  return plan;
}

// Data and control edges, subgraph end (end node → each successor of the
// parent) and subgraph entry. Entry is not listed per root: every root of
// every subgraph of a parent has all of the parent's inputs as predecessors,
// which listed per root is roots × inputs entries (a partitioned dynamic
// subgraph has one Data root per call input). The parent's inputs are listed
// once instead (`entries`) and each root names its parent's entry.
// At a dynamic-path boundary GE's dynamic executor orders only what reads a
// parent input (its Data nodes) after the parent's inputs, and the subgraph
// ends at its NetOutput (the sync verifier's dependencies there): an
// input-less node on another stream may start before the parent's inputs
// are done (property seeds 4024, 7744: a DropOutGenMask of a later
// partitioned call overwrote the mask an earlier call still read).
HappensBefore::Predecessors HappensBefore::CollectPredecessors(
    const Model& model, const BigVector<int64_t>& seq,
    const std::vector<bool>& dynamic_graphs) const {
  const size_t n = model.num_nodes();
  Predecessors out;
  out.entry_of.assign(n, -1);
  if (model.num_graphs() <= 1) return out;
  out.ends.resize(n);
  std::vector<int32_t> entry_of_parent(n, -1);
  Adjacency adj(model);
  for (size_t g = 1; g < model.num_graphs(); ++g) {
    const Graph& graph = model.graphs()[g];
    if (!graph.parent_node.valid()) continue;
    int32_t& entry = entry_of_parent[graph.parent_node.index()];
    const bool dynamic =
        !dynamic_graphs.empty() &&
        DynamicSubgraphBoundary(model, dynamic_graphs, GraphId(static_cast<int32_t>(g)));
    NodeId end;
    for (NodeId id : graph.nodes) {
      const Node& x = model.node(id);
      if (CarriesOnlyOrder(x)) continue;  // reads nothing of the parent
      const bool root =
          x.inputs.empty() && std::all_of(x.control_inputs.begin(), x.control_inputs.end(),
                                          [&](NodeId c) { return IsSyncNode(model.node(c)); });
      if (root && (!dynamic || HasAttr(x.attrs, "_parent_node_index"))) {
        if (entry < 0) entry = AddEntry(model.node(graph.parent_node), seq, out.entries);
        out.entry_of[id.index()] = entry;
      }
      if (!dynamic && !end.valid() && GetBoolAttr(x.attrs, "_subgraph_end_node").value_or(false))
        end = id;
    }
    if (!end.valid()) {
      for (NodeId id : graph.nodes) {
        if (model.node(id).type == "NetOutput") {
          end = id;
          break;
        }
      }
    }
    if (end.valid()) {
      for (size_t e = adj.begin(graph.parent_node); e < adj.end(graph.parent_node); ++e) {
        out.ends[adj.succ[e].index()].push_back(end);
      }
    }
  }
  return out;
}

// The parent's data and control inputs that can order anything (streamed, in
// the plan), by plan position: the sweep joins them in that order.
int32_t HappensBefore::AddEntry(const Node& parent, const BigVector<int64_t>& seq,
                                std::vector<Entry>& entries) const {
  Entry e;
  auto add = [&](NodeId u) {
    if (stream(u) >= 0 && seq[u.index()] >= 0) e.inputs.push_back(u);
  };
  for (const OutputRef& in : parent.inputs) add(in.node);
  for (NodeId c : parent.control_inputs) add(c);
  std::sort(e.inputs.begin(), e.inputs.end(),
            [&](NodeId a, NodeId b) { return seq[a.index()] < seq[b.index()]; });
  e.clock.assign(stride_ - kClock, -1);
  entries.push_back(std::move(e));
  return static_cast<int32_t>(entries.size() - 1);
}

// One sweep in plan order: clock(v) = join of the inclusive clocks of v's
// streamed predecessors that precede it in the plan and of its lane
// predecessor. A root's entry predecessors are the parent's inputs before it
// in the plan; the roots of one parent come in plan order, so its entry clock
// only grows: each input is joined into it once, and each root joins it once.
// A streamed node gets its lane position when the sweep reaches it: a
// predecessor with none yet (-1) is not before v in the plan (or not in it).
// A stream's first node chooses its lane once its clock is known (JoinLane);
// the lane's last node happens before it then, so joining it adds nothing.
// With branches (`runs`), a predecessor that need not run with v counts only
// as branch_runs.h says.
void HappensBefore::Sweep(const std::vector<NodeId>& order, const BigVector<int64_t>& seq,
                          Predecessors& preds, const std::optional<LanePlan>& lanes,
                          BranchRuns* runs) {
  size_t width = stride_ - kClock;
  std::vector<int32_t> next_pos;
  std::vector<NodeId> last_on_lane;
  std::vector<LaneTail> tails;
  if (lanes) {
    lane_of_stream_.assign(static_cast<size_t>(k_), -1);
  } else {
    next_pos.assign(width, 0);
    last_on_lane.resize(width);
    lanes_ = k_;
  }
  // Joins u's inclusive clock into cv; false when u has no position yet.
  auto join_into = [&](int32_t* cv, NodeId u) {
    const int32_t* ru = Row(u);
    if (ru[kPos] < 0) return;
    const int32_t* cu = ru + kClock;
    for (size_t j = 0; j < width; ++j) cv[j] = std::max(cv[j], cu[j]);
    const size_t lu = static_cast<size_t>(ru[kLane] & ~kOrdersNothing);
    cv[lu] = std::max(cv[lu], ru[kPos]);
  };
  for (size_t at = 0; at < order.size(); ++at) {
    const NodeId v = order[at];
    if (Row(v)[kLane] < 0) continue;
    const int32_t flags = Row(v)[kLane] & kOrdersNothing;
    size_t l = static_cast<size_t>(Row(v)[kLane] & ~kOrdersNothing);  // the stream, with lanes
    const bool opens = lanes && lane_of_stream_[l] < 0;
    const size_t own_stream = l;
    bool reopens = false;  // the stream continues on another lane from v
    if (lanes && !opens) l = static_cast<size_t>(lane_of_stream_[l]);
    int32_t* const cv = Row(v) + kClock;
    const int32_t sv = runs ? runs->scope(v) : 0;
    if (runs) {
      runs->Enter(sv);
      runs->BeginNode(width);
    }
    auto join_pred = [&](NodeId u) {
      if (!runs) return join_into(cv, u);
      const int32_t su = runs->scope(u);
      if (runs->Encloses(su, sv)) return join_into(cv, u);
      if (const int32_t s = runs->Escape(su, sv); s >= 0 && s == su) join_into(runs->Group(s), u);
    };
    if (!opens && last_on_lane[l].valid()) {
      const NodeId p = last_on_lane[l];
      if (!runs || runs->Encloses(runs->scope(p), sv)) {
        join_into(cv, p);
      } else {
        // p need not run with v: the lane's last node that does, and p's
        // position (its queue orders what of it runs); per branch of p's If
        // the lane's last node directly in it.
        const auto [q, q_pos] = runs->LastRunning(static_cast<int32_t>(l), sv);
        const int32_t start = lanes ? tails[l].start : 0;
        if (start == 0 || q_pos >= start) {
          if (q.valid()) join_into(cv, q);
          cv[l] = std::max(cv[l], Row(p)[kPos]);
        } else {
          // The lane took this stream at a node that need not run with v:
          // what came before it on the lane need not precede v.
          reopens = true;
        }
        if (const int32_t s = runs->Escape(runs->scope(p), sv); s >= 0) {
          // Only nodes of v's own stream: its queue orders them before v.
          const int32_t after = lanes ? std::max(q_pos, tails[l].start - 1) : q_pos;
          runs->LaneExits(s, static_cast<int32_t>(l), after,
                          [&](int32_t* group, NodeId w) { join_into(group, w); });
        }
      }
    }
    for (int32_t e = preds.edge_begin[v.index()]; e < preds.edge_begin[v.index() + 1]; ++e)
      join_pred(preds.edges[static_cast<size_t>(e)]);
    if (!preds.ends.empty()) {
      for (NodeId u : preds.ends[v.index()]) join_pred(u);
    }
    if (const int32_t e = preds.entry_of[v.index()]; e >= 0) {
      Entry& entry = preds.entries[static_cast<size_t>(e)];
      for (; entry.next < entry.inputs.size() &&
             seq[entry.inputs[entry.next].index()] < seq[v.index()];
           ++entry.next) {
        join_into(entry.clock.data(), entry.inputs[entry.next]);
      }
      for (size_t j = 0; j < width; ++j) cv[j] = std::max(cv[j], entry.clock[j]);
    }
    if (runs && runs->has_groups()) runs->Fold(cv);
    if (opens || reopens) {
      if (reopens) tails[l].last_seq = static_cast<int64_t>(at) - 1;  // the stream left it
      const int32_t loop = opens                      ? lanes->first_loop[own_stream]
                           : lanes->node_loop.empty() ? -1
                                                      : lanes->node_loop[v.index()];
      const int32_t lane = JoinLane(Row(v) + kClock, static_cast<int64_t>(at), loop, tails);
      if (static_cast<size_t>(lane) >= width) {
        // Up to the stream count by doubling; past it (streams that continue
        // on another lane) by half again, never one lane at a time.
        const size_t need = static_cast<size_t>(lane) + 1;
        const size_t k = static_cast<size_t>(k_);
        Widen(need <= k ? std::max(need, std::min(std::max<size_t>(2 * width, 1), k))
                        : std::max(need, width + width / 2),
              preds);
        width = stride_ - kClock;
      }
      lane_of_stream_[own_stream] = lane;
      next_pos.resize(tails.size(), 0);
      last_on_lane.resize(tails.size());
      LaneTail& tail = tails[static_cast<size_t>(lane)];
      tail.last_seq = lanes->last_seq[own_stream];
      tail.loop = lanes->last_loop[own_stream];
      tail.start = next_pos[static_cast<size_t>(lane)];
      l = static_cast<size_t>(lane);
    }
    int32_t* rv = Row(v);
    rv[kLane] = static_cast<int32_t>(l) | flags;
    rv[kPos] = next_pos[l]++;
    last_on_lane[l] = v;
    if (lanes) tails[l].pos = rv[kPos];
    if (runs) runs->Placed(v, sv, static_cast<int32_t>(l), rv[kPos]);
  }
  if (lanes) lanes_ = static_cast<int64_t>(tails.size());
  lane_size_ = std::move(next_pos);
}

int32_t HappensBefore::JoinLane(const int32_t* cv, int64_t at, int32_t loop,
                                std::vector<LaneTail>& tails) {
  for (size_t c = 0; c < tails.size(); ++c) {
    const LaneTail& t = tails[c];
    const bool closed = t.last_seq < at;
    const bool shares_loop = loop >= 0 && t.loop == loop;
    if (closed && !shares_loop && cv[c] >= t.pos) return static_cast<int32_t>(c);
  }
  tails.emplace_back();
  return static_cast<int32_t>(tails.size() - 1);
}

void HappensBefore::LowerToLaterClocks(const std::vector<NodeId>& order) {
  const size_t width = stride_ - kClock;
  std::vector<int32_t> later(lane_size_.size() * width, std::numeric_limits<int32_t>::max());
  for (size_t at = order.size(); at-- > 0;) {
    int32_t* r = Row(order[at]);
    if (r[kPos] < 0 || r[kLane] < 0) continue;
    int32_t* m = later.data() + static_cast<size_t>(r[kLane] & ~kOrdersNothing) * width;
    int32_t* cv = r + kClock;
    for (size_t j = 0; j < width; ++j) m[j] = cv[j] = std::min(cv[j], m[j]);
  }
}

void HappensBefore::Widen(size_t lanes, Predecessors& preds) {
  const size_t old_stride = stride_;
  if (kClock + lanes <= old_stride) return;
  const size_t n = rows_.size() / old_stride;
  stride_ = kClock + lanes;
  BigVector<int32_t> rows(n * stride_, -1);
  for (size_t i = 0; i < n; ++i) {
    std::copy_n(rows_.data() + i * old_stride, old_stride, rows.data() + i * stride_);
  }
  rows_ = std::move(rows);
  for (Entry& e : preds.entries) e.clock.resize(lanes, -1);
}

// Lane positions are given in plan order, so node v is entry
// lane_pos(v) of its lane: the rows are read in node order (one pass
// over the table, sized lists, no growth) rather than in plan order (a
// cache miss per node).
std::vector<std::vector<NodeId>> HappensBefore::LaneOrders() const {
  const size_t n = stride_ == 0 ? 0 : rows_.size() / stride_;
  std::vector<std::vector<NodeId>> out(lane_size_.size());
  for (size_t s = 0; s < out.size(); ++s) out[s].resize(static_cast<size_t>(lane_size_[s]));
  for (size_t i = 0; i < n; ++i) {
    const int32_t* r = rows_.data() + i * stride_;
    if (r[kLane] >= 0 && r[kPos] >= 0) {
      out[static_cast<size_t>(r[kLane] & ~kOrdersNothing)][static_cast<size_t>(r[kPos])] =
          NodeId(static_cast<int32_t>(i));
    }
  }
  return out;
}

bool HappensBefore::Before(NodeId a, NodeId b) const {
  const int64_t la = lane(a);
  if (la < 0 || lane(b) < 0 || a == b) return false;
  return clock(b)[la] >= lane_pos(a);
}

int64_t HappensBefore::lane_of_stream(int64_t s) const {
  if (s < 0 || s >= k_) return -1;
  return lane_of_stream_.empty() ? s : lane_of_stream_[static_cast<size_t>(s)];
}

}  // namespace npuplan::memory
