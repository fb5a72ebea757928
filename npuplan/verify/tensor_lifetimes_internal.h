// The tensor-lifetimes builder (ComputeTensorLifetimes, tensor_lifetimes.h)
// shared by its two files: tensor_lifetimes.cc (the graph's tensors, aliases,
// consumers and per-node facts) and lifetime_buffers.cc (grouping them into
// buffers, their lifetimes and order). Not an API.
#ifndef NPUPLAN_VERIFY_TENSOR_LIFETIMES_INTERNAL_H_
#define NPUPLAN_VERIFY_TENSOR_LIFETIMES_INTERNAL_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/union_find.h"
#include "npuplan/verify/tensor_lifetimes.h"

namespace npuplan::memory::lifetimes_internal {

inline absl::Status Bad(const Node& n, std::string_view rule) {
  return absl::InvalidArgumentError(StrCat("memory: node '", n.name, "': ", rule));
}

// Rounds `bytes` up to a multiple of `alignment`; nullopt on overflow.
inline std::optional<int64_t> AlignUp(int64_t bytes, int64_t alignment) {
  if (bytes > std::numeric_limits<int64_t>::max() - (alignment - 1)) return std::nullopt;
  return (bytes + alignment - 1) / alignment * alignment;
}

// The state ComputeTensorLifetimes' steps share; each step is one member function.
class LifetimeBuilder {
 public:
  LifetimeBuilder(const Model& model, int64_t alignment, TensorLifetimes& lt)
      : model_(model), alignment_(alignment), n_(model.num_nodes()), lt_(lt), uf_(0) {}

  // In this order.
  void OrderNodes();
  void FindLoops();
  absl::Status WalkNodes();
  absl::Status AliasTensors();
  void CollectConsumers();
  absl::Status GroupBuffers();
  void SortBuffers();

 private:
  int TensorIndex(NodeId node, int32_t out) const { return first_tensor_[node.index()] + out; }
  const std::vector<NodeId>& LoopSpan(NodeId loop);
  // Where one buffer's members / uses / loops start in lt_'s storage while
  // the storage still grows. Buffers append to each store in the order they
  // are made, so a range ends where the next buffer's begins; GroupBuffers
  // turns them into the spans.
  // 32-bit (the stores are indexed by int elsewhere): a million of these
  // are fresh pages while the buffers are made.
  struct Ranges {
    uint32_t member_begin = 0, use_begin = 0, loop_begin = 0;
  };

  absl::Status AddBuffer(int root, std::span<const int> members);
  int8_t RegionRank(std::span<const int> members) const;
  bool ScopeLoops(LogicalBuffer& b, const Ranges& r, const std::vector<int32_t>& touch) const;
  void SetLifetime(LogicalBuffer& b, const Ranges& r, const std::vector<int32_t>& touch,
                   bool iteration_local);

  const Model& model_;
  const int64_t alignment_;
  const size_t n_;
  TensorLifetimes& lt_;
  // What AddBuffer reads of the nodes a buffer touches, one compact entry
  // per node: its consumers are nodes anywhere in the graph, and a miss on
  // this array is cheaper than one on the full Node.
  enum NodeFlag : uint8_t {
    kStreamed = 1,       // stream_id >= 0
    kAttached = 2,       // has attached streams
    kNetOutput = 4,      // type NetOutput
    kRootGraph = 8,      // in the root graph
    kForwardsOnly = 16,  // subgraphs, Data or constant-like: a streamless one adds no use
    kConstantLike = 32,  // IsConstantLike
    kData = 64,          // type Data
  };
  struct NodeFacts {
    int32_t position = -1;  // in the plan order (-1: not in it)
    int32_t loop = -1;      // loop_of_graph_ of its graph (NodeId value, -1 none)
    uint8_t flags = 0;
  };
  BigVector<NodeFacts> facts_;
  BigVector<TensorRef> tensors_;
  // Per output tensor: ByteSize (-1: unknown), read in node order.
  BigVector<int64_t> tensor_bytes_;
  BigVector<int64_t> ws_bytes_;
  BigVector<int> first_tensor_;
  int num_outputs_ = 0;
  UnionFind uf_;
  // The nodes' data inputs, copied by WalkNodes: node i's are
  // edges_[edge_begin_[i] .. [i + 1]).
  BigVector<int64_t> edge_begin_;
  BigVector<OutputRef> edges_;
  // Nodes that may alias tensors (see AliasTensors), in node order.
  std::vector<NodeId> aliasing_;
  // Consumers of each output tensor t: consumers_[consumer_begin_[t] ..[t + 1]).
  BigVector<int32_t> consumer_begin_;
  BigVector<NodeId> consumers_;
  std::vector<int32_t> touch_;  // per buffer, reused
  bool has_loops_ = false;      // some node is a loop (IsLoopNode)
  std::vector<NodeId> loop_of_graph_;
  std::map<int32_t, std::vector<NodeId>> loop_nodes_;
  BigVector<LogicalBuffer> buffers_;
  // Parallel to buffers_ while GroupBuffers makes them, unless direct_spans_.
  BigVector<Ranges> ranges_;
  bool direct_spans_ = false;  // AddBuffer sets the spans (see GroupBuffers)
};

}  // namespace npuplan::memory::lifetimes_internal

#endif  // NPUPLAN_VERIFY_TENSOR_LIFETIMES_INTERNAL_H_
