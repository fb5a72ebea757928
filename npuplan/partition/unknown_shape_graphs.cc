#include "npuplan/partition/unknown_shape_graphs.h"

#include <string_view>
#include <unordered_map>

#include "npuplan/ir/attribute.h"

namespace npuplan::partition {
namespace {

// The rule for one graph, recursively up the parents.
bool ComputeOne(const Plan& plan, GraphId g) {
  const Model& m = plan.model;
  const Graph& graph = m.graph(g);
  if (graph.IsRoot()) {
    return plan.partition.ran && (plan.partition.decision == PartitionDecision::kWholeDynamic ||
                                  plan.partition.decision == PartitionDecision::kPartitioned);
  }
  for (const PartitionSubgraph& ps : plan.partition.subgraphs) {
    if (ps.name == graph.name) return ps.kind != SubgraphKind::kKnown;
  }
  if (auto flag = GetBoolAttr(m.node(graph.parent_node).attrs, "_is_unknown_shape")) return *flag;
  return ComputeOne(plan, graph.parent_graph);
}

bool Stored(const Plan& plan) {
  return plan.partition.ran &&
         plan.partition.unknown_shape_graphs.size() == plan.model.num_graphs();
}

}  // namespace

std::vector<bool> ComputeUnknownShapeGraphs(const Plan& plan) {
  const Model& m = plan.model;
  std::vector<bool> out(m.num_graphs(), false), visited(m.num_graphs(), false);
  // The first partition subgraph of each name decides, as in ComputeOne.
  std::unordered_map<std::string_view, bool> kind;
  for (const PartitionSubgraph& ps : plan.partition.subgraphs)
    kind.emplace(ps.name, ps.kind != SubgraphKind::kKnown);
  for (GraphId g : m.GraphsPreOrder()) {  // parents first
    const Graph& graph = m.graph(g);
    bool unknown;
    if (graph.IsRoot()) {
      unknown = ComputeOne(plan, g);
    } else if (auto it = kind.find(graph.name); it != kind.end()) {
      unknown = it->second;
    } else if (auto flag = GetBoolAttr(m.node(graph.parent_node).attrs, "_is_unknown_shape")) {
      unknown = *flag;
    } else {
      unknown = out[graph.parent_graph.index()];
    }
    out[g.index()] = unknown;
    visited[g.index()] = true;
  }
  for (size_t g = 0; g < out.size(); ++g) {  // unreachable graphs (malformed): the slow path
    if (!visited[g]) out[g] = ComputeOne(plan, GraphId(static_cast<int32_t>(g)));
  }
  return out;
}

std::vector<bool> UnknownShapeGraphs(const Plan& plan) {
  return Stored(plan) ? plan.partition.unknown_shape_graphs : ComputeUnknownShapeGraphs(plan);
}

bool IsUnknownShapeGraph(const Plan& plan, GraphId g) {
  return Stored(plan) ? plan.partition.unknown_shape_graphs[g.index()] : ComputeOne(plan, g);
}

}  // namespace npuplan::partition
