// One run of the verifier over a plan (verify::VerifyPlan): the plan, and
// what several of the run's checks recompute from it, each built on first
// use and then shared by the checks that need the same thing. At 1M nodes an
// execution view is a sequential pass over every Node plus its per-stream
// lists; building it once per run instead of once per check is most of what
// sharing saves (docs/architecture.md, the verifier).
//
// Sharing stays inside the verifier: everything here is recomputed from the
// plan by the verifier's own code or by the definitions shared with the
// passes (sync_verifier.h, "Independence") — nothing comes from a pass or
// from what the plan says about itself — and a check that is called alone
// builds its own Verification.
#ifndef NPUPLAN_VERIFY_VERIFICATION_H_
#define NPUPLAN_VERIFY_VERIFICATION_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "npuplan/plan/plan.h"

namespace npuplan {
class SyncView;         // plan/execution_view.h
struct ActivationInfo;  // plan/execution_semantics.h
}  // namespace npuplan

namespace npuplan::verify {

// Per node, the type facts checks test on every node or control edge, and a
// Send/Recv node's id, from one sequential pass over the nodes: those tests
// then read no Node.
class NodeTypes {
 public:
  enum Bit : uint8_t {
    kSend = 1,            // Send or SendNotify
    kRecv = 2,            // Recv or RecvNotify
    kNotify = 4,          // SendNotify or RecvNotify
    kSyncId = 8,          // a Send/Recv node whose event_id (Notify kinds: notify_id) is an int
    kLoopMarker = 16,     // StreamSwitch, Enter, RefEnter, NextIteration or LoopCond
    kEnter = 32,          // Enter or RefEnter
    kStreamSwitch = 64,   // StreamSwitch
    kStreamActive = 128,  // StreamActive
  };
  NodeTypes() = default;
  explicit NodeTypes(const Model& m);
  bool is(NodeId n, uint8_t bits) const { return (bits_[n.index()] & bits) != 0; }
  // A Send or Recv node (IsSyncNode).
  bool sync(NodeId n) const { return is(n, kSend | kRecv); }
  // A Send/Recv node's id attribute (GetIntAttr of event_id / notify_id).
  std::optional<int64_t> sync_id(NodeId n) const {
    if (!is(n, kSyncId)) return std::nullopt;
    const auto it = std::lower_bound(id_nodes_.begin(), id_nodes_.end(), n.value);
    return ids_[static_cast<size_t>(it - id_nodes_.begin())];
  }
  // Some node has one of `bits`.
  bool any(uint8_t bits) const { return (all_ & bits) != 0; }

 private:
  std::vector<uint8_t> bits_;
  // The kSyncId nodes, ascending, and their ids: a few per thousand nodes,
  // where an id per node was megabytes of fresh memory at 1M nodes.
  std::vector<int32_t> id_nodes_;
  std::vector<int64_t> ids_;
  uint8_t all_ = 0;
};

// The Send and Recv nodes of a materialised plan (sync-nodes established),
// by the node they serve: a Send (Send / SendNotify with exactly one control
// input and its `event_id` / `notify_id`) under (its control input, id,
// notify); a Recv (Recv / RecvNotify with its id) under (each node it is a
// control input of, id, notify). When several nodes claim one key the last
// one in node order (then control-input order) counts, as a map assigned in
// that order would keep. One sorted table per side, looked up by binary
// search.
class SyncNodeIndex {
 public:
  using Key = std::tuple<int32_t, int64_t, bool>;  // (computing node, id, notify)
  SyncNodeIndex() = default;
  // Empty unless the plan claims sync-nodes; `types` of the plan's model.
  SyncNodeIndex(const Plan& plan, const NodeTypes& types);
  // The Send / Recv node of `key`; invalid when there is none.
  NodeId Send(const Key& key) const { return Find(send_, key); }
  NodeId Recv(const Key& key) const { return Find(recv_, key); }
  size_t num_sends() const { return send_.size(); }
  // The slots where event `e` is recorded and awaited: its Send / Recv
  // node's once they exist, else `record` (where the sender records it) and
  // the receiver's slot.
  std::pair<int32_t, int32_t> EventSlots(const SyncView& view, const SyncEvent& e,
                                         int32_t record) const;
  size_t num_recvs() const { return recv_.size(); }

 private:
  using Entry = std::pair<Key, NodeId>;
  static NodeId Find(const std::vector<Entry>& table, const Key& key);
  // Sorts by key and keeps the last entry of each key (entries arrive in node order).
  static void Finish(std::vector<Entry>& table);
  std::vector<Entry> send_, recv_;
};

// Stream activation as order edges (from, to): an activator's slot before
// the first slot after it of each stream it activates (its own excepted).
std::vector<std::pair<int32_t, int32_t>> ActivationEdges(const SyncView& view,
                                                         const ActivationInfo& act);

class Verification {
 public:
  explicit Verification(const Plan& plan);
  ~Verification();
  Verification(const Verification&) = delete;
  Verification& operator=(const Verification&) = delete;

  const Plan& plan() const { return plan_; }
  // SyncView(plan, physical): physical streams (after the split) or logical ones.
  const SyncView& View(bool physical);
  // ComputeActivation over View(physical); physical: with the plan's
  // split_to_logical (each logical stream stands for its pieces).
  const ActivationInfo& Activation(bool physical);
  // NodeTypes of the plan's model.
  const NodeTypes& Types();
  // The plan's Send / Recv nodes (SyncNodeIndex).
  const SyncNodeIndex& SyncNodes();
  // DynamicPathGraphs(plan) (execution_semantics.h).
  const std::vector<bool>& DynamicGraphs();

 private:
  const Plan& plan_;
  std::unique_ptr<SyncView> view_[2];              // [physical]
  std::unique_ptr<ActivationInfo> activation_[2];  // [physical]
  std::optional<NodeTypes> types_;
  std::optional<SyncNodeIndex> sync_nodes_;
  std::optional<std::vector<bool>> dynamic_graphs_;
};

}  // namespace npuplan::verify

#endif  // NPUPLAN_VERIFY_VERIFICATION_H_
