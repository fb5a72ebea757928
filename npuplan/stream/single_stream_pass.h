// SingleStreamPass (SPEC S3, ge-reference §2.3): with ge.enableSingleStream
// every engine subgraph gets one stream: the parent's stream in a static
// function subgraph, else `next_stream++`. Errors, in this order:
//   E10056 ge.autoMultistreamParallelMode (root attribute or option) is set;
//   E10055 a subgraph has a stream label or user stream label.
// Both name the options by ge.optionNameMap when it maps them (GE's
// GetReadableName).
// Decision keywords: SingleStream (graph, stream).
#ifndef NPUPLAN_STREAM_SINGLE_STREAM_PASS_H_
#define NPUPLAN_STREAM_SINGLE_STREAM_PASS_H_

#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

// E10056 naming both options by their readable names.
absl::Status E10056(const CompileOptions& options);

class SingleStreamPass final : public LogicalStreamPass {
 public:
  static constexpr std::string_view kName = "single-stream-pass";
  std::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) override;
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_SINGLE_STREAM_PASS_H_
