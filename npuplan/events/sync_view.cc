#include "npuplan/events/sync_view.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "npuplan/ir/attribute.h"
#include "npuplan/partition/unknown_shape_graphs.h"

namespace npuplan::events {
namespace {
uint64_t NamePrefix(const std::string& name);
}  // namespace

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
    flags_[i] = static_cast<uint8_t>((node.attrs.empty() ? 0 : kHasAttrs) | (type == "StreamSwitch" ? kStreamSwitch : 0) |
                                     (type == "Enter" || type == "RefEnter" ? kEnter : 0));
    all_flags_ |= flags_[i];
    if (name_prefixes) name_prefix_[i] = NamePrefix(node.name);
  }
  if (extra > 0) {
    attached_begin_.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      attached_begin_[i + 1] = attached_begin_[i] + static_cast<int32_t>(m.nodes()[i].attached_stream_ids.size());
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
        stream_[slot] = static_cast<int32_t>(att_phys != nullptr && a < att_phys->size() ? (*att_phys)[a]
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
  size_t listed = 0;
  for (int32_t sl : slot_order()) {
    if (const int32_t s = stream_[sl]; s >= 0) {
      ++stream_slot_begin_[static_cast<size_t>(s) + 1];
      ++listed;
    }
  }
  for (size_t s = 0; s + 1 < stream_slot_begin_.size(); ++s) stream_slot_begin_[s + 1] += stream_slot_begin_[s];
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

ActivationInfo ComputeActivation(const Model& model, std::span<const NodeId> order,
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

ActivationInfo ComputeActivation(const Model& model, const SyncView& view,
                                 const std::map<int64_t, int64_t>* split_to_logical) {
  std::vector<NodeId> with_attrs;
  for (NodeId id : view.order()) {
    if (view.has_flag(id, SyncView::kHasAttrs)) with_attrs.push_back(id);
  }
  return ComputeActivation(model, with_attrs, split_to_logical);
}

Enclosure::Enclosure(const Model& model) : model_(model), first_(model.num_graphs(), -1), last_(model.num_graphs(), -1) {
  const std::vector<GraphId> order = model.GraphsPreOrder();
  for (size_t i = 0; i < order.size(); ++i) first_[order[i].index()] = last_[order[i].index()] = static_cast<int32_t>(i);
  // A graph's descendants follow it in pre-order: its last one is the
  // largest index met when each graph hands its own up to its parent.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Graph& g = model.graph(*it);
    if (!g.parent_graph.valid()) continue;
    int32_t& up = last_[g.parent_graph.index()];
    up = std::max(up, last_[it->index()]);
  }
}

bool Enclosure::operator()(NodeId owner, NodeId n) const {
  const int32_t at = first_[model_.node(n).graph.index()];
  if (at < 0) return false;
  for (GraphId sg : model_.node(owner).subgraphs) {
    if (first_[sg.index()] >= 0 && first_[sg.index()] <= at && at <= last_[sg.index()]) return true;
  }
  return false;
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

bool MayOpenStream(const Node& node) {
  if (!node.subgraphs.empty()) return false;
  if (GetBoolAttr(node.attrs, "subgraph_first_active").value_or(false)) return false;
  return node.type != "LabelSet" && node.type != "LabelGotoEx" && node.type != "LabelSwitchByIndex";
}

std::vector<bool> DynamicPathGraphs(const Plan& plan) {
  const Model& m = plan.model;
  if (!IsDynamicStreamMode(plan.streams.mode)) return std::vector<bool>(m.num_graphs(), false);
  return partition::UnknownShapeGraphs(plan);  // the partition stage's fact
}

bool OnDynamicPath(const Plan& plan, const std::vector<bool>& dynamic_graphs, const SyncEvent& e) {
  if (e.kind != SyncKind::kEvent || e.send_attached >= 0 || e.recv_attached >= 0) return false;
  const Model& m = plan.model;
  return dynamic_graphs[m.node(e.send).graph.index()] && dynamic_graphs[m.node(e.recv).graph.index()];
}

bool DynamicSubgraphBoundary(const Model& m, const std::vector<bool>& dynamic_graphs, GraphId g) {
  const Graph& graph = m.graph(g);
  if (!graph.parent_node.valid() || !dynamic_graphs[g.index()]) return false;
  return dynamic_graphs[m.node(graph.parent_node).graph.index()];
}

RecordSlots::RecordSlots(const Plan& plan, const SyncView& view)
    : plan_(plan), view_(view), dynamic_graphs_(DynamicPathGraphs(plan)), send_slots_(plan.model, view) {
  any_dynamic_ = std::find(dynamic_graphs_.begin(), dynamic_graphs_.end(), true) != dynamic_graphs_.end();
}

int32_t RecordSlots::ForEvent(const SyncEvent& e) {
  const int32_t own = view_.slot(e.send, e.send_attached);
  if (!any_dynamic_ || e.send_attached >= 0 || plan_.model.node(e.send).subgraphs.empty() ||
      !OnDynamicPath(plan_, dynamic_graphs_, e)) {
    return own;
  }
  return send_slots_(e.send, -1);
}

NodeId DynamicAttrNode(const Model& m, NodeId send, NodeId recv) {
  const GraphId target = m.node(recv).graph;
  NodeId n = send;
  while (m.node(n).graph != target) {
    const Graph& g = m.graph(m.node(n).graph);
    if (!g.parent_node.valid()) return send;  // not nested under the receiver's graph
    n = g.parent_node;
  }
  return n;
}

bool IsNotifyMode(const Plan& plan, const std::string& ge_event) { return ge_event == "notify"; }

namespace {

// Distinct values of `ids` and whether they are exactly 0..m-1. A bitmap when
// the ids are dense (the usual case), else sort + unique.
bool DistinctContinuous(BigVector<int64_t>& ids, int64_t* distinct) {
  if (ids.empty()) {
    if (distinct) *distinct = 0;
    return true;
  }
  int64_t lo = ids[0], hi = ids[0];
  for (int64_t v : ids) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  int64_t count = 0;
  if (lo >= 0 && hi < 4 * static_cast<int64_t>(ids.size()) + 1024) {
    BigVector<uint8_t> seen(static_cast<size_t>(hi) + 1, 0);
    for (int64_t v : ids) {
      count += seen[v] == 0;
      seen[v] = 1;
    }
  } else {
    std::sort(ids.begin(), ids.end());
    count = std::unique(ids.begin(), ids.end()) - ids.begin();
  }
  if (distinct) *distinct = count;
  return lo == 0 && hi == count - 1;
}

}  // namespace

bool IdsContinuous(const EventTable& table, int64_t* events, int64_t* notifies) {
  BigVector<int64_t> ev, nt;
  ev.reserve(table.events.size());
  for (const SyncEvent& e : table.events) (e.kind == SyncKind::kNotify ? nt : ev).push_back(e.id);
  const bool a = DistinctContinuous(ev, events);
  const bool b = DistinctContinuous(nt, notifies);
  return a && b;
}

void RecountIds(EventTable& table) { IdsContinuous(table, &table.event_count, &table.notify_count); }

int64_t NextId(const EventTable& table, SyncKind kind) {
  int64_t next = 0;
  for (const SyncEvent& e : table.events) {
    if (e.kind == kind) next = std::max<int64_t>(next, e.id + 1);
  }
  return next;
}

namespace {

// The first 8 bytes of a name, zero-padded, as a big-endian integer: integer
// order is the names' byte order on those bytes (std::string::compare order
// when they differ).
uint64_t NamePrefix(const std::string& name) {
  uint64_t prefix = 0;
  if (std::endian::native == std::endian::little && name.size() >= 8) {
    std::memcpy(&prefix, name.data(), 8);
    return __builtin_bswap64(prefix);
  }
  for (size_t b = 0; b < 8; ++b) prefix = (prefix << 8) | (b < name.size() ? static_cast<unsigned char>(name[b]) : 0u);
  return prefix;
}

}  // namespace

void SortSendersByName(const Model& m, BigVector<int32_t>& senders,
                       std::span<const uint64_t> prefix_of_node) {
  // GE's sender order: node name, then graph name, then node index (a total order).
  auto less_node = [&](int32_t a, int32_t b) {
    const Node& nx = m.node(NodeId(a));
    const Node& ny = m.node(NodeId(b));
    if (int c = nx.name.compare(ny.name); c != 0) return c < 0;
    const GraphId gx = nx.graph, gy = ny.graph;
    if (gx != gy) {
      if (int c = m.graph(gx).name.compare(m.graph(gy).name); c != 0) return c < 0;
    }
    return a < b;
  };
  const size_t count = senders.size();
  if (count < 4096) {
    // Few senders: std::sort on (8-byte name prefix, node), full comparison on equal prefixes.
    std::vector<std::pair<uint64_t, int32_t>> keys(count);
    for (size_t i = 0; i < count; ++i) keys[i] = {NamePrefix(m.node(NodeId(senders[i])).name), senders[i]};
    std::sort(keys.begin(), keys.end(), [&](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : less_node(x.second, y.second);
    });
    for (size_t r = 0; r < count; ++r) senders[r] = keys[r].second;
    return;
  }
  // Many senders: LSD radix sort, then the full comparison only inside runs
  // of equal 8-byte name prefixes (same total order as std::sort with
  // less_node). The prefixes are first read into `buf` (one sequential pass
  // over the senders' Nodes, with the eight byte histograms). When the
  // prefixes take few values per byte (generated names: "n0".."n999999" take
  // at most 11 per byte), each byte is replaced by its rank among the values
  // present there and the bytes are combined mixed-radix into a code that
  // keeps the prefixes' order; if the code fits 32 bits a key is
  // code << 32 | node — 8 bytes, sorted in ⌈bits / 11⌉ passes (2 for 1M
  // such names, not one per varying byte), in one block with its second
  // buffer (16 MB for 1M senders, which the scratch cache then hands to the
  // next array of that size).
  BigVector<uint64_t> buf(2 * count);
  uint64_t* keys = buf.data();
  uint64_t* tmp = buf.data() + count;
  std::vector<uint32_t> hist(8 * 256, 0);
  for (size_t i = 0; i < count; ++i) {
    uint64_t prefix;
    if (!prefix_of_node.empty()) {
      prefix = prefix_of_node[senders[i]];
    } else {
      if (i + kNodePrefetch < count) PrefetchNode(m, static_cast<size_t>(senders[i + kNodePrefetch]));
      prefix = NamePrefix(m.node(NodeId(senders[i])).name);
    }
    keys[i] = prefix;
    for (int b = 0; b < 8; ++b) ++hist[b * 256 + ((prefix >> (8 * b)) & 0xff)];
  }
  // Mixed-radix code: byte b (most significant first) contributes its rank
  // among the values present at b; bytes with one value contribute nothing.
  std::vector<uint32_t> dense(8 * 256, 0);
  uint32_t radix[8];
  unsigned __int128 total = 1;
  for (int b = 0; b < 8; ++b) {
    uint32_t d = 0;
    for (int v = 0; v < 256; ++v) {
      if (hist[b * 256 + v] != 0) dense[b * 256 + v] = d++;
    }
    radix[b] = d;
    total *= d;
  }
  const auto sort_runs = [&](auto same_prefix) {
    for (size_t lo = 0; lo < count;) {
      size_t hi = lo + 1;
      while (hi < count && same_prefix(keys[hi], keys[lo])) ++hi;
      if (hi - lo > 1) {
        std::sort(keys + lo, keys + hi, [&](uint64_t x, uint64_t y) {
          return less_node(static_cast<int32_t>(x & 0xffffffffu), static_cast<int32_t>(y & 0xffffffffu));
        });
      }
      lo = hi;
    }
  };
  if (total <= (unsigned __int128){1} << 32) {
    for (size_t i = 0; i < count; ++i) {
      const uint64_t prefix = keys[i];
      uint64_t code = 0;
      for (int b = 7; b >= 0; --b) {
        if (radix[b] > 1) code = code * radix[b] + dense[b * 256 + ((prefix >> (8 * b)) & 0xff)];
      }
      keys[i] = (code << 32) | static_cast<uint32_t>(senders[i]);
    }
    const int bits = total <= 1 ? 0 : std::bit_width(static_cast<uint64_t>(total - 1));
    constexpr int kDigitBits = 11;
    constexpr size_t kDigits = size_t{1} << kDigitBits;
    const int passes = (bits + kDigitBits - 1) / kDigitBits;
    std::vector<uint32_t> dh(static_cast<size_t>(passes) * kDigits, 0);
    for (size_t i = 0; i < count; ++i) {
      for (int p = 0; p < passes; ++p) ++dh[p * kDigits + ((keys[i] >> (32 + kDigitBits * p)) & (kDigits - 1))];
    }
    for (int p = 0; p < passes; ++p) {
      uint32_t* h = dh.data() + p * kDigits;
      if (std::count(h, h + kDigits, static_cast<uint32_t>(count)) == 1) continue;  // digit never varies
      uint32_t sum = 0;
      for (size_t v = 0; v < kDigits; ++v) {
        const uint32_t c = h[v];
        h[v] = sum;
        sum += c;
      }
      const int shift = 32 + kDigitBits * p;
      for (size_t i = 0; i < count; ++i) tmp[h[(keys[i] >> shift) & (kDigits - 1)]++] = keys[i];
      std::swap(keys, tmp);
    }
    sort_runs([](uint64_t x, uint64_t y) { return (x >> 32) == (y >> 32); });
    for (size_t r = 0; r < count; ++r) senders[r] = static_cast<int32_t>(keys[r] & 0xffffffffu);
    return;
  }
  // Too many distinct byte values for a 32-bit code: 16-byte (prefix, node)
  // keys, one stable pass per byte that varies.
  struct Key {
    uint64_t prefix;
    int32_t node;
  };
  BigVector<Key> wide(count), wide_tmp(count);
  for (size_t i = 0; i < count; ++i) wide[i] = {keys[i], senders[i]};
  FreeStorage(buf);
  for (int b = 0; b < 8; ++b) {
    uint32_t* h = hist.data() + b * 256;
    if (radix[b] <= 1) continue;  // byte never varies
    uint32_t sum = 0;
    for (int v = 0; v < 256; ++v) {
      const uint32_t c = h[v];
      h[v] = sum;
      sum += c;
    }
    const int shift = 8 * b;
    for (const Key& key : wide) wide_tmp[h[(key.prefix >> shift) & 0xff]++] = key;
    wide.swap(wide_tmp);
  }
  for (size_t lo = 0; lo < count;) {
    size_t hi = lo + 1;
    while (hi < count && wide[hi].prefix == wide[lo].prefix) ++hi;
    if (hi - lo > 1) {
      std::sort(wide.begin() + lo, wide.begin() + hi,
                [&](const Key& x, const Key& y) { return less_node(x.node, y.node); });
    }
    lo = hi;
  }
  for (size_t r = 0; r < count; ++r) senders[r] = wide[r].node;
}

void RankSendersByName(const Model& m, std::span<const int32_t> senders, BigVector<int32_t>& rank) {
  BigVector<int32_t> sorted(senders.begin(), senders.end());
  SortSendersByName(m, sorted);
  for (size_t r = 0; r < sorted.size(); ++r) rank[sorted[r]] = static_cast<int32_t>(r);
}

std::vector<uint32_t> GeOrder(const Model& m, std::span<const GeOrderKey> keys_in) {
  const size_t count = keys_in.size();
  // 1. Rank the sender nodes once by (node name, graph name, node index):
  //    events are then bucketed by integer keys, not compared by name.
  BigVector<int32_t> rank(m.num_nodes(), -1);
  BigVector<int32_t> senders;
  senders.reserve(std::min(count, m.num_nodes()));
  for (const GeOrderKey& e : keys_in) {
    if (rank[e.send.index()] < 0) {
      rank[e.send.index()] = 0;
      senders.push_back(e.send.value);
    }
  }
  RankSendersByName(m, senders, rank);
  // 2. Main-stream maps first, attached maps continue; by sender rank
  //    (counting sort, stable), then old id within a sender.
  const size_t buckets = 2 * senders.size();
  BigVector<uint32_t> start(buckets + 1, 0);
  auto bucket = [&](const GeOrderKey& e) {
    return static_cast<size_t>(e.attached) * senders.size() + static_cast<size_t>(rank[e.send.index()]);
  };
  for (const GeOrderKey& e : keys_in) ++start[bucket(e) + 1];
  for (size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  std::vector<uint32_t> order(count);
  {
    BigVector<uint32_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < count; ++i) order[fill[bucket(keys_in[i])]++] = static_cast<uint32_t>(i);
  }
  // Usually in old-id order already (the fill is in input order): check
  // first, std::stable_sort allocates a buffer per call.
  auto by_old_id = [&](uint32_t x, uint32_t y) { return keys_in[x].id < keys_in[y].id; };
  for (size_t b = 0; b < buckets; ++b) {
    auto first = order.begin() + start[b], last = order.begin() + start[b + 1];
    if (last - first > 1 && !std::is_sorted(first, last, by_old_id)) std::stable_sort(first, last, by_old_id);
  }
  return order;
}

namespace {

// True when the table already is in the order RenumberGeOrder produces and
// only the ids need compacting: events before notifies, and within each kind
// old ids strictly increasing along non-decreasing sender keys. Then GE's
// order restricted to a kind is the table order (ties within a sender go by
// old id), every old id is distinct, so the new id is the position within
// the kind and the table stays as it is. True after insertion, and after
// removing events from such a table (the optimisation), so the usual
// pipeline never sorts the senders again.
bool InGeOrderAlready(const Model& m, std::span<const SyncEvent> evs) {
  // The Node of the previous event's sender is kept: senders change at
  // almost every event and are visited in name order (random in memory),
  // so this reads one Node per sender instead of two.
  NodeId last_id;
  const Node* last = nullptr;
  constexpr size_t kAhead = 16;  // senders are read at random: prefetch the Node this many events ahead
  for (size_t i = 1; i < evs.size(); ++i) {
    if (i + kAhead < evs.size()) __builtin_prefetch(&m.node(evs[i + kAhead].send));
    const SyncEvent& a = evs[i - 1];
    const SyncEvent& b = evs[i];
    const bool an = a.kind == SyncKind::kNotify, bn = b.kind == SyncKind::kNotify;
    if (an != bn) {
      if (an) return false;  // a notify before an event
      continue;
    }
    if (a.id >= b.id) return false;
    // GE's sender key: attached after main, then sender node name, sender
    // graph name, node index (as GeOrder ranks them).
    const bool aa = a.send_attached >= 0, ba = b.send_attached >= 0;
    if (aa != ba) {
      if (aa) return false;
      continue;
    }
    if (a.send == b.send) continue;
    const Node& x = last != nullptr && last_id == a.send ? *last : m.node(a.send);
    const Node& y = m.node(b.send);
    last_id = b.send;
    last = &y;
    // The first 8 bytes as big-endian integers decide most pairs without a
    // memcmp call.
    if (const uint64_t px = NamePrefix(x.name), py = NamePrefix(y.name); px != py) {
      if (px > py) return false;
      continue;
    }
    if (int c = x.name.compare(y.name); c != 0) {
      if (c > 0) return false;
      continue;
    }
    if (x.graph != y.graph) {
      if (int c = m.graph(x.graph).name.compare(m.graph(y.graph).name); c != 0) {
        if (c > 0) return false;
        continue;
      }
    }
    if (a.send.value > b.send.value) return false;
  }
  return true;
}

}  // namespace

bool RenumberGeOrder(Plan& plan) {
  const Model& m = plan.model;
  auto& evs = plan.events.events;
  const size_t count = evs.size();
  if (InGeOrderAlready(m, evs)) {
    int64_t next[2] = {0, 0};
    bool changed = false;
    for (SyncEvent& e : evs) {
      const int k = e.kind == SyncKind::kNotify;
      changed |= e.id != next[k];
      e.id = static_cast<int32_t>(next[k]++);
    }
    plan.events.event_count = next[0];
    plan.events.notify_count = next[1];
    return changed;
  }
  // (The general path: rare, so what it changed is found by comparing.)
  const EventTableSnapshot before(evs);
  std::vector<GeOrderKey> keys(count);
  for (size_t i = 0; i < count; ++i) keys[i] = {evs[i].send, evs[i].send_attached >= 0, evs[i].id};
  const std::vector<uint32_t> order = GeOrder(m, keys);
  // 3. First-seen old ids get 0, 1, … per kind (GE RefreshContinuousEvents).
  int64_t max_old = -1;
  bool dense = true;
  for (const SyncEvent& e : evs) {
    dense &= e.id >= 0;
    max_old = std::max<int64_t>(max_old, e.id);
  }
  dense &= max_old < 4 * static_cast<int64_t>(count) + 1024;
  std::vector<int64_t> remap_dense[2];
  std::unordered_map<int64_t, int64_t> remap_sparse[2];
  if (dense) {
    remap_dense[0].assign(static_cast<size_t>(max_old) + 1, -1);
    remap_dense[1].assign(static_cast<size_t>(max_old) + 1, -1);
  }
  int64_t next[2] = {0, 0};
  std::vector<uint8_t> is_notify(count);
  for (size_t i = 0; i < count; ++i) is_notify[i] = evs[i].kind == SyncKind::kNotify;
  for (uint32_t i : order) {
    const int k = is_notify[i];
    const int64_t old = evs[i].id;
    if (dense) {
      if (remap_dense[k][old] < 0) remap_dense[k][old] = next[k]++;
    } else if (remap_sparse[k].emplace(old, next[k]).second) {
      ++next[k];
    }
  }
  for (size_t i = 0; i < count; ++i) {
    const int k = is_notify[i];
    evs[i].id = dense ? remap_dense[k][evs[i].id] : remap_sparse[k][evs[i].id];
  }
  // 4. Keep the table in (kind, id, previous position) order so dumps read
  //    naturally: events ("event" < "notify") first, a stable counting sort.
  std::vector<uint32_t> pos(static_cast<size_t>(next[0] + next[1]) + 1, 0);
  auto slot_of = [&](size_t i) { return static_cast<size_t>(is_notify[i] ? next[0] + evs[i].id : evs[i].id); };
  for (size_t i = 0; i < count; ++i) ++pos[slot_of(i) + 1];
  for (size_t p = 0; p + 1 < pos.size(); ++p) pos[p + 1] += pos[p];
  std::vector<uint32_t> dest(count);
  for (size_t i = 0; i < count; ++i) dest[i] = pos[slot_of(i)]++;
  for (size_t i = 0; i < count; ++i) {  // apply the permutation in place, cycle by cycle
    while (dest[i] != i) {
      const uint32_t d = dest[i];
      std::swap(evs[i], evs[d]);
      std::swap(dest[i], dest[d]);
    }
  }
  plan.events.event_count = next[0];
  plan.events.notify_count = next[1];
  return before.Differs(evs);
}

}  // namespace npuplan::events
