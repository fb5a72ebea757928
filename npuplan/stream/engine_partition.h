// Engine subgraphs (SPEC S1; GE's EnginePartitioner, ge-reference §2.6).
//
// Logical stream allocation works on engine subgraphs, not on single nodes:
// maximal groups of nodes of one graph with one engine and one stream label
// that can be merged without creating a cycle. The graph itself is not
// changed (SPEC G5): GE materialises End/PlaceHolder pairs between the
// subgraphs; we keep the same links as `producers` / `consumers` indices.
//
// Algorithm (GE's MarkClusters): one cluster per node, in topological order;
// Data-like nodes without inputs (Data, RefData, AippData) get the
// pseudo-engine "DATA" and never merge. For each cluster C in index order,
// its input clusters are sorted by ascending out-degree (ties: smaller
// index) and each input P is merged into C when
//   (a) same engine and same effective stream label, or equal non-empty user
//       stream labels (GE's second partitioning), and
//   (b) no second path P → … → C exists besides the direct edge.
// The merged cluster keeps the smaller index. The cycle test uses an
// incrementally maintained topological order (Pearce–Kelly), so each test
// only explores the clusters ranked between P and C, searching from both
// ends at once (a hub's consumers cost their own in-lists, not the hub's
// out-list), after two certificates: reachability labels over 64 landmark
// nodes (a random DAG's long skip edges, whose paths a search finds only
// after reading a share of the graph that grows with it) and a
// spanning-forest one that answers the long paths of layered models in
// O(log n): near-linear in practice. The out-degrees that order the inputs
// come from bounds when those decide, else from a compaction of the list.
// Subgraphs are then numbered in topological order of the cluster graph, ties
// by smallest member topo id.
//
// Effective stream label (ge-reference §2.7, TransUserStreamLabel): the
// node's `_user_stream_label` if set (as `<user>_<inner>` when
// `_enable_inner_parallel` is true and `_stream_label` is set), else its
// `_stream_label`. GE copies the user label into `_stream_label` for every
// node (TransUserStreamLabel) before its engine partitioner clears the user
// label of Data-like nodes without inputs: such a node keeps the copied label
// as its effective label but has no user label (it does not merge by user
// label and is not a user-labelled subgraph). A subgraph's labels are those
// of its first node.
#ifndef NPUPLAN_STREAM_ENGINE_PARTITION_H_
#define NPUPLAN_STREAM_ENGINE_PARTITION_H_

#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/support/big_vector.h"

namespace npuplan::stream {

inline constexpr char kAttrStreamLabel[] = "_stream_label";
inline constexpr char kAttrUserStreamLabel[] = "_user_stream_label";
inline constexpr char kAttrEnableInnerParallel[] = "_enable_inner_parallel";

// A read-only view of consecutive elements owned by an EnginePartition.
template <typename T>
class ConstRange {
 public:
  using value_type = T;
  using const_iterator = const T*;
  using iterator = const T*;
  using size_type = size_t;
  ConstRange() = default;
  ConstRange(const T* begin, const T* end) : begin_(begin), end_(end) {}
  const T* begin() const { return begin_; }
  const T* end() const { return end_; }
  size_t size() const { return static_cast<size_t>(end_ - begin_); }
  bool empty() const { return begin_ == end_; }
  const T& front() const { return *begin_; }
  const T& back() const { return *(end_ - 1); }
  const T& operator[](size_t i) const { return begin_[i]; }

 private:
  const T* begin_ = nullptr;
  const T* end_ = nullptr;
};

// "<graph>_<index>_<engine>", formatted only when a log line is written.
struct EngineSubgraphName {
  const std::string* graph = nullptr;
  int32_t index = 0;
  std::string_view engine;
  std::string str() const;
};

struct EngineSubgraph {
  int32_t index = 0;              // position in topological partition order
  // Views into the partition's own string table (EnginePartition::strings).
  std::string_view engine;             // engine id of the first node
  std::string_view stream_label;       // effective label of the first node ("" = none)
  std::string_view user_stream_label;  // `_user_stream_label` of the first node
  ConstRange<NodeId> nodes;       // members, topological order
  ConstRange<int32_t> producers;  // subgraphs with an edge into this one (GE pld_2_end), ascending
  ConstRange<int32_t> consumers;  // subgraphs this one feeds (GE end_2_pld), ascending
  const std::string* graph_name = nullptr;
  // "<graph>_<index>_<engine>" (logs and messages).
  EngineSubgraphName name() const { return {graph_name, index, engine}; }
};

// The ranges and strings of its subgraphs point into the partition's own
// storage: an EnginePartition can be moved but not copied.
struct EnginePartition {
  EnginePartition() = default;
  EnginePartition(EnginePartition&&) = default;
  EnginePartition& operator=(EnginePartition&&) = default;
  EnginePartition(const EnginePartition&) = delete;
  EnginePartition& operator=(const EnginePartition&) = delete;

  GraphId graph;
  // Huge-page backed: a 1M-node graph can have hundreds of thousands of
  // subgraphs, and fresh 4 KiB pages are the dearest part of writing them.
  BigVector<EngineSubgraph> subgraphs;
  // Engine subgraph of each node of the graph, indexed by the node's topo_id.
  std::vector<int32_t> subgraph_of;
  // Storage of the subgraphs' ranges.
  std::vector<NodeId> member_storage;
  std::vector<int32_t> link_storage;
  std::deque<std::string> strings;  // distinct engines and labels (stable addresses)
  // Cluster-list entries the merge's second-path tests read: the work a
  // hub's consumers cost (tests check it stays linear in the edges).
  int64_t second_path_reads = 0;
  // Topo indices of the nodes with attributes, ascending (the partition's
  // walk reads every node's attributes: later per-node attribute checks
  // visit only these).
  std::vector<int32_t> attr_nodes;
};

// The edges of one graph as topological indices (Node::topo_id), read in the
// partition's walk over the nodes so that later stages need not walk the
// nodes' input vectors again. Per node: its data inputs in anchor order, then
// its control inputs (one entry per input, duplicates kept); its successors:
// data consumers first (by consumer index, then anchor), then control
// consumers (by consumer index) — the order of `Adjacency` (graph.h).
struct GraphEdges {
  BigVector<int32_t> pred_first;     // n + 1 offsets into `preds`
  BigVector<int32_t> preds;
  BigVector<uint8_t> pred_is_control;  // parallel to `preds`
  BigVector<int32_t> succ_first;     // n + 1 offsets into `succs`
  BigVector<int32_t> succs;
  BigVector<uint8_t> succ_is_control;  // parallel to `succs`

  int32_t num_nodes() const { return pred_first.empty() ? 0 : static_cast<int32_t>(pred_first.size()) - 1; }
  ConstRange<int32_t> Preds(int32_t i) const {
    return {preds.data() + pred_first[i], preds.data() + pred_first[i + 1]};
  }
  // Successors: valid after BuildSuccessors() (PartitionByEngine builds them).
  ConstRange<int32_t> Succs(int32_t i) const {
    return {succs.data() + succ_first[i], succs.data() + succ_first[i + 1]};
  }
  // Fills succ_first / succs / succ_is_control from the predecessors.
  void BuildSuccessors();
};

// The effective stream label of a node (see above).
std::string EffectiveStreamLabel(const Node& node);
// True for Data, RefData and AippData nodes without data or control inputs.
bool IsInputDataNode(const Node& node);

// Forms the engine subgraphs of graph `g`. Requires topologically sorted
// graphs (Node::topo_id = position in Graph::nodes) whose inputs are nodes of
// the same graph (the verifier's rule). When `edges` is given, the graph's
// predecessor lists are moved into it, and its successor lists built.
// Graphs of `second_thread_from_nodes` nodes or more get a second thread for
// the work that does not depend on the clusters (on smaller ones its start
// costs more than it saves; tests pass 0 to have it on any graph).
inline constexpr int32_t kPartitionSecondThreadFromNodes = 1 << 15;
EnginePartition PartitionByEngine(
    const Model& model, GraphId g, GraphEdges* edges = nullptr,
    int32_t second_thread_from_nodes = kPartitionSecondThreadFromNodes);

// Tests: runs PartitionByEngine's cluster marking on graph g, checking the
// out-degree bounds it orders parents by against a brute-force count after
// every step; returns how many did not hold (0 when correct).
int64_t OutDegreeBoundFailuresForTesting(const Model& model, GraphId g);

}  // namespace npuplan::stream

template <>
struct fmt::formatter<npuplan::stream::EngineSubgraphName> : fmt::formatter<std::string> {
  template <typename Ctx>
  auto format(const npuplan::stream::EngineSubgraphName& n, Ctx& ctx) const {
    return fmt::formatter<std::string>::format(n.str(), ctx);
  }
};

#endif  // NPUPLAN_STREAM_ENGINE_PARTITION_H_
