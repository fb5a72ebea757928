// AllReduceParallelPass (ge-reference §2.3), only with ge.hcomParallel: from
// each HcomAllReduce / HorovodAllreduce with int `fusion` > 0 and no user
// label, walk data successors forward while their `_stream_label` equals the
// seed's (or the seed has a label and they have none); every collected
// non-Hcom node moves from its stream s to a new stream new(s) (one per old
// stream, in topological order of first sight).
// Decision keywords: AllReduceSuccessorMoved (node, seed, from, to).
#ifndef NPUPLAN_STREAM_ALL_REDUCE_PARALLEL_PASS_H_
#define NPUPLAN_STREAM_ALL_REDUCE_PARALLEL_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

class AllReduceParallelPass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "all-reduce-parallel-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_ALL_REDUCE_PARALLEL_PASS_H_
