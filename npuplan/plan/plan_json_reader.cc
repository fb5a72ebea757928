// The reader of the plan format (docs/plan-format.md, "Reading a plan"): the
// "graph" goes through the graph reader, the plan's own sections through
// typed, range-checked reads (npuplan/support/json_fields.h). The plan is
// never one DOM: beside the strict checks of the whole text (CheckJsonDocument,
// whose errors come first) the graph reader streams the "graph" member's
// text, and the large sections (nodes, events, memory tensors) are parsed an
// entry at a time (JsonText), each entry once.
#include <charconv>
#include <new>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>

#include "npuplan/ir/graph_json.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/plan/plan_json_fields.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/json_document.h"
#include "npuplan/support/json_fields.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/text_checks.h"

namespace npuplan {
namespace {

using json = nlohmann::json;

// JSON levels of a plan around an attribute value nested --max-depth deep
// ($ > graph > subgraphs > [i] > nodes > [j] > attrs > value).
constexpr int64_t kPlanJsonNesting = 16;

absl::Status Bad(std::string_view src, std::string_view where, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(src, ": ", where, ": ", what));
}
// A name outside an enum's table. The text and code are those the claims
// check (plan_claims.cc, rule `rule`) gave when such a name was still read
// into a string: "<src>: verifier[<rule>]: <field> '<name>' is not one of …".
absl::Status NotOneOf(std::string_view src, std::string_view rule, std::string_view field,
                      std::string_view name, std::string_view allowed) {
  return absl::InternalError(StrCat(src, ": verifier[", rule, "]: ", field, " '", EchoName(name),
                                    "' is not one of ", allowed));
}

// Reads the plan's own sections (everything but "graph", which the graph
// reader reads) into `plan`. Every field is typed and range-checked against
// what the file itself can hold, so no later stage sizes an array by an id
// read here (issue #19): a stream id must be below the number of stream slots
// the nodes have (one per node, one per attached-stream entry), an attached
// index below its node's attached streams, an output index within int32.
class PlanSections {
 public:
  PlanSections(const JsonText& doc, std::string_view src, Plan& plan)
      : doc_(doc), src_(src), f_(src), plan_(plan), m_(plan.model) {}

  absl::Status Read() {
    NPUPLAN_RETURN_IF_ERROR(ReadStages());
    NPUPLAN_RETURN_IF_ERROR(ReadNodes());
    NPUPLAN_RETURN_IF_ERROR(ReadStreams());
    NPUPLAN_RETURN_IF_ERROR(ReadEvents());
    NPUPLAN_RETURN_IF_ERROR(ReadSummary());
    NPUPLAN_RETURN_IF_ERROR(ReadMemory());
    return ReadPartition();
  }
  // The first name outside an enum's table, if any: reported after every
  // other read check, where the claims check used to reject such a name.
  const absl::Status& name_error() const { return name_error_; }
  const PlanEntryFacts& facts() const { return facts_; }

 private:
  // Keeps the first name error (see Read).
  void NameError(absl::Status s) {
    if (name_error_.ok()) name_error_ = std::move(s);
  }

  // The section `key` of the document (an object, or an array when `object`
  // is false) as a DOM, nullopt when absent.
  absl::StatusOr<std::optional<json>> Section(std::string_view key, bool object) const {
    const std::optional<size_t> i = doc_.Find(key);
    if (!i) return std::nullopt;
    NPUPLAN_ASSIGN_OR_RETURN(json v, doc_.Parse(*i));
    NPUPLAN_RETURN_IF_ERROR(Kind(v, StrCat("$.", key), object));
    return std::optional<json>(std::move(v));
  }
  // A section that grows with the graph, its entries read one at a time.
  absl::StatusOr<std::optional<JsonText>> LargeSection(const JsonText& in, std::string_view key,
                                                       const std::string& path, bool object) const {
    const std::optional<size_t> i = in.Find(key);
    if (!i) return std::nullopt;
    NPUPLAN_ASSIGN_OR_RETURN(JsonText v, in.Open(*i));
    NPUPLAN_RETURN_IF_ERROR(Kind(v.Shape(), path, object));
    return std::optional<JsonText>(std::move(v));
  }
  absl::Status Kind(const json& v, const std::string& path, bool object) const {
    return object ? f_.Object(v, path) : f_.Array(v, path);
  }

  absl::Status ReadStages() {
    NPUPLAN_ASSIGN_OR_RETURN(const std::optional<json> st, Section("stages", false));
    if (!st) return absl::OkStatus();
    NPUPLAN_ASSIGN_OR_RETURN(std::vector<std::string> names, f_.StringList(*st, "$.stages"));
    for (const std::string& name : names) {
      bool known = false;
      for (IrProperty p : kPlanStages) {
        if (PropertyNames(static_cast<IrProperties>(p)) == name) {
          plan_.established |= static_cast<IrProperties>(p);
          known = true;
        }
      }
      if (!known) return Bad(src_, "$.stages", StrCat("unknown stage '", name, "'"));
    }
    return ReadInProgress();
  }

  // "in_progress": the one stage a --dump-after snapshot was taken inside.
  absl::Status ReadInProgress() {
    const std::optional<size_t> i = doc_.Find("in_progress");
    if (!i) return absl::OkStatus();
    NPUPLAN_ASSIGN_OR_RETURN(const json v, doc_.Parse(*i));
    if (!v.is_string())
      return Bad(src_, "$.in_progress", StrCat("expected a stage name, found ", v.type_name()));
    const std::string& name = v.get_ref<const std::string&>();
    for (IrProperty p : kPlanStages) {
      if (PropertyNames(static_cast<IrProperties>(p)) == name) {
        plan_.in_progress = static_cast<IrProperties>(p);
        return absl::OkStatus();
      }
    }
    return Bad(src_, "$.in_progress", StrCat("unknown stage '", EchoName(name), "'"));
  }

  // A stream id field: -1 (none) when `allow_none`, else 0..max_stream_.
  absl::StatusOr<int64_t> StreamId(const json& v, const std::string& path, bool allow_none = false) const {
    NPUPLAN_ASSIGN_OR_RETURN(int64_t id, f_.Int(v, path));
    NPUPLAN_RETURN_IF_ERROR(StreamRange(id, path, allow_none));
    return id;
  }
  bool InStreamRange(int64_t id, bool allow_none) const {
    return (id >= 0 || (allow_none && id == -1)) && id <= max_stream_;
  }
  absl::Status StreamRange(int64_t id, std::string_view path, bool allow_none = false) const {
    if (InStreamRange(id, allow_none)) return absl::OkStatus();
    return f_.Error(path, StrCat("stream id ", id,
                                 " is out of range: the plan's nodes and attached streams allow ",
                                 allow_none ? "-1 (none) or " : "", "0..", max_stream_));
  }
  absl::StatusOr<std::vector<int64_t>> StreamIds(const json& v, const std::string& path) const {
    NPUPLAN_RETURN_IF_ERROR(f_.Array(v, path));
    std::vector<int64_t> ids;
    ids.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      NPUPLAN_ASSIGN_OR_RETURN(int64_t id, StreamId(v[i], JsonFields::Element(path, i)));
      ids.push_back(id);
    }
    return ids;
  }
  absl::StatusOr<std::vector<int64_t>> StreamIdsOr(const json& obj, const std::string& path,
                                                   std::string_view key) const {
    const json* v = JsonFields::Find(obj, key);
    if (v == nullptr) return std::vector<int64_t>{};
    return StreamIds(*v, JsonFields::Member(path, key));
  }
  // A count of streams: 0..max_stream_ + 1.
  absl::StatusOr<int64_t> StreamCount(const json& obj, const std::string& path, std::string_view key) const {
    NPUPLAN_ASSIGN_OR_RETURN(int64_t n, f_.IntOr(obj, path, key, 0));
    if (n < 0 || n > max_stream_ + 1) {
      return f_.Error(JsonFields::Member(path, key),
                      StrCat(n, " streams is out of range: the plan's nodes and attached streams allow 0..",
                             max_stream_ + 1));
    }
    return n;
  }

  // $.nodes, each entry parsed once. Stream ids are bounded by the slots the
  // file's nodes give (one per node and per attached-stream entry), known
  // only after the last entry: the ids are range-checked in a second walk
  // over what the first stored, which stops at the first entry whose own
  // read failed, so the error reported is the first in document order (a
  // non-object entry before any other). The field checks' facts come from
  // the same DOMs (PlanEntryFacts).
  absl::Status ReadNodes() {
    NPUPLAN_ASSIGN_OR_RETURN(const std::optional<JsonText> ns,
                             LargeSection(doc_, "nodes", "$.nodes", true));
    int64_t slots = static_cast<int64_t>(m_.num_nodes());
    if (!ns) {
      max_stream_ = std::max<int64_t>(slots, 1) - 1;
      return absl::OkStatus();
    }
    facts_.nodes_present = true;
    const bool physical = Has(plan_.established, IrProperty::kPhysicalStreams);
    std::vector<NodeId> ids(ns->size());
    std::vector<int64_t> streams(ns->size(), -1);
    EntryError failed;  // the first entry whose own read failed
    for (size_t i = 0; i < ns->size(); ++i) {
      NPUPLAN_ASSIGN_OR_RETURN(const json e, ns->Parse(i));
      NPUPLAN_RETURN_IF_ERROR(f_.Object(e, StrCat("$.nodes.", ns->key(i))));
      if (const json* a = JsonFields::Find(e, "attached_streams"); a != nullptr && a->is_array()) {
        slots += static_cast<int64_t>(a->size());
      }
      if (!failed.status.ok()) continue;  // only the count matters now
      failed = ReadNodeEntry(ns->key(i), e, ids[i], streams[i]);
      if (!failed.status.ok()) {
        failed.entry = i;
        continue;
      }
      facts_.AddNode(m_, ns->key(i), ids[i], e, physical, src_);
    }
    max_stream_ = std::max<int64_t>(slots, 1) - 1;
    const size_t checked = failed.status.ok() ? ns->size() : failed.entry;
    for (size_t i = 0; i < checked; ++i) {
      NPUPLAN_RETURN_IF_ERROR(
          CheckNodeEntryRanges(ns->key(i), ids[i], streams[i], EntryError::kDone));
    }
    if (!failed.status.ok()) {
      const size_t i = failed.entry;
      NPUPLAN_RETURN_IF_ERROR(
          CheckNodeEntryRanges(ns->key(i), ids[i], streams[i], failed.step, failed.element));
      return failed.status;
    }
    if (physical) {
      for (size_t i = 0; i < ns->size(); ++i) plan_.physical_stream[ids[i].index()] = streams[i];
    }
    return absl::OkStatus();
  }

  // What failed in one node entry's read (types and names, not ranges): its
  // step, and for attached_streams the element (-1: not an array).
  struct EntryError {
    enum Step { kName, kLogical, kAttached, kTasks, kStream, kDone };
    absl::Status status;
    size_t entry = 0;
    Step step = kDone;
    int64_t element = -1;
  };
  // The node and its fields' values, stored in the plan (`stream` aside).
  EntryError ReadNodeEntry(const std::string& name, const json& e, NodeId& id, int64_t& stream) {
    const std::string path = StrCat("$.nodes.", name);
    id = m_.FindNode(name);
    if (!id.valid()) return {Bad(src_, path, "no such node in the graph"), 0, EntryError::kName};
    Node& n = plan_.model.node(id);
    n.stream_id = -1;
    if (const json* v = JsonFields::Find(e, "logical_stream")) {
      absl::StatusOr<int64_t> s = f_.Int(*v, path + ".logical_stream");
      if (!s.ok()) return {s.status(), 0, EntryError::kLogical};
      n.stream_id = *s;
    }
    if (const json* v = JsonFields::Find(e, "attached_streams")) {
      const std::string at = JsonFields::Member(path, "attached_streams");
      if (absl::Status s = f_.Array(*v, at); !s.ok()) return {s, 0, EntryError::kAttached, -1};
      n.attached_stream_ids.clear();
      n.attached_stream_ids.reserve(v->size());
      for (size_t k = 0; k < v->size(); ++k) {
        absl::StatusOr<int64_t> s = f_.Int((*v)[k], JsonFields::Element(at, k));
        if (!s.ok()) return {s.status(), 0, EntryError::kAttached, static_cast<int64_t>(k)};
        n.attached_stream_ids.push_back(*s);
      }
    } else {
      n.attached_stream_ids.clear();
    }
    absl::StatusOr<int64_t> tasks = f_.IntOr(e, path, "tasks", 0);
    if (!tasks.ok()) return {tasks.status(), 0, EntryError::kTasks};
    plan_.tasks[id.index()] = *tasks;
    if (const json* v = JsonFields::Find(e, "stream")) {
      absl::StatusOr<int64_t> s = f_.Int(*v, path + ".stream");
      if (!s.ok()) return {s.status(), 0, EntryError::kStream};
      stream = *s;
    }
    return {};
  }
  // The range checks of one entry's stored values, in the order the entry's
  // fields are read, up to (not including) `upto`; for attached_streams up to
  // its element `element` when that is where the read stopped.
  absl::Status CheckNodeEntryRanges(const std::string& name, NodeId id, int64_t stream,
                                    EntryError::Step upto, int64_t element = -1) const {
    if (upto <= EntryError::kName) return absl::OkStatus();
    // Paths only for a message: this runs for every entry.
    auto path = [&](std::string_view field) { return StrCat("$.nodes.", name, ".", field); };
    const Node& n = m_.node(id);
    if (upto <= EntryError::kLogical) return absl::OkStatus();
    if (!InStreamRange(n.stream_id, /*allow_none=*/true))
      return StreamRange(n.stream_id, path("logical_stream"), /*allow_none=*/true);
    const size_t attached = upto == EntryError::kAttached
                                ? static_cast<size_t>(std::max<int64_t>(element, 0))
                                : n.attached_stream_ids.size();
    for (size_t k = 0; k < attached; ++k) {
      if (!InStreamRange(n.attached_stream_ids[k], /*allow_none=*/false))
        return StreamRange(n.attached_stream_ids[k],
                           JsonFields::Element(path("attached_streams"), k));
    }
    if (upto <= EntryError::kAttached) return absl::OkStatus();
    if (plan_.tasks[id.index()] < 0) return Bad(src_, path("tasks"), "a task count must be >= 0");
    if (upto <= EntryError::kTasks) return absl::OkStatus();
    return StreamRange(stream, path("stream"), /*allow_none=*/true);
  }

  absl::Status ReadStreams() {
    NPUPLAN_ASSIGN_OR_RETURN(const std::optional<json> s, Section("streams", true));
    if (!s) return absl::OkStatus();
    const std::string path = "$.streams";
    StreamResult& sr = plan_.streams;
    NPUPLAN_ASSIGN_OR_RETURN(sr.logical, StreamCount(*s, path, "logical"));
    NPUPLAN_ASSIGN_OR_RETURN(sr.physical, StreamCount(*s, path, "physical"));
    NPUPLAN_ASSIGN_OR_RETURN(sr.attached, StreamIdsOr(*s, path, "attached"));
    NPUPLAN_ASSIGN_OR_RETURN(sr.huge, StreamIdsOr(*s, path, "huge"));
    NPUPLAN_ASSIGN_OR_RETURN(const std::string mode, f_.StringOr(*s, path, "mode"));
    const std::optional<StreamMode> m = ParseStreamMode(mode);
    if (!m)
      NameError(NotOneOf(src_, "streams", "streams.mode", mode,
                         "multi, single, dynamic-single, dynamic-multi"));
    sr.mode = m.value_or(StreamMode::kNone);
    NPUPLAN_ASSIGN_OR_RETURN(sr.auto_mode, f_.StringOr(*s, path, "auto_mode"));
    NPUPLAN_ASSIGN_OR_RETURN(sr.estimated_makespan, f_.IntOr(*s, path, "estimated_makespan", 0));
    NPUPLAN_ASSIGN_OR_RETURN(sr.makespan_lower_bound, f_.IntOr(*s, path, "makespan_lower_bound", 0));
    NPUPLAN_ASSIGN_OR_RETURN(sr.assigned_by_stream_pass, f_.BoolOr(*s, path, "assigned_by_stream_pass", false));
    if (const json* sp = JsonFields::Find(*s, "split_to_logical")) {
      NPUPLAN_RETURN_IF_ERROR(f_.Object(*sp, path + ".split_to_logical"));
      for (const auto& [k, v] : sp->items()) {
        const std::string where = StrCat(path, ".split_to_logical.", k);
        int64_t split = -1;
        auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), split);
        if (ec != std::errc() || end != k.data() + k.size() || split < 0) {
          return Bad(src_, where, "key must be a physical stream id (an integer >= 0)");
        }
        if (split > max_stream_) {
          return Bad(src_, where, StrCat("key must be a physical stream id: ", split,
                                         " is out of range (the plan's nodes and attached streams allow 0..",
                                         max_stream_, ")"));
        }
        NPUPLAN_ASSIGN_OR_RETURN(sr.split_to_logical[split], StreamId(v, where));
      }
    }
    NPUPLAN_ASSIGN_OR_RETURN(sr.task_limit, f_.IntOr(*s, path, "task_limit", 0, 0));
    NPUPLAN_ASSIGN_OR_RETURN(sr.huge_task_limit, f_.IntOr(*s, path, "huge_task_limit", 0, 0));
    if (const json* ap = JsonFields::Find(*s, "attached_physical")) {
      NPUPLAN_RETURN_IF_ERROR(f_.Object(*ap, path + ".attached_physical"));
      for (const auto& [name, ids] : ap->items()) {
        const std::string where = StrCat(path, ".attached_physical.", name);
        NodeId id = m_.FindNode(name);
        if (!id.valid()) return Bad(src_, where, "no such node in the graph");
        NPUPLAN_ASSIGN_OR_RETURN(sr.attached_physical[id.value], StreamIds(ids, where));
      }
    }
    if (const json* l = JsonFields::Find(*s, "list")) {
      NPUPLAN_RETURN_IF_ERROR(f_.Array(*l, path + ".list"));
      for (size_t i = 0; i < l->size(); ++i) {
        const json& e = (*l)[i];
        const std::string where = JsonFields::Element(path + ".list", i);
        NPUPLAN_RETURN_IF_ERROR(f_.Object(e, where));
        LogicalStream ls;
        if (const json* v = JsonFields::Find(e, "id")) {
          NPUPLAN_ASSIGN_OR_RETURN(ls.id, StreamId(*v, where + ".id"));
        }
        NPUPLAN_ASSIGN_OR_RETURN(ls.user_label, f_.StringOr(e, where, "user_label"));
        NPUPLAN_ASSIGN_OR_RETURN(ls.attached_ids, StreamIdsOr(e, where, "attached_ids"));
        NPUPLAN_ASSIGN_OR_RETURN(ls.physical_count, f_.IntOr(e, where, "physical_count", 1, 0, max_stream_ + 1));
        NPUPLAN_ASSIGN_OR_RETURN(ls.hccl_followed_count,
                                 f_.IntOr(e, where, "hccl_followed_count", 0, 0, max_stream_ + 1));
        sr.streams.push_back(std::move(ls));
      }
    }
    return absl::OkStatus();
  }

  // A node named by the string field `key` of an event / tensor entry.
  absl::StatusOr<NodeId> NodeField(const json& e, const std::string& path, std::string_view key,
                                   std::string_view what) const {
    NPUPLAN_ASSIGN_OR_RETURN(std::string name, f_.RequiredString(e, path, key));
    NodeId id = m_.FindNode(name);
    if (!id.valid()) return Bad(src_, path, what);
    return id;
  }
  // Which stream of `node` an event uses: -1 (its main stream) or the index
  // of one of its attached streams.
  absl::StatusOr<int32_t> AttachedIndex(const json& e, const std::string& path, std::string_view key,
                                        NodeId node) const {
    const int64_t count = static_cast<int64_t>(m_.node(node).attached_stream_ids.size());
    NPUPLAN_ASSIGN_OR_RETURN(int64_t a, f_.IntOr(e, path, key, -1));
    if (a < -1 || a >= count) {
      return f_.Error(JsonFields::Member(path, key),
                      StrCat(a, " is out of range: node '", m_.node(node).name, "' has ", count,
                             " attached streams (-1 = its main stream", count > 0 ? StrCat(", 0..", count - 1) : "",
                             ")"));
    }
    return static_cast<int32_t>(a);
  }

  absl::Status ReadEvents() {
    NPUPLAN_ASSIGN_OR_RETURN(const std::optional<JsonText> ev,
                             LargeSection(doc_, "events", "$.events", false));
    if (!ev) return absl::OkStatus();
    for (size_t i = 0; i < ev->size(); ++i) {
      NPUPLAN_ASSIGN_OR_RETURN(const json e, ev->Parse(i));
      const std::string path = StrCat("$.events[", i, "]");
      NPUPLAN_RETURN_IF_ERROR(f_.Object(e, path));
      SyncEvent se;
      NPUPLAN_ASSIGN_OR_RETURN(const int64_t id, f_.RequiredInt(e, path, "id"));
      if (id < INT32_MIN || id > INT32_MAX) {
        return Bad(src_, path + ".id", StrCat("event id ", id, " is out of range"));
      }
      se.id = static_cast<int32_t>(id);
      NPUPLAN_ASSIGN_OR_RETURN(const std::string kind, f_.StringOr(e, path, "kind", "event"));
      std::optional<SyncKind> k = ParseSyncKind(kind);
      if (!k) {
        return Bad(src_, path + ".kind",
                   StrCat("unknown kind '", kind, "' (expected one of: ", StrJoin(kSyncKindNames, ", "), ")"));
      }
      se.kind = *k;
      NPUPLAN_ASSIGN_OR_RETURN(const std::string reason, f_.StringOr(e, path, "reason"));
      std::optional<SyncReason> r = ParseSyncReason(reason);
      if (!r) {
        return Bad(src_, path + ".reason",
                   StrCat("unknown reason '", reason, "' (expected one of: ",
                          StrJoin(std::vector<std::string_view>(std::begin(kSyncReasonNames) + 1,
                                                                std::end(kSyncReasonNames)),
                                  ", "),
                          ", or none)"));
      }
      se.reason = *r;
      constexpr std::string_view kNoNode = "send or recv names no node of the graph";
      NPUPLAN_ASSIGN_OR_RETURN(se.send, NodeField(e, path, "send", kNoNode));
      NPUPLAN_ASSIGN_OR_RETURN(se.recv, NodeField(e, path, "recv", kNoNode));
      NPUPLAN_ASSIGN_OR_RETURN(se.send_attached, AttachedIndex(e, path, "send_attached", se.send));
      NPUPLAN_ASSIGN_OR_RETURN(se.recv_attached, AttachedIndex(e, path, "recv_attached", se.recv));
      plan_.events.events.push_back(se);
    }
    return absl::OkStatus();
  }

  absl::Status ReadSummary() {
    NPUPLAN_ASSIGN_OR_RETURN(const std::optional<json> ec, Section("event_counts", true));
    if (ec) {
      NPUPLAN_ASSIGN_OR_RETURN(plan_.events.counts, f_.IntMap(*ec, "$.event_counts"));
    }
    NPUPLAN_ASSIGN_OR_RETURN(const std::optional<json> su, Section("summary", true));
    if (!su) return absl::OkStatus();
    NPUPLAN_ASSIGN_OR_RETURN(plan_.events.event_count, f_.IntOr(*su, "$.summary", "events", 0));
    NPUPLAN_ASSIGN_OR_RETURN(plan_.events.notify_count, f_.IntOr(*su, "$.summary", "notifies", 0));
    return absl::OkStatus();
  }

  absl::Status ReadMemory() {
    const std::string path = "$.memory";
    NPUPLAN_ASSIGN_OR_RETURN(const std::optional<JsonText> mt,
                             LargeSection(doc_, "memory", path, true));
    if (!mt) return absl::OkStatus();
    NPUPLAN_ASSIGN_OR_RETURN(const json fields, mt->ParseAllBut("tensors"));
    std::vector<std::string> keys;
    for (size_t k = 0; k < mt->size(); ++k) keys.push_back(mt->key(k));
    facts_.SetMemoryKeys(std::move(keys));
    const json* mem = &fields;
    MemoryResult& mr = plan_.memory;
    mr.planned = true;
    // The compile's alignment option allows powers of two up to 2^30; the
    // verifier rounds every size up to it.
    NPUPLAN_ASSIGN_OR_RETURN(mr.alignment, f_.IntOr(*mem, path, "alignment", 512, 1, kMaxAlignment));
    if ((mr.alignment & (mr.alignment - 1)) != 0) {
      return Bad(src_, path + ".alignment", StrCat("expected a power of two in [1, ", kMaxAlignment, "], found ",
                                                   mr.alignment));
    }
    NPUPLAN_ASSIGN_OR_RETURN(mr.peak, f_.IntOr(*mem, path, "peak", 0));
    NPUPLAN_ASSIGN_OR_RETURN(mr.lower_bound, f_.IntOr(*mem, path, "lower_bound", 0));
    if (const json* rb = JsonFields::Find(*mem, "region_bytes")) {
      NPUPLAN_ASSIGN_OR_RETURN(mr.region_bytes, f_.IntMap(*rb, path + ".region_bytes"));
    }
    NPUPLAN_ASSIGN_OR_RETURN(mr.optimal, f_.BoolOr(*mem, path, "optimal", false));
    NPUPLAN_ASSIGN_OR_RETURN(mr.dynamic_tensors, f_.StringListOr(*mem, path, "dynamic_tensors"));
    NPUPLAN_ASSIGN_OR_RETURN(const std::optional<JsonText> ts,
                             LargeSection(*mt, "tensors", path + ".tensors", false));
    if (!ts) return absl::OkStatus();
    for (size_t i = 0; i < ts->size(); ++i) {
      NPUPLAN_ASSIGN_OR_RETURN(const json t, ts->Parse(i));
      const std::string where = StrCat(path, ".tensors[", i, "]");
      NPUPLAN_RETURN_IF_ERROR(f_.Object(t, where));
      TensorPlacement tp;
      NPUPLAN_ASSIGN_OR_RETURN(tp.node, NodeField(t, where, "node", "names no node of the graph"));
      NPUPLAN_ASSIGN_OR_RETURN(int64_t output, f_.IntOr(t, where, "output", 0, -1, INT32_MAX));
      tp.output = static_cast<int32_t>(output);
      NPUPLAN_ASSIGN_OR_RETURN(const std::string region, f_.StringOr(t, where, "region"));
      const std::optional<MemoryRegion> r = ParseMemoryRegion(region);
      if (!r) {
        NameError(Bad(src_, where + ".region",
                      StrCat("'", EchoName(region),
                             "' is not one of activation, input, constant, workspace")));
      }
      tp.region = r.value_or(MemoryRegion::kActivation);
      NPUPLAN_ASSIGN_OR_RETURN(tp.offset, f_.IntOr(t, where, "offset", 0));
      NPUPLAN_ASSIGN_OR_RETURN(tp.size, f_.IntOr(t, where, "size", 0));
      NPUPLAN_ASSIGN_OR_RETURN(tp.first_use, f_.IntOr(t, where, "first_use", 0));
      NPUPLAN_ASSIGN_OR_RETURN(tp.last_use, f_.IntOr(t, where, "last_use", 0));
      NPUPLAN_ASSIGN_OR_RETURN(tp.buffer, f_.StringOr(t, where, "buffer"));
      if (const json* v = JsonFields::Find(t, "stream")) {
        NPUPLAN_ASSIGN_OR_RETURN(tp.stream, StreamId(*v, where + ".stream", /*allow_none=*/true));
      }
      facts_.AddTensor(i, t, tp.output, src_);
      mr.tensors.push_back(std::move(tp));
    }
    return absl::OkStatus();
  }

  absl::Status ReadPartition() {
    NPUPLAN_ASSIGN_OR_RETURN(const std::optional<json> p, Section("partition", true));
    if (!p) return absl::OkStatus();
    const std::string path = "$.partition";
    PartitionResult& pr = plan_.partition;
    pr.ran = true;
    NPUPLAN_ASSIGN_OR_RETURN(const std::string decision, f_.StringOr(*p, path, "decision"));
    const std::optional<PartitionDecision> d = ParsePartitionDecision(decision);
    if (!d || *d == PartitionDecision::kNone) {
      NameError(NotOneOf(src_, "partition", "partition.decision", decision,
                         "static, whole-dynamic, partitioned, skipped"));
    }
    pr.decision = d.value_or(PartitionDecision::kNone);
    NPUPLAN_ASSIGN_OR_RETURN(pr.reason, f_.StringOr(*p, path, "reason"));
    if (const json* cc = JsonFields::Find(*p, "cluster_counts")) {
      NPUPLAN_ASSIGN_OR_RETURN(pr.cluster_counts, f_.IntMap(*cc, path + ".cluster_counts"));
    }
    if (const json* subs = JsonFields::Find(*p, "subgraphs")) {
      NPUPLAN_RETURN_IF_ERROR(f_.Array(*subs, path + ".subgraphs"));
      for (size_t si = 0; si < subs->size(); ++si) {
        const json& s = (*subs)[si];
        const std::string where = StrCat(path, ".subgraphs[", si, "]");
        NPUPLAN_RETURN_IF_ERROR(f_.Object(s, where));
        PartitionSubgraph sg;
        NPUPLAN_ASSIGN_OR_RETURN(sg.name, f_.StringOr(s, where, "name"));
        NPUPLAN_ASSIGN_OR_RETURN(const std::string kind, f_.StringOr(s, where, "kind"));
        const std::optional<SubgraphKind> k = ParseSubgraphKind(kind);
        if (!k)
          NameError(NotOneOf(src_, "partition", StrCat(where.substr(2), ".kind"), kind,
                             "known, unknown, input"));
        sg.kind = k.value_or(SubgraphKind::kKnown);
        NPUPLAN_ASSIGN_OR_RETURN(sg.call_node, f_.StringOr(s, where, "call_node"));
        // Member names back to ids in the plan's graph.
        NPUPLAN_ASSIGN_OR_RETURN(const std::vector<std::string> names, f_.StringListOr(s, where, "nodes"));
        sg.nodes.reserve(names.size());
        for (size_t k = 0; k < names.size(); ++k) {
          const NodeId id = m_.FindNode(names[k]);
          if (!id.valid()) {
            return Bad(src_, StrCat(where, ".nodes[", k, "]"), StrCat("no such node in the graph: '", names[k], "'"));
          }
          sg.nodes.push_back(id);
        }
        NPUPLAN_ASSIGN_OR_RETURN(sg.reasons, f_.StringListOr(s, where, "reasons"));
        pr.subgraphs.push_back(std::move(sg));
      }
    }
    if (const json* un = JsonFields::Find(*p, "unknown_nodes")) {
      pr.marked = true;
      NPUPLAN_ASSIGN_OR_RETURN(pr.unknown_nodes, f_.StringMap(*un, path + ".unknown_nodes"));
      NPUPLAN_ASSIGN_OR_RETURN(pr.no_tiling_nodes, f_.StringListOr(*p, path, "no_tiling_nodes"));
    }
    return absl::OkStatus();
  }

  static constexpr int64_t kMaxAlignment = int64_t{1} << 30;

  const JsonText& doc_;
  std::string_view src_;
  JsonFields f_;
  Plan& plan_;
  const Model& m_;
  int64_t max_stream_ = 0;
  absl::Status name_error_;
  PlanEntryFacts facts_;
};

}  // namespace

namespace {

// The read of a text whose strict checks (CheckJsonDocument) run elsewhere:
// built to survive text those checks refuse, whose error then wins.
absl::StatusOr<Plan> ReadPlanText(std::string_view text, std::string_view src,
                                  const GraphReadLimits& limits,
                                  const JsonDocumentLimits& doc_limits) {
  NPUPLAN_ASSIGN_OR_RETURN(const JsonText doc, JsonText::Of(text, src, doc_limits));
  if (!doc.is_object()) return Bad(src, "$", "expected a JSON object");
  const std::optional<size_t> fmt = doc.Find("format");
  std::optional<json> format;
  if (fmt) {
    NPUPLAN_ASSIGN_OR_RETURN(format, doc.Parse(*fmt));
  }
  if (!format || !format->is_string() || format->get<std::string>() != kPlanFormat) {
    return Bad(src, "$.format", "expected \"npuplan.plan/1\"");
  }
  const std::optional<size_t> g = doc.Find("graph");
  if (!g) return Bad(src, "$", "missing field 'graph'");
  Plan plan;
  GraphReadOptions gopts;
  gopts.topo_sort = false;  // keep the plan's order; the verifier checks it
  gopts.limits = limits;
  auto model = ParseGraphJson(doc.text(*g), StrCat(src, " (graph)"), gopts);
  if (!model.ok()) return model.status();
  plan.model = std::move(model).value();
  plan.EnsureNodeVectors();
  PlanSections sections(doc, src, plan);
  NPUPLAN_RETURN_IF_ERROR(sections.Read());
  NPUPLAN_RETURN_IF_ERROR(CheckPlanDocumentFields(doc, plan, sections.facts(), src));
  NPUPLAN_RETURN_IF_ERROR(sections.name_error());
  return plan;
}

// Below this size the strict checks run before the read, on one thread.
constexpr size_t kCheckBesideBytes = size_t{1} << 20;

}  // namespace

absl::StatusOr<Plan> ParsePlanJson(std::string_view text, std::string_view src,
                                   const GraphReadLimits& limits) {
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(text, src));
  // Strict: a key twice in one object is an error (the graph reader's rule,
  // also inside the plan's graph), strings and nesting are bounded. Their
  // errors come before any other: on a large text the checks run on a second
  // thread beside the read (they only read the text), and their verdict is
  // awaited before the read's result, error or plan, is returned.
  const JsonDocumentLimits doc_limits{limits.max_string_bytes, limits.max_depth + kPlanJsonNesting};
  absl::Status strict;
  auto check = [&] {
    try {
      strict = CheckJsonDocument(text, src, doc_limits);
    } catch (const std::bad_alloc&) {
      strict =
          absl::ResourceExhaustedError(StrCat(src, ": not enough memory to check the JSON text"));
    }
  };
  std::jthread checker;  // joins on every way out, also when the read throws
  if (text.size() >= kCheckBesideBytes) {
    try {
      checker = std::jthread(check);
    } catch (const std::system_error&) {  // no thread to be had: check here, first
    }
  }
  if (!checker.joinable()) {
    check();
    NPUPLAN_RETURN_IF_ERROR(strict);
    return ReadPlanText(text, src, limits, doc_limits);
  }
  absl::StatusOr<Plan> plan = ReadPlanText(text, src, limits, doc_limits);
  checker.join();
  NPUPLAN_RETURN_IF_ERROR(strict);
  return plan;
}

absl::StatusOr<Plan> ReadPlanFile(const std::string& path, const GraphReadLimits& limits) {
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParsePlanJson(text, path, limits);
}

}  // namespace npuplan
