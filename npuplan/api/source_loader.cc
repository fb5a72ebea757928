#include "npuplan/api/source_loader.h"

#include <utility>

#include "npuplan/importers/onnx_source.h"
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

absl::StatusOr<LoadedSource> ParseJson(std::string_view text, const std::string& source,
                                       const EngineTable& table, const SourceOptions& opts) {
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
  NPUPLAN_ASSIGN_OR_RETURN(out.plan.model, ParseGraphJson(text, source, gopts));
  return out;
}

}  // namespace

OnnxSourceRequest OnnxRequest(const std::string& path, const SourceOptions& opts) {
  OnnxSourceRequest r;
  r.path = path;
  r.engines_file = opts.engines_file;
  r.input_shapes = opts.input_shapes;
  r.dims = opts.dims;
  r.strict_shapes = opts.strict_shapes;
  r.allow_unknown_ops = opts.allow_unknown_ops;
  return r;
}

absl::StatusOr<EngineTable> LoadEngineTable(const std::string& engines_file) {
  return EngineTable::DefaultMergedWith(engines_file);
}

absl::StatusOr<LoadedSource> LoadSourceFile(const std::string& path, const SourceOptions& opts) {
  if (EndsWith(path, ".onnx")) return FromImport(ImportOnnxSource(OnnxRequest(path, opts)), opts);
  NPUPLAN_ASSIGN_OR_RETURN(EngineTable table, LoadEngineTable(opts.engines_file));
  NPUPLAN_RETURN_IF_ERROR(CheckJsonOptions(opts));
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseJson(text, path, table, opts);
}

absl::StatusOr<LoadedSource> LoadSourceJson(std::string_view text, const std::string& source,
                                            const SourceOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(EngineTable table, LoadEngineTable(opts.engines_file));
  NPUPLAN_RETURN_IF_ERROR(CheckJsonOptions(opts));
  return ParseJson(text, source, table, opts);
}

absl::StatusOr<LoadedSource> LoadSourceOnnx(std::string_view bytes, const std::string& source,
                                            const std::string& model_dir,
                                            const SourceOptions& opts) {
  OnnxSourceRequest r = OnnxRequest(source, opts);
  r.bytes = bytes;
  r.model_dir = model_dir;
  return FromImport(ImportOnnxSource(r), opts);
}

}  // namespace npuplan::api::internal
