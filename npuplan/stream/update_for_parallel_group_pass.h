// UpdateForParallelGroupPass (ge-reference §2.3): nodes with `_parallel_group`
// and no user stream label, bucketed by current stream (ascending); per
// bucket each distinct group gets `next_stream++`. A node of any type in
// group "-1" with exactly one data input adopts its producer's stream instead
// (when the producer has one).
// Decision keywords: ParallelGroupStream (node, group, from, stream),
// HcomAdoptsInputStream (node, input, stream; the name is kept from when
// only Hcom nodes adopted, it is logged for every node type).
#ifndef NPUPLAN_STREAM_UPDATE_FOR_PARALLEL_GROUP_PASS_H_
#define NPUPLAN_STREAM_UPDATE_FOR_PARALLEL_GROUP_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

class UpdateForParallelGroupPass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "update-for-parallel-group-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_UPDATE_FOR_PARALLEL_GROUP_PASS_H_
