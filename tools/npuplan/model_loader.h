// Loads a model for any command: native graph JSON, a plan (its graph), or an
// .onnx file. `--engines FILE` merges into the built-in engine table first.
// The loading itself is the public API's (npuplan/api/source_loader.h), so the
// API's models and error messages are the CLI's; here: the flags, and ONNX
// warnings printed to stderr.
#ifndef NPUPLAN_TOOLS_NPUPLAN_MODEL_LOADER_H_
#define NPUPLAN_TOOLS_NPUPLAN_MODEL_LOADER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/api/source_loader.h"
#include "npuplan/ir/graph.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/plan/plan.h"

namespace CLI {
class App;
}  // namespace CLI

namespace npuplan::cli {

// --engines, --input-shape, --dim, --strict-shapes, --allow-unknown-ops, the
// reader limits and the --option ge.topoSortingMode the graph is sorted in.
using LoadOptions = api::internal::SourceOptions;

// Adds the reader-limit flags (--max-nodes, --max-edges, --max-string-bytes,
// --max-attr-elements, --max-depth) of a command that loads a graph or plan.
void AddReadLimitFlags(CLI::App* cmd, LoadOptions* load);
// Adds `--input-shape NAME=DIMS`, `--dim NAME=VALUE` (both repeatable),
// `--strict-shapes` and `--allow-unknown-ops` of a command that may load an .onnx model.
void AddInputShapeFlag(CLI::App* cmd, LoadOptions* load);

using api::internal::LoadEngineTable;

// A graph file (or .onnx model) as a plan with only the graph, or a plan file
// (`is_plan`). ONNX import warnings are printed to stderr as `warning: …`.
using LoadedInput = api::internal::LoadedSource;
absl::StatusOr<LoadedInput> LoadInput(const std::string& path, const LoadOptions& opts);
// A plan file for a command that uses one (summary, simulate, run, report):
// read, then its structure and its claims about itself checked
// (VerifyStructure, VerifyPlanClaims: linear and cheap), so that no command
// works on a plan that lies about its streams, tasks or stages. The stage
// checks are `verify`'s.
absl::StatusOr<Plan> LoadPlan(const std::string& path, const LoadOptions& opts);
// Those checks on a plan read elsewhere; the message names `source`.
absl::Status CheckPlanClaims(const Plan& plan, const std::string& source);
// The model of any input (a plan's final graph for plan files).
absl::StatusOr<Model> LoadModel(const std::string& path, const LoadOptions& opts);

}  // namespace npuplan::cli

#endif  // NPUPLAN_TOOLS_NPUPLAN_MODEL_LOADER_H_
