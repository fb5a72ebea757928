// The text the CLI and its ONNX plugin exchange (onnx_plugin_abi.h).
//   request:  one JSON object, the fields of OnnxSourceRequest (the model's
//             bytes travel beside it, not in it);
//   response: one line of JSON — {"code": absl::StatusCode, "message": …} for
//             an error, else {"code": 0, "stats": {…}, "warnings": […]} — then
//             the imported model as npuplan.graph/1 text.
// The graph is written and read back with the project's own reader and
// writer, so the model the CLI plans is the one the library imports: the
// format keeps everything a plan depends on (the goldens and the API's
// CLI-equality tests compare them).
#ifndef NPUPLAN_TOOLS_NPUPLAN_ONNX_PLUGIN_ONNX_PLUGIN_WIRE_H_
#define NPUPLAN_TOOLS_NPUPLAN_ONNX_PLUGIN_ONNX_PLUGIN_WIRE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "npuplan/importers/onnx_source.h"
#include "npuplan/ir/engine_table.h"

namespace npuplan::onnx_plugin {

// Everything but `bytes`.
std::string EncodeRequest(const OnnxSourceRequest& request);
absl::StatusOr<OnnxSourceRequest> DecodeRequest(std::string_view text);

std::string EncodeResponse(const absl::StatusOr<OnnxImport>& result);
// `engines` resolves the engines of the graph's nodes as the importer did
// (the built-in table merged with the request's file).
absl::StatusOr<OnnxImport> DecodeResponse(std::string_view text, const std::string& source,
                                          const EngineTable& engines);

}  // namespace npuplan::onnx_plugin

#endif  // NPUPLAN_TOOLS_NPUPLAN_ONNX_PLUGIN_ONNX_PLUGIN_WIRE_H_
