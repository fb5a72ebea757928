// cv-mode marking: for each vector node, a bounded forward search between the
// neighbouring cube nodes (only nodes ranked between them are explored).
#include "npuplan/stream/cv_parallel_marking.h"

#include <algorithm>

namespace npuplan::stream {
namespace {

constexpr std::string_view kCubeTypes[] = {"MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2", "Conv",
                                           "Conv2D", "Conv3D", "Gemm", "FlashAttentionScore",
                                           "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2D"};

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
  if (auto t = GetStringAttr(node.attrs, kAttrCubeVectorCoreType)) {
    if (*t == "AIC" || *t == "MIX_AIC") return CoreType::kCube;
    if (*t == "AIV" || *t == "MIX_AIV") return CoreType::kVector;
    if (*t == "MIX") return GetBoolAttr(node.attrs, kAttrMixIsAiv).value_or(false) ? CoreType::kVector : CoreType::kCube;
    return CoreType::kNone;
  }
  if (node.engine == "AIcoreEngine" &&
      std::find(std::begin(kCubeTypes), std::end(kCubeTypes), node.type) != std::end(kCubeTypes)) {
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
  if (!any_vector || cubes.empty()) return out;
  Adjacency adj(m);
  for (NodeId id : g.nodes) {
    const Node& n = m.node(id);
    if (CoreTypeOf(n) != CoreType::kVector) continue;
    auto next = std::upper_bound(cubes.begin(), cubes.end(), n.topo_id);
    const char* reason = nullptr;
    if (next != cubes.begin()) {
      NodeId prev = g.nodes[*(next - 1)];
      if (!Reaches(m, g, adj, prev, id)) reason = "no-path-from-prev-cube";
    }
    if (reason == nullptr && next != cubes.end()) {
      if (!Reaches(m, g, adj, id, g.nodes[*next])) reason = "no-path-to-next-cube";
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
