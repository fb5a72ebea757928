#include "tools/npuplan/model_loader.h"

#include "CLI/CLI.hpp"
#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::cli {
namespace {
OnnxLoader& OnnxLoaderSlot() {
  static OnnxLoader loader = nullptr;
  return loader;
}
bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

bool SetOnnxLoader(OnnxLoader loader) {
  OnnxLoaderSlot() = loader;
  return true;
}

void AddReadLimitFlags(CLI::App* cmd, LoadOptions* load) {
  GraphReadLimits& l = load->limits;
  cmd->add_option("--max-nodes", l.max_nodes, "Reader limit: nodes in all graphs")
      ->check(CLI::PositiveNumber)->capture_default_str()->group("Input limits");
  cmd->add_option("--max-edges", l.max_edges, "Reader limit: data + control inputs in all graphs")
      ->check(CLI::PositiveNumber)->capture_default_str()->group("Input limits");
  cmd->add_option("--max-string-bytes", l.max_string_bytes, "Reader limit: bytes of one JSON string or key")
      ->check(CLI::PositiveNumber)->capture_default_str()->group("Input limits");
  cmd->add_option("--max-attr-elements", l.max_attr_elements, "Reader limit: values inside one attribute value")
      ->check(CLI::PositiveNumber)->capture_default_str()->group("Input limits");
  cmd->add_option("--max-depth", l.max_depth,
                  "Reader limit: subgraph nesting depth, and list/map nesting in one attribute value")
      ->check(CLI::PositiveNumber)->capture_default_str()->group("Input limits");
}

void AddInputShapeFlag(CLI::App* cmd, LoadOptions* load) {
  cmd->add_option("--input-shape", load->input_shapes,
                  "ONNX input shape NAME=1x3x224x224 (repeatable; fixes a dynamic input's dims)");
  cmd->add_option("--dim", load->dims,
                  "ONNX symbolic dim NAME=VALUE, e.g. batch=1 (repeatable; pins the dim everywhere the model names it)");
  cmd->add_flag("--strict-shapes", load->strict_shapes,
                "ONNX: a node whose output shapes inference cannot determine from known input shapes is an error");
  cmd->add_flag("--allow-unknown-ops", load->allow_unknown_ops,
                "ONNX: import ops without a known schema as opaque ops (AI CPU, unknown shapes) instead of failing");
}

absl::StatusOr<EngineTable> LoadEngineTable(const std::string& engines_file) {
  EngineTable table = EngineTable::Default();
  if (!engines_file.empty()) {
    NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(engines_file));
    NPUPLAN_ASSIGN_OR_RETURN(EngineTable extra, EngineTable::Parse(text, engines_file));
    table.Merge(extra);
  }
  return table;
}

absl::StatusOr<LoadedInput> LoadInput(const std::string& path, const LoadOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(EngineTable table, LoadEngineTable(opts.engines_file));
  LoadedInput in;
  if (EndsWith(path, ".onnx")) {
    if (OnnxLoaderSlot() == nullptr) {
      return absl::InvalidArgumentError(StrCat(path, ": ONNX import is not available in this build"));
    }
    NPUPLAN_ASSIGN_OR_RETURN(in.plan.model, OnnxLoaderSlot()(path, table, opts));
    if (!opts.topo_sorting_mode.empty()) {  // the importer sorts in the default order
      NPUPLAN_ASSIGN_OR_RETURN(TopoSortMode mode, ParseTopoSortMode(opts.topo_sorting_mode));
      NPUPLAN_RETURN_IF_ERROR(TopologicalSort(in.plan.model, mode));
    }
    return in;
  }
  if (!opts.input_shapes.empty()) {
    return absl::InvalidArgumentError("--input-shape applies to ONNX models only");
  }
  if (!opts.dims.empty()) return absl::InvalidArgumentError("--dim applies to ONNX models only");
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (LooksLikePlan(text)) {
    NPUPLAN_ASSIGN_OR_RETURN(in.plan, ParsePlanJson(text, path, opts.limits));
    in.is_plan = true;
    return in;
  }
  GraphReadOptions gopts;
  gopts.engines = &table;
  gopts.limits = opts.limits;
  gopts.topo_sorting_mode = opts.topo_sorting_mode;
  NPUPLAN_ASSIGN_OR_RETURN(in.plan.model, ParseGraphJson(text, path, gopts));
  return in;
}

absl::StatusOr<Model> LoadModel(const std::string& path, const LoadOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(LoadedInput in, LoadInput(path, opts));
  return std::move(in.plan.model);
}

}  // namespace npuplan::cli
