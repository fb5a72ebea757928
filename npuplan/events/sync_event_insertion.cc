#include "npuplan/events/sync_event_insertion.h"

#include <algorithm>
#include <unordered_set>

#include "npuplan/events/sync_verifier.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

[[maybe_unused]] const bool kChecks = events::RegisterEventStageChecks();

struct Candidate {
  int32_t from;
  int32_t to;
  const char* reason;
};

}  // namespace

absl::StatusOr<bool> SyncEventInsertion::Run(Plan& plan, PassContext& ctx) {
  const Model& m = plan.model;
  const bool notify = ctx.options.Get("ge.event") == "notify";
  if (notify && plan.streams.mode.rfind("dynamic", 0) == 0) {
    return absl::InvalidArgumentError(StrCat("[", name(), "] option ge.event=notify: notifies are for static-shape "
                                             "graphs only, but streams were assigned in mode '",
                                             plan.streams.mode, "'"));
  }
  events::SyncView view(plan, /*physical=*/false);
  events::ActivationInfo act = events::ComputeActivation(m, view.order());
  Adjacency adj(m);
  std::vector<Candidate> cands;
  int64_t skipped_activation = 0;
  auto stream = [&](NodeId n) { return m.node(n).stream_id; };

  // 1. Data and control edges (GE InsertOneEventInTwoNodes).
  std::vector<int32_t> seen(m.num_nodes(), -1);
  for (NodeId cur : view.order()) {
    const Node& c = m.node(cur);
    for (size_t k = adj.begin(cur); k < adj.end(cur); ++k) {
      NodeId next = adj.succ[k];
      if (seen[next.index()] == cur.value) continue;  // one event per pair
      const Node& nx = m.node(next);
      if (c.stream_id < 0) continue;                                         // rule 1
      if (c.stream_id == nx.stream_id) continue;                             // rule 2
      if ((c.type == "Enter" || c.type == "RefEnter") && nx.type != "StreamActive") continue;  // rule 3
      if (nx.stream_id < 0) {                                                // rule 4
        if (HasAttr(nx.attrs, "_thread_scope_id")) continue;
        return absl::InvalidArgumentError(StrCat("[", name(), "] node '", nx.name, "' (successor of '", c.name,
                                                 "' on stream ", c.stream_id,
                                                 ") has no stream: every node that receives an edge needs one"));
      }
      if (auto label = GetStringAttr(nx.attrs, "_stream_label"); label && !label->empty()) {  // rule 5
        auto it = act.activators_of_label.find(*label);
        const Node* by = nullptr;
        if (it != act.activators_of_label.end()) {
          for (NodeId a : it->second) {
            // npuplan adds seq(next) > seq(a): the activation orders what follows the activator.
            if (m.node(a).graph == c.graph && stream(a) == c.stream_id && view.seq(cur) <= view.seq(a) &&
                view.seq(next) > view.seq(a)) {
              by = &m.node(a);
              break;
            }
          }
        }
        if (by != nullptr) {
          ++skipped_activation;
          ctx.log.Record(name(), "EventSkipped", "", Field("from", c.name), Field("to", nx.name),
                         Field("reason", StrCat("activated-by:", by->name)));
          continue;
        }
      }
      seen[next.index()] = cur.value;
      cands.push_back({cur.value, next.value, adj.is_control[k] ? "control-edge" : "data-edge"});
    }
  }

  // 2. Subgraph entry and end (GE InsertEventsForSubgraph).
  for (GraphId g : m.GraphsPreOrder()) {
    const Graph& graph = m.graph(g);
    if (!graph.parent_node.valid()) continue;
    const Node& p = m.node(graph.parent_node);
    if (HasAttr(p.attrs, "_thread_scope_id")) continue;
    std::vector<NodeId> parent_in;
    for (const OutputRef& in : p.inputs) parent_in.push_back(in.node);
    for (NodeId c : p.control_inputs) parent_in.push_back(c);
    NodeId end;
    for (NodeId id : graph.nodes) {
      const Node& n = m.node(id);
      if (n.stream_id >= 0 && n.inputs.empty() && n.control_inputs.empty()) {
        for (NodeId x : parent_in) {
          if (stream(x) >= 0 && stream(x) != n.stream_id) cands.push_back({x.value, id.value, "subgraph-entry"});
        }
      }
      if (!end.valid() && GetBoolAttr(n.attrs, "_subgraph_end_node").value_or(false)) end = id;
    }
    if (!end.valid()) {
      for (NodeId id : graph.nodes) {
        if (m.node(id).type == "NetOutput") {
          end = id;
          break;
        }
      }
    }
    if (end.valid() && stream(end) >= 0) {
      for (size_t k = adj.begin(graph.parent_node); k < adj.end(graph.parent_node); ++k) {
        NodeId y = adj.succ[k];
        if (stream(y) >= 0 && stream(y) != stream(end)) cands.push_back({end.value, y.value, "subgraph-end"});
      }
    }
  }

  // 3. Attached streams (GE InsertSyncEventsWithAttachedStream, CoverAllStreamByNetoutput).
  std::map<int64_t, int32_t> last_user;
  for (NodeId id : view.order()) {
    const Node& n = m.node(id);
    for (int32_t a = 0; a < view.num_attached(id); ++a) {
      last_user[n.attached_stream_ids[a]] = view.slot(id, a);
      for (int64_t idx : events::AttachedDependIndices(n, a)) {
        if (idx < 0 || static_cast<size_t>(idx) >= n.inputs.size()) continue;
        NodeId src = n.inputs[idx].node;
        if (events::IsDataOrConst(m.node(src))) continue;
        int32_t from = view.slot(src, view.num_attached(src) > 0 ? 0 : -1);
        int32_t to = view.slot(id, a);
        if (view.stream(from) >= 0 && view.stream(from) != view.stream(to)) cands.push_back({from, to, "attached"});
      }
    }
  }
  for (const auto& [att, slot] : last_user) {
    NodeId id = view.node_of(slot);
    for (NodeId o : m.graph(m.node(id).graph).nodes) {
      if (m.node(o).type == "NetOutput" && view.seq(o) > view.seq(id) && stream(o) >= 0 &&
          stream(o) != view.stream(slot)) {
        cands.push_back({slot, o.value, "attached-end"});
      }
    }
  }

  // 4. One event per distinct pair, then GE's continuous numbering.
  std::unordered_set<uint64_t> pairs;
  EventTable table;
  table.counts = plan.events.counts;
  for (const Candidate& c : cands) {
    uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(c.from)) << 32) | static_cast<uint32_t>(c.to);
    if (!pairs.insert(key).second) continue;
    SyncEvent e;
    e.id = static_cast<int64_t>(table.events.size());
    bool attached = view.attached_of(c.from) >= 0 || view.attached_of(c.to) >= 0;
    e.kind = notify && !attached ? "notify" : "event";
    e.send = view.node_of(c.from);
    e.recv = view.node_of(c.to);
    e.send_attached = view.attached_of(c.from);
    e.recv_attached = view.attached_of(c.to);
    e.reason = c.reason;
    table.events.push_back(std::move(e));
  }
  bool changed = table.events.size() != plan.events.events.size() || !plan.events.events.empty();
  plan.events = std::move(table);
  events::RenumberGeOrder(plan);
  if (ctx.log.enabled()) {
    for (const SyncEvent& e : plan.events.events) {
      ctx.log.Record(name(), "EventInserted", "", Field("event", e.id), Field("kind", e.kind),
                     Field("from", StrCat("s", view.stream(view.slot(e.send, e.send_attached)), ":", m.node(e.send).name)),
                     Field("to", StrCat("s", view.stream(view.slot(e.recv, e.recv_attached)), ":", m.node(e.recv).name)),
                     Field("reason", e.reason));
    }
  }
  plan.events.counts["naive"] = static_cast<int64_t>(plan.events.events.size());
  ctx.stats.Set(name(), "events_inserted", static_cast<int64_t>(plan.events.events.size()));
  ctx.stats.Set(name(), "skipped_by_activation", skipped_activation);
  return changed || !plan.events.events.empty();
}

}  // namespace npuplan
