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

// Moves each node's `_test_stream` (int) attribute into Node::stream_id and
// `_test_attached` (int list) into attached_stream_ids, so tests can give a
// stream assignment inline. Returns the largest main stream id and the largest
// id including attached streams (-1 when none).
struct TestStreamIds {
  int64_t max_main = -1;
  int64_t max_any = -1;
};
TestStreamIds ApplyTestStreams(Model& model);

// Node by name; aborts the test binary if absent (a test bug).
const Node& NodeNamed(const Model& model, std::string_view name);
// Names of graph g's nodes in its current (topological) order.
std::vector<std::string> NodeOrder(const Model& model, GraphId g = kRootGraph);

// GE's LabelMaker::AddStreamActive, as it lowers a static If/Case branch: a
// StreamActive first in graph g, marked `subgraph_first_active` and
// `_rts_label_node` (so it runs on the owner's stream), with a control edge to
// every head node (a node other than Data/Const whose data inputs all come
// from Data or Const nodes). Returns it; call RenumberTopoIds afterwards.
NodeId AddFirstActiveStreamActive(Model& model, GraphId g);

}  // namespace npuplan::testing

#endif  // NPUPLAN_TESTING_GRAPH_TESTING_H_
