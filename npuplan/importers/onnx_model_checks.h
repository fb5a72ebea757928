// Checks on a parsed ONNX model before shape inference (libonnx's inference
// functions trust what these reject) and before anything is built:
//   tensors — initializers, sparse initializers and tensor attributes
//     (Constant values) of every graph: dims ≥ 0, element count and byte size
//     within int64, the stored data count equal to the dims' element count,
//     external data (location inside the model's directory, the file there
//     and long enough; only its size is read, never its bytes);
//   nodes — a non-empty op type; the node satisfies its schema (Verify, as
//     onnx::checker does) and the attribute values inference indexes with;
//     ops without a schema are collected: one error listing every unknown op
//     type and its nodes (or, when allowed, one warning).
#ifndef NPUPLAN_IMPORTERS_ONNX_MODEL_CHECKS_H_
#define NPUPLAN_IMPORTERS_ONNX_MODEL_CHECKS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace npuplan::onnx_import {

// Display name of a NodeProto for messages: 'name' (Op), or #index (Op -> out).
std::string NodeLabel(const onnx::NodeProto& n, int index);

absl::Status CheckTensors(const onnx::GraphProto& root, const std::string& model_dir, std::string_view src,
                          int64_t& external_tensors);

struct NodeCheckContext {
  std::string src;
  std::map<std::string, int> opsets;  // imported version per domain, ai.onnx spelled ""
  std::set<std::pair<std::string, std::string>> local_functions;  // (domain, name)
  bool allow_unknown_ops = false;
};
// Checks every node of `root` and its bodies. Unknown ops with
// allow_unknown_ops add one line to `warnings`.
absl::Status CheckNodes(const onnx::GraphProto& root, std::string_view root_name, const NodeCheckContext& ctx,
                        std::vector<std::string>& warnings);

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_ONNX_MODEL_CHECKS_H_
