#include "npuplan/memory/memory_options.h"

#include <cstdlib>
#include <string>
#include <string_view>

#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::memory {
namespace {

// An empty value means the option table's default, as CompileOptions::Validate
// and the other stages read it. The parsers also check what Validate checks,
// so a pass given unvalidated options still fails with the option's name.
std::string ValueOrDefault(const CompileOptions& options, std::string_view key) {
  std::string v = options.Get(key);
  if (v.empty()) {
    if (const OptionSpec* spec = FindOptionSpec(key); spec != nullptr) v = spec->default_value;
  }
  return v;
}

absl::StatusOr<double> ParseSeconds(const CompileOptions& options, std::string_view key) {
  const std::string v = ValueOrDefault(options, key);
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !(d >= 0)) {
    return absl::InvalidArgumentError(
        StrCat("option ", key, "=\"", v, "\": expected a non-negative number of seconds"));
  }
  return d;
}

absl::StatusOr<int64_t> ParseCount(const CompileOptions& options, std::string_view key) {
  const std::string v = ValueOrDefault(options, key);
  char* end = nullptr;
  long long a = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end != v.c_str() + v.size() || a < 0) {
    return absl::InvalidArgumentError(
        StrCat("option ", key, "=\"", v, "\": expected a non-negative integer"));
  }
  return static_cast<int64_t>(a);
}

absl::StatusOr<int64_t> ParseAlignment(const CompileOptions& options) {
  const std::string v = ValueOrDefault(options, "npuplan.memory.alignment");
  char* end = nullptr;
  long long a = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end != v.c_str() + v.size() || a <= 0) {
    return absl::InvalidArgumentError(
        StrCat("option npuplan.memory.alignment=\"", v, "\": expected a positive integer"));
  }
  return static_cast<int64_t>(a);
}

}  // namespace

absl::StatusOr<MemoryOptions> ReadMemoryOptions(const CompileOptions& options) {
  MemoryOptions o;
  NPUPLAN_ASSIGN_OR_RETURN(o.alignment, ParseAlignment(options));
  NPUPLAN_ASSIGN_OR_RETURN(o.time_limit_seconds, ParseSeconds(options, "npuplan.memory.timeLimit"));
  NPUPLAN_ASSIGN_OR_RETURN(o.search_steps, ParseCount(options, "npuplan.memory.searchSteps"));
  return o;
}

}  // namespace npuplan::memory
