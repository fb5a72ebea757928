// --input-shape and --dim for the ONNX importer: pinning declared dims
// before shape inference (docs/onnx.md, "Shapes: inference, folding, pinning").
#ifndef NPUPLAN_IMPORTERS_ONNX_PINS_H_
#define NPUPLAN_IMPORTERS_ONNX_PINS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace npuplan::onnx_import {

// Applies `dims` ("NAME=VALUE": every dim named NAME in any graph's inputs,
// outputs and value_info becomes VALUE), then `input_shapes`
// ("NAME=1x3x48x320", a scalar "NAME=") to the root graph's inputs. Errors
// (InvalidArgument, prefixed with `src`): syntax, non-positive values, an
// unknown input or dim name, a rank or fixed dim that disagrees, the same
// name twice, a shape whose byte size overflows int64.
absl::Status PinShapes(onnx::GraphProto& root, const std::vector<std::string>& input_shapes,
                       const std::vector<std::string>& dims, std::string_view src);

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_ONNX_PINS_H_
