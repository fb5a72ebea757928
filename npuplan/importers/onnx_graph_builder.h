// Step 5 of the ONNX import (onnx_importer.h): the checked, sorted and
// shape-inferred ONNX graphs become the Model's graphs — inputs → Data,
// initializers → Const, nodes, If/Loop/Scan bodies → subgraphs (outer-scope
// captures become parent inputs), outputs → NetOutput. docs/onnx.md has the
// rules.
#ifndef NPUPLAN_IMPORTERS_ONNX_GRAPH_BUILDER_H_
#define NPUPLAN_IMPORTERS_ONNX_GRAPH_BUILDER_H_

#include <string_view>

#include "absl/status/status.h"
#include "npuplan/importers/onnx_importer.h"
#include "npuplan/ir/graph.h"
#include "onnx/onnx_pb.h"

namespace npuplan::onnx_import {

// Tensor description of an ONNX type; unknown → rank [-2]. Element types we
// cannot name (undefined, sequences, maps) are recorded as float32.
TensorDesc DescFromType(const onnx::TypeProto* t);

// Builds `root` and its bodies into `out.model` (whose name and engine table
// are set), with node and graph names made unique; op types the engine table
// does not know add one warning each to `out.warnings`. Errors
// (InvalidArgument, prefixed with `src`): a name read but never defined, an
// input declared twice, an initializer defined twice.
absl::Status BuildModelGraphs(const onnx::GraphProto& root, std::string_view src, OnnxImport& out);

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_ONNX_GRAPH_BUILDER_H_
