// Tensor lifetimes (tensor_lifetimes.h): the attribute rules, the tensor
// index, and the builder's first steps (tensors, aliases, consumers, loops,
// per-node facts); grouping into buffers is in lifetime_buffers.cc.
#include "npuplan/verify/tensor_lifetimes.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/in_place_writes.h"
#include "npuplan/ir/node_prefetch.h"
#include "npuplan/support/sort_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/union_find.h"
#include "npuplan/verify/tensor_lifetimes_internal.h"

namespace npuplan::memory {
using namespace std::string_view_literals;
namespace {

using lifetimes_internal::AlignUp;
using lifetimes_internal::Bad;

// Workspace bytes of a node: `_workspace_bytes` int or int list (each entry aligned, summed).
absl::StatusOr<int64_t> WorkspaceBytes(const Node& n, int64_t alignment) {
  const AttrValue* v = FindAttr(n.attrs, "_workspace_bytes");
  if (v == nullptr) return int64_t{0};
  std::vector<int64_t> parts;
  if (const int64_t* i = v->as<int64_t>()) {
    parts.push_back(*i);
  } else if (const auto* l = v->as<AttrValue::IntList>()) {
    parts = *l;
  } else {
    return Bad(n, "_workspace_bytes must be an int or an int list");
  }
  int64_t total = 0;
  for (int64_t p : parts) {
    if (p < 0) return Bad(n, StrCat("_workspace_bytes entry ", p, " is negative"));
    std::optional<int64_t> a = AlignUp(p, alignment);
    if (!a || *a > std::numeric_limits<int64_t>::max() - total)
      return Bad(n, "_workspace_bytes overflows int64");
    total += *a;
  }
  return total;
}

// The ir parsers' errors, as memory planning reports them ("memory: node …").
template <typename T>
absl::StatusOr<T> AsMemoryError(absl::StatusOr<T> v) {
  if (v.ok()) return v;
  return absl::InvalidArgumentError(StrCat("memory: ", v.status().message()));
}

// `_ref_input_index`: output i → input index (or -1).
absl::StatusOr<std::vector<int64_t>> RefInputs(const Node& n) {
  return AsMemoryError(RefInputIndices(n));
}

// Parent output of each input of a subgraph NetOutput (-1 = none).
absl::StatusOr<std::vector<int64_t>> ParentOutputs(const Model& model, const Node& net) {
  return AsMemoryError(ParentOutputIndices(model, net));
}

}  // namespace

bool IsConstantLike(const Node& n) {
  const std::string_view t = n.type;  // string_view == checks the length first
  return t == "Const"sv || t == "Constant"sv || t == "Variable"sv || t == "VariableV2"sv ||
         t == "ConstPlaceHolder"sv || t == "FileConstant"sv;
}

// Once per buffer (twice per compile): appends the digits directly rather
// than through StrCat's formatter.
std::string TensorName(const Model& model, TensorRef t) {
  const std::string& n = model.node(t.node).name;
  if (t.output == TensorRef::kWorkspace) return StrCat(n, ":workspace");
  char digits[16];
  char* end = std::to_chars(digits, digits + sizeof(digits), t.output).ptr;
  std::string name;
  name.reserve(n.size() + 1 + static_cast<size_t>(end - digits));
  name.append(n).push_back(':');
  name.append(digits, end);
  return name;
}
BufferIndex::const_iterator BufferIndex::find(TensorRef r) const {
  if (!r.node.valid() || r.node.index() + 1 >= node_begin_.size()) return end();
  const value_type* first = entries_.data() + node_begin_[r.node.index()];
  const value_type* last = entries_.data() + node_begin_[r.node.index() + 1];
  const value_type* it = std::lower_bound(
      first, last, r, [](const value_type& e, TensorRef x) { return e.first < x; });
  return it != last && it->first == r ? it : end();
}

int BufferIndex::at(TensorRef r) const {
  const_iterator it = find(r);
  if (it == end()) throw std::out_of_range("BufferIndex::at: tensor not planned");
  return it->second;
}

// Counting placement by node, then each node's few tensors by output.
void BufferIndex::Build(size_t num_nodes, const BigVector<LogicalBuffer>& buffers) {
  node_begin_.assign(num_nodes + 1, 0);
  size_t total = 0;
  for (const LogicalBuffer& b : buffers) {
    for (const TensorRef& r : b.members) ++node_begin_[r.node.index() + 1];
    total += b.members.size();
  }
  for (size_t i = 1; i <= num_nodes; ++i) node_begin_[i] += node_begin_[i - 1];
  BigVector<int32_t> next(node_begin_.begin(), node_begin_.end() - 1);
  entries_.assign(total, {});
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (const TensorRef& r : buffers[i].members)
      entries_[static_cast<size_t>(next[r.node.index()]++)] = {r, static_cast<int>(i)};
  }
  for (size_t n = 0; n < num_nodes; ++n) {
    if (node_begin_[n + 1] - node_begin_[n] > 1)
      std::sort(entries_.begin() + node_begin_[n], entries_.begin() + node_begin_[n + 1]);
  }
}

namespace lifetimes_internal {

// 1. Plan order and positions.
void LifetimeBuilder::OrderNodes() {
  lt_.order = model_.ExecutionOrder();
  lt_.position.assign(n_, -1);
  for (size_t i = 0; i < lt_.order.size(); ++i)
    lt_.position[lt_.order[i].index()] = static_cast<int64_t>(i);
  lt_.num_steps = static_cast<int64_t>(lt_.order.size());
}

// 2. One walk over the node table (its records are large and the walk is
// latency-bound, so each further walk cost about as much as this one):
// every output anchor and workspace, the nodes' facts, their input edges
// (turned into consumers below) and which nodes may alias tensors.
absl::Status LifetimeBuilder::WalkNodes() {
  ws_bytes_.assign(n_, 0);
  first_tensor_.assign(n_ + 1, 0);
  facts_.resize(n_);
  // Most nodes have one output: no growth (each step would copy the array
  // into a larger, freshly faulted block).
  tensors_.reserve(n_);
  tensor_bytes_.reserve(n_);
  edge_begin_.assign(n_ + 1, 0);
  edges_.reserve(3 * n_);
  for (size_t i = 0; i < n_; ++i) {
    if (i + kNodePrefetch < n_) PrefetchNode(model_, i + kNodePrefetch);
    const Node& node = model_.nodes()[i];
    NodeId id(static_cast<int32_t>(i));
    first_tensor_[i] = static_cast<int>(tensors_.size());
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      tensors_.push_back({id, static_cast<int32_t>(o)});
      tensor_bytes_.push_back(node.outputs[o].ByteSize().value_or(-1));
    }
    edge_begin_[i] = static_cast<int64_t>(edges_.size());
    edges_.insert(edges_.end(), node.inputs.begin(), node.inputs.end());
    if (!node.attrs.empty()) {
      NPUPLAN_ASSIGN_OR_RETURN(ws_bytes_[i], WorkspaceBytes(node, alignment_));
    }
    const std::string_view type = node.type;
    if (type == "NextIteration"sv || type == "RefNextIteration"sv) lt_.flat_loops = true;
    has_loops_ = has_loops_ || IsLoopNode(node);
    const bool root = model_.graph(node.graph).IsRoot();
    const bool data = type == "Data"sv, constant = IsConstantLike(node);
    const bool net_output = type == "NetOutput"sv;
    // AliasTensors' nodes: a ref output, or a subgraph's Data / NetOutput.
    if ((!root && (data || net_output)) ||
        (!node.attrs.empty() && FindAttr(node.attrs, "_ref_input_index") != nullptr)) {
      aliasing_.push_back(id);
    }
    NodeFacts& f = facts_[i];
    f.position = static_cast<int32_t>(lt_.position[i]);
    f.loop = loop_of_graph_[node.graph.index()].value;
    f.flags =
        static_cast<uint8_t>((node.stream_id >= 0 ? kStreamed : 0) |
                             (!node.attached_stream_ids.empty() ? kAttached : 0) |
                             (net_output ? kNetOutput : 0) | (root ? kRootGraph : 0) |
                             (!node.subgraphs.empty() || data || constant ? kForwardsOnly : 0) |
                             (constant ? kConstantLike : 0) | (data ? kData : 0));
  }
  edge_begin_[n_] = static_cast<int64_t>(edges_.size());
  first_tensor_[n_] = static_cast<int>(tensors_.size());
  num_outputs_ = static_cast<int>(tensors_.size());
  for (size_t i = 0; i < n_; ++i) {
    if (ws_bytes_[i] > 0)
      tensors_.push_back({NodeId(static_cast<int32_t>(i)), TensorRef::kWorkspace});
  }
  return absl::OkStatus();
}

// 3. Aliases: ref outputs and subgraph boundaries, on the nodes WalkNodes
// listed (in node order, so the first error is the same).
absl::Status LifetimeBuilder::AliasTensors() {
  uf_ = UnionFind(tensors_.size());
  for (NodeId id : aliasing_) {
    const Node& node = model_.node(id);
    if (FindAttr(node.attrs, "_ref_input_index") != nullptr) {
      NPUPLAN_ASSIGN_OR_RETURN(std::vector<int64_t> refs, RefInputs(node));
      for (size_t o = 0; o < refs.size(); ++o) {
        if (refs[o] < 0) continue;
        const OutputRef& in = node.inputs[refs[o]];
        uf_.Union(TensorIndex(id, static_cast<int32_t>(o)), TensorIndex(in.node, in.index));
      }
    }
    const Graph& g = model_.graph(node.graph);
    if (!g.IsRoot() && node.type == "Data"sv && !node.outputs.empty()) {
      if (auto k = GetIntAttr(node.attrs, "_parent_node_index")) {
        const Node& parent = model_.node(g.parent_node);
        if (*k >= 0 && *k < static_cast<int64_t>(parent.inputs.size())) {
          const OutputRef& in = parent.inputs[*k];
          uf_.Union(TensorIndex(id, 0), TensorIndex(in.node, in.index));
        }
      }
    }
    if (!g.IsRoot() && node.type == "NetOutput"sv) {
      NPUPLAN_ASSIGN_OR_RETURN(std::vector<int64_t> to_parent, ParentOutputs(model_, node));
      for (size_t k = 0; k < to_parent.size(); ++k) {
        if (to_parent[k] < 0) continue;
        uf_.Union(TensorIndex(g.parent_node, static_cast<int32_t>(to_parent[k])),
                  TensorIndex(node.inputs[k].node, node.inputs[k].index));
      }
    }
  }
  FreeStorage(aliasing_);
  return absl::OkStatus();
}

// 4. Consumers of each output tensor, from the edges WalkNodes copied (no
// second walk over the nodes).
void LifetimeBuilder::CollectConsumers() {
  consumer_begin_.assign(static_cast<size_t>(num_outputs_) + 1, 0);
  // Each edge's tensor index, in place of the edge.
  BigVector<int32_t> edge_tensor(edges_.size());
  for (size_t e = 0; e < edges_.size(); ++e) {
    const int32_t t = TensorIndex(edges_[e].node, edges_[e].index);
    edge_tensor[e] = t;
    ++consumer_begin_[static_cast<size_t>(t) + 1];
  }
  FreeStorage(edges_);
  for (size_t t = 1; t < consumer_begin_.size(); ++t) consumer_begin_[t] += consumer_begin_[t - 1];
  BigVector<int32_t> next(consumer_begin_.begin(), consumer_begin_.end() - 1);
  consumers_.resize(static_cast<size_t>(consumer_begin_.back()));
  for (size_t i = 0; i < n_; ++i) {
    for (int64_t e = edge_begin_[i]; e < edge_begin_[i + 1]; ++e) {
      const size_t t = static_cast<size_t>(edge_tensor[static_cast<size_t>(e)]);
      consumers_[static_cast<size_t>(next[t]++)] = NodeId(static_cast<int32_t>(i));
    }
  }
  FreeStorage(edge_begin_);
}

// Outermost loop node enclosing each graph (invalid = none).
void LifetimeBuilder::FindLoops() {
  loop_of_graph_.assign(model_.num_graphs(), NodeId());
  for (GraphId g : model_.GraphsPreOrder()) {
    const Graph& graph = model_.graph(g);
    if (graph.IsRoot()) continue;
    NodeId outer = loop_of_graph_[model_.node(graph.parent_node).graph.index()];
    loop_of_graph_[g.index()] =
        outer.valid() ? outer
                      : (IsLoopNode(model_.node(graph.parent_node)) ? graph.parent_node : NodeId());
  }
}

}  // namespace lifetimes_internal

absl::StatusOr<TensorLifetimes> ComputeTensorLifetimes(const Model& model, int64_t alignment) {
  if (alignment < 1)
    return absl::InvalidArgumentError(StrCat("memory: alignment ", alignment, " must be >= 1"));
  TensorLifetimes lt;
  lt.alignment = alignment;
  lifetimes_internal::LifetimeBuilder builder(model, alignment, lt);
  builder.OrderNodes();
  builder.FindLoops();
  NPUPLAN_RETURN_IF_ERROR(builder.WalkNodes());
  NPUPLAN_RETURN_IF_ERROR(builder.AliasTensors());
  builder.CollectConsumers();
  NPUPLAN_RETURN_IF_ERROR(builder.GroupBuffers());
  builder.SortBuffers();
  return lt;
}

}  // namespace npuplan::memory
