#include "npuplan/pass/options.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "npuplan/ir/graph.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

absl::Status BadValue(std::string_view name, std::string_view value, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("option ", name, ": invalid value '", value, "': ", why));
}

bool ParseInt(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

absl::Status ValidateTrueFalse(std::string_view name, std::string_view v) {
  if (v == "true" || v == "false" || v.empty()) return absl::OkStatus();
  return BadValue(name, v, "expected \"true\" or \"false\"");
}
absl::Status ValidateHcomParallel(std::string_view name, std::string_view v) {
  if (v.empty() || v == "0" || v == "1" || v == "true" || v == "false") return absl::OkStatus();
  return BadValue(name, v, "expected \"1\"/\"true\" (AllReduce successors get their own stream) or \"0\"/\"false\"");
}
absl::Status ValidateZeroOne(std::string_view name, std::string_view v) {
  if (v == "0" || v == "1" || v.empty()) return absl::OkStatus();
  return BadValue(name, v, "expected \"0\" or \"1\"");
}
absl::Status ValidatePassThreads(std::string_view name, std::string_view v) {
  if (v == "1" || v == "2") return absl::OkStatus();
  return BadValue(
      name, v,
      "expected 1 (every pass on one thread) or 2 (a pass may run alongside the next ones)");
}
absl::Status ValidateTopoMode(std::string_view name, std::string_view v) {
  if (v.empty() || v == "0" || v == "1" || v == "2" || v == "3") return absl::OkStatus();
  return BadValue(name, v, "expected 0 (BFS), 1 (DFS), 2 (RDFS) or 3 (stable RDFS)");
}
absl::Status ValidateAutoMultistream(std::string_view name, std::string_view v) {
  return ParseAutoMultistreamMode(v, /*from_graph_attr=*/false).status();
}
absl::Status ValidateStreamMaxParallel(std::string_view name, std::string_view v) {
  return ParseStreamMaxParallelNum(v).status();
}
absl::Status ValidateStaticOpsLowerLimit(std::string_view name, std::string_view v) {
  int64_t n;
  if (v.empty()) return BadValue(name, v, "must not be empty (an integer >= -1)");
  if (!ParseInt(v, n)) return BadValue(name, v, "expected an integer >= -1");
  if (n < -1) return BadValue(name, v, "must be >= -1 (-1 makes the whole graph dynamic)");
  return absl::OkStatus();
}
absl::Status ValidateNonNegativeInt(std::string_view name, std::string_view v) {
  int64_t n;
  if (v.empty()) return absl::OkStatus();
  if (!ParseInt(v, n) || n < 0) return BadValue(name, v, "expected a non-negative integer");
  return absl::OkStatus();
}
// A per-stream task limit (physical split): GE keeps 27 tasks of every stream
// in reserve (kReservedTaskNum: 7 DFX + 20), so a limit must leave at least
// one task for the stream's nodes. Empty is an error (the split needs a number).
absl::Status ValidateTaskLimit(std::string_view name, std::string_view v) {
  int64_t n;
  if (!ParseInt(v, n)) return BadValue(name, v, "expected an integer >= 28");
  if (n < 28) {
    return BadValue(name, v, "must be >= 28: every stream keeps 27 tasks in reserve (GE kReservedTaskNum), "
                             "so a smaller limit leaves no task for its nodes");
  }
  return absl::OkStatus();
}
// A byte alignment: a power of two up to 1 GiB, so aligned sizes and offsets
// stay far from int64 overflow.
absl::Status ValidateAlignment(std::string_view name, std::string_view v) {
  int64_t n;
  if (v.empty()) return absl::OkStatus();
  if (!ParseInt(v, n) || n < 1 || n > (int64_t{1} << 30) || (n & (n - 1)) != 0) {
    return BadValue(name, v, "expected a power of two in [1, 1073741824]");
  }
  return absl::OkStatus();
}
// Device limits may only be lowered: 1..`max`.
template <int64_t kMax>
absl::Status ValidateDeviceLimit(std::string_view name, std::string_view v) {
  int64_t n;
  if (v.empty()) return absl::OkStatus();
  if (!ParseInt(v, n) || n < 1 || n > kMax) {
    return BadValue(name, v, StrCat("expected an integer in [1, ", kMax, "] (the device's limit can only be lowered)"));
  }
  return absl::OkStatus();
}
absl::Status ValidateNonNegativeSeconds(std::string_view name, std::string_view v) {
  if (v.empty()) return absl::OkStatus();
  std::string text(v);
  char* end = nullptr;
  double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(d >= 0) || d > 1e9) {
    return BadValue(name, v, "expected a non-negative number of seconds");
  }
  return absl::OkStatus();
}
absl::Status ValidateEvent(std::string_view name, std::string_view v) {
  if (v.empty() || v == "event" || v == "notify") return absl::OkStatus();
  return BadValue(name, v, "expected \"event\" or \"notify\"");
}
absl::Status ValidateMemoryPolicy(std::string_view name, std::string_view v) {
  if (v.empty() || v == "MemoryPriority" || v == "BalanceMode") return absl::OkStatus();
  return BadValue(name, v, "expected \"MemoryPriority\" or \"BalanceMode\"");
}
absl::Status ValidatePlacement(std::string_view name, std::string_view v) {
  if (v.empty() || v == "HOST" || v == "DEVICE") return absl::OkStatus();
  return BadValue(name, v, "expected \"HOST\" or \"DEVICE\"");
}
absl::Status ValidateEventIdReuse(std::string_view name, std::string_view v) {
  if (v.empty() || v == "min" || v == "ge" || v == "none") return absl::OkStatus();
  return BadValue(name, v, "expected \"min\", \"ge\" or \"none\"");
}
// A budget: 1..`max` (the device's limit, which stays the hard check).
template <int64_t kMax>
absl::Status ValidateBudget(std::string_view name, std::string_view v) {
  int64_t n;
  if (v.empty()) return absl::OkStatus();
  if (!ParseInt(v, n) || n < 1 || n > kMax) {
    return BadValue(
        name, v,
        StrCat("expected an integer in [1, ", kMax, "] (a budget within the device's limit)"));
  }
  return absl::OkStatus();
}
absl::Status ValidateEventOptimization(std::string_view name, std::string_view v) {
  if (v.empty() || v == "ge" || v == "exact" || v == "none") return absl::OkStatus();
  return BadValue(name, v, "expected \"exact\", \"ge\" or \"none\"");
}

// Levenshtein distance of the lower-cased strings (option names are short).
size_t EditDistance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The known option nearest to `key` (ties: first in name order) among those
// whose name starts with `npuplan.` (`npuplan_keys`) or not.
std::pair<const OptionSpec*, size_t> Nearest(std::string_view key, bool npuplan_keys);

constexpr size_t kNearMiss = 2;  // a GE key this close (case-insensitive) is what the user meant

// An option no spec knows: an unknown `npuplan.*` key is an error naming the
// closest npuplan option; a key within kNearMiss of a known GE option is a
// warning naming it (GE would ignore it: the option silently does nothing);
// other keys are GE options npuplan does not read, accepted as GE does.
absl::Status CheckUnknownOption(std::string_view key, std::vector<std::string>* warnings) {
  if (key.rfind("npuplan.", 0) == 0) {
    auto [near, d] = Nearest(key, /*npuplan_keys=*/true);
    return absl::InvalidArgumentError(StrCat("option ", key, ": unknown npuplan option",
                                             near ? StrCat("; did you mean '", near->name, "'?") : std::string(),
                                             " (npuplan options --markdown lists them)"));
  }
  auto [near, d] = Nearest(key, /*npuplan_keys=*/false);
  if (near != nullptr && d <= kNearMiss && warnings != nullptr) {
    warnings->push_back(StrCat("option ", key, " is not an option npuplan reads and does nothing; did you mean '",
                               near->name, "'?"));
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<OptionSpec>& KnownOptions() {
  static const std::vector<OptionSpec> specs = [] {
    std::vector<OptionSpec> v = {
        {"ENABLE_DYNAMIC_SHAPE_MULTI_STREAM", "",
         "environment: \"1\" enables multi-stream for dynamic-shape graphs", ValidateZeroOne},
        {"ac_parallel_enable", "",
         "AI CPU nodes may run in parallel in dynamic-shape graphs (\"\", \"0\", \"1\")",
         ValidateZeroOne},
        {"ge.autoMultistreamParallelMode", "",
         "auto multi-stream: cv | LoadBalance:N | MainStream:N | WeightedLoadBalance:N | "
         "CriticalPath:N (npuplan extension), N in [1, 64]; root graph attribute wins",
         ValidateAutoMultistream},
        {"ge.enableSingleStream", "false",
         "\"true\": every node on one stream (single-stream pass chain)", ValidateTrueFalse},
        {"ge.event", "event",
         "synchronisation primitive: \"event\" or \"notify\" (notify: static shape only)",
         ValidateEvent},
        {"ge.exec.hostSchedulingMaxThreshold", "0",
         "graphs with fewer known nodes than this run host-scheduled (whole graph dynamic)",
         ValidateNonNegativeInt},
        {"ge.exec.memoryOptimizationPolicy", "",
         "\"MemoryPriority\" disables the same-engine-sibling reuse rule", ValidateMemoryPolicy},
        {"ge.exec.placement", "",
         "\"HOST\": the graph executes on the host (GE's host-exec shortcut: whole graph dynamic, "
         "no partition)",
         ValidatePlacement},
        {"ge.exec.static_model_ops_lower_limit", "4",
         "static clusters with fewer nodes become dynamic; -1 makes the whole graph dynamic",
         ValidateStaticOpsLowerLimit},
        {"ge.hcomParallel", "",
         "\"1\"/\"true\": successors of fused AllReduce move to their own stream",
         ValidateHcomParallel},
        {"ge.optionNameMap", "",
         "JSON object option name → the caller's name for it, used in option error messages "
         "(E10055, E10056, invalid values); a malformed map is ignored with a warning, as GE "
         "ignores it",
         nullptr},
        {"ge.streamMaxParallelNum", "",
         "per-engine stream limit for dependency assignment: \"ENGINE:N,ENGINE:N\"",
         ValidateStreamMaxParallel},
        {"ge.tiling_schedule_optimize", "",
         "\"1\": tiling sink enabled (with npuplan.device.tilingSink)", ValidateZeroOne},
        {"ge.topoSortingMode", "0", "topological order: 0 BFS, 1 DFS, 2 RDFS, 3 stable RDFS",
         ValidateTopoMode},
        {"npuplan.device.maxEvents", "65536",
         "event ids the device can address (device-limit-check; lower only)",
         ValidateDeviceLimit<65536>},
        {"npuplan.device.maxNotifies", "1024",
         "notify ids the device can address (GE kMaxNotifyNum; lower only)",
         ValidateDeviceLimit<1024>},
        {"npuplan.device.maxStreams", "2024",
         "device streams one model may use (GE kMaxStreamNum; lower only)",
         ValidateDeviceLimit<2024>},
        {"npuplan.device.maxTasksPerStream", "1024",
         "per-stream task limit of the device (physical split; >= 28, 27 are reserved)",
         ValidateTaskLimit},
        {"npuplan.device.hugeStreamTasks", "8192",
         "task limit of a huge stream (single-stream mode; >= 28)", ValidateTaskLimit},
        {"npuplan.device.unlimitedStreamDepth", "false",
         "\"true\": the runtime handles deep streams, no physical split", ValidateTrueFalse},
        {"npuplan.device.tilingSink", "false", "\"true\": the device supports tiling sink",
         ValidateTrueFalse},
        {"npuplan.eventOptimization", "exact",
         "event redundancy removal: exact (minimal) | ge (GE's rules) | none",
         ValidateEventOptimization},
        {"npuplan.eventIdReuse", "",
         "device event/notify ids: min (fewest: chain cover of the wait-before-record order) | ge "
         "(GE's: multi-gear reuse only) | none (one per sync edge); unset: ge under "
         "npuplan.eventOptimization=ge, else min",
         ValidateEventIdReuse},
        {"npuplan.eventIdExactLimit", "1000000",
         "min id reuse: sync edges up to which the chain cover is exact (matching); above, the "
         "greedy allocator and its lower bound",
         ValidateNonNegativeInt},
        {"npuplan.eventIdExactEntries", "33554432",
         "min id reuse: list entries (edges x clock streams they follow) up to which a context's "
         "chain cover is exact; above, the greedy allocator (bounds the exact step's memory, ~12 "
         "bytes per entry)",
         ValidateNonNegativeInt},
        {"npuplan.maxStreams", "",
         "stream budget the plan is fitted into by merging streams (unset: "
         "npuplan.device.maxStreams)",
         ValidateBudget<2024>},
        {"npuplan.maxEventIds", "", "device event id budget (unset: npuplan.device.maxEvents)",
         ValidateBudget<65536>},
        {"npuplan.maxNotifyIds", "", "device notify id budget (unset: npuplan.device.maxNotifies)",
         ValidateBudget<1024>},
        {"npuplan.eventReuseThreshold", "65500",
         "_event_multiplexing applies above this many events (GE kEventReuseThreshold)",
         ValidateNonNegativeInt},
        {"npuplan.memory.alignment", "512",
         "device memory alignment in bytes (a power of two, at most 1 GiB)", ValidateAlignment},
        {"npuplan.memory.searchSteps", "2000000",
         "search budget of the memory planner after greedy, in buffers/sections visited "
         "(deterministic; 0 = greedy only)",
         ValidateNonNegativeInt},
        {"npuplan.memory.timeLimit", "0",
         "optional wall-clock limit in seconds on the memory planner's search (0 = none; results "
         "then depend on machine speed)",
         ValidateNonNegativeSeconds},
        {"npuplan.autoStreams.neverWorse", "true",
         "\"true\": LoadBalance/MainStream/WeightedLoadBalance/CriticalPath:N write stream 0 "
         "to the NetOutput's stream and keep the default assignment where theirs estimates "
         "worse (npuplan extension); \"false\": GE's plans (NetOutput on a stream of its own, "
         "no fallback)",
         ValidateTrueFalse},
        {"npuplan.stream.reorder", "false",
         "\"true\": CriticalPath:N may also rewrite each graph's execution (topological) order to "
         "its schedule's (npuplan extension; needs CriticalPath:N)",
         ValidateTrueFalse},
        {"npuplan.passThreads", "2",
         "2: a pass that declares it (memory-planning) runs on a second thread beside the passes "
         "after it that do not touch its data, with the same plan, log and statistics, and the "
         "engine partition of a graph of 32,768 nodes or more builds its reachability labels and "
         "successor lists on a second thread, and the final verification (all but its memory "
         "check) and the writing of the plan begin beside memory-planning's end; 1: every pass on "
         "the calling thread, the engine partition too, and the final verification after the "
         "passes",
         ValidatePassThreads},
        {"npuplan.partition.mergeKnownFirst", "false",
         "\"true\": GE's merge-known-first partition variant (known TryMerge first, no path "
         "absorption; limit default 6)",
         ValidateTrueFalse},
    };
    std::sort(v.begin(), v.end(), [](const OptionSpec& a, const OptionSpec& b) { return a.name < b.name; });
    return v;
  }();
  return specs;
}

namespace {
std::pair<const OptionSpec*, size_t> Nearest(std::string_view key, bool npuplan_keys) {
  const OptionSpec* best = nullptr;
  size_t best_d = 0;
  for (const OptionSpec& s : KnownOptions()) {
    if ((s.name.rfind("npuplan.", 0) == 0) != npuplan_keys) continue;
    const size_t d = EditDistance(key, s.name);
    if (best == nullptr || d < best_d) {
      best = &s;
      best_d = d;
    }
  }
  return {best, best_d};
}
}  // namespace

const OptionSpec* FindOptionSpec(std::string_view name) {
  for (const OptionSpec& s : KnownOptions()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

CompileOptions CompileOptions::FromModel(const Model& model, const std::map<std::string, std::string>& overrides,
                                         bool read_environment) {
  CompileOptions o;
  for (const auto& [k, v] : model.options) o.values_[k] = v;
  for (const auto& [k, v] : overrides) o.values_[k] = v;
  if (read_environment) {
    for (const char* env : {"ENABLE_DYNAMIC_SHAPE_MULTI_STREAM"}) {
      if (const char* v = std::getenv(env); v != nullptr && !o.Has(env)) o.values_[env] = v;
    }
  }
  return o;
}

std::string CompileOptions::Get(std::string_view key) const {
  if (auto it = values_.find(std::string(key)); it != values_.end()) return it->second;
  if (const OptionSpec* s = FindOptionSpec(key)) return s->default_value;
  return "";
}

std::optional<std::string> CompileOptions::GetIfSet(std::string_view key) const {
  if (auto it = values_.find(std::string(key)); it != values_.end()) return it->second;
  return std::nullopt;
}

bool CompileOptions::GetBool(std::string_view key) const {
  std::string v = Get(key);
  return v == "true" || v == "1";
}

namespace {
// Deepest bracket nesting outside strings: a map of names is one level deep,
// and a bound keeps a pathological value from reaching the parser.
int JsonDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') deepest = std::max(deepest, ++depth);
    if (c == '}' || c == ']') --depth;
  }
  return deepest;
}
}  // namespace

std::optional<std::map<std::string, std::string>> ParseOptionNameMap(std::string_view text) {
  std::map<std::string, std::string> out;
  if (text.empty()) return out;
  if (JsonDepth(text) > 8) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  for (const auto& [k, v] : j.items()) {
    // GE's SetOptionNameMap: keys and values non-empty strings.
    if (k.empty() || !v.is_string() || v.get_ref<const std::string&>().empty()) return std::nullopt;
    out.emplace(k, v.get<std::string>());
  }
  return out;
}

std::string CompileOptions::ReadableName(std::string_view key) const {
  auto it = values_.find("ge.optionNameMap");
  if (it == values_.end()) return std::string(key);
  auto map = ParseOptionNameMap(it->second);
  if (!map) return std::string(key);
  auto m = map->find(std::string(key));
  return m != map->end() ? m->second : std::string(key);
}

absl::Status CompileOptions::Validate(std::vector<std::string>* warnings) const {
  for (const auto& [k, v] : values_) {
    const OptionSpec* spec = FindOptionSpec(k);
    if (spec == nullptr) {
      NPUPLAN_RETURN_IF_ERROR(CheckUnknownOption(k, warnings));
      continue;
    }
    if (spec->validate) NPUPLAN_RETURN_IF_ERROR(spec->validate(ReadableName(k), v));
  }
  if (auto it = values_.find("ge.optionNameMap"); it != values_.end() && !ParseOptionNameMap(it->second)) {
    if (warnings) {
      warnings->push_back("option ge.optionNameMap: not a JSON object of non-empty option names to non-empty "
                          "names; ignored (GE ignores a malformed map too)");
    }
  }
  return absl::OkStatus();
}

std::string EventIdReuseMode(const CompileOptions& options) {
  if (auto v = options.GetIfSet("npuplan.eventIdReuse"); v && !v->empty()) return *v;
  return options.Get("npuplan.eventOptimization") == "ge" ? "ge" : "min";
}

int64_t BudgetOption(const CompileOptions& options, std::string_view budget_option,
                     std::string_view device_option) {
  int64_t device = 0, budget = 0;
  if (!ParseInt(options.Get(device_option), device)) device = INT64_MAX;
  if (auto v = options.GetIfSet(budget_option); v && ParseInt(*v, budget) && budget > 0)
    return std::min(budget, device);
  return device;
}

absl::StatusOr<std::pair<std::string, std::string>> ParseOptionAssignment(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(StrCat("--option '", text, "': expected KEY=VALUE"));
  }
  return std::make_pair(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
}

absl::StatusOr<AutoMultistreamMode> ParseAutoMultistreamMode(std::string_view value, bool from_graph_attr) {
  constexpr std::string_view kName = "ge.autoMultistreamParallelMode";
  AutoMultistreamMode mode;
  if (value.empty()) return mode;
  if (value == "cv") {
    mode.algorithm = "cv";
    return mode;
  }
  if (value == "default") {
    if (!from_graph_attr) {
      return BadValue(kName, value, "\"default\" is only accepted as a graph attribute set by a custom pass");
    }
    mode.algorithm = "default";
    return mode;
  }
  size_t colon = value.find(':');
  std::string_view algo = value.substr(0, colon);
  bool known = algo == "LoadBalance" || algo == "MainStream" || algo == "WeightedLoadBalance" ||
               algo == "CriticalPath";
  if (!known) {
    return BadValue(kName, value,
                    "expected cv, LoadBalance:N, MainStream:N, WeightedLoadBalance:N or CriticalPath:N with N in [1, 64]");
  }
  if (colon == std::string_view::npos) {
    return BadValue(kName, value, StrCat("the stream count is missing: use ", algo, ":N with N in [1, 64]"));
  }
  std::string_view num = value.substr(colon + 1);
  if (num.find(':') != std::string_view::npos) return BadValue(kName, value, "exactly one ':' is allowed");
  int64_t n;
  if (!AllDigits(num) || !ParseInt(num, n) || n < 1 || n > 64) {
    return BadValue(kName, value, "N must be a decimal integer in [1, 64]");
  }
  mode.algorithm = std::string(algo);
  mode.streams = n;
  return mode;
}

absl::StatusOr<std::map<std::string, int64_t>> ParseStreamMaxParallelNum(std::string_view value) {
  constexpr std::string_view kName = "ge.streamMaxParallelNum";
  std::map<std::string, int64_t> out;
  if (value.empty()) return out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    std::string_view item = value.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t colon = item.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return BadValue(kName, value, StrCat("item '", item, "' is not ENGINE:N"));
    }
    std::string engine(item.substr(0, colon));
    std::string_view num = item.substr(colon + 1);
    int64_t n;
    if (!AllDigits(num) || !ParseInt(num, n)) {
      return BadValue(kName, value, StrCat("the number of '", engine, "' must be digits only"));
    }
    if (n <= 0) return BadValue(kName, value, StrCat("the number of '", engine, "' must be positive"));
    if (!out.emplace(engine, n).second) return BadValue(kName, value, StrCat("engine '", engine, "' appears twice"));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace npuplan
