#include "npuplan/partition/unknown_shape_graphs.h"

#include "npuplan/plan/execution_semantics.h"

namespace npuplan::partition {
namespace {

bool Stored(const Plan& plan) {
  return plan.partition.ran &&
         plan.partition.unknown_shape_graphs.size() == plan.model.num_graphs();
}

}  // namespace

std::vector<bool> ComputeUnknownShapeGraphs(const Plan& plan) {
  const std::vector<uint8_t> unknown = npuplan::UnknownShapeGraphs(plan);  // the shared rule
  return std::vector<bool>(unknown.begin(), unknown.end());
}

std::vector<bool> UnknownShapeGraphs(const Plan& plan) {
  return Stored(plan) ? plan.partition.unknown_shape_graphs : ComputeUnknownShapeGraphs(plan);
}

bool IsUnknownShapeGraph(const Plan& plan, GraphId g) {
  if (Stored(plan)) return plan.partition.unknown_shape_graphs[g.index()];
  return npuplan::UnknownShapeGraphs(plan)[g.index()] !=
         0;  // callers of many graphs: UnknownShapeGraphs
}

}  // namespace npuplan::partition
