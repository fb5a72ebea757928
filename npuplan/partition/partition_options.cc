#include "npuplan/partition/partition_options.h"

#include <charconv>
#include <string>
#include <string_view>

#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace partition {
namespace {

bool ParseInt64(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

absl::Status Bad(std::string_view name, std::string_view value, std::string_view why) {
  return absl::InvalidArgumentError(
      StrCat("option ", name, ": invalid value '", value, "': ", why));
}

}  // namespace

absl::StatusOr<PartitionOptions> ReadPartitionOptions(const CompileOptions& options) {
  PartitionOptions o;
  o.merge_known_first = options.GetBool("npuplan.partition.mergeKnownFirst");
  if (auto v = options.GetIfSet("npuplan.partition.mergeKnownFirst");
      v && *v != "true" && *v != "false" && *v != "1" && *v != "0" && !v->empty()) {
    return Bad("npuplan.partition.mergeKnownFirst", *v, "expected \"true\" or \"false\"");
  }
  o.lower_limit = o.merge_known_first ? 6 : 4;
  if (auto v = options.GetIfSet("ge.exec.static_model_ops_lower_limit")) {
    int64_t n;
    if (v->empty()) {
      return Bad("ge.exec.static_model_ops_lower_limit", *v,
                 "must not be empty (an integer >= -1)");
    }
    if (!ParseInt64(*v, n) || n < -1) {
      return Bad("ge.exec.static_model_ops_lower_limit", *v, "expected an integer >= -1");
    }
    o.lower_limit = n;
  }
  if (auto v = options.GetIfSet("ge.exec.hostSchedulingMaxThreshold"); v && !v->empty()) {
    int64_t n;
    if (!ParseInt64(*v, n) || n < 0) {
      return Bad("ge.exec.hostSchedulingMaxThreshold", *v, "expected a non-negative integer");
    }
    o.host_scheduling_threshold = n;
  }
  if (auto v = options.GetIfSet("ge.exec.placement"); v && !v->empty()) {
    if (*v != "HOST" && *v != "DEVICE") {
      return Bad("ge.exec.placement", *v, "expected \"HOST\" or \"DEVICE\"");
    }
    o.host_exec = *v == "HOST";
  }
  const std::string mode = options.Get("ge.topoSortingMode");
  NPUPLAN_ASSIGN_OR_RETURN(o.topo_mode,
                           ParseTopoSortMode(mode.empty() ? std::string_view("0") : mode));
  o.stable_topo = o.topo_mode == TopoSortMode::kStableRdfs;
  o.tiling_sink = options.Get("ge.tiling_schedule_optimize") == "1" &&
                  options.GetBool("npuplan.device.tilingSink");
  return o;
}

}  // namespace partition
}  // namespace npuplan
