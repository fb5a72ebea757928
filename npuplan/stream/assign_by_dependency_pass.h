// AssignByDependencyPass (ge-reference §2.3), the core: every engine subgraph
// still without a stream reuses the stream of its highest-priority reusable
// producer (GetTopPrioritySubgraph: the first candidate, replaced by any later
// one whose compute_cost is strictly below the best so far, starting at 10;
// ties: smallest subgraph index), else gets a new per-engine temporary id
// (round-robin below the engine's ge.streamMaxParallelNum, default 1).
// Temporary ids are then laid out in engine blocks in lexicographic
// engine-name order from `next_stream`; in a static function subgraph the
// first id of the first block is replaced by the parent node's stream. Reuse predicate CouldReuse(sg, P):
//   1 same scheduler; 2 P not independent and not labelled;
//   3 force attach (`_force_attach_stream` on a node of sg, first candidate only);
//   4 unless MemoryPriority: no other consumer of P has P's engine;
//   5 same engine, or sg's engine attaches; 6 P borrowed from sg's engine.
// Decision keywords: StreamReused (subgraph, from, rule), StreamNew (subgraph,
// engine, temp), EngineBlock (engine, start, count), ParentStreamReused
// (subgraph, stream).
#ifndef NPUPLAN_STREAM_ASSIGN_BY_DEPENDENCY_PASS_H_
#define NPUPLAN_STREAM_ASSIGN_BY_DEPENDENCY_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

class AssignByDependencyPass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "assign-by-dependency-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_ASSIGN_BY_DEPENDENCY_PASS_H_
