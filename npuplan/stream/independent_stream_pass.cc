#include "npuplan/stream/independent_stream_pass.h"

#include <map>
#include <utility>

namespace npuplan::stream {

absl::StatusOr<bool> IndependentStreamPass::Run(GraphState& gs, AssignContext& ctx) {
  std::map<std::pair<std::string, std::string>, int64_t> streams;  // (engine, label) → stream
  bool changed = false;
  for (StreamSubgraph& sg : gs.subgraphs) {
    if (!sg.conf->independent) continue;
    // "Assigned user stream": a user label that already has a stream wins.
    if (!sg.info->user_stream_label.empty() && sg.stream_id != -1) continue;
    auto [it, inserted] = streams.emplace(
        std::make_pair(std::string(sg.info->engine), std::string(sg.info->stream_label)), ctx.next_stream);
    if (inserted) ++ctx.next_stream;
    sg.stream_id = it->second;
    changed = true;
    ctx.log.Record(kName, "IndependentStream", "", Field("subgraph", sg.info->name()), Field("engine", sg.info->engine),
                   Field("label", sg.info->stream_label), Field("stream", it->second), Field("new", inserted));
  }
  return changed;
}

}  // namespace npuplan::stream
