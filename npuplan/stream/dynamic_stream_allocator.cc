// The dynamic-shape allocator in GE's order: engine-owning streams, AI CPU
// rules, reuse (producers then consumers), remaining subgraphs, node streams,
// label streams; then one engine-priority refresh over all dynamic graphs.
#include "npuplan/stream/dynamic_stream_allocator.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::stream {
namespace {

constexpr std::string_view kEnginesOwningStream[] = {"AIcoreEngine", "VectorEngine", "DNN_HCCL", "DSAEngine"};
constexpr std::string_view kAicpuEngines[] = {"DNN_VM_AICPU", "DNN_VM_AICPU_FFTS_PLUS", "DNN_VM_AICPU_ASCEND",
                                              "DNN_VM_AICPU_ASCEND_FFTS_PLUS"};
constexpr std::string_view kIndependentAicpuTypes[] = {"DropOutGenMask", "DropOutDoMaskV3", "GetNext",
                                                       "DynamicGetNext", "DynamicGetNextV2"};
constexpr std::string_view kForcedMainTypes[] = {
    "Data",     "RefData",     "AippData", "AnnData",        "MultisliceData",   "NetOutput",  "FileConstant",
    "Variable", "VariableV2",  "RefVariable", "VarHandleOp", "ConstPlaceHolder", "Const",      "Constant"};

template <size_t N>
bool In(const std::string_view (&set)[N], std::string_view v) {
  return std::find(std::begin(set), std::end(set), v) != std::end(set);
}

bool IsAicpu(const StreamSubgraph& sg) { return In(kAicpuEngines, sg.info->engine); }
bool IsSkip(const StreamSubgraph& sg) { return sg.conf != nullptr && sg.conf->skip_assign_stream; }
bool IsIndependent(const StreamSubgraph& sg) { return sg.conf != nullptr && sg.conf->independent; }

// The engine's stream, allocated on first use (GE's AssignStreamForSubgraph).
int64_t EngineStream(std::string_view engine, AssignContext& ctx, DynamicStreamState& st) {
  auto [it, fresh] = st.engine_streams.emplace(std::string(engine), -1);
  if (fresh) it->second = ctx.next_stream++;
  return it->second;
}

void Give(GraphState& gs, int32_t i, AssignContext& ctx, DynamicStreamState& st, std::string_view rule) {
  StreamSubgraph& sg = gs.subgraphs[i];
  sg.stream_id = EngineStream(sg.info->engine, ctx, st);
  ctx.log.Record(DynamicStreamAllocator::kName, "DynamicEngineStream", "", Field("graph", ctx.model.graph(gs.graph).name),
                 Field("subgraph", sg.info->name()), Field("engine", sg.info->engine), Field("stream", sg.stream_id),
                 Field("rule", rule));
}

// Owner at the end of the reused_subgraph chain.
int32_t Owner(const GraphState& gs, int32_t i) {
  while (gs.subgraphs[i].reused_subgraph >= 0 && gs.subgraphs[i].reused_subgraph != i) i = gs.subgraphs[i].reused_subgraph;
  return i;
}

// GE's CouldReuse for the dynamic path.
bool CouldReuse(const GraphState& gs, int32_t sg_i, int32_t peer_i) {
  const StreamSubgraph& sg = gs.subgraphs[sg_i];
  const StreamSubgraph& peer = gs.subgraphs[peer_i];
  if (IsSkip(peer)) return false;
  if (IsAicpu(sg) && IsIndependent(peer)) return false;
  if (sg.info->engine == peer.info->engine) return true;
  if (sg.conf != nullptr && sg.conf->attach) return true;
  if (peer.reused_subgraph >= 0 && gs.subgraphs[peer.reused_subgraph].info->engine == sg.info->engine) return true;
  return false;
}

// GE's GetTopPrioritySubgraph: the first candidate, replaced by a later one
// whose engine compute_cost is strictly below the best so far, which starts
// at 10 (so the first candidate is kept whatever its cost); ties: smallest
// index.
int32_t TopPriority(const GraphState& gs, const std::vector<int32_t>& candidates) {
  int32_t best = -1;
  int64_t best_cost = 10;
  for (int32_t c : candidates) {
    if (best < 0) best = c;
    const int64_t cc = gs.subgraphs[c].conf ? gs.subgraphs[c].conf->compute_cost : 10;
    if (cc < best_cost) {
      best = c;
      best_cost = cc;
    }
  }
  return best;
}

// AssignAicpuCanParallel's producer test: P's engine owns a stream, P is not
// independent and has no other consumer of its own engine.
bool ProducerReusable(const GraphState& gs, int32_t sg_i, int32_t p_i) {
  const StreamSubgraph& p = gs.subgraphs[p_i];
  if (!In(kEnginesOwningStream, p.info->engine) || IsIndependent(p)) return false;
  for (int32_t c : p.info->consumers) {
    if (c != sg_i && gs.subgraphs[c].info->engine == p.info->engine) return false;
  }
  return true;
}

bool AicpuCanParallel(const GraphState& gs, int32_t i) {
  const EngineSubgraph& info = *gs.subgraphs[i].info;
  if (info.producers.empty()) return true;  // (a)
  bool only_no_task = true;                 // (b)
  for (int32_t p : info.producers) {
    const StreamSubgraph& ps = gs.subgraphs[p];
    if (ps.info->engine != "DNN_VM_GE_LOCAL" || !ps.info->producers.empty()) only_no_task = false;
  }
  if (only_no_task) return true;
  for (int32_t p : info.producers) {  // (c)
    if (ProducerReusable(gs, i, p)) return false;
  }
  return true;
}

}  // namespace

bool DynamicStreamAllocator::IsForcedMainStreamNode(const Node& node) {
  return In(kForcedMainTypes, node.type) || !node.subgraphs.empty();
}

DynamicStreamState DynamicStreamAllocator::Init(const StreamOptions& options) {
  DynamicStreamState st;
  st.multi_stream = options.dynamic_multi_stream;
  st.ac_parallel = options.ac_parallel;
  return st;
}

absl::Status DynamicStreamAllocator::AssignGraph(GraphState& gs, AssignContext& ctx, DynamicStreamState& st) {
  Model& m = ctx.model;
  const int32_t n = static_cast<int32_t>(gs.subgraphs.size());
  // 1. AssignEnginesOwningStream.
  for (int32_t i = 0; i < n; ++i) {
    if (In(kEnginesOwningStream, gs.subgraphs[i].info->engine)) Give(gs, i, ctx, st, "owning");
  }
  // 2. AI CPU rules.
  for (int32_t i = 0; i < n; ++i) {
    StreamSubgraph& sg = gs.subgraphs[i];
    if (sg.stream_id >= 0 || !IsAicpu(sg)) continue;
    if (st.ac_parallel) {
      if (AicpuCanParallel(gs, i)) Give(gs, i, ctx, st, "aicpu-parallel");
    } else {
      bool independent = std::any_of(sg.info->nodes.begin(), sg.info->nodes.end(),
                                     [&](NodeId id) { return In(kIndependentAicpuTypes, m.node(id).type); });
      if (independent) Give(gs, i, ctx, st, "independent-aicpu");
    }
  }
  // 3. AssignWithReuse: producers, then consumers.
  for (int32_t i = 0; i < n; ++i) {
    StreamSubgraph& sg = gs.subgraphs[i];
    if (sg.stream_id >= 0 || IsSkip(sg)) continue;
    std::vector<int32_t> candidates;
    for (int32_t p : sg.info->producers) {
      if (CouldReuse(gs, i, p)) candidates.push_back(p);
    }
    if (candidates.empty()) {
      for (int32_t c : sg.info->consumers) {
        if (CouldReuse(gs, i, c)) candidates.push_back(c);
      }
    }
    int32_t top = TopPriority(gs, candidates);
    if (top < 0) continue;
    int32_t owner = Owner(gs, top);
    if (gs.subgraphs[owner].stream_id < 0) continue;
    sg.stream_id = gs.subgraphs[owner].stream_id;
    sg.reused_subgraph = owner;
    ctx.log.Record(kName, "DynamicEngineStream", "", Field("graph", m.graph(gs.graph).name),
                   Field("subgraph", sg.info->name()), Field("engine", sg.info->engine), Field("stream", sg.stream_id),
                   Field("rule", "reuse"), Field("from", gs.subgraphs[owner].info->name()));
  }
  // 4. AssignRemainSubgraphNeedAssignStream.
  for (int32_t i = 0; i < n; ++i) {
    if (gs.subgraphs[i].stream_id < 0 && !IsSkip(gs.subgraphs[i])) Give(gs, i, ctx, st, "remain");
  }
  // 5. SetSubgraphStreamToNodes.
  for (NodeId id : m.graph(gs.graph).nodes) m.node(id).stream_id = -1;
  for (const StreamSubgraph& sg : gs.subgraphs) {
    for (NodeId id : sg.info->nodes) m.node(id).stream_id = sg.stream_id;
  }
  // 6. ReassignStreamByStreamLabel.
  for (NodeId id : m.graph(gs.graph).nodes) {
    Node& node = m.node(id);
    std::string label = EffectiveStreamLabel(node);
    if (label.empty()) continue;
    auto [it, fresh] = st.label_streams.emplace(label, -1);
    if (fresh) it->second = ctx.next_stream++;
    node.stream_id = it->second;
    ctx.log.Record(kName, "DynamicLabelStream", "", Field("node", node.name), Field("label", label),
                   Field("stream", node.stream_id));
  }
  st.graphs.push_back(gs.graph);
  return absl::OkStatus();
}

std::map<int64_t, int64_t> DynamicStreamAllocator::Refresh(Model& m, AssignContext& ctx, const DynamicStreamState& st) {
  std::map<int64_t, int64_t> remap;
  // RetainEngineOwingNodes: count nodes per stream before forcing.
  std::map<int64_t, int64_t> count;
  for (GraphId g : st.graphs) {
    for (NodeId id : m.graph(g).nodes) {
      if (m.node(id).stream_id >= 0) ++count[m.node(id).stream_id];
    }
  }
  std::vector<std::tuple<int64_t, std::string, int64_t>> engines;  // (cost, name, id)
  for (const auto& [engine, id] : st.engine_streams) {
    if (count[id] == 0) continue;
    const EngineConfig* conf = m.engine_table.Find(engine);
    engines.emplace_back(conf ? conf->compute_cost : 10, engine, id);
  }
  std::sort(engines.begin(), engines.end());
  int64_t next = 0;
  for (const auto& e : engines) remap[std::get<2>(e)] = next++;
  int64_t labels = 0;
  for (const auto& [label, id] : st.label_streams) {
    if (count[id] == 0) continue;
    remap[id] = next++;
    ++labels;
  }
  if (st.main_stream >= 0) remap[st.main_stream] = 0;
  // Forced nodes and nodes without a stream → main.
  for (GraphId g : st.graphs) {
    for (NodeId id : m.graph(g).nodes) {
      Node& node = m.node(id);
      if (node.stream_id >= 0 && !IsForcedMainStreamNode(node)) continue;
      if (node.stream_id >= 0) {
        ctx.log.Record(kName, "DynamicForcedMainStream", "", Field("node", node.name),
                       Field("reason", node.subgraphs.empty() ? "forced-type" : "subgraph-owner"));
      }
      node.stream_id = st.main_stream;
    }
  }
  ctx.log.Record(kName, "DynamicStreamsRefreshed", "", Field("engines", engines.size()), Field("labels", labels),
                 Field("streams", std::max<int64_t>(next, 1)));
  return remap;
}

int64_t RemapStreams(Model& m, const std::map<int64_t, int64_t>& first) {
  std::set<int64_t> used;
  for (const Node& n : m.nodes()) {
    if (n.stream_id >= 0 && !first.count(n.stream_id)) used.insert(n.stream_id);
  }
  std::set<int64_t> mapped_used;
  for (const Node& n : m.nodes()) {
    if (n.stream_id >= 0 && first.count(n.stream_id)) mapped_used.insert(first.at(n.stream_id));
  }
  // Mapped ids must be dense: compact them too (an engine may have lost its nodes).
  std::map<int64_t, int64_t> dense;
  for (int64_t v : mapped_used) dense.emplace(v, static_cast<int64_t>(dense.size()));
  std::map<int64_t, int64_t> rest;
  int64_t next = static_cast<int64_t>(dense.size());
  for (int64_t v : used) rest[v] = next++;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    Node& n = m.node(NodeId(static_cast<int32_t>(i)));
    if (n.stream_id < 0) continue;
    auto it = first.find(n.stream_id);
    n.stream_id = it != first.end() ? dense.at(it->second) : rest.at(n.stream_id);
  }
  return next;
}

}  // namespace npuplan::stream
