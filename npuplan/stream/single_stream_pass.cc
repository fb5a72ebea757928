#include "npuplan/stream/single_stream_pass.h"

#include "npuplan/support/str_util.h"

namespace npuplan::stream {

absl::StatusOr<bool> SingleStreamPass::Run(GraphState& gs, AssignContext& ctx) {
  // E10056 first: the root graph attribute wins over the option, as GE reads it.
  std::string mode = GetStringAttr(ctx.model.root().attrs, "ge.autoMultistreamParallelMode")
                         .value_or(ctx.options.Get("ge.autoMultistreamParallelMode"));
  if (!mode.empty()) {
    return absl::InvalidArgumentError(
        "[single-stream-pass] E10056: Cannot configure both parameters ge.autoMultistreamParallelMode and "
        "ge.enableSingleStream simultaneously.");
  }
  for (const StreamSubgraph& sg : gs.subgraphs) {
    if (sg.info->stream_label.empty()) continue;
    const Node& first = ctx.model.node(sg.info->nodes.front());
    const bool user = !sg.info->user_stream_label.empty();
    return absl::InvalidArgumentError(StrCat(
        "[single-stream-pass] E10055: ge.enableSingleStream=true conflicts with stream label '", sg.info->stream_label,
        "' (", user ? "_user_stream_label" : "_stream_label", " of node '", first.name, "', engine subgraph ",
        sg.info->name(), "): single-stream mode allows no stream label"));
  }
  const int64_t stream = gs.default_stream >= 0 ? gs.default_stream : ctx.next_stream++;
  bool changed = false;
  for (StreamSubgraph& sg : gs.subgraphs) {
    if (sg.stream_id != -1) continue;
    sg.stream_id = stream;
    changed = true;
  }
  ctx.log.Record(kName, "SingleStream", "", Field("graph", gs.g(ctx.model).name), Field("stream", stream));
  return changed;
}

}  // namespace npuplan::stream
