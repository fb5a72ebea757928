// The pass registry (compiler/passes.def) and the pipelines built from it:
// the default compile pipeline, --passes text, the names `npuplan passes`
// lists. passes.def is the one place the pipeline order is written.
#ifndef NPUPLAN_COMPILER_PASS_REGISTRY_H_
#define NPUPLAN_COMPILER_PASS_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/pass/options.h"
#include "npuplan/pass/pass.h"

namespace npuplan {

// One line of the pass registry (compiler/passes.def).
struct PassRegistryEntry {
  std::string_view name;      // the pass's name(): CLI, logs, dumps
  std::string_view cls;       // its class, as written in passes.def
  std::string_view pipeline;  // "": top level; else the nested pipeline it runs in
  bool stream_sub_pass;       // runs inside logical-stream-assignment (pipeline = that name)
  // A new pass object; `options` (null when unknown) lets a pass fix its
  // configuration now (logical-stream-assignment: its chain).
  std::unique_ptr<Pass> (*make)(const CompileOptions* options);
};
// Every registered pass, in pipeline order.
const std::vector<PassRegistryEntry>& PassRegistry();

// Builds the default pipeline for these options (every top-level and nested
// pipeline pass of the registry, in order).
absl::StatusOr<std::unique_ptr<PassPipeline>> BuildDefaultPipeline(const CompileOptions& options);
// Builds a pipeline from --passes text: comma-separated pass names, where a
// nested pipeline is `name(a,b)` — what Describe() prints, e.g.
// `partition(mark-unknown-shape-nodes,dynamic-shape-partition),logical-stream-assignment(
// update-for-mde-group-pass,...),assign-attached-stream-pass,...`. A nested
// pipeline's name alone stands for its registered passes; logical-stream-assignment
// alone for the registered chain of the options' mode; logical-stream sub-passes
// only inside `logical-stream-assignment(...)`.
absl::StatusOr<std::unique_ptr<PassPipeline>> BuildPipelineFromNames(const std::string& names,
                                                                     const CompileOptions& options);
// Names of every registered pass (sub-passes included), sorted.
std::vector<std::string> RegisteredPassNames();

}  // namespace npuplan

#endif  // NPUPLAN_COMPILER_PASS_REGISTRY_H_
