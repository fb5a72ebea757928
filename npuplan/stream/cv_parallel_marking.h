// CvParallelMarking (`cv-parallel-marking`, ge.autoMultistreamParallelMode=cv;
// GE's MarkCvParallelAivNodes, ge-reference §2.6 and §6).
//
// In cv mode a vector (AIV) node runs beside the cube work unless it is
// path-connected to the cube (AIC) node preceding it in topological order
// and, when there is a cube node after it, to that one too. A missing
// preceding cube node counts as "not connected" (GE's IsLinkedInGraph of a
// null node is false), so vector nodes before the first cube node — and every
// vector node of a graph without cube nodes — are marked. A marked node's
// engine-subgraph engine becomes VectorEngine, which gives it its own stream
// (static: a new per-engine id; dynamic: the VectorEngine stream). The
// graph's own engines are not changed: the driver swaps the engine of the
// marked nodes only while it forms and assigns that graph's engine subgraphs
// (ScopedCvEngines).
//
// Core type (GE's IsAivNode / IsAicNode): `_cube_vector_core_type` = AIV |
// MIX_AIV, or MIX with `_mix_is_aiv`=true, is vector; any other string value
// (AIC, MIX_AIC, GE's own AI_CORE, …) is cube; a node without the attribute
// (or with a non-string one) is neither, whatever its op type.
//
// Decision keywords: CvParallelNode (node, reason=no-prev-cube /
// no-path-from-prev-cube / no-path-to-next-cube).
#ifndef NPUPLAN_STREAM_CV_PARALLEL_MARKING_H_
#define NPUPLAN_STREAM_CV_PARALLEL_MARKING_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/pass/decision_log.h"

namespace npuplan::stream {

inline constexpr char kAttrCubeVectorCoreType[] = "_cube_vector_core_type";
inline constexpr char kAttrMixIsAiv[] = "_mix_is_aiv";

enum class CoreType { kNone, kCube, kVector };

class CvParallelMarking {
 public:
  static constexpr std::string_view kName = "cv-parallel-marking";
  static CoreType CoreTypeOf(const Node& node);
  // Vector nodes of graph g that run in parallel with the cube work, in topo
  // order. Requires topo-sorted graphs.
  static std::vector<NodeId> Mark(const Model& model, GraphId g, DecisionLog* log = nullptr);
};

// Sets the marked nodes' engine to VectorEngine for its lifetime.
class ScopedCvEngines {
 public:
  ScopedCvEngines(Model& model, const std::vector<NodeId>& nodes);
  ~ScopedCvEngines();
  ScopedCvEngines(const ScopedCvEngines&) = delete;
  ScopedCvEngines& operator=(const ScopedCvEngines&) = delete;

 private:
  Model& model_;
  std::vector<std::pair<NodeId, std::string>> saved_;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_CV_PARALLEL_MARKING_H_
