// OptimizeIneffectiveMultiStreamPass (ge-reference §2.4): a node n on stream c
// (no label, NewStreamId or parallel group) none of whose neighbours is on c
// moves to a neighbour stream s (ascending, the last qualifying wins) when s
// is not a labelled stream, n has a producer and a consumer on s, and no node
// of s lies strictly between the last such producer and the first such
// consumer in topological order: the move gains no parallelism and saves
// events. Runs only in multi-stream mode.
// Decision keywords: IneffectiveStreamMoved (node, from, to).
#ifndef NPUPLAN_STREAM_OPTIMIZE_INEFFECTIVE_MULTI_STREAM_PASS_H_
#define NPUPLAN_STREAM_OPTIMIZE_INEFFECTIVE_MULTI_STREAM_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

class OptimizeIneffectiveMultiStreamPass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "optimize-ineffective-multi-stream-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_OPTIMIZE_INEFFECTIVE_MULTI_STREAM_PASS_H_
