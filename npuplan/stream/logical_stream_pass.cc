#include "npuplan/stream/logical_stream_pass.h"

#include "npuplan/support/str_util.h"

namespace npuplan::stream {

absl::Status InitGraphState(GraphState& gs, const Model& model, GraphId g, const AssignContext& ctx,
                            int64_t default_stream, bool owner_graph_unknown) {
  gs.graph = g;
  gs.default_stream = default_stream;
  gs.owner_graph_unknown = owner_graph_unknown;
  gs.partition = PartitionByEngine(model, g);
  gs.subgraphs.assign(gs.partition.subgraphs.size(), StreamSubgraph{});
  for (size_t i = 0; i < gs.subgraphs.size(); ++i) {
    StreamSubgraph& sg = gs.subgraphs[i];
    sg.info = &gs.partition.subgraphs[i];
    sg.conf = model.engine_table.Find(sg.info->engine);
    if (sg.conf == nullptr) {
      return absl::InvalidArgumentError(StrCat("engine subgraph ", sg.info->name(), ": engine '", sg.info->engine,
                                               "' is not in the engine table"));
    }
    if (auto it = ctx.max_parallel.find(std::string(sg.info->engine)); it != ctx.max_parallel.end()) {
      sg.max_parallel_num = it->second;
    }
  }
  return absl::OkStatus();
}

bool HasStreamLabel(const Node& node) {
  return !GetStringAttr(node.attrs, kAttrStreamLabel).value_or("").empty() ||
         !GetStringAttr(node.attrs, kAttrUserStreamLabel).value_or("").empty();
}

std::string AttrAsKey(const AttrValue& v) {
  if (auto* s = v.as<std::string>()) return *s;
  if (auto* i = v.as<int64_t>()) return StrCat(*i);
  if (auto* b = v.as<bool>()) return *b ? "true" : "false";
  if (auto* d = v.as<double>()) return StrCat(*d);
  return std::string(v.TypeName());
}

bool IsHcomNode(const Node& node, const EngineTable& table) {
  if (node.type.rfind("Hcom", 0) == 0 || node.type.rfind("Horovod", 0) == 0) return true;
  const EngineConfig* conf = table.Find(node.engine);
  return conf != nullptr && conf->independent;
}

}  // namespace npuplan::stream
