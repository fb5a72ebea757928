#include "npuplan/compiler/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "npuplan/events/device_limit_check.h"
#include "npuplan/events/event_id_allocation.h"
#include "npuplan/support/json_document.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/text_checks.h"

namespace npuplan {
namespace {

// a + b, or nullopt on overflow (sizes come from plan files).
std::optional<int64_t> Add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> AlignUp(int64_t v, int64_t alignment) {
  if (alignment <= 1) return v;
  auto up = Add(v, alignment - 1);
  if (!up) return std::nullopt;
  return *up / alignment * alignment;
}

absl::Status Bad(std::string_view source, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(source, ": ", what));
}

}  // namespace

BundleGraph BundleGraphFromPlan(const Plan& plan) {
  BundleGraph g;
  g.streams = DeviceStreamsUsed(plan);
  g.event_ids = plan.events.event_count;
  g.notify_ids = plan.events.notify_count;
  for (const SyncEvent& e : plan.events.events) g.sync_edges += e.kind == SyncKind::kEvent ? 1 : 0;
  if (auto it = plan.events.counts.find("device_event_ids_lower_bound");
      it != plan.events.counts.end()) {
    g.event_ids_lower_bound = it->second;
  } else {
    g.event_ids_lower_bound = events::IdLowerBounds(plan).events.lower_bound;
  }
  g.memory_peak = plan.memory.peak;
  g.memory_alignment = std::max<int64_t>(plan.memory.alignment, 1);
  return g;
}

Bundle LayoutBundle(std::vector<BundleGraph> graphs, bool concurrent, const BundleBudget& budget) {
  Bundle b;
  b.concurrent = concurrent;
  b.budget = budget;
  b.graphs = std::move(graphs);
  for (BundleGraph& g : b.graphs) {
    if (concurrent) {
      g.stream_base = b.streams;
      g.event_base = b.event_ids;
      g.notify_base = b.notify_ids;
      g.memory_offset = AlignUp(b.memory_bytes, g.memory_alignment).value_or(INT64_MAX);
      b.streams = Add(b.streams, g.streams).value_or(INT64_MAX);
      b.event_ids = Add(b.event_ids, g.event_ids).value_or(INT64_MAX);
      b.notify_ids = Add(b.notify_ids, g.notify_ids).value_or(INT64_MAX);
      b.memory_bytes = Add(g.memory_offset, g.memory_peak).value_or(INT64_MAX);
    } else {
      g.stream_base = g.event_base = g.notify_base = g.memory_offset = 0;
      b.streams = std::max(b.streams, g.streams);
      b.event_ids = std::max(b.event_ids, g.event_ids);
      b.notify_ids = std::max(b.notify_ids, g.notify_ids);
      b.memory_bytes = std::max(b.memory_bytes, g.memory_peak);
    }
  }
  return b;
}

absl::Status CheckBundleBudget(const Bundle& b) {
  struct Check {
    const char* what;
    int64_t total, budget;
    int64_t BundleGraph::*per;
    const char* option;
  };
  for (const Check& c : {Check{"device streams", b.streams, b.budget.streams, &BundleGraph::streams,
                               "npuplan.maxStreams"},
                         Check{"event ids", b.event_ids, b.budget.event_ids,
                               &BundleGraph::event_ids, "npuplan.maxEventIds"},
                         Check{"notify ids", b.notify_ids, b.budget.notify_ids,
                               &BundleGraph::notify_ids, "npuplan.maxNotifyIds"}}) {
    if (c.budget <= 0 || c.total <= c.budget) continue;
    const auto worst = std::max_element(
        b.graphs.begin(), b.graphs.end(),
        [&](const BundleGraph& x, const BundleGraph& y) { return x.*c.per < y.*c.per; });
    return absl::ResourceExhaustedError(
        StrCat("bundle of ", b.graphs.size(), " graphs (",
               b.concurrent ? "concurrent: the sum" : "sequential: the largest", ") needs ",
               c.total, " ", c.what, " but the budget is ", c.budget, " (", c.option,
               "); the largest graph, '", worst->name, "', needs ", (*worst).*c.per,
               b.concurrent
                   ? "; run the graphs one at a time (no --concurrent), or lower the per-graph need"
                   : ""));
  }
  return absl::OkStatus();
}

std::string BundleToJson(const Bundle& b) {
  nlohmann::json j;
  j["format"] = kBundleFormat;
  j["mode"] = b.concurrent ? "concurrent" : "sequential";
  j["budget"] = {{"streams", b.budget.streams},
                 {"event_ids", b.budget.event_ids},
                 {"notify_ids", b.budget.notify_ids}};
  j["device"] = {{"streams", b.streams},
                 {"event_ids", b.event_ids},
                 {"notify_ids", b.notify_ids},
                 {"memory_bytes", b.memory_bytes}};
  nlohmann::json graphs = nlohmann::json::array();
  for (const BundleGraph& g : b.graphs) {
    nlohmann::json ids = nlohmann::json::array();
    for (int64_t s = 0; s < g.streams; ++s) ids.push_back(g.stream_base + s);
    graphs.push_back({{"name", g.name},
                      {"input", g.input},
                      {"plan", g.plan},
                      {"streams", g.streams},
                      {"stream_base", g.stream_base},
                      {"device_stream_ids", ids},
                      {"event_ids", g.event_ids},
                      {"event_base", g.event_base},
                      {"event_ids_lower_bound", g.event_ids_lower_bound},
                      {"sync_edges", g.sync_edges},
                      {"notify_ids", g.notify_ids},
                      {"notify_base", g.notify_base},
                      {"memory_peak", g.memory_peak},
                      {"memory_alignment", g.memory_alignment},
                      {"memory_offset", g.memory_offset}});
  }
  j["graphs"] = std::move(graphs);
  return j.dump(1) + "\n";
}

// The integer fields of a manifest's graph entry: read, then compared with
// what the plans give, by one list.
constexpr std::pair<const char*, int64_t BundleGraph::*> kGraphIntFields[] = {
    {"streams", &BundleGraph::streams},
    {"stream_base", &BundleGraph::stream_base},
    {"event_ids", &BundleGraph::event_ids},
    {"event_base", &BundleGraph::event_base},
    {"event_ids_lower_bound", &BundleGraph::event_ids_lower_bound},
    {"sync_edges", &BundleGraph::sync_edges},
    {"notify_ids", &BundleGraph::notify_ids},
    {"notify_base", &BundleGraph::notify_base},
    {"memory_peak", &BundleGraph::memory_peak},
    {"memory_alignment", &BundleGraph::memory_alignment},
    {"memory_offset", &BundleGraph::memory_offset}};

absl::StatusOr<Bundle> BundleFromJson(std::string_view text, std::string_view source) {
  // Strict as the plan reader: duplicate keys, a BOM and runaway nesting are errors.
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(text, source));
  NPUPLAN_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonDocument(text, source));
  if (!j.is_object()) return Bad(source, "not a JSON object");
  if (!j.contains("format") || !j["format"].is_string() || j["format"] != kBundleFormat)
    return Bad(source, StrCat("format is not \"", kBundleFormat, "\""));
  auto get_int = [&](const nlohmann::json& o, const char* key, std::string_view where,
                     int64_t& out) -> absl::Status {
    auto it = o.find(key);
    if (it == o.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
      return Bad(source, StrCat(where, ".", key, " is missing or not a non-negative integer"));
    }
    out = it->get<int64_t>();
    return absl::OkStatus();
  };
  auto get_str = [&](const nlohmann::json& o, const char* key, std::string_view where,
                     std::string& out) -> absl::Status {
    auto it = o.find(key);
    if (it == o.end() || !it->is_string())
      return Bad(source, StrCat(where, ".", key, " is missing or not a string"));
    out = it->get<std::string>();
    return absl::OkStatus();
  };
  Bundle b;
  std::string mode;
  NPUPLAN_RETURN_IF_ERROR(get_str(j, "mode", "", mode));
  if (mode != "sequential" && mode != "concurrent")
    return Bad(source, "mode is not \"sequential\" or \"concurrent\"");
  b.concurrent = mode == "concurrent";
  const auto budget = j.find("budget");
  const auto device = j.find("device");
  const auto graphs = j.find("graphs");
  if (budget == j.end() || !budget->is_object()) return Bad(source, "budget is missing");
  if (device == j.end() || !device->is_object()) return Bad(source, "device is missing");
  if (graphs == j.end() || !graphs->is_array()) return Bad(source, "graphs is not a list");
  NPUPLAN_RETURN_IF_ERROR(get_int(*budget, "streams", "budget", b.budget.streams));
  NPUPLAN_RETURN_IF_ERROR(get_int(*budget, "event_ids", "budget", b.budget.event_ids));
  NPUPLAN_RETURN_IF_ERROR(get_int(*budget, "notify_ids", "budget", b.budget.notify_ids));
  NPUPLAN_RETURN_IF_ERROR(get_int(*device, "streams", "device", b.streams));
  NPUPLAN_RETURN_IF_ERROR(get_int(*device, "event_ids", "device", b.event_ids));
  NPUPLAN_RETURN_IF_ERROR(get_int(*device, "notify_ids", "device", b.notify_ids));
  NPUPLAN_RETURN_IF_ERROR(get_int(*device, "memory_bytes", "device", b.memory_bytes));
  for (size_t i = 0; i < graphs->size(); ++i) {
    const nlohmann::json& o = (*graphs)[i];
    const std::string where = StrCat("graphs[", i, "]");
    if (!o.is_object()) return Bad(source, StrCat(where, " is not an object"));
    BundleGraph g;
    NPUPLAN_RETURN_IF_ERROR(get_str(o, "name", where, g.name));
    NPUPLAN_RETURN_IF_ERROR(get_str(o, "input", where, g.input));
    NPUPLAN_RETURN_IF_ERROR(get_str(o, "plan", where, g.plan));
    for (const auto& [key, field] : kGraphIntFields) {
      NPUPLAN_RETURN_IF_ERROR(get_int(o, key, where, g.*field));
    }
    // The explicit id list must be the range the base and count give.
    const auto ids = o.find("device_stream_ids");
    if (ids == o.end() || !ids->is_array() || ids->size() != static_cast<size_t>(g.streams)) {
      return Bad(source, StrCat(where, ".device_stream_ids does not list ", g.streams, " streams"));
    }
    for (size_t k = 0; k < ids->size(); ++k) {
      if (!(*ids)[k].is_number_integer() ||
          (*ids)[k].get<int64_t>() != g.stream_base + static_cast<int64_t>(k)) {
        return Bad(source, StrCat(where, ".device_stream_ids[", k, "] is not stream_base + ", k));
      }
    }
    b.graphs.push_back(std::move(g));
  }
  return b;
}

absl::Status VerifyBundle(const Bundle& m, const std::vector<BundleGraph>& from_plans) {
  if (from_plans.size() != m.graphs.size()) {
    return absl::InternalError(
        StrCat("verifier[bundle]: ", m.graphs.size(), " graphs but ", from_plans.size(), " plans"));
  }
  std::vector<BundleGraph> graphs;
  std::map<std::string, int> names;
  for (size_t i = 0; i < from_plans.size(); ++i) {
    if (++names[m.graphs[i].name] > 1) {
      return absl::InternalError(
          StrCat("verifier[bundle]: graph name '", m.graphs[i].name, "' appears twice"));
    }
    BundleGraph g = from_plans[i];
    g.name = m.graphs[i].name;
    g.input = m.graphs[i].input;
    g.plan = m.graphs[i].plan;
    graphs.push_back(std::move(g));
  }
  const Bundle want = LayoutBundle(std::move(graphs), m.concurrent, m.budget);
  auto mismatch = [](std::string_view what, int64_t got, int64_t expect) {
    return absl::InternalError(StrCat("verifier[bundle]: ", what, " is ", got,
                                      " but the plans and the mode give ", expect));
  };
  for (size_t i = 0; i < want.graphs.size(); ++i) {
    const BundleGraph &g = m.graphs[i], &w = want.graphs[i];
    for (const auto& [key, field] : kGraphIntFields) {
      if (g.*field != w.*field)
        return mismatch(StrCat("graph '", g.name, "' ", key), g.*field, w.*field);
    }
  }
  if (m.streams != want.streams) return mismatch("device.streams", m.streams, want.streams);
  if (m.event_ids != want.event_ids)
    return mismatch("device.event_ids", m.event_ids, want.event_ids);
  if (m.notify_ids != want.notify_ids)
    return mismatch("device.notify_ids", m.notify_ids, want.notify_ids);
  if (m.memory_bytes != want.memory_bytes)
    return mismatch("device.memory_bytes", m.memory_bytes, want.memory_bytes);
  if (absl::Status s = CheckBundleBudget(want); !s.ok()) {
    return absl::InternalError(StrCat("verifier[bundle]: ", std::string(s.message())));
  }
  return absl::OkStatus();
}

std::string BundleSummaryText(const Bundle& b) {
  std::string out =
      StrCat("bundle: ", b.graphs.size(), " graphs, ", b.concurrent ? "concurrent" : "sequential",
             " (device total = ", b.concurrent ? "sum" : "max", " over graphs)\n");
  out += StrCat("  device streams  ", b.streams, " / budget ", b.budget.streams, "\n");
  out += StrCat("  event ids       ", b.event_ids, " / budget ", b.budget.event_ids, "\n");
  out += StrCat("  notify ids      ", b.notify_ids, " / budget ", b.budget.notify_ids, "\n");
  out += StrCat("  activation mem  ", b.memory_bytes, " bytes\n");
  size_t width = 5;
  for (const BundleGraph& g : b.graphs) width = std::max(width, g.name.size());
  out += fmt::format("  {:<{}} {:>7} {:>11} {:>9} {:>11} {:>10} {:>9} {:>8} {:>14} {:>14}\n",
                     "graph", width, "streams", "stream ids", "event ids", "lower bound",
                     "sync edges", "event id0", "notifies", "memory peak", "memory offset");
  for (const BundleGraph& g : b.graphs) {
    const std::string ids =
        g.streams == 0 ? "-"
                       : StrCat(g.stream_base,
                                g.streams > 1 ? StrCat("-", g.stream_base + g.streams - 1) : "");
    out += fmt::format("  {:<{}} {:>7} {:>11} {:>9} {:>11} {:>10} {:>9} {:>8} {:>14} {:>14}\n",
                       g.name, width, g.streams, ids, g.event_ids, g.event_ids_lower_bound,
                       g.sync_edges, g.event_base, g.notify_ids, g.memory_peak, g.memory_offset);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ReadBundleInput(std::string_view text,
                                                         const std::string& path) {
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(text, path));
  NPUPLAN_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonDocument(text, path));
  if (!j.is_object()) return Bad(path, "not a JSON object");
  if (!j.contains("format") || !j["format"].is_string() || j["format"] != kBundleInputFormat) {
    return Bad(path, StrCat("format is not \"", kBundleInputFormat, "\""));
  }
  const auto graphs = j.find("graphs");
  if (graphs == j.end() || !graphs->is_array() || graphs->empty())
    return Bad(path, "graphs is not a non-empty list");
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::vector<std::string> out;
  for (size_t i = 0; i < graphs->size(); ++i) {
    if (!(*graphs)[i].is_string() || (*graphs)[i].get<std::string>().empty()) {
      return Bad(path, StrCat("graphs[", i, "] is not a file name"));
    }
    const std::filesystem::path p((*graphs)[i].get<std::string>());
    out.push_back((p.is_absolute() ? p : dir / p).string());
  }
  return out;
}

}  // namespace npuplan
