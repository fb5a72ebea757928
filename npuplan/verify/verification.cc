#include "npuplan/verify/verification.h"

#include <algorithm>

#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"

namespace npuplan::verify {

SyncNodeIndex::SyncNodeIndex(const Plan& plan) {
  if (!Has(plan.established, IrProperty::kSyncNodes)) return;
  const Model& m = plan.model;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    PrefetchNode(m, i + kNodePrefetch);
    const Node& n = m.nodes()[i];
    const bool notify = n.type == "SendNotify" || n.type == "RecvNotify";
    if ((n.type == "Send" || n.type == "SendNotify") && n.control_inputs.size() == 1) {
      if (auto id = GetIntAttr(n.attrs, notify ? "notify_id" : "event_id"))
        send_.push_back(
            {{n.control_inputs[0].value, *id, notify}, NodeId(static_cast<int32_t>(i))});
    }
    for (NodeId c : n.control_inputs) {
      const Node& r = m.node(c);
      const bool rn = r.type == "RecvNotify";
      if (r.type != "Recv" && !rn) continue;
      if (auto id = GetIntAttr(r.attrs, rn ? "notify_id" : "event_id"))
        recv_.push_back({{static_cast<int32_t>(i), *id, rn}, c});
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

const SyncNodeIndex& Verification::SyncNodes() {
  if (!sync_nodes_) sync_nodes_.emplace(plan_);
  return *sync_nodes_;
}

const std::vector<bool>& Verification::DynamicGraphs() {
  if (!dynamic_graphs_) dynamic_graphs_ = DynamicPathGraphs(plan_);
  return *dynamic_graphs_;
}

}  // namespace npuplan::verify
