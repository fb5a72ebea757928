// The error every ONNX import step returns for bad input: InvalidArgument,
// "<source>: <what is wrong>", where source names the file (and node).
#ifndef NPUPLAN_IMPORTERS_IMPORT_ERROR_H_
#define NPUPLAN_IMPORTERS_IMPORT_ERROR_H_

#include <string_view>

#include "absl/status/status.h"
#include "npuplan/support/str_util.h"

namespace npuplan::onnx_import {

inline absl::Status Bad(std::string_view src, std::string_view msg) {
  return absl::InvalidArgumentError(StrCat(src, ": ", msg));
}

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_IMPORT_ERROR_H_
