// Test helpers: parse an inline npuplan.graph/1 document and verify it on load
// (XLA ParseAndReturnVerifiedModule).
#ifndef NPUPLAN_TESTING_GRAPH_TESTING_H_
#define NPUPLAN_TESTING_GRAPH_TESTING_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"

namespace npuplan::testing {

// Parses `json_text` (the "format" field may be omitted) and runs VerifyStructure.
absl::StatusOr<Model> ParseVerifiedGraph(std::string_view json_text);

// Node by name; aborts the test binary if absent (a test bug).
const Node& NodeNamed(const Model& model, std::string_view name);
// Names of graph g's nodes in its current (topological) order.
std::vector<std::string> NodeOrder(const Model& model, GraphId g = kRootGraph);

}  // namespace npuplan::testing

#endif  // NPUPLAN_TESTING_GRAPH_TESTING_H_
