// IndependentStreamPass (ge-reference §2.3): engine subgraphs of an independent
// engine (DNN_HCCL) get one fresh stream per (engine, stream label), overriding
// a stream set from an inner `_stream_label`; a subgraph with a user stream
// label that already has a stream keeps it (user label beats independence).
// Decision keywords: IndependentStream (subgraph, engine, label, stream, new).
#ifndef NPUPLAN_STREAM_INDEPENDENT_STREAM_PASS_H_
#define NPUPLAN_STREAM_INDEPENDENT_STREAM_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

class IndependentStreamPass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "independent-stream-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_INDEPENDENT_STREAM_PASS_H_
