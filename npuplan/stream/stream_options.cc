#include "npuplan/stream/stream_options.h"

#include "absl/strings/numbers.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::stream {
namespace {

// The pass whose checks these were (error prefixes).
constexpr std::string_view kAssignment = "logical-stream-assignment";
constexpr std::string_view kDynamic = "dynamic-stream-allocator";

AutoAlgorithm AlgorithmOf(std::string_view text) {
  for (AutoAlgorithm a : {AutoAlgorithm::kCv, AutoAlgorithm::kDefault, AutoAlgorithm::kLoadBalance,
                          AutoAlgorithm::kMainStream, AutoAlgorithm::kWeightedLoadBalance,
                          AutoAlgorithm::kCriticalPath}) {
    if (AutoAlgorithmName(a) == text) return a;
  }
  return AutoAlgorithm::kOff;
}

// ge.autoMultistreamParallelMode: the root graph attribute wins over the option.
absl::StatusOr<AutoMode> ReadAutoMode(const CompileOptions& options, const AttrMap& root_attrs) {
  AutoMultistreamMode parsed;
  if (auto attr = GetStringAttr(root_attrs, "ge.autoMultistreamParallelMode")) {
    auto from_attr = ParseAutoMultistreamMode(*attr, /*from_graph_attr=*/true);
    if (!from_attr.ok()) {
      return absl::InvalidArgumentError(StrCat("[", kAssignment, "] graph attribute ",
                                               std::string(from_attr.status().message())));
    }
    parsed = *from_attr;
  } else {
    NPUPLAN_ASSIGN_OR_RETURN(
        parsed, ParseAutoMultistreamMode(options.Get("ge.autoMultistreamParallelMode"), false));
  }
  return AutoMode{AlgorithmOf(parsed.algorithm), parsed.streams};
}

// GE's E10001 for ac_parallel_enable (the dynamic allocator's D1 check).
absl::StatusOr<bool> ReadAcParallel(const CompileOptions& options) {
  const std::string ac = options.Get("ac_parallel_enable");
  if (!ac.empty() && ac != "0" && ac != "1") {
    return absl::InvalidArgumentError(
        StrCat("[", kDynamic, "] E10001: Value [", ac, "] for parameter [",
               options.ReadableName("ac_parallel_enable"),
               "] is invalid. Reason: the value must be empty, \"0\" or \"1\"."));
  }
  return ac == "1";
}

// npuplan.stream.reorder=true: only CriticalPath:N has a schedule to write.
absl::Status CheckReorder(const CompileOptions& options, const StreamOptions& o) {
  if (!o.reorder || o.auto_mode.algorithm == AutoAlgorithm::kCriticalPath) {
    return absl::OkStatus();
  }
  const std::string_view algorithm = AutoAlgorithmName(o.auto_mode.algorithm);
  return absl::InvalidArgumentError(StrCat(
      "[", kAssignment, "] option ", options.ReadableName("npuplan.stream.reorder"), "=true needs ",
      options.ReadableName("ge.autoMultistreamParallelMode"), "=CriticalPath:N (",
      algorithm.empty() ? std::string("not set") : StrCat("it is '", algorithm, "'"), ")"));
}

}  // namespace

std::string_view AutoAlgorithmName(AutoAlgorithm a) {
  switch (a) {
    case AutoAlgorithm::kOff:
      return "";
    case AutoAlgorithm::kCv:
      return "cv";
    case AutoAlgorithm::kDefault:
      return "default";
    case AutoAlgorithm::kLoadBalance:
      return "LoadBalance";
    case AutoAlgorithm::kMainStream:
      return "MainStream";
    case AutoAlgorithm::kWeightedLoadBalance:
      return "WeightedLoadBalance";
    case AutoAlgorithm::kCriticalPath:
      return "CriticalPath";
  }
  return "";
}

std::string AutoModeText(const AutoMode& mode) {
  const std::string_view name = AutoAlgorithmName(mode.algorithm);
  return mode.streams > 0 ? StrCat(name, ":", mode.streams) : std::string(name);
}

bool SingleStreamOption(const CompileOptions& options) {
  return options.Get("ge.enableSingleStream") == "true";
}

StreamBudgetOptions ReadStreamBudgetOptions(const CompileOptions& options) {
  StreamBudgetOptions b;
  b.max_streams = BudgetOption(options, "npuplan.maxStreams", "npuplan.device.maxStreams");
  int64_t tasks = 0;
  // SimpleAtoi's rule, as the budget has always read it (the option's
  // validator refuses what it would not parse).
  if (absl::SimpleAtoi(options.Get("npuplan.device.maxTasksPerStream"), &tasks)) {
    b.max_tasks_per_stream = tasks;
  }
  b.unlimited_stream_depth = options.GetBool("npuplan.device.unlimitedStreamDepth");
  return b;
}

absl::StatusOr<StreamOptions> ReadStreamOptions(const CompileOptions& options,
                                                const AttrMap& root_attrs) {
  StreamOptions o;
  o.single_stream = SingleStreamOption(options);
  o.hcom_parallel = options.GetBool("ge.hcomParallel");
  o.memory_priority = options.Get("ge.exec.memoryOptimizationPolicy") == "MemoryPriority";
  NPUPLAN_ASSIGN_OR_RETURN(o.max_parallel,
                           ParseStreamMaxParallelNum(options.Get("ge.streamMaxParallelNum")));
  NPUPLAN_ASSIGN_OR_RETURN(o.auto_mode, ReadAutoMode(options, root_attrs));
  o.dynamic_multi_stream = options.Get("ENABLE_DYNAMIC_SHAPE_MULTI_STREAM") == "1";
  NPUPLAN_ASSIGN_OR_RETURN(o.ac_parallel, ReadAcParallel(options));
  o.reorder = options.GetBool("npuplan.stream.reorder");
  NPUPLAN_RETURN_IF_ERROR(CheckReorder(options, o));
  o.never_worse = options.GetBool("npuplan.autoStreams.neverWorse");
  o.budget = ReadStreamBudgetOptions(options);
  return o;
}

}  // namespace npuplan::stream
