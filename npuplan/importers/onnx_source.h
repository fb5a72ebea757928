// ONNX import as every command and the public API run it: from the loader's
// flags (engine table file, pinned shapes and dims, strictness) to a Model.
//
// One entry point with a plain-data request, so that the same import can run
// in this process (the library, the Python module) or in the CLI's ONNX
// plugin (tools/npuplan/onnx_plugin/), which keeps libonnx and libprotobuf
// out of the CLI's start-up; the CLI defines ImportOnnxSource itself and
// forwards the request (tools/npuplan/onnx_plugin_client.cc).
#ifndef NPUPLAN_IMPORTERS_ONNX_SOURCE_H_
#define NPUPLAN_IMPORTERS_ONNX_SOURCE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/importers/onnx_importer.h"

namespace npuplan {

struct OnnxSourceRequest {
  // The model file; with `bytes`, only the name errors use.
  std::string path;
  // A serialized ModelProto instead of reading `path`.
  std::optional<std::string_view> bytes;
  // Directory external data is relative to ("" = the directory of `path`).
  std::string model_dir;
  // --engines: a table file merged over the built-in one ("" = none).
  std::string engines_file;
  std::vector<std::string> input_shapes;  // --input-shape NAME=1x3x224x224
  std::vector<std::string> dims;          // --dim NAME=VALUE
  bool strict_shapes = false;             // --strict-shapes
  bool allow_unknown_ops = false;         // --allow-unknown-ops
  bool fold_shapes = true;                // false: `import --no-fold`
};

absl::StatusOr<OnnxImport> ImportOnnxSource(const OnnxSourceRequest& request);

}  // namespace npuplan

#endif  // NPUPLAN_IMPORTERS_ONNX_SOURCE_H_
