#include "npuplan/events/sync_node_generation.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "npuplan/events/sync_view.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

}  // namespace

absl::StatusOr<bool> SyncNodeGeneration::Run(Plan& plan, PassContext& ctx) {
  if (Has(plan.established, IrProperty::kSyncNodes)) {
    return absl::FailedPreconditionError(StrCat("[", name(), "] Send/Recv nodes were already generated"));
  }
  plan.EnsureNodeVectors();
  Model& m = plan.model;
  const bool physical = Has(plan.established, IrProperty::kPhysicalStreams);
  events::SyncView view(plan, physical);
  const size_t original = m.num_nodes();
  // Events per node, in id order.
  std::vector<size_t> by_id(plan.events.events.size());
  for (size_t i = 0; i < by_id.size(); ++i) by_id[i] = i;
  std::stable_sort(by_id.begin(), by_id.end(), [&](size_t a, size_t b) {
    const SyncEvent& x = plan.events.events[a];
    const SyncEvent& y = plan.events.events[b];
    return x.kind != y.kind ? x.kind < y.kind : x.id < y.id;
  });
  // The Send/Recv nodes placed around their owners, in creation order: a
  // few per event, where two per-node list arrays cost a million empty
  // vectors (and their pages) on a large graph.
  struct Placed {
    int32_t owner;
    uint8_t after;        // 0: a Recv right before its owner; 1: a Send right after
    uint8_t split_order;  // within one side: split ones first before, last after
    NodeId id;
  };
  std::vector<Placed> placed;
  // The first free "<base>_Reuse_<k>" (k from 1); a shared device id gives
  // many Send/Recv nodes one base, so each base remembers where it stopped
  // (every name below it is taken: the same names as a search from 1).
  std::map<std::string, int> next_reuse;
  auto unique_name = [&](std::string base) {
    if (!m.FindNode(base).valid()) return base;
    int& k = next_reuse.try_emplace(base, 1).first->second;
    for (;; ++k) {
      std::string n = StrCat(base, "_Reuse_", k);
      if (!m.FindNode(n).valid()) return n;
    }
  };
  auto logical_of_slot = [&](NodeId n, int32_t attached) {
    const Node& node = m.node(n);
    return attached < 0 ? node.stream_id : node.attached_stream_ids[attached];
  };
  events::SendSlots send_slot(m, view);
  int64_t sends = 0, recvs = 0, attr_events = 0;
  const std::vector<bool> dynamic_graphs = events::DynamicPathGraphs(plan);
  std::map<int32_t, std::vector<int64_t>> send_ids, recv_ids;  // dynamic path: node → ids
  for (size_t i : by_id) {
    const SyncEvent e = plan.events.events[i];
    if (events::OnDynamicPath(plan, dynamic_graphs, e)) {
      send_ids[events::DynamicAttrNode(m, e.send, e.recv).value].push_back(e.id);
      recv_ids[e.recv.value].push_back(e.id);
      ++attr_events;
      continue;
    }
    const bool notify = e.kind == SyncKind::kNotify;
    const std::string id_attr = notify ? "notify_id" : "event_id";
    for (int side = 0; side < 2; ++side) {
      const bool send = side == 0;
      NodeId owner = send ? e.send : e.recv;
      int32_t attached = send ? e.send_attached : e.recv_attached;
      const Node& on = m.node(owner);
      Node sync;
      sync.name = unique_name(StrCat(m.graph(on.graph).name, send ? "_Send_" : "_Recv_", notify ? "Notify_" : "", e.id));
      sync.type = StrCat(send ? "Send" : "Recv", notify ? "Notify" : "");
      sync.engine = "DNN_VM_RTS";
      sync.attrs[id_attr] = e.id;
      sync.stream_id = logical_of_slot(owner, attached);
      if (send) sync.control_inputs = {owner};
      // A Send runs after its owner's subgraphs: on the piece of a split
      // stream current there (SendSlots).
      int64_t stream = view.stream(send ? send_slot.ForEvent(e) : view.slot(owner, attached));
      GraphId g = on.graph;
      NodeId id = m.AddNode(g, std::move(sync));
      m.graph(g).nodes.pop_back();  // placed below
      plan.EnsureNodeVectors();
      plan.physical_stream[id.index()] = physical ? stream : -1;
      plan.tasks[id.index()] = NodeTasks(m.node(id), m.engine_table);
      const bool split = e.reason == SyncReason::kSplit;
      placed.push_back({owner.value, static_cast<uint8_t>(send ? 1 : 0),
                        static_cast<uint8_t>(split == !send ? 0 : 1), id});
      if (send) {
        ++sends;
      } else {
        m.node(owner).control_inputs.push_back(id);
        ++recvs;
      }
    }
  }
  // A split's Send is the last node of the old physical stream and its Recv
  // the first of the new one, so the split event alone bridges the two.
  // (A stable sort keeps the creation order within each owner and side.)
  auto key = [](const Placed& p) { return std::tuple(p.owner, p.after, p.split_order); };
  std::stable_sort(placed.begin(), placed.end(),
                   [&](const Placed& a, const Placed& b) { return key(a) < key(b); });
  std::vector<uint8_t> has_placed(original, 0);
  for (const Placed& p : placed) has_placed[p.owner] = 1;
  // Recvs right before, Sends right after their node (GE ReorderEventNodes).
  for (GraphId g : m.GraphsPreOrder()) {
    std::vector<NodeId> nodes;
    nodes.reserve(m.graph(g).nodes.size());
    for (NodeId id : m.graph(g).nodes) {
      if (id.index() >= original || !has_placed[id.index()]) {
        nodes.push_back(id);
        continue;
      }
      auto it = std::lower_bound(placed.begin(), placed.end(), id.value,
                                 [](const Placed& p, int32_t owner) { return p.owner < owner; });
      for (; it != placed.end() && it->owner == id.value && !it->after; ++it)
        nodes.push_back(it->id);
      nodes.push_back(id);
      for (; it != placed.end() && it->owner == id.value; ++it) nodes.push_back(it->id);
    }
    m.graph(g).nodes = std::move(nodes);
  }
  RenumberTopoIds(m);
  // GE's dynamic path: the executor reads the ids from the nodes (ascending, as
  // RefreshContinuousEvents leaves each node's list).
  for (auto* ids : {&send_ids, &recv_ids}) {
    const char* attr = ids == &send_ids ? "_send_event_ids" : "_recv_event_ids";
    for (auto& [node, list] : *ids) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
      m.node(NodeId(node)).attrs[attr] = AttrValue::IntList(list.begin(), list.end());
    }
  }
  ctx.log.Record(name(), "SyncNodesGenerated", "", Field("sends", sends), Field("recvs", recvs),
                 Field("attr_events", attr_events));
  ctx.stats.Set(name(), "send_nodes", sends);
  ctx.stats.Set(name(), "recv_nodes", recvs);
  ctx.stats.Set(name(), "attr_events", attr_events);
  return sends + recvs + attr_events > 0;
}

}  // namespace npuplan
