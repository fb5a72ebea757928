// AssignByLabelPass (ge-reference §2.3): every engine subgraph with a stream
// label (the effective label: user label first) gets the stream of its label;
// the first subgraph with a label takes `next_stream++`. Labels are shared
// across engines, not across graphs.
// Decision keywords: LabelStream (subgraph, label, stream, new).
#ifndef NPUPLAN_STREAM_ASSIGN_BY_LABEL_PASS_H_
#define NPUPLAN_STREAM_ASSIGN_BY_LABEL_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

class AssignByLabelPass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "assign-by-label-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_ASSIGN_BY_LABEL_PASS_H_
