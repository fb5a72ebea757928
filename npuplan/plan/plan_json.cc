#include "npuplan/plan/plan_json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npuplan/ir/graph_json.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/json_document.h"
#include "npuplan/support/json_writer.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

using json = nlohmann::json;

// How many entries ahead the writers fetch what an entry reads from a Node
// visited out of order (a name-ordered or tensor-ordered walk over 1M Nodes
// misses the cache on nearly every one).
constexpr size_t kWritePrefetch = 8;

// The members after the first of an entry whose layout is fixed (the memory
// tensors, the node entries: at 1M entries the writer's per-member
// bookkeeping is most of their cost), as one piece of text for
// JsonWriter::Raw: each key's separator, newline, indentation and quotes are
// constants, strings quoted as the writer quotes them (AppendJsonString).
// The writer still opens and closes the entry and writes its first member,
// so its own state stays right. The writers below use indent 1, which these
// constants assume.
class EntryText {
 public:
  void Clear() { text_.clear(); }
  // `sep` is ",\n<indent>\"key\": ".
  void Int(std::string_view sep, int64_t v) {
    text_ += sep;
    char digits[24];
    text_.append(digits, std::to_chars(digits, digits + sizeof(digits), v).ptr);
  }
  void String(std::string_view sep, std::string_view s) {
    text_ += sep;
    AppendJsonString(text_, s);
  }
  // An array of integers whose elements sit at `indent` spaces (nlohmann's
  // "[]" when empty).
  template <typename T>
  void IntArray(std::string_view sep, std::span<const T> v, std::string_view close) {
    text_ += sep;
    if (v.empty()) {
      text_ += "[]";
      return;
    }
    text_ += '[';
    for (size_t k = 0; k < v.size(); ++k) {
      text_ += k == 0 ? kElementNewline : kElementSeparator;
      char digits[24];
      text_.append(digits,
                   std::to_chars(digits, digits + sizeof(digits), static_cast<int64_t>(v[k])).ptr);
    }
    text_ += close;
  }
  std::string_view text() const { return text_; }

  // Node entries' arrays: elements at 4 spaces, the bracket at 3.
  static constexpr std::string_view kElementNewline = "\n    ";
  static constexpr std::string_view kElementSeparator = ",\n    ";

 private:
  std::string text_;
};

// The writers of the plan's top-level keys, in the document's (sorted) key
// order; each streams into `w`.

void WriteEvents(const Plan& plan, JsonWriter& w) {
  const Model& m = plan.model;
  w.Key("event_counts");
  w.BeginObject();
  for (const auto& [k, v] : plan.events.counts) w.Field(k, v);
  w.EndObject();

  w.Key("events");
  w.BeginArray();
  for (const SyncEvent& e : plan.events.events) {
    w.BeginObject();
    w.Field("id", int64_t{e.id});
    w.Field("kind", SyncKindName(e.kind));
    w.Field("reason", SyncReasonName(e.reason));
    w.Field("recv", e.recv.valid() ? std::string_view(m.node(e.recv).name) : std::string_view());
    if (e.recv_attached >= 0) w.Field("recv_attached", int64_t{e.recv_attached});
    w.Field("send", e.send.valid() ? std::string_view(m.node(e.send).name) : std::string_view());
    if (e.send_attached >= 0) w.Field("send_attached", int64_t{e.send_attached});
    w.EndObject();
  }
  w.EndArray();
}

void WriteMemory(const Plan& plan, JsonWriter& w) {
  const Model& m = plan.model;
  const MemoryResult& mem = plan.memory;
  w.Key("memory");
  w.BeginObject();
  w.Field("alignment", mem.alignment);
  w.Key("dynamic_tensors");
  w.StringArray(mem.dynamic_tensors);
  w.Field("lower_bound", mem.lower_bound);
  w.Field("optimal", mem.optimal);
  w.Field("peak", mem.peak);
  w.Key("region_bytes");
  w.BeginObject();
  for (const auto& [k, v] : mem.region_bytes) w.Field(k, v);
  w.EndObject();
  w.Key("tensors");
  w.BeginArray();
  const BigVector<TensorPlacement>& tensors = mem.tensors;
  EntryText entry;
  for (size_t k = 0; k < tensors.size(); ++k) {
    // The tensors' nodes come in no useful order: fetch a node (then its
    // name's text, and the buffer's) ahead of its turn.
    if (k + 2 * kWritePrefetch < tensors.size()) {
      const TensorPlacement& ahead = tensors[k + 2 * kWritePrefetch];
      if (ahead.node.valid() && ahead.node.index() < m.num_nodes())
        __builtin_prefetch(&m.node(ahead.node));
    }
    if (k + kWritePrefetch < tensors.size()) {
      const TensorPlacement& ahead = tensors[k + kWritePrefetch];
      if (ahead.node.valid() && ahead.node.index() < m.num_nodes())
        __builtin_prefetch(m.node(ahead.node).name.data());
      __builtin_prefetch(ahead.buffer.data());
    }
    const TensorPlacement& t = tensors[k];
    w.BeginObject();
    w.Field("buffer", t.buffer);
    // Members at 4 spaces: top object, "memory", "tensors", the entry.
    entry.Clear();
    entry.Int(",\n    \"first_use\": ", t.first_use);
    entry.Int(",\n    \"last_use\": ", t.last_use);
    entry.String(",\n    \"node\": ", m.node(t.node).name);
    entry.Int(",\n    \"offset\": ", t.offset);
    entry.Int(",\n    \"output\": ", int64_t{t.output});
    entry.String(",\n    \"region\": ", MemoryRegionName(t.region));
    entry.Int(",\n    \"size\": ", t.size);
    entry.Int(",\n    \"stream\": ", t.stream);
    w.Raw(entry.text());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// The event ids each node sends (or receives), in table order: node i's are
// ids[begin[i] .. begin[i + 1]). 32-bit offsets, filled in place (no second
// cursor array): a table per node of a 1M-node plan is fresh memory, and
// there are only tens of thousands of events.
struct EventsByNode {
  std::vector<uint32_t> begin;
  std::vector<int64_t> ids;

  EventsByNode(const Plan& plan, NodeId SyncEvent::*end) : begin(plan.model.num_nodes() + 2, 0) {
    const size_t n = plan.model.num_nodes();
    for (const SyncEvent& e : plan.events.events) {
      const NodeId id = e.*end;
      if (id.valid() && id.index() < n) ++begin[id.index() + 2];
    }
    for (size_t i = 0; i < n; ++i) begin[i + 2] += begin[i + 1];
    ids.resize(begin[n + 1]);
    // begin[i + 1] is node i's start until its ids are placed, then its end.
    for (const SyncEvent& e : plan.events.events) {
      const NodeId id = e.*end;
      if (id.valid() && id.index() < n) ids[begin[id.index() + 1]++] = e.id;
    }
  }
  void Prefetch(size_t node) const { __builtin_prefetch(&begin[node]); }
  std::span<const int64_t> Of(size_t node) const {
    return {ids.data() + begin[node], ids.data() + begin[node + 1]};
  }
};

}  // namespace

namespace plan_json_internal {

// Node indices in name order (ties, only between equal names, by index).
// Sorted 16 bytes at a time, most significant first: entries sort by their
// names' bytes [0, 16) as two big-endian integers (NamePrefixAt, zero-padded:
// integer order is std::string's unsigned byte order wherever they differ),
// then each run equal there by bytes [16, 32), and so on; a run whose names
// all end within the bytes compared so far differs only in trailing zero
// bytes and length, and is sorted by whole names. So the sort rarely reads a
// name twice: generated names share long prefixes ("transformer_l3846_Send_…"
// for every Send node), which compared whole cost a cache miss per compare.
namespace {
// 20 bytes, not 24 (no tail padding): the sort's two arrays of a 1M-node
// plan are fresh memory.
#pragma pack(push, 4)
struct NameKey {
  uint64_t prefix[2];
  uint32_t index;
};
#pragma pack(pop)
static_assert(sizeof(NameKey) == 20);
// Byte d of the key (prefix[0], prefix[1]), least significant first.
inline uint32_t NameKeyByte(const NameKey& e, int d) {
  return static_cast<uint32_t>(e.prefix[d < 8 ? 1 : 0] >> (8 * (d & 7))) & 0xff;
}
// Runs at least this long are radix-sorted (a comparison sort below).
constexpr std::ptrdiff_t kRadixMin = 64;
}  // namespace

std::vector<uint32_t> NodesByName(const Model& m) {
  auto by_key = [](const NameKey& a, const NameKey& b) {
    if (a.prefix[0] != b.prefix[0]) return a.prefix[0] < b.prefix[0];
    if (a.prefix[1] != b.prefix[1]) return a.prefix[1] < b.prefix[1];
    return a.index < b.index;
  };
  auto name = [&m](const NameKey& e) -> const std::string& { return m.nodes()[e.index].name; };
  std::vector<NameKey> entries(m.num_nodes());
  for (size_t i = 0; i < entries.size(); ++i) {
    PrefetchNode(m, i + kNodePrefetch);
    const std::string& n = m.nodes()[i].name;
    entries[i] = {{NamePrefix(n), n.size() > 8 ? NamePrefixAt(n, 8) : 0}, static_cast<uint32_t>(i)};
  }
  struct Run {
    size_t begin, end, offset;  // entries [begin, end) sorted by bytes [0, offset)
  };
  // (prefix[0], prefix[1], index) order of a run whose entries are in index
  // order (the whole list; each run of equal keys, which the sort before
  // leaves in index order): a stable LSD radix sort by the 16 key bytes,
  // skipping the bytes every entry shares (most of them, on generated
  // names), in place of a comparison sort's cache-missing compares.
  // Left uninitialised: every pass writes all of it before reading it.
  std::unique_ptr<NameKey[]> scratch;
  size_t scratch_size = 0;
  auto radix_sort = [&scratch, &scratch_size](std::vector<NameKey>::iterator first,
                                              std::vector<NameKey>::iterator last) {
    const size_t n = static_cast<size_t>(last - first);
    std::vector<std::array<uint32_t, 256>> count(16, std::array<uint32_t, 256>{});
    for (auto it = first; it != last; ++it) {
      for (int d = 0; d < 16; ++d) ++count[d][NameKeyByte(*it, d)];
    }
    if (scratch_size < n) {
      scratch = std::make_unique_for_overwrite<NameKey[]>(n);
      scratch_size = n;
    }
    NameKey* from = &*first;
    NameKey* to = scratch.get();
    for (int d = 0; d < 16; ++d) {
      std::array<uint32_t, 256>& c = count[d];
      if (c[NameKeyByte(*from, d)] == n) continue;  // one digit for all: the order stands
      uint32_t sum = 0;
      for (uint32_t& x : c) sum += std::exchange(x, sum);
      for (size_t i = 0; i < n; ++i) to[c[NameKeyByte(from[i], d)]++] = from[i];
      std::swap(from, to);
    }
    if (from != &*first) std::copy(from, from + n, first);
  };
  std::vector<Run> todo{{0, entries.size(), 0}};
  while (!todo.empty()) {
    const Run r = todo.back();
    todo.pop_back();
    const auto first = entries.begin() + static_cast<std::ptrdiff_t>(r.begin);
    const auto last = entries.begin() + static_cast<std::ptrdiff_t>(r.end);
    if (r.offset > 0) {
      if (std::all_of(first, last, [&](const NameKey& e) { return name(e).size() <= r.offset; })) {
        std::sort(first, last, [&](const NameKey& a, const NameKey& b) {
          const int c = name(a).compare(name(b));
          return c != 0 ? c < 0 : a.index < b.index;
        });
        continue;
      }
      for (auto it = first; it != last; ++it) {
        const std::string& n = name(*it);
        it->prefix[0] = n.size() > r.offset ? NamePrefixAt(n, r.offset) : 0;
        it->prefix[1] = n.size() > r.offset + 8 ? NamePrefixAt(n, r.offset + 8) : 0;
      }
    }
    if (last - first >= kRadixMin) {
      radix_sort(first, last);
    } else {
      std::sort(first, last, by_key);
    }
    for (size_t b = r.begin; b < r.end;) {
      size_t e = b + 1;
      while (e < r.end && entries[e].prefix[0] == entries[b].prefix[0] &&
             entries[e].prefix[1] == entries[b].prefix[1])
        ++e;
      if (e - b > 1) todo.push_back({b, e, r.offset + 16});
      b = e;
    }
  }
  std::vector<uint32_t> order(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) order[i] = entries[i].index;
  return order;
}

}  // namespace plan_json_internal

namespace {

// Node entries keyed (so sorted) by name.
void WriteNodes(const Plan& plan, JsonWriter& w) {
  const Model& m = plan.model;
  const EventsByNode sends(plan, &SyncEvent::send), recvs(plan, &SyncEvent::recv);
  const std::vector<uint32_t> by_name = plan_json_internal::NodesByName(m);
  EntryText entry;
  w.Key("nodes");
  w.BeginObject();
  for (size_t k = 0; k < by_name.size(); ++k) {
    // Name order visits the nodes and their per-node entries out of order:
    // fetch what a node's entry reads ahead of its turn (the name's text a
    // step later, once the Node is in cache).
    if (k + 2 * kWritePrefetch < by_name.size()) {
      const uint32_t j = by_name[k + 2 * kWritePrefetch];
      const Node& ahead = m.nodes()[j];
      __builtin_prefetch(&ahead.name);
      __builtin_prefetch(&ahead.topo_id);
      __builtin_prefetch(&ahead.stream_id);
      if (j < plan.physical_stream.size()) __builtin_prefetch(&plan.physical_stream[j]);
      if (j < plan.tasks.size()) __builtin_prefetch(&plan.tasks[j]);
      recvs.Prefetch(j);
      sends.Prefetch(j);
    }
    if (k + kWritePrefetch < by_name.size())
      __builtin_prefetch(m.nodes()[by_name[k + kWritePrefetch]].name.data());
    const uint32_t i = by_name[k];
    const Node& n = m.nodes()[i];
    const std::string& name = n.name;
    int64_t physical = i < plan.physical_stream.size() ? plan.physical_stream[i] : -1;
    w.Key(name);
    w.BeginObject();
    w.Key("attached_streams");
    w.IntArray(n.attached_stream_ids);
    // Members at 3 spaces: top object, "nodes", the entry.
    const int64_t tasks = i < plan.tasks.size() ? plan.tasks[i] : int64_t{0};
    entry.Clear();
    entry.String(",\n   \"graph\": ", m.graph(n.graph).name);
    entry.Int(",\n   \"logical_stream\": ", n.stream_id);
    entry.IntArray(",\n   \"recv_events\": ", recvs.Of(i), "\n   ]");
    entry.IntArray(",\n   \"send_events\": ", sends.Of(i), "\n   ]");
    entry.Int(",\n   \"stream\": ", physical >= 0 ? physical : n.stream_id);
    entry.Int(",\n   \"tasks\": ", tasks);
    entry.Int(",\n   \"topo_id\": ", n.topo_id);
    w.Raw(entry.text());
    w.EndObject();
  }
  w.EndObject();
}

void WritePartition(const Plan& plan, JsonWriter& w) {
  const PartitionResult& p = plan.partition;
  w.Key("partition");
  w.BeginObject();
  w.Key("cluster_counts");
  w.BeginObject();
  for (const auto& [k, v] : p.cluster_counts) w.Field(k, v);
  w.EndObject();
  w.Field("decision", PartitionDecisionName(p.decision));
  if (p.marked) {
    w.Key("no_tiling_nodes");
    w.StringArray(p.no_tiling_nodes);
  }
  w.Field("reason", p.reason);
  w.Key("subgraphs");
  w.BeginArray();
  for (const PartitionSubgraph& sg : p.subgraphs) {
    w.BeginObject();
    w.Field("call_node", sg.call_node);
    w.Field("kind", SubgraphKindName(sg.kind));
    w.Field("name", sg.name);
    w.Key("nodes");
    w.BeginArray();
    for (NodeId id : sg.nodes) w.String(plan.model.node(id).name);
    w.EndArray();
    w.Key("reasons");
    w.StringArray(sg.reasons);
    w.EndObject();
  }
  w.EndArray();
  if (p.marked) {
    w.Key("unknown_nodes");
    w.BeginObject();
    for (const auto& [k, v] : p.unknown_nodes) w.Field(k, v);
    w.EndObject();
  }
  w.EndObject();
}

void WriteStages(const Plan& plan, JsonWriter& w) {
  w.Key("stages");
  w.BeginArray();
  for (IrProperty p : kPlanStages) {
    if (Has(plan.established, p)) w.String(PropertyNames(static_cast<IrProperties>(p)));
  }
  w.EndArray();
  if (plan.in_progress != 0) w.Field("in_progress", PropertyNames(plan.in_progress));
}

// Small: a DOM (nlohmann sorts its keys).
json StreamsJson(const Plan& plan) {
  const Model& m = plan.model;
  const StreamResult& s = plan.streams;
  json streams = json::object();
  streams["logical"] = s.logical;
  streams["physical"] = s.physical;
  streams["attached"] = s.attached;
  streams["huge"] = s.huge;
  json split = json::object();
  for (const auto& [p, l] : s.split_to_logical) split[std::to_string(p)] = l;
  streams["split_to_logical"] = std::move(split);
  streams["task_limit"] = s.task_limit;
  streams["huge_task_limit"] = s.huge_task_limit;
  if (!s.attached_physical.empty()) {
    json ap = json::object();
    for (const auto& [n, ids] : s.attached_physical) {
      if (n >= 0 && static_cast<size_t>(n) < m.num_nodes()) ap[m.nodes()[n].name] = ids;
    }
    streams["attached_physical"] = std::move(ap);
  }
  streams["mode"] = std::string(StreamModeName(s.mode));
  if (!s.auto_mode.empty()) {
    streams["auto_mode"] = s.auto_mode;
    streams["estimated_makespan"] = s.estimated_makespan;
    streams["makespan_lower_bound"] = s.makespan_lower_bound;
  }
  streams["assigned_by_stream_pass"] = s.assigned_by_stream_pass;
  json list = json::array();
  for (const LogicalStream& ls : s.streams) {
    list.push_back(json{{"id", ls.id},
                        {"user_label", ls.user_label},
                        {"attached_ids", ls.attached_ids},
                        {"physical_count", ls.physical_count},
                        {"hccl_followed_count", ls.hccl_followed_count}});
  }
  streams["list"] = std::move(list);
  return streams;
}

json SummaryJson(const Plan& plan) {
  const Model& m = plan.model;
  const StreamResult& s = plan.streams;
  int64_t notifies = 0, evs = 0;
  for (const SyncEvent& e : plan.events.events) (e.kind == SyncKind::kNotify ? notifies : evs) += 1;
  return json{{"nodes", m.num_nodes()},
              {"graphs", m.num_graphs()},
              {"logical_streams", s.logical},
              {"physical_streams", s.physical},
              {"attached_streams", s.attached.size()},
              {"events", plan.events.event_count},
              {"notifies", plan.events.notify_count},
              {"sync_pairs", evs + notifies},
              {"memory_peak", plan.memory.peak},
              {"memory_lower_bound", plan.memory.lower_bound}};
}

}  // namespace

bool LooksLikePlan(std::string_view text) { return TopLevelString(text, "format") == kPlanFormat; }

namespace {

// Streams the plan (byte-identical to nlohmann's dump(1) of the same document
// with sorted keys); only the small "streams" and "summary" parts are DOMs.
// The keys before `await_rest` read only plan.model and plan.events.
bool WritePlan(const Plan& plan, JsonWriter& w, const std::function<bool()>& await_rest = nullptr) {
  w.BeginObject();
  WriteEvents(plan, w);
  w.Field("format", kPlanFormat);
  w.Key("graph");
  WriteGraph(plan.model, w);
  if (await_rest && !await_rest()) return false;
  if (plan.memory.planned) WriteMemory(plan, w);
  WriteNodes(plan, w);
  if (plan.partition.ran) WritePartition(plan, w);
  WriteStages(plan, w);
  w.Key("streams");
  w.Value(StreamsJson(plan));
  w.Key("summary");
  w.Value(SummaryJson(plan));
  w.EndObject();
  w.Raw("\n");
  return true;
}

}  // namespace

std::string WritePlanJson(const Plan& plan) {
  std::string out;
  JsonWriter w(&out, 1);
  WritePlan(plan, w);
  w.Flush();
  return out;
}

absl::Status WritePlanJson(const Plan& plan, const JsonChunkSink& sink) {
  JsonWriter w(sink, 1);
  WritePlan(plan, w);
  return w.Finish();
}

absl::Status WritePlanJson(const Plan& plan, const JsonChunkSink& sink,
                           const std::function<bool()>& await_rest) {
  JsonWriter w(sink, 1);
  if (!WritePlan(plan, w, await_rest)) return absl::CancelledError("the plan was not finished");
  return w.Finish();
}

absl::Status WritePlanFile(const Plan& plan, const std::string& path, std::string_view what) {
  OutputTransaction out;
  NPUPLAN_RETURN_IF_ERROR(out.Add(path, what));
  NPUPLAN_RETURN_IF_ERROR(out.WriteChunks(path, [&](const OutputTransaction::ChunkWriter& write) {
    return WritePlanJson(plan, write);
  }));
  return out.Commit();
}

}  // namespace npuplan
