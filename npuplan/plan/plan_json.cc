#include "npuplan/plan/plan_json.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "npuplan/ir/graph_json.h"
#include "npuplan/plan/plan_json_fields.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/json_document.h"
#include "npuplan/support/json_writer.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

using json = nlohmann::json;

// JSON levels of a plan around an attribute value nested --max-depth deep
// ($ > graph > subgraphs > [i] > nodes > [j] > attrs > value).
constexpr int64_t kPlanJsonNesting = 16;

constexpr IrProperty kAllProperties[] = {
    IrProperty::kTopoSorted,  IrProperty::kPartitioned, IrProperty::kLogicalStreams, IrProperty::kAttachedStreams,
    IrProperty::kMemoryPlanned, IrProperty::kTasks,     IrProperty::kSyncEvents,     IrProperty::kPhysicalStreams,
    IrProperty::kActiveStreams, IrProperty::kSyncNodes};

absl::Status Bad(std::string_view src, std::string_view where, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(src, ": ", where, ": ", what));
}

// Every number outside the plan's graph is an integer field. A float there is
// rejected up front: nlohmann's get<int64_t> of an out-of-range double is
// undefined behaviour (found by plan_json_fuzz). Breadth-first with parent
// links, so the path is built only for the error.
absl::Status RejectFloatsOutsideGraph(const json& j, std::string_view src) {
  struct Item {
    const json* value;
    int64_t parent;
    std::string_view key;  // object member name (owned by the DOM), or "" for an array element
    size_t index;
  };
  std::vector<Item> items;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "graph") items.push_back({&*it, -1, it.key(), 0});
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const json& v = *items[i].value;
    if (v.is_number_float()) {
      std::vector<std::string> parts;
      for (int64_t k = static_cast<int64_t>(i); k >= 0; k = items[k].parent) {
        parts.push_back(items[k].key.empty() ? StrCat("[", items[k].index, "]") : StrCat(".", items[k].key));
      }
      std::string path = "$";
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) path += *it;
      return Bad(src, path, StrCat("expected an integer, found ", v.dump()));
    }
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) items.push_back({&*it, static_cast<int64_t>(i), it.key(), 0});
    } else if (v.is_array()) {
      for (size_t e = 0; e < v.size(); ++e) items.push_back({&v[e], static_cast<int64_t>(i), std::string_view(), e});
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool LooksLikePlan(std::string_view text) { return TopLevelString(text, "format") == kPlanFormat; }

// Streams the plan (byte-identical to nlohmann's dump(1) of the same document
// with sorted keys); only the small "streams" and "summary" parts are DOMs.
std::string WritePlanJson(const Plan& plan) {
  const Model& m = plan.model;
  std::string out;
  JsonWriter w(&out, 1);
  w.BeginObject();

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

  w.Field("format", kPlanFormat);
  w.Key("graph");
  WriteGraph(m, w);

  if (plan.memory.planned) {
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
    for (const TensorPlacement& t : mem.tensors) {
      w.BeginObject();
      w.Field("buffer", t.buffer);
      w.Field("first_use", t.first_use);
      w.Field("last_use", t.last_use);
      w.Field("node", m.node(t.node).name);
      w.Field("offset", t.offset);
      w.Field("output", int64_t{t.output});
      w.Field("region", t.region);
      w.Field("size", t.size);
      w.Field("stream", t.stream);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }

  // Per-node send/recv event ids; node entries keyed (so sorted) by name.
  std::vector<std::vector<int64_t>> sends(m.num_nodes()), recvs(m.num_nodes());
  for (const SyncEvent& e : plan.events.events) {
    if (e.send.valid() && e.send.index() < m.num_nodes()) sends[e.send.index()].push_back(e.id);
    if (e.recv.valid() && e.recv.index() < m.num_nodes()) recvs[e.recv.index()].push_back(e.id);
  }
  std::vector<uint32_t> by_name(m.num_nodes());
  for (size_t i = 0; i < by_name.size(); ++i) by_name[i] = static_cast<uint32_t>(i);
  std::sort(by_name.begin(), by_name.end(),
            [&](uint32_t a, uint32_t b) { return m.nodes()[a].name < m.nodes()[b].name; });
  w.Key("nodes");
  w.BeginObject();
  for (uint32_t i : by_name) {
    const Node& n = m.nodes()[i];
    int64_t physical = i < plan.physical_stream.size() ? plan.physical_stream[i] : -1;
    w.Key(n.name);
    w.BeginObject();
    w.Key("attached_streams");
    w.IntArray(n.attached_stream_ids);
    w.Field("graph", m.graph(n.graph).name);
    w.Field("logical_stream", n.stream_id);
    w.Key("recv_events");
    w.IntArray(recvs[i]);
    w.Key("send_events");
    w.IntArray(sends[i]);
    w.Field("stream", physical >= 0 ? physical : n.stream_id);
    w.Field("tasks", i < plan.tasks.size() ? plan.tasks[i] : int64_t{0});
    w.Field("topo_id", n.topo_id);
    w.EndObject();
  }
  w.EndObject();

  if (plan.partition.ran) {
    const PartitionResult& p = plan.partition;
    w.Key("partition");
    w.BeginObject();
    w.Key("cluster_counts");
    w.BeginObject();
    for (const auto& [k, v] : p.cluster_counts) w.Field(k, v);
    w.EndObject();
    w.Field("decision", p.decision);
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
      w.Field("kind", sg.kind);
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

  w.Key("stages");
  w.BeginArray();
  for (IrProperty p : kAllProperties) {
    if (Has(plan.established, p)) w.String(PropertyNames(static_cast<IrProperties>(p)));
  }
  w.EndArray();

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
  streams["mode"] = s.mode;
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
  w.Key("streams");
  w.Value(streams);

  int64_t notifies = 0, evs = 0;
  for (const SyncEvent& e : plan.events.events) (e.kind == SyncKind::kNotify ? notifies : evs) += 1;
  w.Key("summary");
  w.Value(json{{"nodes", m.num_nodes()},
               {"graphs", m.num_graphs()},
               {"logical_streams", s.logical},
               {"physical_streams", s.physical},
               {"attached_streams", s.attached.size()},
               {"events", plan.events.event_count},
               {"notifies", plan.events.notify_count},
               {"sync_pairs", evs + notifies},
               {"memory_peak", plan.memory.peak},
               {"memory_lower_bound", plan.memory.lower_bound}});
  w.EndObject();
  out.push_back('\n');
  return out;
}

absl::StatusOr<Plan> ParsePlanJson(std::string_view text, std::string_view src, const GraphReadLimits& limits) {
  // Strict: a key twice in one object is an error (the graph reader's rule,
  // also inside the plan's graph), strings and nesting are bounded.
  NPUPLAN_ASSIGN_OR_RETURN(
      json j,
      ParseJsonDocument(text, src, {limits.max_string_bytes, limits.max_depth + kPlanJsonNesting}));
  if (!j.is_object()) return Bad(src, "$", "expected a JSON object");
  auto fmt = j.find("format");
  if (fmt == j.end() || !fmt->is_string() || fmt->get<std::string>() != kPlanFormat) {
    return Bad(src, "$.format", "expected \"npuplan.plan/1\"");
  }
  auto g = j.find("graph");
  if (g == j.end()) return Bad(src, "$", "missing field 'graph'");
  if (absl::Status s = RejectFloatsOutsideGraph(j, src); !s.ok()) return s;
  Plan plan;
  GraphReadOptions gopts;
  gopts.topo_sort = false;  // keep the plan's order; the verifier checks it
  gopts.limits = limits;
  auto model = GraphFromJson(*g, StrCat(src, " (graph)"), gopts);
  if (!model.ok()) return model.status();
  plan.model = std::move(model).value();
  const Model& m = plan.model;
  plan.EnsureNodeVectors();
  try {
    if (auto st = j.find("stages"); st != j.end()) {
      for (const auto& name : *st) {
        bool known = false;
        for (IrProperty p : kAllProperties) {
          if (PropertyNames(static_cast<IrProperties>(p)) == name.get<std::string>()) {
            plan.established |= static_cast<IrProperties>(p);
            known = true;
          }
        }
        if (!known) return Bad(src, "$.stages", StrCat("unknown stage '", name.get<std::string>(), "'"));
      }
    }
    if (auto ns = j.find("nodes"); ns != j.end()) {
      for (const auto& [name, e] : ns->items()) {
        NodeId id = m.FindNode(name);
        if (!id.valid()) return Bad(src, StrCat("$.nodes.", name), "no such node in the graph");
        Node& n = plan.model.node(id);
        n.stream_id = e.value("logical_stream", int64_t{-1});
        n.attached_stream_ids = e.value("attached_streams", std::vector<int64_t>{});
        plan.tasks[id.index()] = e.value("tasks", int64_t{0});
        if (plan.tasks[id.index()] < 0) {
          return Bad(src, StrCat("$.nodes.", name, ".tasks"), "a task count must be >= 0");
        }
        int64_t stream = e.value("stream", int64_t{-1});
        if (Has(plan.established, IrProperty::kPhysicalStreams)) plan.physical_stream[id.index()] = stream;
      }
    }
    if (auto s = j.find("streams"); s != j.end()) {
      plan.streams.logical = s->value("logical", int64_t{0});
      plan.streams.physical = s->value("physical", int64_t{0});
      plan.streams.attached = s->value("attached", std::vector<int64_t>{});
      plan.streams.huge = s->value("huge", std::vector<int64_t>{});
      plan.streams.mode = s->value("mode", std::string());
      plan.streams.auto_mode = s->value("auto_mode", std::string());
      plan.streams.estimated_makespan = s->value("estimated_makespan", int64_t{0});
      plan.streams.makespan_lower_bound = s->value("makespan_lower_bound", int64_t{0});
      plan.streams.assigned_by_stream_pass = s->value("assigned_by_stream_pass", false);
      if (auto sp = s->find("split_to_logical"); sp != s->end()) {
        for (const auto& [k, v] : sp->items()) {
          int64_t split = -1;
          auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), split);
          if (ec != std::errc() || end != k.data() + k.size() || split < 0) {
            return Bad(src, StrCat("$.streams.split_to_logical.", k), "key must be a physical stream id (an integer >= 0)");
          }
          plan.streams.split_to_logical[split] = v.get<int64_t>();
        }
      }
      plan.streams.task_limit = s->value("task_limit", int64_t{0});
      plan.streams.huge_task_limit = s->value("huge_task_limit", int64_t{0});
      if (auto ap = s->find("attached_physical"); ap != s->end()) {
        for (const auto& [name, ids] : ap->items()) {
          NodeId id = m.FindNode(name);
          if (!id.valid()) return Bad(src, StrCat("$.streams.attached_physical.", name), "no such node in the graph");
          plan.streams.attached_physical[id.value] = ids.get<std::vector<int64_t>>();
        }
      }
      if (auto l = s->find("list"); l != s->end()) {
        for (const auto& e : *l) {
          LogicalStream ls;
          ls.id = e.value("id", int64_t{0});
          ls.user_label = e.value("user_label", std::string());
          ls.attached_ids = e.value("attached_ids", std::vector<int64_t>{});
          ls.physical_count = e.value("physical_count", int64_t{1});
          ls.hccl_followed_count = e.value("hccl_followed_count", int64_t{0});
          plan.streams.streams.push_back(std::move(ls));
        }
      }
    }
    if (auto ev = j.find("events"); ev != j.end()) {
      for (size_t i = 0; i < ev->size(); ++i) {
        const json& e = (*ev)[i];
        SyncEvent se;
        const int64_t id = e.at("id").get<int64_t>();
        if (id < INT32_MIN || id > INT32_MAX) {
          return Bad(src, StrCat("$.events[", i, "].id"), StrCat("event id ", id, " is out of range"));
        }
        se.id = static_cast<int32_t>(id);
        const std::string kind = e.value("kind", std::string("event"));
        std::optional<SyncKind> k = ParseSyncKind(kind);
        if (!k) {
          return Bad(src, StrCat("$.events[", i, "].kind"),
                     StrCat("unknown kind '", kind, "' (expected one of: ", StrJoin(kSyncKindNames, ", "), ")"));
        }
        se.kind = *k;
        const std::string reason = e.value("reason", std::string());
        std::optional<SyncReason> r = ParseSyncReason(reason);
        if (!r) {
          return Bad(src, StrCat("$.events[", i, "].reason"),
                     StrCat("unknown reason '", reason, "' (expected one of: ",
                            StrJoin(std::vector<std::string_view>(std::begin(kSyncReasonNames) + 1,
                                                                  std::end(kSyncReasonNames)),
                                    ", "),
                            ", or none)"));
        }
        se.reason = *r;
        se.send_attached = e.value("send_attached", -1);
        se.recv_attached = e.value("recv_attached", -1);
        se.send = m.FindNode(e.at("send").get<std::string>());
        se.recv = m.FindNode(e.at("recv").get<std::string>());
        if (!se.send.valid() || !se.recv.valid()) {
          return Bad(src, StrCat("$.events[", i, "]"), "send or recv names no node of the graph");
        }
        plan.events.events.push_back(se);
      }
    }
    if (auto ec = j.find("event_counts"); ec != j.end()) plan.events.counts = ec->get<std::map<std::string, int64_t>>();
    if (auto su = j.find("summary"); su != j.end()) {
      plan.events.event_count = su->value("events", int64_t{0});
      plan.events.notify_count = su->value("notifies", int64_t{0});
    }
    if (auto mem = j.find("memory"); mem != j.end()) {
      plan.memory.planned = true;
      plan.memory.alignment = mem->value("alignment", int64_t{512});
      plan.memory.peak = mem->value("peak", int64_t{0});
      plan.memory.lower_bound = mem->value("lower_bound", int64_t{0});
      plan.memory.region_bytes = mem->value("region_bytes", std::map<std::string, int64_t>{});
      plan.memory.optimal = mem->value("optimal", false);
      plan.memory.dynamic_tensors = mem->value("dynamic_tensors", std::vector<std::string>{});
      if (auto ts = mem->find("tensors"); ts != mem->end()) {
        for (size_t i = 0; i < ts->size(); ++i) {
          const json& t = (*ts)[i];
          TensorPlacement tp;
          tp.node = m.FindNode(t.at("node").get<std::string>());
          if (!tp.node.valid()) return Bad(src, StrCat("$.memory.tensors[", i, "]"), "names no node of the graph");
          tp.output = t.value("output", 0);
          tp.region = t.value("region", std::string());
          tp.offset = t.value("offset", int64_t{0});
          tp.size = t.value("size", int64_t{0});
          tp.first_use = t.value("first_use", int64_t{0});
          tp.last_use = t.value("last_use", int64_t{0});
          tp.buffer = t.value("buffer", std::string());
          tp.stream = t.value("stream", int64_t{-1});
          plan.memory.tensors.push_back(std::move(tp));
        }
      }
    }
    if (auto p = j.find("partition"); p != j.end()) {
      plan.partition.ran = true;
      plan.partition.decision = p->value("decision", std::string());
      plan.partition.reason = p->value("reason", std::string());
      plan.partition.cluster_counts = p->value("cluster_counts", std::map<std::string, int64_t>{});
      if (auto subs = p->find("subgraphs"); subs != p->end()) {
        for (size_t si = 0; si < subs->size(); ++si) {
          const json& s = (*subs)[si];
          PartitionSubgraph sg;
          sg.name = s.value("name", std::string());
          sg.kind = s.value("kind", std::string());
          sg.call_node = s.value("call_node", std::string());
          // Member names back to ids in the plan's graph.
          const std::vector<std::string> names = s.value("nodes", std::vector<std::string>{});
          sg.nodes.reserve(names.size());
          for (size_t k = 0; k < names.size(); ++k) {
            const NodeId id = m.FindNode(names[k]);
            if (!id.valid()) {
              return Bad(src, StrCat("$.partition.subgraphs[", si, "].nodes[", k, "]"),
                         StrCat("no such node in the graph: '", names[k], "'"));
            }
            sg.nodes.push_back(id);
          }
          sg.reasons = s.value("reasons", std::vector<std::string>{});
          plan.partition.subgraphs.push_back(std::move(sg));
        }
      }
      if (auto un = p->find("unknown_nodes"); un != p->end()) {
        plan.partition.marked = true;
        plan.partition.unknown_nodes = un->get<std::map<std::string, std::string>>();
        plan.partition.no_tiling_nodes = p->value("no_tiling_nodes", std::vector<std::string>{});
      }
    }
    NPUPLAN_RETURN_IF_ERROR(CheckPlanDocumentFields(j, plan, src));
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(StrCat(src, ": malformed plan: ", e.what()));
  }
  return plan;
}

absl::StatusOr<Plan> ReadPlanFile(const std::string& path, const GraphReadLimits& limits) {
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParsePlanJson(text, path, limits);
}

}  // namespace npuplan
