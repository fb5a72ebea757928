// Tensor lifetimes of a model for device memory planning (issue #7 item 1).
//
// Every output anchor of every node (root and subgraphs) is a tensor; a node
// with `_workspace_bytes` also has a workspace (output index -1). Tensors that
// must live in the same memory are merged into one *logical buffer*:
//   * ref / in-place outputs: `_ref_input_index` on the node — an int (output
//     0 reuses the buffer of input k) or an int list (entry i for output i,
//     -1 = not a ref output);
//   * subgraph boundaries (GE): a subgraph Data with `_parent_node_index` k
//     is the parent's input k; the i-th input of a subgraph's NetOutput is the
//     parent's output i — or output `_parent_output_index`[i] when the
//     NetOutput has that int list (-1 = none; ONNX Loop's condition) — except
//     in a While's cond graph (subgraph 0 of a While / _While /
//     StatelessWhile with two subgraphs), whose output is the predicate.
// A buffer's region follows its members: a Const/Constant/Variable-like
// member makes it "constant" (weights), a root Data member "input" (graph
// inputs); otherwise "activation", or "workspace" for a workspace. Only
// activations and workspaces share the planned pool; inputs and constants are
// laid out one after the other in their own regions.
//
// Size = max member ByteSize (shape × dtype), rounded up to `alignment`
// (npuplan.memory.alignment, GE uses 512). Members with an unknown size
// (-1 dims, unknown rank or dtype) make the buffer *dynamic*: it is reported
// in `dynamic` and not planned (GE allocates those at run time).
//
// Lifetime: positions in plan order (Model::ExecutionOrder: root topological
// order, each node followed by its subgraphs). A buffer lives on
// [first touch, last touch + 1) over its members' producers and consumers.
// Uses that the stream-aware reuse must order (`uses`) are the streamed nodes
// touching it. Special cases (all conservative):
//   * the root NetOutput reads graph outputs at the end: `live_to_end`;
//   * subgraph NetOutput / Data and parent nodes only forward buffers (the
//     aliases above) and add no use;
//   * a node inside a loop body (parent While/_While/StatelessWhile/For)
//     stands for the whole loop: every streamed node of the loop and its
//     subgraphs (except Send/Recv nodes, which touch no memory) becomes a use (iterations repeat,
//     so nothing inside a loop body is reused across its iterations' streams) — except for an
//     *iteration-local* buffer (LogicalBuffer::iteration_loop), whose real
//     uses count: same-stream reuse inside one iteration;
//   * any other use by a node without a stream, or by a node with attached
//     streams, *pins* the buffer: live for the whole plan, never shared.
//   +-- plan order -->
//   a:0  [=====)             activation, uses a, b
//   b:0       [=====)        may reuse a:0 if a's uses happen before b's
//   c:ws         [=)         workspace of c
#ifndef NPUPLAN_VERIFY_TENSOR_LIFETIMES_H_
#define NPUPLAN_VERIFY_TENSOR_LIFETIMES_H_

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/graph.h"
#include "npuplan/plan/plan_enums.h"
#include "npuplan/support/big_vector.h"

namespace npuplan::memory {

// Output anchor `output` of `node`, or its workspace (output == kWorkspace).
struct TensorRef {
  static constexpr int32_t kWorkspace = -1;
  NodeId node;
  int32_t output = 0;
  friend auto operator<=>(const TensorRef&, const TensorRef&) = default;
};

// "node:0" or "node:workspace".
std::string TensorName(const Model& model, TensorRef t);

// About a million of these at 1M nodes, built twice per compile (memory
// planning, then the memory verifier): the variable-length fields are spans
// into TensorLifetimes' shared storage, not a heap block each, and the small
// fields sit together so that no padding follows them.
struct LogicalBuffer {
  // TensorName of the owner (first member), in TensorLifetimes::name_store:
  // one block for all names instead of a std::string (and for long node
  // names a heap block) per buffer.
  std::string_view name;
  std::span<const TensorRef> members;  // owner first, then aliases, by (position, output)
  int64_t bytes = 0;                   // max member ByteSize
  int64_t size = 0;                    // bytes rounded up to the alignment
  int64_t lower = 0;                   // first touch in plan order
  int64_t upper = 0;                   // last touch + 1 (num_steps when live_to_end / pinned)
  std::span<const NodeId> uses;        // streamed nodes that touch it, by position, unique
  // Non-empty: why it is live for the whole plan (in TensorLifetimes::pinned_store;
  // a view: most buffers have none, and a string would add 16 bytes to each).
  std::string_view pinned;
  // Loops (NodeId values of outermost loop nodes) whose nodes touch it, ascending.
  std::span<const int32_t> loops;
  // Iteration-local: made and used only inside one iteration of a loop body
  // (all touches in the body graph of that loop, none its Data / NetOutput,
  // all on one stream): its lifetime is its real span in the body and it may
  // share with buffers of the same stream (stream FIFO order separates
  // iterations); with other streams of that loop never. NodeId value of the
  // loop, -1 otherwise.
  int32_t iteration_loop = -1;
  MemoryRegion region = MemoryRegion::kActivation;
  bool live_to_end = false;  // a graph output (read by the root NetOutput)
  bool planned_in_pool() const { return IsPoolRegion(region); }
};

// Tensor → index in TensorLifetimes::buffers, with std::map's find / at /
// count: one flat table, the tensors of each node together (by output).
class BufferIndex {
 public:
  using value_type = std::pair<TensorRef, int>;
  using const_iterator = const value_type*;
  const_iterator begin() const { return entries_.data(); }
  const_iterator end() const { return entries_.data() + entries_.size(); }
  size_t size() const { return entries_.size(); }
  // The planned tensors of one node, by output (workspace first).
  std::span<const value_type> OfNode(NodeId n) const {
    return {entries_.data() + node_begin_[n.index()], entries_.data() + node_begin_[n.index() + 1]};
  }
  const_iterator find(TensorRef r) const;
  size_t count(TensorRef r) const { return find(r) == end() ? 0 : 1; }
  // std::out_of_range when `r` is not planned.
  int at(TensorRef r) const;
  // Fills the table from the buffers' members over `num_nodes` nodes.
  void Build(size_t num_nodes, const BigVector<LogicalBuffer>& buffers);

 private:
  BigVector<int32_t> node_begin_;  // per node index: its first entry (size num_nodes + 1)
  BigVector<value_type> entries_;  // by (node, output)
};

struct TensorLifetimes {
  TensorLifetimes() = default;
  TensorLifetimes(TensorLifetimes&&) = default;
  TensorLifetimes& operator=(TensorLifetimes&&) = default;
  // The buffers' spans point into this object's storage: a copy would alias it.
  TensorLifetimes(const TensorLifetimes&) = delete;
  TensorLifetimes& operator=(const TensorLifetimes&) = delete;

  int64_t alignment = 512;
  std::vector<NodeId> order;      // plan order
  BigVector<int64_t> position;    // by NodeId index (-1 = not in the order)
  int64_t num_steps = 0;
  // Sorted by (region, lower, name); excludes dynamic buffers. The large
  // arrays are BigVectors: built twice per compile (planner, verifier), they
  // reuse the blocks freed in between instead of faulting in fresh pages.
  BigVector<LogicalBuffer> buffers;
  // Tensors of dynamic buffers (unknown size), "node:i", sorted; not planned.
  std::vector<std::string> dynamic;
  // Tensor → index in `buffers` (planned tensors only).
  BufferIndex buffer_of;
  // The graph contains GE's flat loop nodes (NextIteration): iterations are
  // not modelled, so the reuse analysis allows no cross-stream sharing.
  bool flat_loops = false;
  // What the buffers' members / uses / loops spans point into (a moved
  // vector keeps its elements where they are).
  BigVector<TensorRef> member_store;
  BigVector<NodeId> use_store;
  BigVector<int32_t> loop_store;
  // What LogicalBuffer::name views: blocks filled up to their capacity, never
  // reallocated (a moved vector keeps its block).
  std::vector<BigVector<char>> name_store;
  std::deque<std::string> pinned_store;  // what LogicalBuffer::pinned views (stable addresses)
};

// Builds the buffers. InvalidArgument naming the node and rule for a bad
// `_ref_input_index` / `_workspace_bytes` / `_parent_output_index` or a size
// that overflows int64.
absl::StatusOr<TensorLifetimes> ComputeTensorLifetimes(const Model& model, int64_t alignment);

// Node types treated as weights (region "constant").
bool IsConstantLike(const Node& node);
// Loop parents whose subgraphs repeat: npuplan/ir/control_flow_types.h (the
// simulator's list too).
using ::npuplan::IsLoopNode;

}  // namespace npuplan::memory

#endif  // NPUPLAN_VERIFY_TENSOR_LIFETIMES_H_
