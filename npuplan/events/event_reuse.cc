#include "npuplan/events/event_reuse.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <string_view>

#include "npuplan/events/event_options.h"
#include "npuplan/events/sync_view.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

// Graphs nested in g (g included), up to GE's depth 10.
void CollectGraphs(const Model& m, GraphId g, int depth, std::set<int32_t>& out) {
  out.insert(g.value);
  if (depth >= 10) return;
  for (NodeId n : m.graph(g).nodes) {
    for (GraphId sg : m.node(n).subgraphs) CollectGraphs(m, sg, depth + 1, out);
  }
}

// Renumbers the events of `kind` selected by `pick` (in current id order) from `base`; returns the count.
int64_t NumberFrom(decltype(EventTable::events)& evs, const std::vector<size_t>& pick, int64_t base) {
  std::map<int64_t, int64_t> remap;
  for (size_t i : pick) remap.emplace(evs[i].id, 0);
  int64_t next = base;
  for (auto& [old, nu] : remap) nu = next++;
  for (size_t i : pick) evs[i].id = remap[evs[i].id];
  return next - base;
}

// Some Case carries `_batch_num` (multi-gear reuse applies). A Case with
// branches owns subgraphs: look at the subgraphs' parents, not at every node.
bool AnyBatchCase(const Model& m) {
  return std::any_of(m.graphs().begin(), m.graphs().end(), [&](const Graph& g) {
    if (!g.parent_node.valid()) return false;
    const Node& n = m.node(g.parent_node);
    return n.type == "Case" && HasAttr(n.attrs, "_batch_num");
  });
}

// Nodes with `_event_multiplexing` items (read in step 3).
std::vector<NodeId> MultiplexingNodes(const Model& m) {
  std::vector<NodeId> multiplexing;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    // One line per ~250-byte Node: prefetch ahead (the stride defeats the hardware prefetcher).
    if (i + events::kNodePrefetch < m.num_nodes())
      __builtin_prefetch(&m.nodes()[i + events::kNodePrefetch].attrs);
    const Node& n = m.nodes()[i];
    if (!n.attrs.empty() && FindAttr(n.attrs, "_event_multiplexing") != nullptr) {
      multiplexing.push_back(NodeId(static_cast<int32_t>(i)));
    }
  }
  return multiplexing;
}

// Step 2 for one batch Case `n`: per branch, the unclaimed events of `kind`
// with both ends inside it are numbered from `base`; returns the widest
// branch's count.
int64_t NumberCaseBranches(std::string_view pass, const Model& m, const Node& n, SyncKind kind,
                           int64_t base, decltype(EventTable::events)& evs,
                           std::vector<bool>& claimed, PassContext& ctx) {
  int64_t widest = 0;
  for (size_t b = 0; b < n.subgraphs.size(); ++b) {
    std::set<int32_t> graphs;
    CollectGraphs(m, n.subgraphs[b], 0, graphs);
    std::vector<size_t> pick;
    for (size_t i = 0; i < evs.size(); ++i) {
      if (claimed[i] || evs[i].kind != kind) continue;
      if (graphs.count(m.node(evs[i].send).graph.value) &&
          graphs.count(m.node(evs[i].recv).graph.value)) {
        pick.push_back(i);
        claimed[i] = true;
      }
    }
    int64_t count = NumberFrom(evs, pick, base);
    if (count > 0) {
      ctx.log.Record(pass, "EventIdsReused", "", Field("case", n.name),
                     Field("branch", m.graph(n.subgraphs[b]).name), Field("events", count),
                     Field("base", base));
    }
    widest = std::max(widest, count);
  }
  return widest;
}

// Step 2: multi-gear reuse, per kind, over the batch Cases in execution
// order; the events outside every branch are numbered after them.
void ReuseAcrossGears(std::string_view pass, Plan& plan, PassContext& ctx) {
  const Model& m = plan.model;
  auto& evs = plan.events.events;
  const std::vector<NodeId> order = m.ExecutionOrder();
  for (const SyncKind kind : {SyncKind::kEvent, SyncKind::kNotify}) {
    std::vector<bool> claimed(evs.size(), false);
    int64_t base = 0;
    bool any_case = false;
    for (NodeId id : order) {
      const Node& n = m.node(id);
      if (n.type != "Case" || !HasAttr(n.attrs, "_batch_num")) continue;
      any_case = true;
      base += NumberCaseBranches(pass, m, n, kind, base, evs, claimed, ctx);
    }
    if (!any_case) continue;
    std::vector<size_t> rest;
    for (size_t i = 0; i < evs.size(); ++i) {
      if (!claimed[i] && evs[i].kind == kind) rest.push_back(i);
    }
    NumberFrom(evs, rest, base);
  }
}

// One `_event_multiplexing` item: "SendTo|RecvFrom;<peer>;<id>".
struct MultiplexingItem {
  std::string key;
  std::string peer;
  int64_t id = 0;
};

absl::StatusOr<MultiplexingItem> ParseMultiplexingItem(std::string_view pass, const Node& n,
                                                       const std::string& item, int64_t shift) {
  size_t a = item.find(';'), b = item.rfind(';');
  if (a == std::string::npos || a == b) {
    return absl::InvalidArgumentError(StrCat("[", pass, "] node '", n.name,
                                             "': _event_multiplexing item '", item,
                                             "' is not \"SendTo|RecvFrom;<peer>;<id>\""));
  }
  MultiplexingItem out;
  out.key = item.substr(0, a);
  out.peer = item.substr(a + 1, b - a - 1);
  auto [ptr, ec] = std::from_chars(item.data() + b + 1, item.data() + item.size(), out.id);
  if (ec != std::errc() || (out.key != "SendTo" && out.key != "RecvFrom")) {
    return absl::InvalidArgumentError(StrCat("[", pass, "] node '", n.name,
                                             "': _event_multiplexing item '", item,
                                             "' is not \"SendTo|RecvFrom;<peer>;<id>\""));
  }
  if (out.id + shift < 0 || out.id + shift > INT32_MAX) {
    return absl::InvalidArgumentError(StrCat("[", pass, "] node '", n.name,
                                             "': _event_multiplexing item '", item, "': id ",
                                             out.id, " is out of range (event ids are 32-bit)"));
  }
  return out;
}

// Step 3: each item maps its pair's events onto id + the event count; the
// event ids are compacted again when any did.
absl::Status ApplyMultiplexing(std::string_view pass, Plan& plan, PassContext& ctx,
                               const std::vector<NodeId>& multiplexing) {
  const Model& m = plan.model;
  auto& evs = plan.events.events;
  const int64_t shift = plan.events.event_count;
  bool any = false;
  // Events by (sender, receiver), in table order, built on the first
  // item: one binary search per item instead of a scan of the whole table.
  std::vector<std::pair<uint64_t, uint32_t>> by_pair;
  auto pair_key = [](NodeId send, NodeId recv) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(send.value)) << 32) |
           static_cast<uint32_t>(recv.value);
  };
  for (NodeId self : multiplexing) {
    const Node& n = m.node(self);
    const AttrValue* v = FindAttr(n.attrs, "_event_multiplexing");
    if (v == nullptr || !v->is<AttrValue::StringList>()) continue;
    for (const std::string& text : *v->as<AttrValue::StringList>()) {
      NPUPLAN_ASSIGN_OR_RETURN(const MultiplexingItem item,
                               ParseMultiplexingItem(pass, n, text, shift));
      NodeId peer_id = m.FindNode(item.peer);
      if (!peer_id.valid()) continue;  // names no node: matches no event
      if (by_pair.empty()) {
        by_pair.reserve(evs.size());
        for (size_t j = 0; j < evs.size(); ++j) {
          if (evs[j].kind == SyncKind::kEvent)
            by_pair.emplace_back(pair_key(evs[j].send, evs[j].recv), j);
        }
        std::sort(by_pair.begin(), by_pair.end());
      }
      const uint64_t want =
          item.key == "SendTo" ? pair_key(self, peer_id) : pair_key(peer_id, self);
      for (auto it =
               std::lower_bound(by_pair.begin(), by_pair.end(), std::make_pair(want, uint32_t{0}));
           it != by_pair.end() && it->first == want; ++it) {
        SyncEvent& e = evs[it->second];
        e.id = item.id + shift;
        any = true;
        ctx.log.Record(pass, "EventMultiplexed", "", Field("node", n.name),
                       Field("peer", item.peer), Field("id", item.id));
      }
    }
  }
  if (any) {
    std::vector<size_t> all;
    for (size_t i = 0; i < evs.size(); ++i) {
      if (evs[i].kind == SyncKind::kEvent) all.push_back(i);
    }
    NumberFrom(evs, all, 0);
    events::RecountIds(plan.events);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> EventReuse::Run(Plan& plan, PassContext& ctx) {
  const Model& m = plan.model;
  // A branch-less Case reuses nothing, and numbering the rest from 0 leaves
  // RenumberGeOrder's continuous ids as they are.
  // npuplan.eventIdReuse=none: one id per sync edge, so no multi-gear or
  // multiplexed sharing (event-id-allocation keeps these ids).
  NPUPLAN_ASSIGN_OR_RETURN(const events::EventOptions opts, events::ReadEventOptions(ctx.options));
  const bool share = opts.id_reuse != events::EventIdReuse::kNone;
  const bool any_batch_case = share && AnyBatchCase(m);
  const int64_t threshold = opts.reuse_threshold;
  // Multiplexing is looked for only when the table could have more event
  // ids than the threshold.
  std::vector<NodeId> multiplexing;
  if (share && static_cast<int64_t>(plan.events.events.size()) > threshold)
    multiplexing = MultiplexingNodes(m);
  // What changed is found by comparing with a snapshot when steps 2 and 3
  // can renumber; otherwise RenumberGeOrder says.
  std::optional<events::EventTableSnapshot> before;
  if (any_batch_case || !multiplexing.empty()) before.emplace(plan.events.events);
  // 1. GE order.
  const bool renumbered = events::RenumberGeOrder(plan);
  auto& evs = plan.events.events;

  // 2. Multi-gear reuse (the execution order only when some Case carries
  //    _batch_num: most graphs have none). Without a batch Case the ids are
  //    RenumberGeOrder's, which set the counts.
  if (any_batch_case) {
    ReuseAcrossGears(name(), plan, ctx);
    events::RecountIds(plan.events);
  }

  // 3. Explicit multiplexing above the threshold.
  if (plan.events.event_count > threshold)
    NPUPLAN_RETURN_IF_ERROR(ApplyMultiplexing(name(), plan, ctx, multiplexing));

  // 4. Notify limit.
  if (plan.events.notify_count > events::kMaxNotifies) {
    return absl::ResourceExhaustedError(StrCat("[", name(), "] ", plan.events.notify_count,
                                               " notifies exceed the device limit of ", events::kMaxNotifies,
                                               " (ge.event=notify); use ge.event=event or fewer streams"));
  }
  auto by_kind_id = [](const SyncEvent& a, const SyncEvent& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.id < b.id;
  };
  if (!std::is_sorted(evs.begin(), evs.end(), by_kind_id)) std::stable_sort(evs.begin(), evs.end(), by_kind_id);
  ctx.stats.Set(name(), "event_ids", plan.events.event_count);
  ctx.stats.Set(name(), "notify_ids", plan.events.notify_count);
  if (!before) return renumbered;  // steps 2 and 3 had nothing to do
  return before->Differs(evs);
}

}  // namespace npuplan
