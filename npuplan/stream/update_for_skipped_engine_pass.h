// UpdateForSkippedEnginePass (ge-reference §2.3): nodes of skip-assign
// engines (GE_LOCAL, HOST_CPU, ffts_plus) without a stream label: a node with
// no subgraph whose every data/control producer has no stream gets none (-1);
// else, if it has a consumer and all its producers and consumers with a
// stream share exactly one stream, it moves there (A(s1)→Const(s2)→B(s1)).
// Decision keywords: SkippedEngineNoStream (node, from),
// SkippedEngineMoved (node, from, to).
#ifndef NPUPLAN_STREAM_UPDATE_FOR_SKIPPED_ENGINE_PASS_H_
#define NPUPLAN_STREAM_UPDATE_FOR_SKIPPED_ENGINE_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

class UpdateForSkippedEnginePass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "update-for-skipped-engine-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_UPDATE_FOR_SKIPPED_ENGINE_PASS_H_
