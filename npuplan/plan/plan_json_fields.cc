#include "npuplan/plan/plan_json_fields.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {

using json = nlohmann::json;

namespace {

absl::Status BadField(std::string_view src, std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(src, ": ", path, ": ", what));
}

bool IntValue(const json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v.get<uint64_t>());
    return true;
  }
  if (!v.is_number_integer()) return false;
  *out = v.get<int64_t>();
  return true;
}

// OK when `key` is one of `allowed`, else the unknown-field error at `path`.
template <typename Allowed>
absl::Status KnownKey(std::string_view src, std::string_view path, std::string_view key,
                      const Allowed& allowed) {
  if (std::find(std::begin(allowed), std::end(allowed), key) != std::end(allowed))
    return absl::OkStatus();
  return BadField(src, StrCat(path, ".", EchoName(key)),
                  StrCat("unknown field (expected one of: ", StrJoin(allowed, ", "), ")"));
}

// `v` is an object of only the `allowed` keys.
absl::Status OnlyKeys(std::string_view src, const json& v, std::string_view path,
                      std::initializer_list<std::string_view> allowed) {
  if (!v.is_object())
    return BadField(src, path, StrCat("expected an object, found ", v.type_name()));
  for (auto it = v.begin(); it != v.end(); ++it) {
    NPUPLAN_RETURN_IF_ERROR(KnownKey(src, path, it.key(), allowed));
  }
  return absl::OkStatus();
}

// An integer field that must equal `want` (what the plan's content gives).
absl::Status EqualField(std::string_view src, const json& obj, std::string_view key,
                        std::string_view path, int64_t want, std::string_view why) {
  auto it = obj.find(key);
  if (it == obj.end()) return absl::OkStatus();
  if (!it->is_number_integer()) {
    return BadField(src, StrCat(path, ".", key),
                    StrCat("expected an integer, found ", it->type_name()));
  }
  int64_t got = 0;
  if (!IntValue(*it, &got) || got != want)
    return BadField(src, StrCat(path, ".", key),
                    StrCat("is ", it->dump(), " but ", why, " ", want));
  return absl::OkStatus();
}

// An integer field the reader stores in 32 bits: it must have fitted.
absl::Status FitsField(std::string_view src, const json& obj, std::string_view key,
                       std::string_view path, int32_t stored) {
  auto it = obj.find(key);
  int64_t got = 0;
  if (it == obj.end() || (IntValue(*it, &got) && got == stored)) return absl::OkStatus();
  return BadField(src, StrCat(path, ".", key),
                  StrCat(EchoName(it->dump()), " is not a 32-bit integer"));
}

}  // namespace

PlanEntryFacts::IdList PlanEntryFacts::ReadIdList(const json& entry, std::string_view key,
                                                  size_t other_key) {
  IdList l;
  auto it = entry.find(key);
  if (it == entry.end()) return l;
  l.begin = ints_.size();
  l.state = IdList::kInts;
  if (it->is_array()) {
    for (const json& v : *it) {
      int64_t x = 0;
      if (!IntValue(v, &x)) {
        l.state = IdList::kOther;
        break;
      }
      ints_.push_back(x);
    }
  } else {
    l.state = IdList::kOther;
  }
  if (l.state == IdList::kOther) {
    ints_.resize(l.begin);
    others_[other_key] = Other{it->dump(), it->is_array() ? "" : it->type_name()};
  }
  l.end = ints_.size();
  return l;
}

void PlanEntryFacts::AddNode(const Model& m, std::string_view key, NodeId id, const json& entry,
                             bool physical, std::string_view src) {
  if (!early_.ok() || !stream_.ok()) return;  // the checks stop at that entry
  const size_t at_entry = nodes_.size();
  const std::string at = StrCat("$.nodes.", EchoName(key));
  const Node& node = m.node(id);
  absl::Status early = OnlyKeys(src, entry, at,
                                {"attached_streams", "graph", "logical_stream", "recv_events",
                                 "send_events", "stream", "tasks", "topo_id"});
  if (early.ok()) {
    if (auto g = entry.find("graph"); g != entry.end()) {
      const std::string& want = m.graph(node.graph).name;
      if (!g->is_string() || g->get_ref<const std::string&>() != want) {
        early = BadField(
            src, StrCat(at, ".graph"),
            StrCat("is ", EchoName(g->dump()), " but the node is in graph '", EchoName(want), "'"));
      }
    }
  }
  if (early.ok())
    early = EqualField(src, entry, "topo_id", at, node.topo_id, "its position in its graph is");
  NodeEntry e{id, {}, {}};
  if (early.ok()) {
    e.send = ReadIdList(entry, "send_events", 2 * at_entry);
    e.recv = ReadIdList(entry, "recv_events", 2 * at_entry + 1);
  }
  nodes_.push_back(std::move(e));
  if (!early.ok()) {
    early_at_ = at_entry;
    early_ = std::move(early);
    return;
  }
  if (!physical) {
    absl::Status s = EqualField(src, entry, "stream", at, node.stream_id,
                                "without stage 'physical-streams' it is the logical stream,");
    if (!s.ok()) {
      stream_at_ = at_entry;
      stream_ = std::move(s);
    }
  }
}

void PlanEntryFacts::AddTensor(size_t i, const json& entry, int32_t stored, std::string_view src) {
  if (!tensor_.ok()) return;
  const std::string at = StrCat("$.memory.tensors[", i, "]");
  tensor_ = OnlyKeys(
      src, entry, at,
      {"buffer", "first_use", "last_use", "node", "offset", "output", "region", "size", "stream"});
  if (tensor_.ok()) tensor_ = FitsField(src, entry, "output", at, stored);
}

class FieldChecker {
 public:
  FieldChecker(const Plan& plan, const PlanEntryFacts& facts, std::string_view src)
      : plan_(plan), m_(plan.model), facts_(facts), src_(src) {}

  // The events are read an entry at a time and the small sections as one
  // DOM each; of the nodes and memory tensors the reader gathered the facts.
  absl::Status Run(const JsonText& doc) {
    NPUPLAN_RETURN_IF_ERROR(Keys(doc, "$",
                                 {"event_counts", "events", "format", "graph", "in_progress",
                                  "memory", "nodes", "partition", "stages", "streams", "summary"}));
    NPUPLAN_RETURN_IF_ERROR(Small(doc, "stages", &FieldChecker::Stages));
    NPUPLAN_RETURN_IF_ERROR(Nodes());
    NPUPLAN_RETURN_IF_ERROR(Large(doc, "events", &FieldChecker::Events));
    NPUPLAN_RETURN_IF_ERROR(Small(doc, "streams", &FieldChecker::Streams));
    if (doc.Find("memory")) NPUPLAN_RETURN_IF_ERROR(Memory());
    NPUPLAN_RETURN_IF_ERROR(Small(doc, "partition", &FieldChecker::Partition));
    return Small(doc, "summary", &FieldChecker::Summary);
  }

 private:
  absl::Status Bad(std::string_view path, std::string_view what) const {
    return absl::InvalidArgumentError(StrCat(src_, ": ", path, ": ", what));
  }

  absl::Status Small(const JsonText& doc, std::string_view key,
                     absl::Status (FieldChecker::*check)(const json&) const) const {
    const std::optional<size_t> i = doc.Find(key);
    if (!i) return absl::OkStatus();
    NPUPLAN_ASSIGN_OR_RETURN(const json v, doc.Parse(*i));
    return (this->*check)(v);
  }
  absl::Status Large(const JsonText& doc, std::string_view key,
                     absl::Status (FieldChecker::*check)(const JsonText&) const) const {
    const std::optional<size_t> i = doc.Find(key);
    if (!i) return absl::OkStatus();
    NPUPLAN_ASSIGN_OR_RETURN(const JsonText v, doc.Open(*i));
    return (this->*check)(v);
  }

  // `v` (a DOM or a JsonText) is an object of only the `allowed` keys.
  template <typename Object>
  absl::Status Keys(const Object& v, std::string_view path,
                    std::initializer_list<std::string_view> allowed) const {
    if (!v.is_object()) return Bad(path, StrCat("expected an object, found ", TypeName(v)));
    for (const std::string_view key : KeysOf(v)) {
      NPUPLAN_RETURN_IF_ERROR(KnownKey(src_, path, key, allowed));
    }
    return absl::OkStatus();
  }
  static std::string TypeName(const json& v) { return v.type_name(); }
  static std::string TypeName(const JsonText& v) { return v.Shape().type_name(); }
  static std::vector<std::string_view> KeysOf(const json& v) {
    std::vector<std::string_view> keys;
    for (auto it = v.begin(); it != v.end(); ++it) keys.push_back(it.key());
    return keys;
  }
  static std::vector<std::string_view> KeysOf(const JsonText& v) {
    std::vector<std::string_view> keys;
    for (size_t i = 0; i < v.size(); ++i) keys.push_back(v.key(i));
    return keys;
  }

  absl::Status Array(const json& v, std::string_view path) const {
    if (!v.is_array()) return Bad(path, StrCat("expected an array, found ", v.type_name()));
    return absl::OkStatus();
  }
  absl::Status Array(const JsonText& v, std::string_view path) const {
    return Array(v.Shape(), path);
  }

  absl::Status Equal(const json& obj, std::string_view key, std::string_view path, int64_t want,
                     std::string_view why) const {
    return EqualField(src_, obj, key, path, want, why);
  }
  absl::Status Fits(const json& obj, std::string_view key, std::string_view path,
                    int32_t stored) const {
    return FitsField(src_, obj, key, path, stored);
  }

  absl::Status Stages(const json& v) const {
    NPUPLAN_RETURN_IF_ERROR(Array(v, "$.stages"));
    std::set<std::string> seen;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i].is_string() && !seen.insert(v[i].get<std::string>()).second) {
        return Bad(StrCat("$.stages[", i, "]"),
                   StrCat("stage '", EchoName(v[i].get<std::string>()), "' is listed twice"));
      }
    }
    return absl::OkStatus();
  }

  // A node entry's event list, as written, that must be `want`.
  absl::Status IdList(const PlanEntryFacts::IdList& l, size_t other_key, std::string_view key,
                      NodeId node, const std::vector<int64_t>& want, std::string_view why) const {
    if (l.state == PlanEntryFacts::IdList::kAbsent) return absl::OkStatus();
    const std::string at = StrCat("$.nodes.", EchoName(m_.node(node).name), ".", key);
    std::string dump;
    if (l.state == PlanEntryFacts::IdList::kOther) {
      const PlanEntryFacts::Other& o = facts_.others_.at(other_key);
      if (!o.type.empty()) return Bad(at, StrCat("expected an array, found ", o.type));
      dump = o.dump;
    } else {
      const std::span<const int64_t> got(facts_.ints_.data() + l.begin, l.end - l.begin);
      if (std::equal(got.begin(), got.end(), want.begin(), want.end())) return absl::OkStatus();
      dump = StrCat("[", StrJoin(got, ","), "]");
    }
    return Bad(at, StrCat("is ", EchoName(dump), " but ", why, " [", StrJoin(want, ","), "]"));
  }

  // The node entries' checks, in document order: an entry's unknown field,
  // graph and topo_id (PlanEntryFacts::AddNode), its event lists against
  // $.events, then its stream (AddNode); then every node has an entry.
  absl::Status Nodes() const {
    if (!facts_.nodes_present) return absl::OkStatus();
    const size_t n = m_.num_nodes();
    // The event ids each node records / waits for, in table order (as written).
    std::vector<std::vector<int64_t>> sends(n), recvs(n);
    for (const SyncEvent& e : plan_.events.events) {
      if (e.send.valid() && e.send.index() < n) sends[e.send.index()].push_back(e.id);
      if (e.recv.valid() && e.recv.index() < n) recvs[e.recv.index()].push_back(e.id);
    }
    std::vector<uint8_t> seen(n, 0);
    for (size_t i = 0; i < facts_.nodes_.size(); ++i) {
      if (i == facts_.early_at_) return facts_.early_;
      const PlanEntryFacts::NodeEntry& e = facts_.nodes_[i];
      seen[e.id.index()] = 1;
      NPUPLAN_RETURN_IF_ERROR(
          IdList(e.send, 2 * i, "send_events", e.id, sends[e.id.index()], "$.events has it send"));
      NPUPLAN_RETURN_IF_ERROR(IdList(e.recv, 2 * i + 1, "recv_events", e.id, recvs[e.id.index()],
                                     "$.events has it wait for"));
      if (i == facts_.stream_at_) return facts_.stream_;
    }
    for (size_t i = 0; i < n; ++i) {
      if (!seen[i])
        return Bad("$.nodes", StrCat("node '", EchoName(m_.nodes()[i].name), "' has no entry"));
    }
    return absl::OkStatus();
  }

  absl::Status Events(const JsonText& v) const {
    NPUPLAN_RETURN_IF_ERROR(Array(v, "$.events"));
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string at = StrCat("$.events[", i, "]");
      NPUPLAN_ASSIGN_OR_RETURN(const json entry, v.Parse(i));
      NPUPLAN_RETURN_IF_ERROR(Keys(
          entry, at, {"id", "kind", "reason", "recv", "recv_attached", "send", "send_attached"}));
      if (i >= plan_.events.events.size()) continue;
      const SyncEvent& e = plan_.events.events[i];
      NPUPLAN_RETURN_IF_ERROR(Fits(entry, "send_attached", at, e.send_attached));
      NPUPLAN_RETURN_IF_ERROR(Fits(entry, "recv_attached", at, e.recv_attached));
    }
    return absl::OkStatus();
  }

  absl::Status Streams(const json& v) const {
    NPUPLAN_RETURN_IF_ERROR(
        Keys(v, "$.streams",
             {"assigned_by_stream_pass", "attached", "attached_physical", "auto_mode",
              "estimated_makespan", "huge", "huge_task_limit", "list", "logical",
              "makespan_lower_bound", "mode", "physical", "split_to_logical", "task_limit"}));
    if (auto it = v.find("list"); it != v.end()) {
      NPUPLAN_RETURN_IF_ERROR(Array(*it, "$.streams.list"));
      for (size_t i = 0; i < it->size(); ++i) {
        NPUPLAN_RETURN_IF_ERROR(
            Keys((*it)[i], StrCat("$.streams.list[", i, "]"),
                 {"attached_ids", "hccl_followed_count", "id", "physical_count", "user_label"}));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Memory() const {
    constexpr std::string_view kAllowed[] = {
        "alignment", "dynamic_tensors", "lower_bound", "optimal",
        "peak",      "region_bytes",    "tensors"};
    for (const std::string& key : facts_.memory_keys_) {
      NPUPLAN_RETURN_IF_ERROR(KnownKey(src_, "$.memory", key, kAllowed));
    }
    return facts_.tensor_;
  }

  absl::Status Partition(const json& v) const {
    NPUPLAN_RETURN_IF_ERROR(Keys(
        v, "$.partition",
        {"cluster_counts", "decision", "no_tiling_nodes", "reason", "subgraphs", "unknown_nodes"}));
    if (auto it = v.find("subgraphs"); it != v.end()) {
      NPUPLAN_RETURN_IF_ERROR(Array(*it, "$.partition.subgraphs"));
      for (size_t i = 0; i < it->size(); ++i) {
        NPUPLAN_RETURN_IF_ERROR(Keys((*it)[i], StrCat("$.partition.subgraphs[", i, "]"),
                                     {"call_node", "kind", "name", "nodes", "reasons"}));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Summary(const json& v) const {
    NPUPLAN_RETURN_IF_ERROR(
        Keys(v, "$.summary",
             {"attached_streams", "events", "graphs", "logical_streams", "memory_lower_bound",
              "memory_peak", "nodes", "notifies", "physical_streams", "sync_pairs"}));
    const StreamResult& s = plan_.streams;
    const char* has = "the plan has";
    NPUPLAN_RETURN_IF_ERROR(
        Equal(v, "nodes", "$.summary", static_cast<int64_t>(m_.num_nodes()), has));
    NPUPLAN_RETURN_IF_ERROR(
        Equal(v, "graphs", "$.summary", static_cast<int64_t>(m_.num_graphs()), has));
    NPUPLAN_RETURN_IF_ERROR(
        Equal(v, "logical_streams", "$.summary", s.logical, "streams.logical is"));
    NPUPLAN_RETURN_IF_ERROR(
        Equal(v, "physical_streams", "$.summary", s.physical, "streams.physical is"));
    NPUPLAN_RETURN_IF_ERROR(Equal(v, "attached_streams", "$.summary",
                                  static_cast<int64_t>(s.attached.size()), "streams.attached has"));
    NPUPLAN_RETURN_IF_ERROR(Equal(v, "sync_pairs", "$.summary",
                                  static_cast<int64_t>(plan_.events.events.size()),
                                  "$.events has"));
    NPUPLAN_RETURN_IF_ERROR(
        Equal(v, "memory_peak", "$.summary", plan_.memory.peak, "memory.peak is"));
    return Equal(v, "memory_lower_bound", "$.summary", plan_.memory.lower_bound,
                 "memory.lower_bound is");
  }

  const Plan& plan_;
  const Model& m_;
  const PlanEntryFacts& facts_;
  std::string_view src_;
};

absl::Status CheckPlanDocumentFields(const JsonText& doc, const Plan& plan,
                                     const PlanEntryFacts& facts, std::string_view src) {
  return FieldChecker(plan, facts, src).Run(doc);
}

}  // namespace npuplan
