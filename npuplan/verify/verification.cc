#include "npuplan/verify/verification.h"

#include <algorithm>
#include <string_view>

#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"

namespace npuplan::verify {

NodeTypes::NodeTypes(const Model& m) : bits_(m.num_nodes(), 0) {
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    PrefetchNode(m, i + kNodePrefetch);
    const Node& n = m.nodes()[i];
    const std::string_view t = n.type;
    uint8_t b = 0;
    if (t == "Send" || t == "SendNotify") b |= kSend;
    if (t == "Recv" || t == "RecvNotify") b |= kRecv;
    if (t == "SendNotify" || t == "RecvNotify") b |= kNotify;
    if (t == "Enter" || t == "RefEnter") b |= kEnter;
    if (t == "StreamSwitch") b |= kStreamSwitch;
    if (t == "StreamActive") b |= kStreamActive;
    if ((b & (kEnter | kStreamSwitch)) != 0 || t == "NextIteration" || t == "LoopCond") {
      b |= kLoopMarker;
    }
    if ((b & (kSend | kRecv)) != 0) {
      if (auto id = GetIntAttr(n.attrs, (b & kNotify) != 0 ? "notify_id" : "event_id")) {
        b |= kSyncId;
        id_nodes_.push_back(static_cast<int32_t>(i));
        ids_.push_back(*id);
      }
    }
    bits_[i] = b;
    all_ |= b;
  }
}

SyncNodeIndex::SyncNodeIndex(const Plan& plan, const NodeTypes& types) {
  if (!Has(plan.established, IrProperty::kSyncNodes)) return;
  const Model& m = plan.model;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    PrefetchNode(m, i + kNodePrefetch);
    const NodeId id(static_cast<int32_t>(i));
    const Node& n = m.nodes()[i];
    if (types.is(id, NodeTypes::kSend) && n.control_inputs.size() == 1) {
      if (auto sid = types.sync_id(id))
        send_.push_back({{n.control_inputs[0].value, *sid, types.is(id, NodeTypes::kNotify)}, id});
    }
    for (NodeId c : n.control_inputs) {
      if (!types.is(c, NodeTypes::kRecv)) continue;
      if (auto sid = types.sync_id(c))
        recv_.push_back({{id.value, *sid, types.is(c, NodeTypes::kNotify)}, c});
    }
  }
  Finish(send_);
  Finish(recv_);
}

void SyncNodeIndex::Finish(std::vector<Entry>& table) {
  std::stable_sort(table.begin(), table.end(),
                   [](const Entry& a, const Entry& b) { return a.first < b.first; });
  // Keep the last of each run of equal keys: shift it over the run's first.
  size_t out = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    if (i + 1 < table.size() && table[i + 1].first == table[i].first) continue;
    table[out++] = table[i];
  }
  table.resize(out);
}

NodeId SyncNodeIndex::Find(const std::vector<Entry>& table, const Key& key) {
  auto it = std::lower_bound(table.begin(), table.end(), key,
                             [](const Entry& e, const Key& k) { return e.first < k; });
  return it != table.end() && it->first == key ? it->second : NodeId();
}

std::pair<int32_t, int32_t> SyncNodeIndex::EventSlots(const SyncView& view, const SyncEvent& e,
                                                      int32_t record) const {
  const bool notify = e.kind == SyncKind::kNotify;
  int32_t from = record, to = view.slot(e.recv, e.recv_attached);
  if (const NodeId sn = Send({e.send.value, e.id, notify}); sn.valid()) from = view.slot(sn, -1);
  if (const NodeId rn = Recv({e.recv.value, e.id, notify}); rn.valid()) to = view.slot(rn, -1);
  return {from, to};
}

std::vector<std::pair<int32_t, int32_t>> ActivationEdges(const SyncView& view,
                                                         const ActivationInfo& act) {
  std::vector<std::pair<int32_t, int32_t>> out;
  for (const auto& [a, streams] : act.activated) {
    const int32_t from = view.slot(NodeId(a), -1);
    if (view.stream(from) < 0) continue;
    for (int64_t s : streams) {
      const int32_t to = view.FirstSlotAfter(s, NodeId(a));
      if (to >= 0 && view.stream(to) != view.stream(from)) out.emplace_back(from, to);
    }
  }
  return out;
}

Verification::Verification(const Plan& plan) : plan_(plan) {}
Verification::~Verification() = default;

const SyncView& Verification::View(bool physical) {
  std::unique_ptr<SyncView>& v = view_[physical ? 1 : 0];
  if (v == nullptr) v = std::make_unique<SyncView>(plan_, physical);
  return *v;
}

const ActivationInfo& Verification::Activation(bool physical) {
  std::unique_ptr<ActivationInfo>& a = activation_[physical ? 1 : 0];
  if (a == nullptr) {
    a = std::make_unique<ActivationInfo>(ComputeActivation(
        plan_.model, View(physical), physical ? &plan_.streams.split_to_logical : nullptr));
  }
  return *a;
}

const NodeTypes& Verification::Types() {
  if (!types_) types_.emplace(plan_.model);
  return *types_;
}

const SyncNodeIndex& Verification::SyncNodes() {
  if (!sync_nodes_) sync_nodes_.emplace(plan_, Types());
  return *sync_nodes_;
}

const std::vector<bool>& Verification::DynamicGraphs() {
  if (!dynamic_graphs_) dynamic_graphs_ = DynamicPathGraphs(plan_);
  return *dynamic_graphs_;
}

}  // namespace npuplan::verify
