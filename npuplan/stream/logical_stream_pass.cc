#include "npuplan/stream/logical_stream_pass.h"

#include <limits>

#include "npuplan/stream/all_reduce_parallel_pass.h"
#include "npuplan/stream/assign_by_dependency_pass.h"
#include "npuplan/stream/assign_by_label_pass.h"
#include "npuplan/stream/independent_stream_pass.h"
#include "npuplan/stream/node_stream_update_pass.h"
#include "npuplan/stream/optimize_ineffective_multi_stream_pass.h"
#include "npuplan/stream/single_stream_pass.h"
#include "npuplan/stream/update_for_mde_group_pass.h"
#include "npuplan/stream/update_for_parallel_group_pass.h"
#include "npuplan/stream/update_for_skipped_engine_pass.h"
#include "npuplan/support/str_util.h"

namespace npuplan::stream {
namespace {

struct ChainEntry {
  std::string_view name;
  ChainMode chains;
  std::unique_ptr<LogicalStreamPass> (*make)();
};

// stream/passes.def's sub-passes, in registry order.
const std::vector<ChainEntry>& ChainRegistry() {
  static const std::vector<ChainEntry> entries = {
#define NPUPLAN_PASS(pipeline, name, cls)
#define NPUPLAN_STREAM_PASS(name, cls, chains) \
  {name, chains, []() -> std::unique_ptr<LogicalStreamPass> { return std::make_unique<cls>(); }},
#include "npuplan/stream/passes.def"
#undef NPUPLAN_PASS
#undef NPUPLAN_STREAM_PASS
  };
  return entries;
}

}  // namespace

absl::StatusOr<bool> LogicalStreamChainPass::Run(Plan& plan, PassContext& ctx) {
  if (graph_ == nullptr || ctx_ == nullptr) {
    return absl::FailedPreconditionError(StrCat(
        "pass '", name(), "' is a logical-stream sub-pass: it runs on one graph at a time inside ",
        "logical-stream-assignment (--passes logical-stream-assignment(", name(), ",...))"));
  }
  if (&plan.model != &ctx_->model) {
    return absl::InternalError(
        StrCat("[", name(), "] bound to another plan's logical-stream-assignment"));
  }
  auto changed = pass_->Run(*graph_, *ctx_);
  if (changed.ok()) return changed;
  std::string msg(changed.status().message());
  if (msg.rfind("[", 0) != 0) msg = StrCat("[", name(), "] ", msg);
  return absl::Status(changed.status().code(),
                      StrCat(msg, " (graph '", graph_->g(ctx_->model).name, "')"));
}

std::unique_ptr<LogicalStreamChainPass> MakeChainPass(std::string_view name) {
  for (const ChainEntry& e : ChainRegistry()) {
    if (e.name == name) return std::make_unique<LogicalStreamChainPass>(e.make());
  }
  return nullptr;
}

std::unique_ptr<PassPipeline> DefaultChain(bool single_stream) {
  auto chain = std::make_unique<PassPipeline>("logical-stream-assignment");
  const ChainMode mode = single_stream ? kSingleChain : kMultiChain;
  for (const ChainEntry& e : ChainRegistry()) {
    if (e.chains & mode) chain->AddPass(std::make_unique<LogicalStreamChainPass>(e.make()));
  }
  return chain;
}

std::vector<std::string_view> ChainPassNames() {
  std::vector<std::string_view> names;
  for (const ChainEntry& e : ChainRegistry()) names.push_back(e.name);
  return names;
}

absl::Status InitGraphState(GraphState& gs, const Model& model, GraphId g, const AssignContext& ctx,
                            int64_t default_stream, bool owner_graph_unknown) {
  gs.graph = g;
  gs.default_stream = default_stream;
  gs.owner_graph_unknown = owner_graph_unknown;
  // npuplan.passThreads=1: one thread for the whole compile, here too.
  const int32_t second_thread_from = ctx.options.Get("npuplan.passThreads") == "1"
                                         ? std::numeric_limits<int32_t>::max()
                                         : kPartitionSecondThreadFromNodes;
  gs.partition = PartitionByEngine(model, g, &gs.edges, second_thread_from);  // with successors
  const Graph& graph = model.graph(g);
  const size_t n = graph.nodes.size();
  gs.node_flags.assign(n, 0);
  // Every flag is an attribute: only the nodes with attributes are read.
  for (int32_t i : gs.partition.attr_nodes) {
    const Node& node = model.node(graph.nodes[i]);
    uint8_t f = 0;
    if (HasStreamLabel(node)) f |= kNodeLabelled;
    if (HasAttr(node.attrs, kAttrNewStreamId)) f |= kNodeNewStreamId;
    if (HasAttr(node.attrs, kAttrParallelGroup)) f |= kNodeParallelGroup;
    // GE's engine partitioner clears the user label of Data-like inputs
    // (after TransUserStreamLabel copied it into `_stream_label`).
    if (HasAttr(node.attrs, kAttrUserStreamLabel) && !IsInputDataNode(node)) f |= kNodeUserLabelAttr;
    if (GetBoolAttr(node.attrs, kAttrRtsLabelNode).value_or(false)) f |= kNodeRtsLabel;
    if (HasAttr(node.attrs, kAttrForceAttachStream)) f |= kNodeForceAttach;
    gs.node_flags[i] = f;
  }
  // Engine configuration once per distinct engine (the partition interns
  // engine names, so equal engines share one string).
  struct EngineInfo {
    const char* data;
    const EngineConfig* conf;
    int64_t max_parallel_num;
  };
  std::vector<EngineInfo> infos;
  gs.engines.clear();
  gs.subgraphs.assign(gs.partition.subgraphs.size(), StreamSubgraph{});
  for (size_t i = 0; i < gs.subgraphs.size(); ++i) {
    StreamSubgraph& sg = gs.subgraphs[i];
    sg.info = &gs.partition.subgraphs[i];
    const std::string_view engine = sg.info->engine;
    size_t e = 0;
    while (e < infos.size() && infos[e].data != engine.data()) ++e;
    if (e == infos.size()) {
      const EngineConfig* conf = model.engine_table.Find(engine);
      if (conf == nullptr) {
        return absl::InvalidArgumentError(StrCat("engine subgraph ", sg.info->name(), ": engine '", engine,
                                                 "' is not in the engine table"));
      }
      int64_t max_parallel_num = 1;
      if (auto it = ctx.stream_options.max_parallel.find(std::string(engine));
          it != ctx.stream_options.max_parallel.end()) {
        max_parallel_num = it->second;
      }
      infos.push_back({engine.data(), conf, max_parallel_num});
      gs.engines.push_back(engine);
    }
    sg.conf = infos[e].conf;
    sg.max_parallel_num = infos[e].max_parallel_num;
    sg.engine_id = static_cast<int32_t>(e);
  }
  for (int32_t i : gs.partition.attr_nodes) {
    if (gs.node_flags[i] & kNodeForceAttach) gs.subgraphs[gs.partition.subgraph_of[i]].force_attach = true;
  }
  return absl::OkStatus();
}

bool HasStreamLabel(const Node& node) {
  return !StringAttrOrEmpty(node.attrs, kAttrStreamLabel).empty() ||
         !StringAttrOrEmpty(node.attrs, kAttrUserStreamLabel).empty();
}

const std::string& StringAttrOrEmpty(const AttrMap& attrs, std::string_view key) {
  static const std::string kEmpty;
  if (attrs.empty()) return kEmpty;
  const AttrValue* v = FindAttr(attrs, key);
  const std::string* s = v != nullptr ? v->as<std::string>() : nullptr;
  return s != nullptr ? *s : kEmpty;
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
