// Internal (not installed): loading a model or plan from a file or bytes, as
// every CLI command and the public API do it — one place, so the API's
// models, plans and error messages are the CLI's. The CLI's LoadOptions is
// SourceOptions (tools/npuplan/model_loader.h).
#ifndef NPUPLAN_API_SOURCE_LOADER_H_
#define NPUPLAN_API_SOURCE_LOADER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/importers/onnx_source.h"
#include "npuplan/ir/engine_table.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/plan/plan.h"

namespace npuplan::api::internal {

struct SourceOptions {
  std::string engines_file;               // --engines
  std::vector<std::string> input_shapes;  // --input-shape NAME=1x3x224x224 (ONNX)
  std::vector<std::string> dims;          // --dim NAME=VALUE (ONNX symbolic dims)
  bool strict_shapes = false;             // --strict-shapes (ONNX)
  bool allow_unknown_ops = false;         // --allow-unknown-ops (ONNX)
  GraphReadLimits limits;                 // --max-nodes, --max-edges, … (graph and plan JSON)
  // --option ge.topoSortingMode=…: the order a graph (JSON or ONNX) is sorted
  // in after reading, over the graph file's own option; "" = the file's.
  // Plans keep their order.
  std::string topo_sorting_mode;
};

// A graph (or ONNX model) as a plan with only the model, or a plan.
struct LoadedSource {
  ::npuplan::Plan plan;               // the internal plan, not api::Plan
  bool is_plan = false;               // the input was npuplan.plan/1
  std::vector<std::string> warnings;  // ONNX import warnings, without "warning: "
};

// The ONNX import of `path` with these flags.
OnnxSourceRequest OnnxRequest(const std::string& path, const SourceOptions& opts);
// The built-in engine table, merged with `engines_file` when given.
absl::StatusOr<EngineTable> LoadEngineTable(const std::string& engines_file);
// A file: *.onnx → ONNX import, a plan → the plan, else graph JSON.
absl::StatusOr<LoadedSource> LoadSourceFile(const std::string& path, const SourceOptions& opts);
// Graph or plan JSON text named `source`.
absl::StatusOr<LoadedSource> LoadSourceJson(std::string_view text, const std::string& source,
                                            const SourceOptions& opts);
// A serialized onnx.ModelProto named `source`; external data relative to
// `model_dir` ("" = the directory of `source`).
absl::StatusOr<LoadedSource> LoadSourceOnnx(std::string_view bytes, const std::string& source,
                                            const std::string& model_dir,
                                            const SourceOptions& opts);

}  // namespace npuplan::api::internal

#endif  // NPUPLAN_API_SOURCE_LOADER_H_
