#include "npuplan/stream/assign_by_label_pass.h"

#include <map>

namespace npuplan::stream {

absl::StatusOr<bool> AssignByLabelPass::Run(GraphState& gs, AssignContext& ctx) {
  std::map<std::string, int64_t> label_streams;  // per graph, as GE recreates the pass
  bool changed = false;
  for (StreamSubgraph& sg : gs.subgraphs) {
    const std::string_view label = sg.info->stream_label;
    if (label.empty()) continue;
    auto [it, inserted] = label_streams.emplace(std::string(label), ctx.next_stream);
    if (inserted) ++ctx.next_stream;
    sg.stream_id = it->second;
    changed = true;
    ctx.log.Record(kName, "LabelStream", "", Field("subgraph", sg.info->name()), Field("label", label),
                   Field("stream", it->second), Field("new", inserted));
  }
  return changed;
}

}  // namespace npuplan::stream
