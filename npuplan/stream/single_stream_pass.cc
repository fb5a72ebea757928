#include "npuplan/stream/single_stream_pass.h"

#include "npuplan/support/str_util.h"

namespace npuplan::stream {

absl::Status E10056(const CompileOptions& options) {
  // GE names both options by ge.optionNameMap (GetReadableName).
  return absl::InvalidArgumentError(StrCat("[single-stream-pass] E10056: Cannot configure both parameters ",
                                           options.ReadableName("ge.autoMultistreamParallelMode"), " and ",
                                           options.ReadableName("ge.enableSingleStream"), " simultaneously."));
}

absl::StatusOr<bool> SingleStreamPass::Run(GraphState& gs, AssignContext& ctx) {
  // E10056 first (the auto mode is the root graph attribute's, else the option's, as GE reads it).
  if (ctx.stream_options.auto_mode.set()) return E10056(ctx.options);
  for (const StreamSubgraph& sg : gs.subgraphs) {
    if (sg.info->stream_label.empty()) continue;
    const Node& first = ctx.model.node(sg.info->nodes.front());
    // A Data-like input's user label reaches the subgraph as its stream label.
    const bool user = !StringAttrOrEmpty(first.attrs, kAttrUserStreamLabel).empty();
    const std::string option = ctx.options.ReadableName("ge.enableSingleStream");
    return absl::InvalidArgumentError(StrCat(
        "[single-stream-pass] E10055: ", option, "=true conflicts with stream label '", sg.info->stream_label,
        "' (", user ? "_user_stream_label" : "_stream_label", " of node '", first.name, "', engine subgraph ",
        sg.info->name(), "): single-stream mode allows no stream label; set ", option, " to false"));
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
