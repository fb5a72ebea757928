// Honest diagnostics for shapes inference could not determine (issue 18,
// item 5): after inference and folding, the *first failing nodes* — nodes
// whose inputs all have static shapes but with an output whose rank or a dim
// is still unknown. Everything downstream of them is unknown because of them,
// so one line each says where to look.
#ifndef NPUPLAN_IMPORTERS_ONNX_SHAPE_REPORT_H_
#define NPUPLAN_IMPORTERS_ONNX_SHAPE_REPORT_H_

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace npuplan::onnx_import {

// One line per first failing node, in graph then file order:
//   graph 'main': node 'r' (Resize) inputs x [1, 3, 7, 7] float32, s [4] int64:
//   output 'y' is [1, 3, ?, ?]
// Ops whose output size depends on input values (NonZero, Unique, …) say so.
std::vector<std::string> FirstFailingNodes(const onnx::GraphProto& root, const std::string& root_name);

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_ONNX_SHAPE_REPORT_H_
