// UpdateForMdeGroupPass (ge-reference §2.3): nodes with `NewStreamId` and no
// `_parallel_group`, bucketed by their current stream (GE's OpDesc default 0
// for a node not yet assigned), get one fresh id per distinct NewStreamId
// value per bucket (`next_stream++`). NodeStreamUpdatePass later overwrites
// node streams, so the durable effects are the consumed ids (compacted at the
// end) and the exemption of these nodes from the ineffective-multi-stream move.
// Requires: nothing. Provides: nothing durable.
// Decision keywords: MdeStreamId (node, new_stream_id, stream).
#ifndef NPUPLAN_STREAM_UPDATE_FOR_MDE_GROUP_PASS_H_
#define NPUPLAN_STREAM_UPDATE_FOR_MDE_GROUP_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

class UpdateForMdeGroupPass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "update-for-mde-group-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_UPDATE_FOR_MDE_GROUP_PASS_H_
