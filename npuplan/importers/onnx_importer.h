// ONNX import (SPEC G3): an .onnx ModelProto → a verified npuplan Model.
//
// What becomes what (docs/onnx.md has the full rules):
//   graph input (not an initializer)  → Data (attr index), shape from the
//                                        declared type, pinned by --input-shape
//   initializer                        → Const (shape/dtype only; no weight bytes)
//   Constant node                      → Const (attr _onnx_op_type=Constant)
//   any other node                     → a node of the same op type; engine
//                                        from the engine table, unknown op
//                                        types → a warning and DNN_VM_AICPU
//   graph outputs                      → one NetOutput, inputs in output order
//   If/Loop/Scan graph attributes      → subgraphs owned by the node; formal
//                                        body inputs and implicit outer-scope
//                                        captures → Data nodes with
//                                        _parent_node_index (captures become
//                                        extra inputs of the parent node)
// Shapes: ONNX shape inference (onnx::shape_inference::InferShapes, with data
// propagation) then our shape-arithmetic folding (shape_folding.h), repeated
// to a fixed point; dims still unknown become -1, unknown ranks [-2].
// Names are made unique across the whole model; nodes are sorted
// topologically (ONNX files need not be), and the result passes
// VerifyStructure.
//
// Errors (InvalidArgument, message naming the file and the culprit):
// unreadable / truncated / corrupted protobuf, IR version outside 3–10,
// default-domain opset outside 7–22, ops without a schema (all listed, with
// their nodes), an empty op type, bad --input-shape / --dim (syntax, unknown
// input or dim, wrong rank, conflicting fixed dim), tensors whose data count
// disagrees with their dims, shapes whose size overflows int64, external
// data outside the model's directory or too short, undefined tensor names,
// cycles, nesting deeper than protobuf's limit.
#ifndef NPUPLAN_IMPORTERS_ONNX_IMPORTER_H_
#define NPUPLAN_IMPORTERS_ONNX_IMPORTER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/engine_table.h"
#include "npuplan/ir/graph.h"

namespace npuplan {

inline constexpr int64_t kMinOnnxOpset = 7;
inline constexpr int64_t kMaxOnnxOpset = 22;
inline constexpr int64_t kMinOnnxIrVersion = 3;
inline constexpr int64_t kMaxOnnxIrVersion = 10;
// The engine of op types the table does not know (a real NPU stack falls back to AI CPU).
inline constexpr std::string_view kOnnxFallbackEngine = "DNN_VM_AICPU";

struct OnnxImportOptions {
  // Engine table for op type → engine; nullptr = EngineTable::Default().
  const EngineTable* engines = nullptr;
  // Pinned input shapes, each "NAME=1x3x48x320" (a scalar: "NAME=").
  std::vector<std::string> input_shapes;
  // Pinned symbolic dims, each "NAME=VALUE" (`batch=1`): every dim the model
  // names NAME (inputs, outputs, value_info, in every graph) becomes VALUE.
  std::vector<std::string> dims;
  // A node whose outputs shape inference could not determine (from known
  // input shapes) is an error instead of a warning.
  bool strict_shapes = false;
  // Ops without a schema (unknown op types, contrib ops npuplan does not
  // know) are imported as opaque ops on kOnnxFallbackEngine with a warning
  // instead of failing the import.
  bool allow_unknown_ops = false;
  // Directory that external-data locations are relative to ("" = the
  // directory of the `source` path).
  std::string model_dir;
  // Run ONNX shape inference (with data propagation).
  bool onnx_shape_inference = true;
  // Fold shape arithmetic after ONNX inference (shape_folding.h).
  bool fold_shapes = true;
  // Upper bound on inference + folding rounds.
  int max_fold_rounds = 8;
  // Run ONNX inference in a child process (isolated_inference.h), so that a
  // libonnx crash on a malformed model becomes a warning. Off only to debug
  // libonnx in-process.
  bool isolate_shape_inference = true;
};

struct OnnxImportStats {
  int64_t ir_version = 0;
  int64_t opset = 0;             // default-domain opset
  int64_t onnx_nodes = 0;        // NodeProtos in all graphs
  int64_t nodes = 0;             // IR nodes (incl. Data/Const/NetOutput)
  int64_t subgraphs = 0;         // graphs other than the root
  int64_t captures = 0;          // implicit outer-scope values made explicit
  int64_t dynamic_nodes = 0;     // IR nodes with an output holding -1 / [-2]
  int64_t unknown_tensors_onnx = 0;  // node outputs with unknown dims after ONNX inference alone
  int64_t unknown_tensors = 0;       // … after folding (what is really dynamic)
  int64_t fold_rounds = 0;       // inference + folding rounds run
  int64_t folded_dims = 0;       // dims learnt by our folding
  int64_t failed_nodes = 0;      // nodes with known input shapes whose outputs inference left unknown
  int64_t external_tensors = 0;  // initializers stored in external data files
  bool sorted = false;           // some graph was not topologically sorted
};

struct OnnxImport {
  Model model;
  std::vector<std::string> warnings;  // one line each, without "warning: "
  OnnxImportStats stats;
};

// Parses a serialized ModelProto; `source` (the file name) prefixes errors.
absl::StatusOr<OnnxImport> ImportOnnx(std::string_view bytes, std::string_view source,
                                      const OnnxImportOptions& opts = {});
absl::StatusOr<OnnxImport> ImportOnnxFile(const std::string& path, const OnnxImportOptions& opts = {});

}  // namespace npuplan

#endif  // NPUPLAN_IMPORTERS_ONNX_IMPORTER_H_
