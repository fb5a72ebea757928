// The options of the stream stage (logical-stream-assignment and its chain,
// the dynamic-shape and auto multi-stream allocators, stream-budget), read
// and checked once per pass run (ReadStreamOptions): the passes test typed
// fields, never option text. Each field names the option it comes from; the
// option table with defaults and help texts is npuplan/pass/options.cc
// (`npuplan options`, docs/options.md), which CompileOptions::Validate checks
// before a compilation. ReadStreamOptions keeps the stage's own checks, with
// their messages: ge.streamMaxParallelNum and ge.autoMultistreamParallelMode
// (root graph attribute, then option) parsed, ac_parallel_enable (GE's
// E10001), npuplan.stream.reorder=true only with CriticalPath:N.
#ifndef NPUPLAN_STREAM_STREAM_OPTIONS_H_
#define NPUPLAN_STREAM_STREAM_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/pass/options.h"

namespace npuplan::stream {

// ge.autoMultistreamParallelMode's algorithm ("default" only from a graph
// attribute; CriticalPath is npuplan's extension).
enum class AutoAlgorithm : uint8_t {
  kOff,
  kCv,
  kDefault,
  kLoadBalance,
  kMainStream,
  kWeightedLoadBalance,
  kCriticalPath,
};
// The option's spelling: "" (off), "cv", "default", "LoadBalance", ….
std::string_view AutoAlgorithmName(AutoAlgorithm a);

struct AutoMode {
  AutoAlgorithm algorithm = AutoAlgorithm::kOff;
  int64_t streams = 0;  // N of ALGO:N; 0 for off, cv and default
  bool set() const { return algorithm != AutoAlgorithm::kOff; }
  // LoadBalance/MainStream/WeightedLoadBalance/CriticalPath:N: an allocator
  // rewrites each graph's streams after the chain.
  bool rewrites_streams() const {
    return set() && algorithm != AutoAlgorithm::kCv && algorithm != AutoAlgorithm::kDefault;
  }
};
// The option value it was read from: "ALGO:N", "cv", "default" or "".
std::string AutoModeText(const AutoMode& mode);

// The stream budget's options (stream-budget).
struct StreamBudgetOptions {
  // npuplan.maxStreams, else npuplan.device.maxStreams (BudgetOption).
  int64_t max_streams = 2024;
  // npuplan.device.maxTasksPerStream (1024 when not an integer); what the
  // physical split will cut a stream at.
  int64_t max_tasks_per_stream = 1024;
  // npuplan.device.unlimitedStreamDepth: no physical split.
  bool unlimited_stream_depth = false;
};

struct StreamOptions {
  // ge.enableSingleStream=true: the single-stream chain.
  bool single_stream = false;
  // ge.hcomParallel ("1" or "true"): AllReduce successors get their own stream.
  bool hcom_parallel = false;
  // ge.exec.memoryOptimizationPolicy=MemoryPriority: no same-engine-sibling reuse.
  bool memory_priority = false;
  // ge.streamMaxParallelNum: engine → stream limit of dependency assignment.
  std::map<std::string, int64_t> max_parallel;
  // ge.autoMultistreamParallelMode: the root graph attribute, else the option.
  AutoMode auto_mode;
  // ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1: dynamic-shape graphs get streams.
  bool dynamic_multi_stream = false;
  // ac_parallel_enable=1: AI CPU subgraphs of dynamic graphs may run apart.
  bool ac_parallel = false;
  // npuplan.stream.reorder: CriticalPath:N also writes its execution order.
  bool reorder = false;
  // npuplan.autoStreams.neverWorse: the auto modes keep home streams and the
  // default assignment where theirs estimates worse.
  bool never_worse = true;
  StreamBudgetOptions budget;
};

// ge.enableSingleStream=true (what chain a pass object is built with: it
// cannot fail, so it is readable before the options are checked).
bool SingleStreamOption(const CompileOptions& options);

// Reads and checks the stage's options; `root_attrs` are the root graph's
// attributes (ge.autoMultistreamParallelMode there wins over the option).
absl::StatusOr<StreamOptions> ReadStreamOptions(const CompileOptions& options,
                                                const AttrMap& root_attrs);
// The budget part alone (it has no check of its own).
StreamBudgetOptions ReadStreamBudgetOptions(const CompileOptions& options);

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_STREAM_OPTIONS_H_
