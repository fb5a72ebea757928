// Fuzzes the ONNX importer (npuplan/importers/onnx_importer.h) on raw bytes:
// truncated or corrupted protobufs, odd opsets, graphs with cycles or
// undefined names are rejected with a Status; an accepted model passes
// VerifyStructure. When the first byte is odd, an --input-shape for input
// "x" is made from the next three bytes (dims -1..3) so that the pinning code
// is fuzzed too. libonnx's shape inference runs in a child process, as in
// the CLI (isolated_inference.h): a libonnx crash is a warning there, not a
// finding here; onnx_schema_sweep_test covers the guards in process. To hunt
// for libonnx crash paths that still need a guard, run with
// NPUPLAN_ONNX_FUZZ_IN_PROCESS=1 (inference in the harness's own process).
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "npuplan/importers/onnx_importer.h"
#include "npuplan/ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuplan;
  std::string_view bytes = fuzz::AsText(data, size);
  OnnxImportOptions opts;
  opts.max_fold_rounds = 3;
  static const bool in_process = std::getenv("NPUPLAN_ONNX_FUZZ_IN_PROCESS") != nullptr;
  opts.isolate_shape_inference = !in_process;
  // With an odd first byte, pin the first graph input's shape from a few bytes.
  if (size > 4 && (data[0] & 1)) {
    std::string shape = "x=";
    for (size_t i = 1; i < 4; ++i) {
      if (i > 1) shape += "x";
      shape += std::to_string(static_cast<int>(data[i] % 5) - 1);
    }
    opts.input_shapes.push_back(shape);
  }
  absl::StatusOr<OnnxImport> imported = ImportOnnx(bytes, "fuzz.onnx", opts);
  if (!imported.ok()) return 0;
  absl::Status s = VerifyStructure(imported->model);
  FUZZ_CHECK(s.ok(), "imported model fails VerifyStructure: " + std::string(s.message()));
  return 0;
}
