// RefreshContinuousStreams (SPEC S6, ge-reference §2.4): renumbers the stream
// ids used by the nodes of the root graph and every subgraph to 0..k-1 in
// ascending order of the old id, so no id is left without a node. Runs as the
// last step of logical allocation and must run again after any later pass
// that moves nodes between streams (custom / auto multi-stream passes); the
// verifier's stream-ids check (kLogicalStreams) enforces it.
// Decision keywords: StreamsRenumbered (before, after).
#ifndef NPUPLAN_STREAM_REFRESH_CONTINUOUS_STREAMS_H_
#define NPUPLAN_STREAM_REFRESH_CONTINUOUS_STREAMS_H_

#include <cstdint>
#include <string_view>

#include "npuplan/ir/graph.h"
#include "npuplan/pass/decision_log.h"

namespace npuplan::stream {

class RefreshContinuousStreams {
 public:
  static constexpr std::string_view kName = "refresh-continuous-streams";
  // Compacts node stream ids; `id_bound` is GE's next_stream (ids >= it are
  // left alone, none exist by construction). Returns the new stream count k.
  static int64_t Run(Model& model, int64_t id_bound, DecisionLog* log = nullptr);
};

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_REFRESH_CONTINUOUS_STREAMS_H_
