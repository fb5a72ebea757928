// Deterministic topological sort of every graph of a model, O(n + e).
//
// Orders (option ge.topoSortingMode, GE's values):
//   kBfs        "0" (default) Kahn's algorithm: ready nodes in insertion order,
//                successors enqueued as they become ready (GE's default).
//   kDfs        "1" depth-first: the most recently readied node runs next.
//   kRdfs       "2" reverse DFS: post-order DFS from the sinks over inputs.
//   kStableRdfs "3" keeps the current order when it is already topological,
//                else falls back to kRdfs.
// Afterwards every graph's `nodes` are in that order and `Node::topo_id` is
// the position (continuous from 0 per graph). A cycle is an InvalidArgument
// error naming the nodes on it.
#ifndef NPUPLAN_IR_TOPO_SORT_H_
#define NPUPLAN_IR_TOPO_SORT_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"

namespace npuplan {

enum class TopoSortMode { kBfs = 0, kDfs = 1, kRdfs = 2, kStableRdfs = 3 };

absl::StatusOr<TopoSortMode> ParseTopoSortMode(std::string_view value);

absl::Status TopologicalSort(Model& model, TopoSortMode mode = TopoSortMode::kBfs);

// Sets topo_id from the current order without reordering.
void RenumberTopoIds(Model& model);

}  // namespace npuplan

#endif  // NPUPLAN_IR_TOPO_SORT_H_
