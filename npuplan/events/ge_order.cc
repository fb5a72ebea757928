#include "npuplan/events/ge_order.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_map>

#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"

namespace npuplan::events {

void CompactIds(EventTable& table) {
  for (SyncKind kind : {SyncKind::kEvent, SyncKind::kNotify}) {
    std::vector<int64_t> ids;
    for (const SyncEvent& e : table.events) {
      if (e.kind == kind) ids.push_back(e.id);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (SyncEvent& e : table.events) {
      if (e.kind == kind)
        e.id = static_cast<int32_t>(std::lower_bound(ids.begin(), ids.end(), e.id) - ids.begin());
    }
  }
  RecountIds(table);
}

void RecountIds(EventTable& table) {
  IdsContinuous(table, &table.event_count, &table.notify_count);
}

int64_t NextId(const EventTable& table, SyncKind kind) {
  int64_t next = 0;
  for (const SyncEvent& e : table.events) {
    if (e.kind == kind) next = std::max<int64_t>(next, e.id + 1);
  }
  return next;
}

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
    for (size_t i = 0; i < count; ++i)
      keys[i] = {NamePrefix(m.node(NodeId(senders[i])).name), senders[i]};
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
      if (i + kNodePrefetch < count)
        PrefetchNode(m, static_cast<size_t>(senders[i + kNodePrefetch]));
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
          return less_node(static_cast<int32_t>(x & 0xffffffffu),
                           static_cast<int32_t>(y & 0xffffffffu));
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
      for (int p = 0; p < passes; ++p)
        ++dh[p * kDigits + ((keys[i] >> (32 + kDigitBits * p)) & (kDigits - 1))];
    }
    for (int p = 0; p < passes; ++p) {
      uint32_t* h = dh.data() + p * kDigits;
      if (std::count(h, h + kDigits, static_cast<uint32_t>(count)) == 1)
        continue;  // digit never varies
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
    return static_cast<size_t>(e.attached) * senders.size() +
           static_cast<size_t>(rank[e.send.index()]);
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
    if (last - first > 1 && !std::is_sorted(first, last, by_old_id))
      std::stable_sort(first, last, by_old_id);
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
  constexpr size_t kAhead =
      16;  // senders are read at random: prefetch the Node this many events ahead
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
  auto slot_of = [&](size_t i) {
    return static_cast<size_t>(is_notify[i] ? next[0] + evs[i].id : evs[i].id);
  };
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
