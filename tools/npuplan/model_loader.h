// Loads a model for any command: native graph JSON, a plan (its graph), or —
// once the ONNX importer exists — an .onnx file. `--engines FILE` merges into
// the built-in engine table first.
#ifndef NPUPLAN_TOOLS_NPUPLAN_MODEL_LOADER_H_
#define NPUPLAN_TOOLS_NPUPLAN_MODEL_LOADER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/plan/plan.h"

namespace CLI {
class App;
}  // namespace CLI

namespace npuplan::cli {

struct LoadOptions {
  std::string engines_file;              // --engines
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

// Adds the reader-limit flags (--max-nodes, --max-edges, --max-string-bytes,
// --max-attr-elements, --max-depth) of a command that loads a graph or plan.
void AddReadLimitFlags(CLI::App* cmd, LoadOptions* load);
// Adds `--input-shape NAME=DIMS`, `--dim NAME=VALUE` (both repeatable),
// `--strict-shapes` and `--allow-unknown-ops` of a command that may load an .onnx model.
void AddInputShapeFlag(CLI::App* cmd, LoadOptions* load);

absl::StatusOr<EngineTable> LoadEngineTable(const std::string& engines_file);

// A graph file (or .onnx model) as a plan with only the graph, or a plan file.
struct LoadedInput {
  Plan plan;
  bool is_plan = false;  // the file was npuplan.plan/1
};
absl::StatusOr<LoadedInput> LoadInput(const std::string& path, const LoadOptions& opts);
// The model of any input (a plan's final graph for plan files).
absl::StatusOr<Model> LoadModel(const std::string& path, const LoadOptions& opts);

// Hook set by the ONNX importer's command file when it is linked in.
using OnnxLoader = absl::StatusOr<Model> (*)(const std::string& path, const EngineTable& engines,
                                             const LoadOptions& opts);
bool SetOnnxLoader(OnnxLoader loader);

}  // namespace npuplan::cli

#endif  // NPUPLAN_TOOLS_NPUPLAN_MODEL_LOADER_H_
