#include "npuplan/events/sync_view.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "npuplan/ir/attribute.h"

namespace npuplan::events {
SyncView::SyncView(const Plan& plan, bool physical) {
  const Model& m = plan.model;
  const size_t n = m.num_nodes();
  order_ = m.ExecutionOrder();
  seq_.assign(n, -1);
  for (size_t i = 0; i < order_.size(); ++i) seq_[order_[i].index()] = static_cast<int64_t>(i);

  attached_begin_.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    attached_begin_[i + 1] = attached_begin_[i] + static_cast<int32_t>(m.nodes()[i].attached_stream_ids.size());
  }
  const size_t extra = attached_begin_[n];
  extra_node_.resize(extra);
  extra_attached_.resize(extra);
  stream_.assign(n + extra, -1);
  pos_.assign(n + extra, -1);
  rank_.assign(n + extra, -1);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = m.nodes()[i];
    int64_t main = node.stream_id;
    if (physical && i < plan.physical_stream.size()) main = plan.physical_stream[i];
    stream_[i] = main;
    const std::vector<int64_t>* att_phys = nullptr;
    if (physical) {
      if (auto it = plan.streams.attached_physical.find(static_cast<int64_t>(i));
          it != plan.streams.attached_physical.end()) {
        att_phys = &it->second;
      }
    }
    for (size_t a = 0; a < node.attached_stream_ids.size(); ++a) {
      size_t slot = n + attached_begin_[i] + a;
      extra_node_[slot - n] = NodeId(static_cast<int32_t>(i));
      extra_attached_[slot - n] = static_cast<int32_t>(a);
      stream_[slot] = att_phys != nullptr && a < att_phys->size() ? (*att_phys)[a] : node.attached_stream_ids[a];
    }
  }
  int64_t max_stream = -1;
  for (int64_t s : stream_) max_stream = std::max(max_stream, s);
  stream_slots_.assign(static_cast<size_t>(max_stream + 1), {});
  slot_order_.reserve(n + extra);
  for (NodeId id : order_) {
    auto add = [&](int32_t slot) {
      rank_[slot] = static_cast<int32_t>(slot_order_.size());
      slot_order_.push_back(slot);
      int64_t s = stream_[slot];
      if (s < 0) return;
      pos_[slot] = static_cast<int32_t>(stream_slots_[s].size());
      stream_slots_[s].push_back(slot);
    };
    add(id.value);
    for (int32_t a = 0; a < num_attached(id); ++a) add(slot(id, a));
  }
}

int32_t SyncView::FirstSlotAfter(int64_t s, NodeId a) const {
  if (s < 0 || s >= num_streams()) return -1;
  const auto& slots = stream_slots_[s];
  int64_t after = seq(a);
  auto it = std::upper_bound(slots.begin(), slots.end(), after,
                             [&](int64_t v, int32_t slot) { return v < seq_of_slot(slot); });
  return it == slots.end() ? -1 : *it;
}

ActivationInfo ComputeActivation(const Model& model, const std::vector<NodeId>& order,
                                 const std::map<int64_t, int64_t>* split_to_logical) {
  ActivationInfo info;
  std::map<int64_t, std::vector<int64_t>> expand;  // logical → physical ids
  if (split_to_logical != nullptr) {
    for (const auto& [p, l] : *split_to_logical) expand[l].push_back(p);
  }
  auto add_stream = [&](std::set<int64_t>& set, int64_t s) {
    if (s < 0) return;
    set.insert(s);
    if (auto it = expand.find(s); it != expand.end()) set.insert(it->second.begin(), it->second.end());
  };
  for (NodeId id : order) {
    const Node& n = model.node(id);
    if (auto label = GetStringAttr(n.attrs, "_stream_label"); label && !label->empty()) {
      add_stream(info.labeled_streams[*label], n.stream_id);
    }
  }
  for (NodeId id : order) {
    const Node& n = model.node(id);
    std::set<int64_t> streams;
    bool activator = false;
    if (const AttrValue* v = FindAttr(n.attrs, "active_stream_list"); v != nullptr && v->is<AttrValue::IntList>()) {
      activator = true;
      for (int64_t s : *v->as<AttrValue::IntList>()) streams.insert(s);
    } else {
      if (const AttrValue* v = FindAttr(n.attrs, "_active_label_list");
          v != nullptr && v->is<AttrValue::StringList>()) {
        activator = true;
        for (const std::string& label : *v->as<AttrValue::StringList>()) {
          info.activators_of_label[label].push_back(id);
          if (auto it = info.labeled_streams.find(label); it != info.labeled_streams.end()) {
            for (int64_t s : it->second) streams.insert(s);
          }
        }
      }
      if (GetBoolAttr(n.attrs, "subgraph_first_active").value_or(false)) {
        activator = true;
        std::set<int64_t> own;
        add_stream(own, n.stream_id);
        for (NodeId other : model.graph(n.graph).nodes) {
          const Node& o = model.node(other);
          if (GetStringAttr(o.attrs, "_stream_label").value_or("").empty()) {
            std::set<int64_t> s;
            add_stream(s, o.stream_id);
            for (int64_t a : o.attached_stream_ids) add_stream(s, a);
            for (int64_t x : s) {
              if (!own.count(x)) streams.insert(x);
            }
          }
        }
      }
    }
    if (!activator) continue;
    info.activated[id.value] = std::vector<int64_t>(streams.begin(), streams.end());
    for (int64_t s : streams) info.activators_of_stream[s].push_back(id);
  }
  return info;
}

bool MayOpenStream(const Node& node) {
  if (!node.subgraphs.empty()) return false;
  if (GetBoolAttr(node.attrs, "subgraph_first_active").value_or(false)) return false;
  return node.type != "LabelSet" && node.type != "LabelGotoEx" && node.type != "LabelSwitchByIndex";
}

bool IsNotifyMode(const Plan& plan, const std::string& ge_event) { return ge_event == "notify"; }

bool IdsContinuous(const EventTable& table, int64_t* events, int64_t* notifies) {
  std::set<int64_t> ev, nt;
  for (const SyncEvent& e : table.events) (e.kind == "notify" ? nt : ev).insert(e.id);
  if (events) *events = static_cast<int64_t>(ev.size());
  if (notifies) *notifies = static_cast<int64_t>(nt.size());
  auto cont = [](const std::set<int64_t>& s) {
    return s.empty() || (*s.begin() == 0 && *s.rbegin() == static_cast<int64_t>(s.size()) - 1);
  };
  return cont(ev) && cont(nt);
}

void RecountIds(EventTable& table) { IdsContinuous(table, &table.event_count, &table.notify_count); }

int64_t NextId(const EventTable& table, const std::string& kind) {
  int64_t next = 0;
  for (const SyncEvent& e : table.events) {
    if (e.kind == kind) next = std::max(next, e.id + 1);
  }
  return next;
}

void RenumberGeOrder(Plan& plan) {
  const Model& m = plan.model;
  std::vector<SyncEvent>& evs = plan.events.events;
  std::vector<size_t> idx(evs.size());
  std::iota(idx.begin(), idx.end(), 0);
  auto key_less = [&](size_t a, size_t b) {
    const SyncEvent& x = evs[a];
    const SyncEvent& y = evs[b];
    bool xa = x.send_attached >= 0, ya = y.send_attached >= 0;
    if (xa != ya) return !xa;  // main-stream maps first, attached maps continue
    const Node& nx = m.node(x.send);
    const Node& ny = m.node(y.send);
    if (int c = nx.name.compare(ny.name); c != 0) return c < 0;
    if (int c = m.graph(nx.graph).name.compare(m.graph(ny.graph).name); c != 0) return c < 0;
    return x.id < y.id;
  };
  std::stable_sort(idx.begin(), idx.end(), key_less);
  std::unordered_map<int64_t, int64_t> remap[2];  // [event, notify]: old id → new id
  int64_t next[2] = {0, 0};
  for (size_t i : idx) {
    const SyncEvent& e = evs[i];
    int k = e.kind == "notify" ? 1 : 0;
    if (remap[k].emplace(e.id, next[k]).second) ++next[k];
  }
  for (SyncEvent& e : evs) e.id = remap[e.kind == "notify" ? 1 : 0][e.id];
  // Keep the table in id order (then sender order) so dumps read naturally.
  std::stable_sort(evs.begin(), evs.end(), [](const SyncEvent& a, const SyncEvent& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.id < b.id;
  });
  RecountIds(plan.events);
}

}  // namespace npuplan::events
