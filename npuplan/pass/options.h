// Compile options: GE option names → string values, gathered from the graph
// file's "options", the command line (--option K=V, which wins) and the
// environment variables GE reads (ENABLE_DYNAMIC_SHAPE_MULTI_STREAM, …).
// Some options are read from a root-graph attribute first, as GE does
// (ge.autoMultistreamParallelMode). Every known option is validated in one
// place (options.cc) with GE's constraints; docs/options.md lists them.
#ifndef NPUPLAN_PASS_OPTIONS_H_
#define NPUPLAN_PASS_OPTIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuplan {

class Model;

struct OptionSpec {
  std::string name;
  std::string default_value;  // "" = unset
  std::string description;    // one line, for docs/options.md and --help-options
  // Returns an InvalidArgument naming the option when `value` is not allowed.
  absl::Status (*validate)(std::string_view name, std::string_view value) = nullptr;
};

// All known options, sorted by name.
const std::vector<OptionSpec>& KnownOptions();
const OptionSpec* FindOptionSpec(std::string_view name);

class CompileOptions {
 public:
  CompileOptions() = default;

  // Graph file options, then `overrides` (--option), then environment variables.
  static CompileOptions FromModel(const Model& model, const std::map<std::string, std::string>& overrides,
                                  bool read_environment = true);

  void Set(std::string key, std::string value) { values_[std::move(key)] = std::move(value); }
  bool Has(std::string_view key) const { return values_.find(std::string(key)) != values_.end(); }
  // Value or the spec's default or "".
  std::string Get(std::string_view key) const;
  std::optional<std::string> GetIfSet(std::string_view key) const;
  bool GetBool(std::string_view key) const;  // "true" or "1"
  const std::map<std::string, std::string>& values() const { return values_; }

  // Validates every option that is set: known options by their spec; an
  // unknown `npuplan.*` key is an error naming the closest npuplan option.
  // Other unknown keys are accepted (GE ignores options it does not read),
  // but one within a small edit distance of a known GE option (a likely
  // typo, e.g. ge.autoMultiStreamParallelMode) adds a line to `warnings`
  // naming the intended key, as does a malformed ge.optionNameMap.
  absl::Status Validate(std::vector<std::string>* warnings = nullptr) const;

  // The caller's name for option `key` in error messages: GE's
  // ge.optionNameMap (a JSON object internal name → caller's name, e.g. an
  // ATC flag) when it maps `key`, else `key` itself.
  std::string ReadableName(std::string_view key) const;

 private:
  std::map<std::string, std::string> values_;
};

// ge.optionNameMap's JSON object, or nullopt when it is not an object of
// non-empty strings (GE ignores such a map).
std::optional<std::map<std::string, std::string>> ParseOptionNameMap(std::string_view text);
// npuplan.eventIdReuse in effect: "min", "ge" or "none". Unset, it follows
// the GE-compat rule: "ge" when npuplan.eventOptimization=ge (the mode that
// reproduces GE's event table), otherwise "min".
std::string EventIdReuseMode(const CompileOptions& options);
// A budget option (npuplan.maxStreams / maxEventIds / maxNotifyIds): its value
// when set, else the device limit `device_option` (itself defaulted); the
// smaller of the two when both are set.
int64_t BudgetOption(const CompileOptions& options, std::string_view budget_option,
                     std::string_view device_option);

// Parses "KEY=VALUE" (--option); InvalidArgument otherwise.
absl::StatusOr<std::pair<std::string, std::string>> ParseOptionAssignment(std::string_view text);

// ge.autoMultistreamParallelMode parsed: algorithm "" (off), "cv", "default",
// "LoadBalance", "MainStream", "WeightedLoadBalance" (+ npuplan extensions), and N.
struct AutoMultistreamMode {
  std::string algorithm;
  int64_t streams = 0;
};
absl::StatusOr<AutoMultistreamMode> ParseAutoMultistreamMode(std::string_view value, bool from_graph_attr);

// ge.streamMaxParallelNum "ENGINE:N,ENGINE:N" → map.
absl::StatusOr<std::map<std::string, int64_t>> ParseStreamMaxParallelNum(std::string_view value);

}  // namespace npuplan

#endif  // NPUPLAN_PASS_OPTIONS_H_
