// The CLI's side of the ONNX plugin (onnx_plugin/onnx_plugin_abi.h). This
// file also defines npuplan::ImportOnnxSource for the CLI: the shared loader
// (api/source_loader.cc) calls it for every .onnx input, and the CLI's
// definition forwards to the plugin, so the CLI links no ONNX code and the
// dynamic loader maps libonnx and libprotobuf only when a command reads an
// .onnx file. (The library's definition, importers/onnx_source.cc, is then
// never pulled out of its archive; the ctest `cli_links_no_onnx` checks that
// the binary does not need libonnx.)
//
// Where the plugin is: $NPUPLAN_ONNX_PLUGIN when set, else
// <directory of the executable>/NPUPLAN_ONNX_PLUGIN_RELPATH — the same
// relative place in the build tree and in an installation (docs/onnx.md).
#ifndef NPUPLAN_TOOLS_NPUPLAN_ONNX_PLUGIN_CLIENT_H_
#define NPUPLAN_TOOLS_NPUPLAN_ONNX_PLUGIN_CLIENT_H_

#include <string>

#include "absl/status/statusor.h"

namespace npuplan::cli {

// The op x opset table of docs/onnx.md, from the plugin.
absl::StatusOr<std::string> OnnxOpTableMarkdown(int min_opset, int max_opset);

}  // namespace npuplan::cli

#endif  // NPUPLAN_TOOLS_NPUPLAN_ONNX_PLUGIN_CLIENT_H_
