#include "npuplan/api/source_loader.h"

#include <utility>

#include "npuplan/importers/onnx_importer.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::api::internal {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

absl::StatusOr<LoadedSource> FromImport(absl::StatusOr<OnnxImport> imported,
                                        const SourceOptions& opts) {
  if (!imported.ok()) return imported.status();
  LoadedSource out;
  out.plan.model = std::move(imported->model);
  out.warnings = std::move(imported->warnings);
  if (!opts.topo_sorting_mode.empty()) {  // the importer sorts in the default order
    NPUPLAN_ASSIGN_OR_RETURN(TopoSortMode mode, ParseTopoSortMode(opts.topo_sorting_mode));
    NPUPLAN_RETURN_IF_ERROR(TopologicalSort(out.plan.model, mode));
  }
  return out;
}

// The ONNX-only flags are errors on JSON input (the CLI's messages).
absl::Status CheckJsonOptions(const SourceOptions& opts) {
  if (!opts.input_shapes.empty()) {
    return absl::InvalidArgumentError("--input-shape applies to ONNX models only");
  }
  if (!opts.dims.empty()) return absl::InvalidArgumentError("--dim applies to ONNX models only");
  return absl::OkStatus();
}

// `owned`, when given, holds `text`: a graph's is then freed as soon as it is
// parsed (the reader's second phase and the sort never need it).
absl::StatusOr<LoadedSource> ParseJson(std::string_view text, std::string* owned,
                                       const std::string& source, const EngineTable& table,
                                       const SourceOptions& opts) {
  LoadedSource out;
  if (LooksLikePlan(text)) {
    NPUPLAN_ASSIGN_OR_RETURN(out.plan, ParsePlanJson(text, source, opts.limits));
    out.is_plan = true;
    return out;
  }
  GraphReadOptions gopts;
  gopts.engines = &table;
  gopts.limits = opts.limits;
  gopts.topo_sorting_mode = opts.topo_sorting_mode;
  if (owned != nullptr) {
    NPUPLAN_ASSIGN_OR_RETURN(out.plan.model, ParseGraphJsonOwned(std::move(*owned), source, gopts));
  } else {
    NPUPLAN_ASSIGN_OR_RETURN(out.plan.model, ParseGraphJson(text, source, gopts));
  }
  return out;
}

}  // namespace

OnnxImportOptions OnnxOptions(const EngineTable& engines, const SourceOptions& opts) {
  OnnxImportOptions o;
  o.engines = &engines;
  o.input_shapes = opts.input_shapes;
  o.dims = opts.dims;
  o.strict_shapes = opts.strict_shapes;
  o.allow_unknown_ops = opts.allow_unknown_ops;
  return o;
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

absl::StatusOr<LoadedSource> LoadSourceFile(const std::string& path, const SourceOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(EngineTable table, LoadEngineTable(opts.engines_file));
  if (EndsWith(path, ".onnx"))
    return FromImport(ImportOnnxFile(path, OnnxOptions(table, opts)), opts);
  NPUPLAN_RETURN_IF_ERROR(CheckJsonOptions(opts));
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseJson(text, &text, path, table, opts);
}

absl::StatusOr<LoadedSource> LoadSourceJson(std::string_view text, const std::string& source,
                                            const SourceOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(EngineTable table, LoadEngineTable(opts.engines_file));
  NPUPLAN_RETURN_IF_ERROR(CheckJsonOptions(opts));
  return ParseJson(text, nullptr, source, table, opts);
}

absl::StatusOr<LoadedSource> LoadSourceOnnx(std::string_view bytes, const std::string& source,
                                            const std::string& model_dir,
                                            const SourceOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(EngineTable table, LoadEngineTable(opts.engines_file));
  OnnxImportOptions o = OnnxOptions(table, opts);
  o.model_dir = model_dir;
  return FromImport(ImportOnnx(bytes, source, o), opts);
}

}  // namespace npuplan::api::internal
