// The happens-before relation H (HappensBefore, stream_aware_reuse.h): the
// predecessor lists read from the model, then one vector-clock sweep in
// plan order.
#include <algorithm>
#include <string_view>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/verify/stream_aware_reuse.h"

namespace npuplan::memory {
using namespace std::string_view_literals;
namespace {

// Edges whose order the events stage leaves to loop/branch activation.
bool OrdersNothing(const Node& from) {
  const std::string_view t = from.type;  // string_view == checks the length first
  return t == "Enter"sv || t == "RefEnter"sv || t == "StreamSwitch"sv;
}

}  // namespace

HappensBefore::HappensBefore(const Model& model, const std::vector<NodeId>& order,
                             const std::function<void()>& model_read) {
  const size_t n = model.num_nodes();
  // Streams and whether each node's out-edges order anything, read here in
  // node order: the sweep meets a node's predecessors anywhere in the graph.
  BigVector<int32_t> stream(n);
  size_t edges = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = model.nodes()[i];
    k_ = std::max(k_, node.stream_id + 1);
    stream[i] = node.stream_id < 0    ? -1
                : OrdersNothing(node) ? static_cast<int32_t>(node.stream_id) | kOrdersNothing
                                      : static_cast<int32_t>(node.stream_id);
    if (node.stream_id >= 0) edges += node.inputs.size() + node.control_inputs.size();
  }
  stride_ = kClock + static_cast<size_t>(k_);
  rows_.assign(n * stride_, -1);
  for (size_t i = 0; i < n; ++i) rows_[i * stride_ + kStream] = stream[i];
  // Plan positions: only subgraph entries compare them (the sweep itself
  // tells predecessors earlier in the plan by their assigned stream position).
  BigVector<int64_t> seq;
  if (model.num_graphs() > 1) {
    seq.assign(n, -1);
    for (size_t i = 0; i < order.size(); ++i) seq[order[i].index()] = static_cast<int64_t>(i);
  }
  Predecessors preds = CollectPredecessors(model, seq);
  // A streamless predecessor never gets a stream position (the sweep would
  // skip it), nor does one whose out-edges order nothing join.
  preds.edge_begin.assign(n + 1, 0);
  preds.edges.reserve(edges);
  auto orders = [&](NodeId u) {
    return stream[u.index()] >= 0 && !(stream[u.index()] & kOrdersNothing);
  };
  for (size_t i = 0; i < n; ++i) {
    preds.edge_begin[i] = static_cast<int32_t>(preds.edges.size());
    if (stream[i] < 0) continue;
    const Node& node = model.nodes()[i];
    for (const OutputRef& in : node.inputs) {
      if (orders(in.node)) preds.edges.push_back(in.node);
    }
    for (NodeId c : node.control_inputs) {
      if (orders(c)) preds.edges.push_back(c);
    }
  }
  preds.edge_begin[n] = static_cast<int32_t>(preds.edges.size());
  FreeStorage(stream);
  if (model_read) model_read();
  Sweep(order, seq, preds);
}

// Data and control edges, subgraph end (end node → each successor of the
// parent) and subgraph entry. Entry is not listed per root: every root of
// every subgraph of a parent has all of the parent's inputs as predecessors,
// which listed per root is roots × inputs entries (a partitioned dynamic
// subgraph has one Data root per call input). The parent's inputs are listed
// once instead (`entries`) and each root names its parent's entry.
HappensBefore::Predecessors HappensBefore::CollectPredecessors(
    const Model& model, const BigVector<int64_t>& seq) const {
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
    NodeId end;
    for (NodeId id : graph.nodes) {
      const Node& x = model.node(id);
      if (IsSyncNode(x) || IsLoopGate(x)) continue;  // reads nothing of the parent
      const bool root =
          x.inputs.empty() && std::all_of(x.control_inputs.begin(), x.control_inputs.end(),
                                          [&](NodeId c) { return IsSyncNode(model.node(c)); });
      if (root) {
        if (entry < 0) entry = AddEntry(model.node(graph.parent_node), seq, out.entries);
        out.entry_of[id.index()] = entry;
      }
      if (!end.valid() && GetBoolAttr(x.attrs, "_subgraph_end_node").value_or(false)) end = id;
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
  e.clock.assign(static_cast<size_t>(k_), -1);
  entries.push_back(std::move(e));
  return static_cast<int32_t>(entries.size() - 1);
}

// One sweep in plan order: clock(v) = join of the inclusive clocks of v's
// streamed predecessors that precede it in the plan and of its stream
// predecessor. A root's entry predecessors are the parent's inputs before it
// in the plan; the roots of one parent come in plan order, so its entry clock
// only grows: each input is joined into it once, and each root joins it once.
// A streamed node gets its stream position when the sweep reaches it: a
// predecessor with none yet (-1) is not before v in the plan (or not in it).
void HappensBefore::Sweep(const std::vector<NodeId>& order, const BigVector<int64_t>& seq,
                          Predecessors& preds) {
  const size_t k = static_cast<size_t>(k_);
  std::vector<int32_t> next_pos(k, 0);
  std::vector<NodeId> last_on_stream(k);
  // Joins u's inclusive clock into cv; false when u has no position yet.
  auto join_into = [&](int32_t* cv, NodeId u) {
    const int32_t* ru = Row(u);
    if (ru[kPos] < 0) return;
    const int32_t* cu = ru + kClock;
    for (size_t j = 0; j < k; ++j) cv[j] = std::max(cv[j], cu[j]);
    const size_t su = static_cast<size_t>(ru[kStream] & ~kOrdersNothing);
    cv[su] = std::max(cv[su], ru[kPos]);
  };
  for (NodeId v : order) {
    int32_t* rv = Row(v);
    if (rv[kStream] < 0) continue;
    const size_t s = static_cast<size_t>(rv[kStream] & ~kOrdersNothing);
    int32_t* cv = rv + kClock;
    if (last_on_stream[s].valid()) join_into(cv, last_on_stream[s]);
    for (int32_t e = preds.edge_begin[v.index()]; e < preds.edge_begin[v.index() + 1]; ++e)
      join_into(cv, preds.edges[static_cast<size_t>(e)]);
    if (!preds.ends.empty()) {
      for (NodeId u : preds.ends[v.index()]) join_into(cv, u);
    }
    if (const int32_t e = preds.entry_of[v.index()]; e >= 0) {
      Entry& entry = preds.entries[static_cast<size_t>(e)];
      for (; entry.next < entry.inputs.size() &&
             seq[entry.inputs[entry.next].index()] < seq[v.index()];
           ++entry.next) {
        join_into(entry.clock.data(), entry.inputs[entry.next]);
      }
      for (size_t j = 0; j < k; ++j) cv[j] = std::max(cv[j], entry.clock[j]);
    }
    rv[kPos] = next_pos[s]++;
    last_on_stream[s] = v;
  }
  stream_size_ = std::move(next_pos);
}

// Stream positions are given in plan order, so node v is entry
// stream_pos(v) of its stream: the rows are read in node order (one pass
// over the table, sized lists, no growth) rather than in plan order (a
// cache miss per node).
std::vector<std::vector<NodeId>> HappensBefore::StreamOrders() const {
  const size_t n = stride_ == 0 ? 0 : rows_.size() / stride_;
  std::vector<std::vector<NodeId>> out(stream_size_.size());
  for (size_t s = 0; s < out.size(); ++s) out[s].resize(static_cast<size_t>(stream_size_[s]));
  for (size_t i = 0; i < n; ++i) {
    const int32_t* r = rows_.data() + i * stride_;
    if (r[kStream] >= 0 && r[kPos] >= 0) {
      out[static_cast<size_t>(r[kStream] & ~kOrdersNothing)][static_cast<size_t>(r[kPos])] =
          NodeId(static_cast<int32_t>(i));
    }
  }
  return out;
}

bool HappensBefore::Before(NodeId a, NodeId b) const {
  const int64_t sa = stream(a);
  if (sa < 0 || stream(b) < 0 || a == b) return false;
  return clock(b)[sa] >= stream_pos(a);
}

}  // namespace npuplan::memory
