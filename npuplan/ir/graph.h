// The graph IR (SPEC G1).
//
// A Model owns every node and every graph. Graph 0 is the root; every other
// graph is a subgraph owned by a parent node (If/While/Case/PartitionedCall …)
// and listed in that node's `subgraphs`, in subgraph-index order. Node ids are
// global across all graphs, so stage results (streams, events, memory) can be
// indexed by NodeId. Each graph keeps its nodes in `Graph::nodes`, in
// topological order once TopologicalSort has run; `Node::topo_id` is the
// position there (continuous from 0 per graph). Names are unique across the
// whole model.
//
// GE conventions kept: a subgraph's Data nodes carry `_parent_node_index`
// (which parent input they stand for); its NetOutput's inputs map, in order, to
// the parent node's outputs.
#ifndef NPUPLAN_IR_GRAPH_H_
#define NPUPLAN_IR_GRAPH_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "npuplan/ir/attribute.h"
#include "npuplan/ir/chunked_store.h"
#include "npuplan/ir/engine_table.h"
#include "npuplan/ir/ids.h"
#include "npuplan/ir/tensor.h"
#include "npuplan/support/big_vector.h"

namespace npuplan {

// A producer's output anchor, as consumed by a data input.
struct OutputRef {
  NodeId node;
  int32_t index = 0;
  friend bool operator==(const OutputRef&, const OutputRef&) = default;
};

struct Node {
  std::string name;
  std::string type;
  std::string engine;
  GraphId graph;         // the graph this node belongs to
  int64_t topo_id = -1;  // position in its graph's topological order
  AttrMap attrs;
  std::vector<OutputRef> inputs;     // data inputs, one per input anchor, in order
  std::vector<NodeId> control_inputs;
  std::vector<TensorDesc> outputs;   // one per output anchor
  std::vector<GraphId> subgraphs;    // owned subgraphs, by subgraph index

  // Stage results. -1 = not assigned.
  int64_t stream_id = -1;                     // logical stream
  std::vector<int64_t> attached_stream_ids;   // attached (secondary) streams
};

// The Model's node table: nodes never move when it grows (chunked_store.h),
// so a `Node&` stays valid across AddNode.
using NodeStore = ChunkedStore<Node>;

struct Graph {
  std::string name;
  GraphId parent_graph;  // invalid for the root
  NodeId parent_node;    // invalid for the root
  AttrMap attrs;
  std::vector<NodeId> nodes;
  bool IsRoot() const { return !parent_node.valid(); }
};

class Model {
 public:
  // Session options (GE option names → values); the CLI's --option overrides them.
  std::map<std::string, std::string> options;
  // The graph file's own "engines" section (written back as is).
  std::map<std::string, EngineConfig> engine_overrides;
  // Effective engine table: built-in, then --engines FILE, then engine_overrides.
  EngineTable engine_table = EngineTable::Default();

  Model();  // creates an empty root graph

  const std::string& name() const { return graphs_[0].name; }
  void set_name(std::string name) { graphs_[0].name = std::move(name); }

  Graph& root() { return graphs_[0]; }
  const Graph& root() const { return graphs_[0]; }
  Graph& graph(GraphId id) { return graphs_[id.index()]; }
  const Graph& graph(GraphId id) const { return graphs_[id.index()]; }
  Node& node(NodeId id) { return nodes_[id.index()]; }
  const Node& node(NodeId id) const { return nodes_[id.index()]; }
  size_t num_nodes() const { return nodes_.size(); }
  size_t num_graphs() const { return graphs_.size(); }
  const NodeStore& nodes() const { return nodes_; }
  const std::vector<Graph>& graphs() const { return graphs_; }

  // Adds a node to graph `g` (appended to its node list). The name must be new.
  NodeId AddNode(GraphId g, Node node);
  // Bulk creation, for a caller that adds many nodes at once: like AddNode,
  // but the name enters the name index only at the next IndexDeferredNodes(),
  // together with the other deferred names, in slot order (sequential probes
  // of the index instead of one random probe per node, which showed in
  // profiles of the partition's new nodes). Until then FindNode does
  // not see the deferred names, and RenameNode must not be called on them.
  // IndexDeferredNodes checks that every name is new (as AddNode does).
  NodeId AddNodeDeferred(GraphId g, Node node);
  void IndexDeferredNodes();
  // Capacity for `nodes` nodes in all (readers that know the count up front):
  // allocates the node chunks and sizes the name index.
  void Reserve(size_t nodes);
  // Adds a subgraph owned by `parent` (appended to parent's subgraph list).
  GraphId AddSubgraph(NodeId parent, std::string name);
  // Adds a graph with no owner yet (the reader links owners afterwards).
  GraphId AddDetachedGraph(std::string name);
  // Node by name, or an invalid id.
  NodeId FindNode(std::string_view name) const;
  // Graph by name, or an invalid id.
  GraphId FindGraph(std::string_view name) const;
  // Renames a node, keeping the name index current.
  void RenameNode(NodeId id, std::string name);

  // Graphs in pre-order: root, then each node's subgraphs (in node order,
  // subgraph-index order), recursively. The order every "all graphs" walk uses.
  std::vector<GraphId> GraphsPreOrder() const;
  // Nesting depth of graph g (root = 0).
  int Depth(GraphId g) const;
  // Every node in GE's whole-graph execution order: the root's nodes in
  // topological order, each followed at once by its subgraphs' nodes
  // (recursively, subgraph-index order). Events, memory and the simulator
  // all order work by this.
  std::vector<NodeId> ExecutionOrder() const;

 private:
  NodeStore nodes_;
  std::vector<Graph> graphs_;
  // Node name index: open addressing with linear probing over (hash, id)
  // slots, at most half full; a probe compares names only on a hash match.
  // No allocation per node (an unordered_map<std::string, NodeId> allocated
  // a hash node and a copy of every name longer than 15 characters), and a
  // model copy copies one flat array.
  struct NameSlot {
    uint32_t hash = 0;
    int32_t id = kEmptySlot;  // kEmptySlot, kErasedSlot or a node index
  };
  static constexpr int32_t kEmptySlot = -1;
  static constexpr int32_t kErasedSlot = -2;
  // The slot holding `name`, else the empty slot that ends its probe sequence.
  size_t NameSlotFor(std::string_view name, uint32_t hash) const;
  void GrowNameIndex(size_t entries);
  // BigVector: at 1M nodes the table has millions of slots; huge pages make
  // its growth (a fresh array) fault in 2 MiB at a time and its random probes
  // cheap on the TLB (NameSlotFor and the rehash showed in partition profiles).
  BigVector<NameSlot> name_slots_;  // size: 0 or a power of two
  size_t name_slots_used_ = 0;        // ids and erased slots
  std::vector<NameSlot> deferred_names_;  // (hash, id) added by AddNodeDeferred, not indexed yet
  // Heterogeneous lookup: FindGraph(string_view) does not build a std::string.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, GraphId, NameHash, std::equal_to<>> graph_index_;
};

// Successor lists (data and control) of every node, built once from the
// inputs; data successors first in (consumer topo, anchor) order.
struct Adjacency {
  std::vector<uint32_t> offsets;  // CSR over NodeId
  std::vector<NodeId> succ;
  std::vector<uint8_t> is_control;  // parallel to succ
  explicit Adjacency(const Model& model);
  size_t begin(NodeId n) const { return offsets[n.index()]; }
  size_t end(NodeId n) const { return offsets[n.index() + 1]; }
};

}  // namespace npuplan

#endif  // NPUPLAN_IR_GRAPH_H_
