#include "npuplan/importers/onnx_source.h"

#include "npuplan/ir/engine_table.h"
#include "npuplan/support/status_macros.h"

namespace npuplan {

absl::StatusOr<OnnxImport> ImportOnnxSource(const OnnxSourceRequest& request) {
  NPUPLAN_ASSIGN_OR_RETURN(EngineTable table, EngineTable::DefaultMergedWith(request.engines_file));
  OnnxImportOptions o;
  o.engines = &table;
  o.input_shapes = request.input_shapes;
  o.dims = request.dims;
  o.strict_shapes = request.strict_shapes;
  o.allow_unknown_ops = request.allow_unknown_ops;
  o.fold_shapes = request.fold_shapes;
  o.model_dir = request.model_dir;
  if (request.bytes.has_value()) return ImportOnnx(*request.bytes, request.path, o);
  return ImportOnnxFile(request.path, o);
}

}  // namespace npuplan
