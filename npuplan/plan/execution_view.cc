#include "npuplan/plan/execution_view.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "npuplan/ir/attached_streams.h"

namespace npuplan {

SyncView::SyncView(const Plan& plan, bool physical, bool stream_order, bool name_prefixes) {
  const Model& m = plan.model;
  const size_t n = m.num_nodes();
  num_nodes_ = n;
  if (m.num_graphs() == 1) {  // one graph: no node owns a subgraph, the order is the root's list
    order_ = m.root().nodes;
  } else {
    const std::vector<NodeId> order = m.ExecutionOrder();
    order_storage_.assign(order.begin(), order.end());
    order_ = order_storage_;
  }
  bool identity = order_.size() == n;
  for (size_t i = 0; identity && i < n; ++i) identity = order_[i].index() == i;
  if (!identity) {
    seq_.assign(n, -1);
    for (size_t i = 0; i < order_.size(); ++i) seq_[order_[i].index()] = static_cast<int32_t>(i);
  }

  // One pass over the nodes: main streams, and whether any node has attached streams.
  stream_.resize(n);
  flags_.resize(n);
  if (name_prefixes) name_prefix_.resize(n);
  size_t extra = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i + kNodePrefetch < n) {  // the lines this loop reads: type, attrs, streams
      const Node& ahead = m.nodes()[i + kNodePrefetch];
      __builtin_prefetch(&ahead.type);
      __builtin_prefetch(&ahead.attrs);
      __builtin_prefetch(&ahead.stream_id);
      __builtin_prefetch(&ahead.attached_stream_ids);
      if (name_prefixes) __builtin_prefetch(&ahead.name);
    }
    const Node& node = m.nodes()[i];
    int64_t main = node.stream_id;
    if (physical && i < plan.physical_stream.size()) main = plan.physical_stream[i];
    stream_[i] = static_cast<int32_t>(main);
    extra += node.attached_stream_ids.size();
    const std::string_view type = node.type;
    flags_[i] = static_cast<uint8_t>(
        (node.attrs.empty() ? 0 : kHasAttrs) | (type == "StreamSwitch" ? kStreamSwitch : 0) |
        (type == "Enter" || type == "RefEnter" ? kEnter : 0) | (IsSyncNode(node) ? kSync : 0));
    all_flags_ |= flags_[i];
    if (name_prefixes) name_prefix_[i] = NamePrefix(node.name);
  }
  if (extra > 0) {
    attached_begin_.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      attached_begin_[i + 1] =
          attached_begin_[i] + static_cast<int32_t>(m.nodes()[i].attached_stream_ids.size());
    }
    extra_node_.resize(extra);
    extra_attached_.resize(extra);
    stream_.resize(n + extra, -1);
    for (size_t i = 0; i < n; ++i) {
      const Node& node = m.nodes()[i];
      if (node.attached_stream_ids.empty()) continue;
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
        stream_[slot] = static_cast<int32_t>(att_phys != nullptr && a < att_phys->size()
                                                 ? (*att_phys)[a]
                                                 : node.attached_stream_ids[a]);
      }
    }
  }
  if (!stream_order) return;
  const size_t slots = n + extra;
  pos_.assign(slots, -1);
  if (extra > 0) {
    rank_.assign(slots, -1);
    slot_order_.reserve(slots);
    for (NodeId id : order_) {
      rank_[id.value] = static_cast<int32_t>(slot_order_.size());
      slot_order_.push_back(id.value);
      for (int32_t a = 0; a < num_attached(id); ++a) {
        const int32_t sl = slot(id, a);
        rank_[sl] = static_cast<int32_t>(slot_order_.size());
        slot_order_.push_back(sl);
      }
    }
  }
  // Per-stream slot lists in one block (one huge-page array, not one small
  // vector per stream), sized by a counting pass first.
  int32_t max_stream = -1;
  for (int32_t s : stream_) max_stream = std::max(max_stream, s);
  stream_slot_begin_.assign(static_cast<size_t>(max_stream) + 2, 0);
  // When the order lists every node once (so every slot once), the counts
  // come from a sequential pass over stream_ instead of one in execution
  // order, whose reads of stream_ scatter when node ids are not in order.
  bool every_slot_once = order_.size() == n;
  for (size_t i = 0; every_slot_once && !seq_.empty() && i < n; ++i) every_slot_once = seq_[i] >= 0;
  size_t listed = 0;
  auto count = [&](int32_t s) {
    if (s >= 0) {
      ++stream_slot_begin_[static_cast<size_t>(s) + 1];
      ++listed;
    }
  };
  if (every_slot_once) {
    for (int32_t s : stream_) count(s);
  } else {
    for (int32_t sl : slot_order()) count(stream_[sl]);
  }
  for (size_t s = 0; s + 1 < stream_slot_begin_.size(); ++s)
    stream_slot_begin_[s + 1] += stream_slot_begin_[s];
  stream_slot_data_.resize(listed);
  std::vector<size_t> fill(stream_slot_begin_.begin(), stream_slot_begin_.end() - 1);
  for (int32_t sl : slot_order()) {
    const int32_t s = stream_[sl];
    if (s < 0) continue;
    pos_[sl] = static_cast<int32_t>(fill[s] - stream_slot_begin_[s]);
    stream_slot_data_[fill[s]++] = sl;
  }
}

BigVector<SyncView::StreamRank> SyncView::StreamRanks() const {
  BigVector<StreamRank> out(num_slots());
  for (size_t i = 0; i < out.size(); ++i) out[i] = {stream_[i], rank(static_cast<int32_t>(i))};
  return out;
}

int32_t SyncView::FirstSlotAfter(int64_t s, NodeId a) const {
  if (s < 0 || s >= num_streams()) return -1;
  const std::span<const int32_t> slots = stream_slots(s);
  int64_t after = seq(a);
  auto it = std::upper_bound(slots.begin(), slots.end(), after,
                             [&](int64_t v, int32_t slot) { return v < seq_of_slot(slot); });
  return it == slots.end() ? -1 : *it;
}

ActivationInfo ComputeActivation(const Model& model, const SyncView& view,
                                 const std::map<int64_t, int64_t>* split_to_logical) {
  std::vector<NodeId> with_attrs;
  for (NodeId id : view.order()) {
    if (view.has_flag(id, SyncView::kHasAttrs)) with_attrs.push_back(id);
  }
  return ComputeActivation(model, with_attrs, split_to_logical);
}

// The first 8 bytes of a name, zero-padded, as a big-endian integer: integer
// order is the names' byte order on those bytes (std::string::compare order
// when they differ).
uint64_t NamePrefix(const std::string& name) { return NamePrefixAt(name, 0); }

uint64_t NamePrefixAt(const std::string& name, size_t offset) {
  uint64_t prefix = 0;
  if (std::endian::native == std::endian::little && name.size() >= offset + 8) {
    std::memcpy(&prefix, name.data() + offset, 8);
    return __builtin_bswap64(prefix);
  }
  for (size_t b = offset; b < offset + 8; ++b)
    prefix = (prefix << 8) | (b < name.size() ? static_cast<unsigned char>(name[b]) : 0u);
  return prefix;
}

int32_t SendSlots::operator()(NodeId owner, int32_t attached) {
  const int32_t own = view_.slot(owner, attached);
  const Node& o = model_.node(owner);
  if (o.subgraphs.empty()) return own;
  auto it = memo_.find(own);
  if (it != memo_.end()) return it->second;
  const int64_t logical = attached < 0 ? o.stream_id : o.attached_stream_ids[attached];
  int32_t best = own;
  std::vector<GraphId> stack(o.subgraphs.rbegin(), o.subgraphs.rend());
  while (!stack.empty()) {
    const Graph& g = model_.graph(stack.back());
    stack.pop_back();
    for (NodeId id : g.nodes) {
      const Node& n = model_.node(id);
      if (IsSyncNode(n)) continue;  // the owner's record task is counted on a computing slot
      for (int32_t a = -1; a < static_cast<int32_t>(n.attached_stream_ids.size()); ++a) {
        if ((a < 0 ? n.stream_id : n.attached_stream_ids[a]) != logical || logical < 0) continue;
        const int32_t slot = view_.slot(id, a);
        if (view_.rank(slot) > view_.rank(best)) best = slot;
      }
      stack.insert(stack.end(), n.subgraphs.begin(), n.subgraphs.end());
    }
  }
  memo_.emplace(own, best);
  return best;
}

RecordSlots::RecordSlots(const Plan& plan, const SyncView& view)
    : plan_(plan),
      view_(view),
      dynamic_graphs_(DynamicPathGraphs(plan)),
      send_slots_(plan.model, view) {
  any_dynamic_ =
      std::find(dynamic_graphs_.begin(), dynamic_graphs_.end(), true) != dynamic_graphs_.end();
}

int32_t RecordSlots::ForEvent(const SyncEvent& e) {
  const int32_t own = view_.slot(e.send, e.send_attached);
  if (!any_dynamic_ || e.send_attached >= 0 || plan_.model.node(e.send).subgraphs.empty() ||
      !OnDynamicPath(plan_, dynamic_graphs_, e)) {
    return own;
  }
  return send_slots_(e.send, -1);
}

}  // namespace npuplan
