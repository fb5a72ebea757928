// In-place writes and the memory they share (docs/memory.md, "In-place
// writes"): what the in-place-write-ordering pass orders and what the
// verifier's [in-place-writes] row checks, each with its own search for
// paths. One definition, read by both, as plan/execution_semantics.h is for
// the events; the CPU back end's race check (exec/memory_race_checker.cc)
// judges the same plans from tensor lifetimes, apart from this file.
//
// A node writes its data input j *in place* when one of its outputs has
// `_ref_input_index` j (GE's ref outputs: Assign, AssignAdd, ScatterUpdate
// …), or, for a control-flow owner, when one of its subgraphs writes in place
// the memory of the Data that stands for input j (`_parent_node_index` j).
// Within one graph, an output that *is* an input's memory — a ref output, or
// an owner's output i whose subgraph's NetOutput returns that Data's memory —
// joins the input's tensor in one buffer (as the tensor lifetimes do).
//
// A buffer somebody writes in place is *touched* by each node that reads one
// of its tensors (a write when the node writes that input in place) and by
// each node that produces one of them other than as such an alias (a write).
// A control-flow owner's touch stands for its subgraphs' touches of the
// memory; what follows the owner waits only for the subgraph's *end* (its
// NetOutput, or on the static path its first `_subgraph_end_node`), not for
// every node of it. So the end touches, after every other touch: the buffers
// its NetOutput returns (the root's is read by the host), and in a subgraph
// the buffer of a Data whose parent input is memory written in place in the
// parent's graph (the parent's touch must cover the subgraph's). The other
// pass-on nodes (IsPassOnType: Data, the flat-loop plumbing) touch nothing:
// they forward what another node made.
//
// The rule: every write to such a buffer is ordered with every other touch of
// it by a path in its graph (data and control edges), and every touch comes
// before the buffer's end touches, so that no reader sees a write half done
// and no two writes race, whatever streams the nodes land on. Which of the
// two goes first is the graph's choice where it has a path; where it has
// none, the ordering pass keeps the graph's topological order (as TF's
// automatic control dependencies keep program order), ends last.
//
// Malformed `_ref_input_index` / `_parent_output_index` attributes are
// skipped here: memory planning and the memory verifier reject them, naming
// the node (RefInputIndices / ParentOutputIndices below give their message).
#ifndef NPUPLAN_IR_IN_PLACE_WRITES_H_
#define NPUPLAN_IR_IN_PLACE_WRITES_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"

namespace npuplan {

// `_ref_input_index` of `n`: per output, the input whose memory it is (-1:
// none). An int names output 0's; an int list one entry per output. Errors
// (InvalidArgument, "node '<name>': …") name what is wrong.
absl::StatusOr<std::vector<int64_t>> RefInputIndices(const Node& n);

// Per input of a subgraph's NetOutput `net`, the owner's output it returns
// (-1: none): `_parent_output_index` (an int list: an ONNX Loop body's leading
// condition is -1) when present; none for the cond graph of a While (subgraph
// 0 of a While / _While / StatelessWhile with two subgraphs: its output is the
// predicate); otherwise input k is output k. Errors as RefInputIndices.
absl::StatusOr<std::vector<int64_t>> ParentOutputIndices(const Model& model, const Node& net);

// Data, NetOutput and the flat-loop plumbing (Enter, Exit, Merge, Switch,
// NextIteration and their Ref forms): nodes that forward a tensor without
// computing on it.
bool IsPassOnType(std::string_view type);

// One node's touch of a buffer.
struct InPlaceTouch {
  NodeId node;
  bool writes = false;
  // The graph's end (NetOutput, marked end node): after every other touch,
  // whatever the order says.
  bool end = false;
};

// An owner's touch through its input k (every owner but an FFTS one): its
// subgraphs' nodes that read the Data of input k wait for the producer of
// that input and for the owner's control inputs (ir/owner_control_inputs.h),
// not for its other inputs (docs/events.md, "Dependencies"). So "x before
// the owner's touch" needs a path from x to each such producer (or x is it),
// or x to be or precede a control input of the owner.
struct OwnerEntry {
  NodeId owner;
  NodeId producer;
  int32_t input = 0;  // the owner's input that producer feeds
};

// The buffers of a model that some node writes in place, each with its
// touches (one per node, in node-id order); all touches of a buffer are in
// one graph.
class InPlaceBuffers {
 public:
  static InPlaceBuffers Of(const Model& model);

  size_t size() const { return begin_.empty() ? 0 : begin_.size() - 1; }
  std::span<const InPlaceTouch> touches(size_t b) const {
    return {touches_.data() + begin_[b], touches_.data() + begin_[b + 1]};
  }
  // The owners' touches of buffer b through their inputs, by owner.
  std::span<const OwnerEntry> owner_entries(size_t b) const;
  // The buffer tensor t belongs to, if one of them.
  std::optional<size_t> BufferOf(const OutputRef& t) const;
  // Which inputs `n` writes in place (sorted), when any.
  std::span<const int32_t> written_inputs(NodeId n) const;

 private:
  std::vector<InPlaceTouch> touches_;
  std::vector<size_t> begin_;
  struct Member {
    NodeId node;
    int32_t output;
    size_t buffer;
  };
  std::vector<Member> members_;      // by (node, output)
  std::vector<OwnerEntry> entries_;  // by buffer, then owner, input and producer
  std::vector<size_t> entry_begin_;  // per buffer
  // (node, input) pairs written in place, sorted: the nodes and the inputs.
  std::vector<NodeId> written_nodes_;
  std::vector<int32_t> written_inputs_;
};

// Pairs (a, b), a before b by `rank` (a linear order of each graph's nodes,
// e.g. Node::topo_id) except that end touches come last: paths a ⇝ b for all
// of them order every write of every buffer with every other touch of it,
// and every touch before its end touches (by transitivity: the writes form a
// chain, each other touch sits between two consecutive writes or after the
// last, and an end follows the last write and what came after it). Under any
// order, paths for all pairs imply the rule; under a topological order, the
// rule implies paths for all pairs. Sorted by the rank of b, then of a (the
// pairs into one node together: PathFinder keeps its search), each once.
struct RequiredPath {
  NodeId from, to;
  size_t buffer;
  friend bool operator==(const RequiredPath&, const RequiredPath&) = default;
};
template <typename Rank>
std::vector<RequiredPath> RequiredPaths(const InPlaceBuffers& buffers, Rank rank) {
  std::vector<RequiredPath> pairs;
  std::vector<InPlaceTouch> sorted;
  std::vector<NodeId> since;  // touches after the last write, none writing
  for (size_t b = 0; b < buffers.size(); ++b) {
    const auto t = buffers.touches(b);
    sorted.assign(t.begin(), t.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](const InPlaceTouch& x, const InPlaceTouch& y) {
                       return x.end != y.end ? y.end : rank(x.node) < rank(y.node);
                     });
    since.clear();
    NodeId last_write;
    for (const InPlaceTouch& x : sorted) {
      if (x.end) {  // after everything: the last write, and every touch after it
        if (last_write.valid() && since.empty()) pairs.push_back({last_write, x.node, b});
        for (NodeId s : since) pairs.push_back({s, x.node, b});
      } else if (x.writes) {
        if (last_write.valid() && since.empty()) pairs.push_back({last_write, x.node, b});
        for (NodeId s : since) pairs.push_back({s, x.node, b});
        since.clear();
        last_write = x.node;
      } else {
        if (last_write.valid()) pairs.push_back({last_write, x.node, b});
        since.push_back(x.node);
      }
    }
  }
  auto key = [&rank](const RequiredPath& p) {
    return std::tuple(rank(p.to), p.to, rank(p.from), p.from, p.buffer);
  };
  std::sort(pairs.begin(), pairs.end(),
            [&key](const auto& x, const auto& y) { return key(x) < key(y); });
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

// Whether a path of data and control edges leads from `from` to `to` (same
// graph): a depth-first search backwards from `to`, stopping where it finds
// `from` and never below `from`'s topological position (Node::topo_id). The
// search is kept between queries into the same `to` and resumed, so the
// pairs RequiredPaths lists into one write (its earlier touches) cost one
// search between them, however many there are.
class PathFinder {
 public:
  explicit PathFinder(const Model& model) : model_(model) {}
  // `unbounded`: search below `from`'s position too (an order that edges
  // added into `to` may break; the search into `to` is kept all the same).
  bool Reaches(NodeId from, NodeId to, bool unbounded = false);
  // The caller added the edge from → to: `from`'s ancestors are `to`'s now.
  void AddedEdge(NodeId from, NodeId to);
  const Model& model() const { return model_; }

 private:
  void Restart(NodeId to, int64_t floor);
  void Lower(int64_t floor);  // resume what the old floor held back
  void Visit(NodeId u);

  const Model& model_;
  std::vector<uint32_t> mark_;  // by node: the search that reached it
  uint32_t query_ = 0;
  NodeId to_;                  // the node the search runs from
  GraphId graph_;              // its graph
  int64_t floor_ = 0;          // the search has not gone below this topo id
  std::vector<NodeId> stack_;  // reached, predecessors not yet visited
  std::vector<NodeId> held_;   // reached but below the floor, not marked
};

// When p.to is an owner touching p.buffer through its inputs and p.from
// reaches none of its control inputs: the producer of such an input that
// p.from does not reach (OwnerEntry), else invalid.
NodeId UnorderedOwnerEntry(const InPlaceBuffers& buffers, PathFinder& paths, const RequiredPath& p);

}  // namespace npuplan

#endif  // NPUPLAN_IR_IN_PLACE_WRITES_H_
