// The execution view of a plan, shared by the events passes and the verifier
// (npuplan/verify/): one global execution order over every graph, and the
// per-stream order of "slots". An index of the plan, no decision: what the
// order means (activation, the dynamic path, …) is execution_semantics.h.
//
// Execution order: the root graph's nodes in topological order, each node
// followed immediately by the nodes of its subgraphs (pre-order, subgraph
// index order) — GE's whole-graph node order, in which `Node::topo_id`-style
// ids grow. A stream executes its slots in this order.
//
// A slot is one stream's share of a node: its main stream (slot id = NodeId)
// or one of its attached streams (ids after the nodes). Events connect slots.
//
//   seq:     0    1    2(f)  3(f/then) 4(f/then) 5
//   s0:      a         f                         o
//   s1:           b          t1
//   s2 (att):                           t1'
#ifndef NPUPLAN_PLAN_EXECUTION_VIEW_H_
#define NPUPLAN_PLAN_EXECUTION_VIEW_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/ir/node_prefetch.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/plan.h"
#include "npuplan/support/big_vector.h"

namespace npuplan {

class SyncView {
 public:
  // `physical`: streams from plan.physical_stream / streams.attached_physical
  // (after the split); otherwise the logical Node::stream_id / attached ids.
  // One sequential pass over the nodes; per-node arrays are 32-bit
  // BigVectors, and the attached-slot arrays exist only when some node
  // has attached streams (rank = seq, slot_order = order otherwise).
  //
  // `stream_order` = false builds only what sync-event-insertion reads
  // (execution order, seq, streams, flags, attached slots): no slot order,
  // ranks, positions or per-stream slot lists (those accessors are empty),
  // so its first pass over a fresh graph faults in less memory. With one
  // graph the order is the root's node list itself (no copy), and when that
  // list is 0..n-1 seq(n) = n (no array).
  //
  // `name_prefixes` also keeps each node's first 8 name bytes (big-endian,
  // zero-padded) from the same pass, for SortSendersByName: insertion's
  // sender ranking then reads no Node (the name shares the lines this pass
  // reads anyway). TakeNamePrefixes() hands the array over.
  SyncView(const Plan& plan, bool physical, bool stream_order = true, bool name_prefixes = false);

  size_t num_nodes() const { return num_nodes_; }
  size_t num_slots() const { return stream_.size(); }
  int32_t slot(NodeId n, int32_t attached) const {
    return attached < 0 ? n.value
                        : static_cast<int32_t>(num_nodes() + attached_begin_[n.index()] + attached);
  }
  int32_t num_attached(NodeId n) const {
    return attached_begin_.empty() ? 0
                                   : attached_begin_[n.index() + 1] - attached_begin_[n.index()];
  }
  bool any_attached() const { return !attached_begin_.empty(); }
  NodeId node_of(int32_t slot) const {
    return slot < static_cast<int32_t>(num_nodes()) ? NodeId(slot)
                                                    : extra_node_[slot - num_nodes()];
  }
  int32_t attached_of(int32_t slot) const {
    return slot < static_cast<int32_t>(num_nodes()) ? -1 : extra_attached_[slot - num_nodes()];
  }
  int64_t stream(int32_t slot) const { return stream_[slot]; }
  void PrefetchStream(int32_t slot) const { __builtin_prefetch(&stream_[slot]); }
  int32_t pos(int32_t slot) const { return pos_[slot]; }
  int64_t seq(NodeId n) const { return seq_.empty() ? n.value : seq_[n.index()]; }
  int64_t seq_of_slot(int32_t slot) const { return seq(node_of(slot)); }
  int64_t num_streams() const {
    return stream_slot_begin_.empty() ? 0 : static_cast<int64_t>(stream_slot_begin_.size()) - 1;
  }
  std::span<const NodeId> order() const { return order_; }
  // Stream s's slots in execution order (all streams' lists share one block).
  std::span<const int32_t> stream_slots(int64_t s) const {
    return {stream_slot_data_.data() + stream_slot_begin_[s],
            stream_slot_data_.data() + stream_slot_begin_[s + 1]};
  }
  // Slots in execution order (per node: main, then attached in list order).
  // Without attached streams that is order() itself (no copy).
  class SlotOrder {
   public:
    struct iterator {
      const SlotOrder* seq;
      size_t i;
      int32_t operator*() const { return (*seq)[i]; }
      iterator& operator++() {
        ++i;
        return *this;
      }
      bool operator==(const iterator& o) const { return i == o.i; }
    };
    SlotOrder(std::span<const NodeId> nodes, std::span<const int32_t> slots)
        : nodes_(nodes), slots_(slots) {}
    size_t size() const { return slots_.empty() ? nodes_.size() : slots_.size(); }
    int32_t operator[](size_t i) const { return slots_.empty() ? nodes_[i].value : slots_[i]; }
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size()}; }

   private:
    std::span<const NodeId> nodes_;
    std::span<const int32_t> slots_;  // empty: the nodes are the slots
  };
  SlotOrder slot_order() const { return SlotOrder(order_, slot_order_); }
  // Rank of a slot in slot_order() (-1 = the node is in no graph's order).
  int32_t rank(int32_t slot) const {
    return rank_.empty() ? static_cast<int32_t>(seq(NodeId(slot))) : rank_[slot];
  }
  // Per node, from the same pass: a few type/attribute facts the events
  // passes test for every node or event, so they need not read the Node.
  enum NodeFlag : uint8_t {
    kHasAttrs = 1,
    kStreamSwitch = 2,
    kEnter = 4,  // Enter or RefEnter
    kSync = 8,   // Send, Recv, SendNotify or RecvNotify (IsSyncNode)
  };
  bool has_flag(NodeId n, NodeFlag f) const { return (flags_[n.index()] & f) != 0; }
  // True when some node has flag f.
  bool any_flag(NodeFlag f) const { return (all_flags_ & f) != 0; }
  // Per-slot stream and rank in one 8-byte entry (one cache line per lookup
  // for the reductions' random accesses).
  struct StreamRank {
    int32_t stream;
    int32_t rank;
  };
  BigVector<StreamRank> StreamRanks() const;
  // The name prefixes (empty unless asked for), moved out.
  BigVector<uint64_t> TakeNamePrefixes() { return std::move(name_prefix_); }
  // First slot of stream s whose node comes after node a in execution order; -1 if none.
  int32_t FirstSlotAfter(int64_t s, NodeId a) const;

 private:
  size_t num_nodes_ = 0;
  std::span<const NodeId> order_;  // order_storage_, or the root graph's node list
  BigVector<NodeId> order_storage_;
  BigVector<int32_t> seq_;             // empty: seq(n) = n
  BigVector<int32_t> attached_begin_;  // empty: no node has attached streams
  std::vector<NodeId> extra_node_;
  std::vector<int32_t> extra_attached_;
  BigVector<int32_t> stream_;
  BigVector<uint8_t> flags_;
  uint8_t all_flags_ = 0;
  BigVector<uint64_t> name_prefix_;
  BigVector<int32_t> pos_;
  BigVector<int32_t> rank_;              // empty: rank = seq
  BigVector<int32_t> slot_order_;        // empty without attached slots (order_ is the slot order)
  BigVector<int32_t> stream_slot_data_;  // every stream's slots, stream by stream
  std::vector<size_t>
      stream_slot_begin_;  // stream s: [begin[s], begin[s + 1]) of stream_slot_data_
};

// ComputeActivation (execution_semantics.h) over view.order(), reading only
// the Nodes that have attributes (every activation rule is an attribute).
ActivationInfo ComputeActivation(const Model& model, const SyncView& view,
                                 const std::map<int64_t, int64_t>* split_to_logical = nullptr);

// The first 8 bytes of a name, zero-padded, as a big-endian integer: integer
// order is the names' byte order on those bytes (std::string::compare order
// when they differ). SyncView keeps them per node on request (GE's sender
// order sorts by name).
uint64_t NamePrefix(const std::string& name);
// The same for the name's bytes [offset, offset + 8) (zero-padded past its
// end): names with equal earlier bytes order as these integers do, when they differ.
uint64_t NamePrefixAt(const std::string& name, size_t offset);

// Where the Send of an event sent from slot (owner, attached) runs. A Send
// node follows its owner in its graph, so in execution order it comes after
// the owner's subgraphs: for an owner with subgraphs that is the last slot of
// the owner's subtree on the same logical stream (by rank), whose stream is
// the piece of a physically split stream that is current when the Send runs;
// otherwise (and when the subtree has no slot on that stream) the owner's slot.
// A split event's Send closes its sender's piece: always the sender's slot.
// The physical split counts the record task there, sync-node-generation puts
// the Send on that slot's stream, and the sync-nodes and physical-streams
// verifiers expect it there (today a parent sends only subgraph-entry
// events). Memoised per slot: build one per view.
class SendSlots {
 public:
  SendSlots(const Model& model, const SyncView& view) : model_(model), view_(view) {}
  int32_t operator()(NodeId owner, int32_t attached);
  int32_t ForEvent(const SyncEvent& e) {
    return e.reason == SyncReason::kSplit ? view_.slot(e.send, e.send_attached)
                                          : (*this)(e.send, e.send_attached);
  }

 private:
  const Model& model_;
  const SyncView& view_;
  std::map<int32_t, int32_t> memo_;
};

// Where an event is recorded, as the slot whose completion the record follows.
// Usually the sender's own slot. GE's dynamic executor runs a node's subgraphs
// as part of the node — its waits come before them, its records after them —
// so a dynamic-path event (OnDynamicPath) whose sender owns subgraphs is
// recorded at the sender's completion: the last slot of its subtree on its
// own stream (SendSlots).
//
//   root:  x ─► P(If, s0) ─► y(s1)        event P→y (P carries its id) is
//   then:  Data(s0) ─► t(s1) ─► NetOutput(s0)   recorded after then/else's NetOutput
class RecordSlots {
 public:
  RecordSlots(const Plan& plan, const SyncView& view);
  int32_t ForEvent(const SyncEvent& e);

 private:
  const Plan& plan_;
  const SyncView& view_;
  std::vector<bool> dynamic_graphs_;
  bool any_dynamic_ = false;
  SendSlots send_slots_;
};

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_EXECUTION_VIEW_H_
