// cv-mode marking: for each vector node, a bounded forward search between the
// neighbouring cube nodes (only nodes ranked between them are explored).
#include "npuplan/stream/cv_parallel_marking.h"

#include <algorithm>

namespace npuplan::stream {
namespace {

// True when `to` is reachable from `from` (same graph, topo from < to).
bool Reaches(const Model& m, const Graph& g, const Adjacency& adj, NodeId from, NodeId to) {
  const int64_t limit = m.node(to).topo_id;
  std::vector<NodeId> stack{from};
  std::vector<char> seen(g.nodes.size(), 0);
  while (!stack.empty()) {
    NodeId u = stack.back();
    stack.pop_back();
    if (u == to) return true;
    for (size_t e = adj.begin(u); e < adj.end(u); ++e) {
      NodeId v = adj.succ[e];
      const Node& vn = m.node(v);
      if (vn.graph.index() != m.node(from).graph.index() || vn.topo_id > limit || seen[vn.topo_id]) continue;
      seen[vn.topo_id] = 1;
      stack.push_back(v);
    }
  }
  return false;
}

}  // namespace

CoreType CvParallelMarking::CoreTypeOf(const Node& node) {
  if (const AttrValue* v = FindAttr(node.attrs, kAttrCubeVectorCoreType)) {
    const std::string* t = v->as<std::string>();
    if (t == nullptr) return CoreType::kNone;  // GE's GetStr fails on another type
    // GE's IsAivNode, and IsAicNode = "has the attribute and is not AIV":
    // every other value is cube (AIC, MIX_AIC, GE's own AI_CORE, …).
    if (*t == "AIV" || *t == "MIX_AIV") return CoreType::kVector;
    if (*t == "MIX" && GetBoolAttr(node.attrs, kAttrMixIsAiv).value_or(false)) return CoreType::kVector;
    return CoreType::kCube;
  }
  return CoreType::kNone;
}

std::vector<NodeId> CvParallelMarking::Mark(const Model& m, GraphId gid, DecisionLog* log) {
  const Graph& g = m.graph(gid);
  std::vector<NodeId> out;
  std::vector<int64_t> cubes;  // topo ids of cube nodes
  bool any_vector = false;
  for (NodeId id : g.nodes) {
    CoreType t = CoreTypeOf(m.node(id));
    if (t == CoreType::kCube) cubes.push_back(m.node(id).topo_id);
    if (t == CoreType::kVector) any_vector = true;
  }
  // No early return without cube nodes: GE then marks every vector node
  // (none has a preceding cube node to be linked to).
  if (!any_vector) return out;
  Adjacency adj(m);
  for (NodeId id : g.nodes) {
    const Node& n = m.node(id);
    if (CoreTypeOf(n) != CoreType::kVector) continue;
    auto next = std::upper_bound(cubes.begin(), cubes.end(), n.topo_id);
    // GE: a missing neighbour is "not linked" (IsLinkedInGraph(nullptr, …)
    // is false), except that a vector node linked to its preceding cube with
    // no cube after it stays.
    const char* reason = nullptr;
    if (next == cubes.begin()) {
      reason = "no-prev-cube";
    } else if (!Reaches(m, g, adj, g.nodes[*(next - 1)], id)) {
      reason = "no-path-from-prev-cube";
    } else if (next != cubes.end() && !Reaches(m, g, adj, id, g.nodes[*next])) {
      reason = "no-path-to-next-cube";
    }
    if (reason == nullptr) continue;
    out.push_back(id);
    if (log) log->Record(kName, "CvParallelNode", "", Field("node", n.name), Field("reason", reason));
  }
  return out;
}

ScopedCvEngines::ScopedCvEngines(Model& model, const std::vector<NodeId>& nodes) : model_(model) {
  for (NodeId id : nodes) {
    saved_.emplace_back(id, model_.node(id).engine);
    model_.node(id).engine = "VectorEngine";
  }
}

ScopedCvEngines::~ScopedCvEngines() {
  for (auto& [id, engine] : saved_) model_.node(id).engine = std::move(engine);
}

}  // namespace npuplan::stream
