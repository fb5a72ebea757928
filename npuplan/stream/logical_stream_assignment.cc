// The logical stream driver, in five steps (GE's LogicalStreamAllocator::Assign
// and DynamicStreamAllocator):
//   1. read the options (StreamOptions, stream_options.h) into one
//      AssignContext;
//   2. DoAssign the root graph, then every subgraph in pre-order (unknown-shape
//      graphs: dynamic_stream_allocator.h; then its engine-priority refresh);
//   3. auto multi-stream DAG modes / CriticalPath:N per graph, then (dynamic)
//      RefreshContinuousStreamsByNodeIds;
//   4. RefreshContinuousStreams over all nodes;
//   5. fill plan.streams (one LogicalStream per id, user labels).
#include "npuplan/stream/logical_stream_assignment.h"

#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "npuplan/ir/node_prefetch.h"
#include "npuplan/partition/unknown_shape_graphs.h"
#include "npuplan/stream/critical_path_streams.h"
#include "npuplan/stream/cv_parallel_marking.h"
#include "npuplan/stream/dag_stream_allocator.h"
#include "npuplan/stream/dynamic_stream_allocator.h"
#include "npuplan/stream/refresh_continuous_streams.h"
#include "npuplan/stream/single_stream_pass.h"
#include "npuplan/stream/stream_summary.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace stream {

bool IsUnknownShapeGraph(const Plan& plan, GraphId g) {
  return partition::IsUnknownShapeGraph(plan, g);
}

std::vector<bool> UnknownShapeGraphs(const Plan& plan) {
  return partition::UnknownShapeGraphs(plan);
}

namespace {

// Runs the chain on graph gs through its PassPipeline: the pipeline's checks
// (verify-each, dumps) follow each sub-pass.
absl::Status RunChain(PassPipeline& chain, Plan& plan, GraphState& gs, AssignContext& ctx,
                      PassContext& pctx) {
  for (const auto& pass : chain.passes())
    static_cast<LogicalStreamChainPass&>(*pass).Bind(&gs, &ctx);
  const bool outer = pctx.sub_passes;
  pctx.sub_passes = true;
  // Between sub-passes the plan is a snapshot inside the stage (what
  // --verify-each checks and --dump-after writes).
  const IrProperties outer_stage = plan.in_progress;
  plan.in_progress = static_cast<IrProperties>(IrProperty::kLogicalStreams);
  absl::Status s = chain.Run(plan, pctx).status();
  plan.in_progress = outer_stage;
  pctx.sub_passes = outer;
  for (const auto& pass : chain.passes())
    static_cast<LogicalStreamChainPass&>(*pass).Bind(nullptr, nullptr);
  return s;
}

void NoteAttrNodes(const Graph& graph, const GraphState& gs, AssignContext& ctx) {
  for (int32_t i : gs.partition.attr_nodes) ctx.attr_nodes.push_back(graph.nodes[i]);
}

// GE's DoAssign for one graph (unknown-shape graphs: the dynamic allocator).
absl::Status DoAssign(Plan& plan, const std::vector<bool>& unknown_graphs, GraphId g,
                      AssignContext& ctx, DynamicStreamState& dyn, bool cv_mode,
                      PassPipeline& chain, PassContext& pctx) {
  Model& m = ctx.model;
  const Graph& graph = m.graph(g);
  int64_t parent_stream = -1;
  bool owner_unknown = false;
  if (graph.parent_node.valid()) {
    parent_stream = m.node(graph.parent_node).stream_id;
    owner_unknown = unknown_graphs[graph.parent_graph.index()];
  }
  // cv mode: marked vector nodes form VectorEngine subgraphs (restored on return).
  std::vector<NodeId> cv_nodes;
  if (cv_mode) cv_nodes = CvParallelMarking::Mark(m, g, &ctx.log);
  ScopedCvEngines cv_engines(m, cv_nodes);
  if (unknown_graphs[g.index()]) {
    if (dyn.main_stream < 0) dyn.main_stream = ctx.next_stream++;
    if (dyn.multi_stream) {
      GraphState gs;
      NPUPLAN_RETURN_IF_ERROR(InitGraphState(gs, m, g, ctx, -1, owner_unknown));
      NoteAttrNodes(graph, gs, ctx);
      return DynamicStreamAllocator::AssignGraph(gs, ctx, dyn);
    }
    int64_t s = parent_stream >= 0 ? parent_stream : dyn.main_stream;
    for (NodeId id : graph.nodes) m.node(id).stream_id = s;
    ctx.attr_nodes_complete = false;
    ctx.log.Record(LogicalStreamAssignment::kName, "UnknownShapeSingleStream", "", Field("graph", graph.name),
                   Field("stream", s));
    return absl::OkStatus();
  }
  GraphState gs;
  absl::Status init = InitGraphState(gs, m, g, ctx, owner_unknown ? -1 : parent_stream, owner_unknown);
  if (!init.ok()) {
    return absl::InvalidArgumentError(StrCat("[", LogicalStreamAssignment::kName, "] ", std::string(init.message())));
  }
  NoteAttrNodes(graph, gs, ctx);
  ctx.log.Record(LogicalStreamAssignment::kName, "EnginePartition", "", Field("graph", graph.name),
                 Field("subgraphs", gs.partition.subgraphs.size()));
  ctx.stats.Add(LogicalStreamAssignment::kName, "engine_subgraphs", static_cast<int64_t>(gs.partition.subgraphs.size()));
  return RunChain(chain, plan, gs, ctx, pctx);
}

// An auto multi-stream mode does nothing on dynamic-shape graphs unless
// ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1 (they get one stream, GE's D1): say so
// in one line, with the fix, instead of letting the option vanish silently.
void ReportSkippedAutoMode(const AutoMode& mode, const DynamicStreamState& dyn,
                           const std::vector<GraphId>& graphs,
                           const std::vector<bool>& unknown_graphs, PassContext& pctx) {
  if (!mode.set() || mode.algorithm == AutoAlgorithm::kDefault || dyn.multi_stream) return;
  int64_t skipped = 0;
  for (GraphId g : graphs) skipped += unknown_graphs[g.index()] ? 1 : 0;
  if (skipped == 0) return;
  const std::string value = AutoModeText(mode);
  pctx.log.Record(LogicalStreamAssignment::kName, "AutoModeSkipped", "", Field("mode", value),
                  Field("graphs", skipped), Field("of", graphs.size()), Field("reason", "dynamic-shape"));
  if (pctx.warnings == nullptr) return;
  pctx.warnings->push_back(StrCat(
      "option ", pctx.options.ReadableName("ge.autoMultistreamParallelMode"), "=", value, " does nothing on ",
      skipped, " of ", graphs.size(), " graph(s): they have dynamic shapes, which get one stream unless "
      "ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1; pin the input shapes (--input-shape NAME=DIMS for ONNX models) "
      "or set ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1"));
}

// Home streams of the static graphs an auto mode rewrites (indexed by
// GraphId; dag_stream_allocator.h). A static subgraph of a static parent:
// its NetOutput's stream, `fresh` — the NetOutput moves with the graph's
// stream 0 to a fresh id, so that every graph keeps streams of its own (an
// If branch runs beside its parent's other nodes, and no subgraph NetOutput
// queues behind the parent's compute). Other static graphs (the root): the
// NetOutput's stream, when every node that stays on it (NetOutput,
// `_rts_label_node`, nodes of graphs the mode skips) belongs to that graph
// and no earlier graph took it; -1 otherwise. `none`: dynamic multi-stream
// models (whose refresh moves forced nodes) and
// npuplan.autoStreams.neverWorse=false get none.
struct Homes {
  std::vector<int64_t> stream;
  std::vector<bool> fresh;
};
Homes HomeStreams(const Model& m, const std::vector<GraphId>& graph_order,
                  const std::vector<bool>& unknown_graphs, bool none) {
  Homes h{std::vector<int64_t>(m.num_graphs(), -1), std::vector<bool>(m.num_graphs(), false)};
  if (none) return h;
  auto net_output_stream = [&](GraphId g) {
    for (NodeId id : m.graph(g).nodes) {
      if (m.node(id).type == "NetOutput") return m.node(id).stream_id;
    }
    return int64_t{-1};
  };
  for (GraphId g : graph_order) {
    const Graph& graph = m.graph(g);
    if (unknown_graphs[g.index()] || graph.IsRoot() || unknown_graphs[graph.parent_graph.index()])
      continue;
    h.stream[g.index()] = net_output_stream(g);
    h.fresh[g.index()] = h.stream[g.index()] >= 0;
  }
  std::map<int64_t, std::set<int32_t>> kept;  // stream → graphs with a node that stays there
  for (GraphId g : graph_order) {
    if (h.fresh[g.index()]) continue;
    for (NodeId id : m.graph(g).nodes) {
      const Node& n = m.node(id);
      if (n.stream_id < 0) continue;
      if (unknown_graphs[g.index()] || n.type == "NetOutput" ||
          HasAttr(n.attrs, kAttrRtsLabelNode)) {
        kept[n.stream_id].insert(g.index());
      }
    }
  }
  std::set<int64_t> taken;
  for (GraphId g : graph_order) {
    if (unknown_graphs[g.index()] || h.fresh[g.index()]) continue;
    const int64_t s = net_output_stream(g);
    if (s >= 0 && kept[s].size() == 1 && taken.insert(s).second) h.stream[g.index()] = s;
  }
  return h;
}

// 1. The option the engine table cannot honour is logged, not refused (GE
//    ignores an engine it does not have).
void LogUnknownEngines(const Model& m, const StreamOptions& opts, DecisionLog& log) {
  for (const auto& [engine, n] : opts.max_parallel) {
    if (m.engine_table.Find(engine) == nullptr) {
      log.Record(LogicalStreamAssignment::kName, "UnknownEngineInOption", "",
                 Field("option", "ge.streamMaxParallelNum"), Field("engine", engine));
    }
  }
}

// A stream already -1 (a fresh model's) is not written: its line stays clean.
void ClearStreams(Model& m) {
  const size_t count = m.num_nodes();
  for (size_t i = 0; i < count; ++i) {
    if (i + kNodePrefetch < count)
      __builtin_prefetch(&m.node(NodeId(static_cast<int32_t>(i + kNodePrefetch))).stream_id);
    int64_t& s = m.node(NodeId(static_cast<int32_t>(i))).stream_id;
    if (s != -1) s = -1;
  }
}

// 2. DoAssign over the root and every subgraph (the pass adds no graph: one
//    pre-order serves every walk), then the dynamic multi-stream refresh:
//    engine-priority ids first (D3/D4).
absl::Status AssignGraphs(Plan& plan, const std::vector<GraphId>& graph_order,
                          const std::vector<bool>& unknown_graphs, AssignContext& ctx,
                          DynamicStreamState& dyn, PassPipeline& chain, PassContext& pctx) {
  const StreamOptions& opts = ctx.stream_options;
  const bool cv_mode = opts.auto_mode.algorithm == AutoAlgorithm::kCv;
  for (GraphId g : graph_order) {
    NPUPLAN_RETURN_IF_ERROR(DoAssign(plan, unknown_graphs, g, ctx, dyn, cv_mode, chain, pctx));
  }
  // A dynamic root skips single-stream-pass, whose check this is.
  if (opts.single_stream && opts.auto_mode.set()) return E10056(pctx.options);
  ReportSkippedAutoMode(opts.auto_mode, dyn, graph_order, unknown_graphs, pctx);
  if (dyn.multi_stream && !dyn.graphs.empty()) {
    ctx.next_stream = RemapStreams(ctx.model, DynamicStreamAllocator::Refresh(ctx.model, ctx, dyn));
    dyn.main_stream = 0;
  }
  return absl::OkStatus();
}

// The auto mode's estimate of the whole model (plan.streams).
struct ModeEstimate {
  int64_t makespan = 0;
  int64_t lower_bound = 0;
};

// What a static model looked like before the auto mode: the default
// assignment and order, and their estimate (AutoModeKeptDefault).
struct DefaultAssignment {
  std::vector<int64_t> streams;
  std::vector<std::vector<NodeId>> orders;
  int64_t estimate = 0;
};

DefaultAssignment SaveDefault(const Model& m, const StreamCostModel& costs) {
  DefaultAssignment d;
  for (const Node& n : m.nodes()) d.streams.push_back(n.stream_id);
  for (size_t g = 0; g < m.num_graphs(); ++g)
    d.orders.push_back(m.graph(GraphId(static_cast<int32_t>(g))).nodes);
  d.estimate = EstimateModelMakespan(m, costs);
  return d;
}

// Puts the default assignment back when the mode's estimate is worse.
void KeepDefaultIfBetter(Model& m, const DefaultAssignment& saved, const StreamCostModel& costs,
                         AutoAlgorithm algorithm, DecisionLog& log, ModeEstimate& est) {
  const int64_t mode_estimate = EstimateModelMakespan(m, costs);
  if (saved.estimate >= mode_estimate) return;
  for (size_t i = 0; i < m.num_nodes(); ++i)
    m.node(NodeId(static_cast<int32_t>(i))).stream_id = saved.streams[i];
  for (size_t g = 0; g < m.num_graphs(); ++g) {
    Graph& graph = m.graph(GraphId(static_cast<int32_t>(g)));
    graph.nodes = saved.orders[g];
    for (size_t k = 0; k < graph.nodes.size(); ++k)
      m.node(graph.nodes[k]).topo_id = static_cast<int64_t>(k);
  }
  log.Record(LogicalStreamAssignment::kName, "AutoModeKeptDefault", "",
             Field("mode", AutoAlgorithmName(algorithm)), Field("makespan", mode_estimate),
             Field("default_makespan", saved.estimate));
  est.makespan = saved.estimate;
  est.lower_bound = std::min(est.lower_bound, saved.estimate);
}

// Where the auto mode runs and with what it starts: the graphs' home
// streams, the id of the forced-main-stream nodes, subgraph makespans.
struct AutoModeSetup {
  AutoModeSetup(const std::vector<GraphId>& order, const std::vector<bool>& unknown, Homes homes)
      : graph_order(order), unknown_graphs(unknown), home(std::move(homes)) {}
  const std::vector<GraphId>& graph_order;
  const std::vector<bool>& unknown_graphs;
  Homes home;
  int64_t forced = -1;  // dynamic: the id the forced nodes end on (0 after the refresh)
  // CriticalPath on a dynamic model: subgraph makespans bottom-up, so that a
  // subgraph owner pinned to the main stream costs what its subgraphs hold it.
  bool subtree_costs = false;
  CriticalPathStreams::Subtree subtree;
};

void EstimateSubtrees(const Model& m, const StreamOptions& opts, AutoModeSetup& setup) {
  for (auto it = setup.graph_order.rbegin(); it != setup.graph_order.rend(); ++it) {
    const bool unknown = setup.unknown_graphs[it->index()];
    CriticalPathStreams::Estimate(
        m, *it, opts.auto_mode.streams, StreamCostModel(sim::SimOptions{}, /*sync_nodes=*/!unknown),
        unknown, setup.subtree, opts.reorder, setup.home.stream[it->index()],
        setup.home.fresh[it->index()], opts.never_worse);
  }
}

// The mode's allocator on every graph it rewrites (dynamic graphs only under
// ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1).
absl::StatusOr<ModeEstimate> RunModeOnGraphs(AssignContext& ctx, const DynamicStreamState& dyn,
                                             AutoModeSetup& setup, PassContext& pctx) {
  Model& m = ctx.model;
  const StreamOptions& opts = ctx.stream_options;
  ModeEstimate est;
  for (GraphId g : setup.graph_order) {
    const bool unknown = setup.unknown_graphs[g.index()];
    if (unknown && !dyn.multi_stream) continue;
    // The simulator's costs; dynamic-shape graphs carry events as attributes (no Send/Recv tasks).
    const StreamCostModel costs(sim::SimOptions{}, /*sync_nodes=*/!unknown);
    const int64_t home = setup.home.stream[g.index()];
    const bool fresh = setup.home.fresh[g.index()];
    if (opts.auto_mode.algorithm == AutoAlgorithm::kCriticalPath) {
      CriticalPathStreams::Result r = CriticalPathStreams::Run(
          m, g, opts.auto_mode.streams, ctx.next_stream, &pctx.log, costs,
          unknown ? setup.forced : -1, setup.subtree_costs ? &setup.subtree : nullptr, opts.reorder,
          home, fresh, opts.never_worse);
      ctx.next_stream += r.streams;
      // With subtree costs the root's estimate and bound cover the whole model.
      if (!setup.subtree_costs || m.graph(g).IsRoot()) {
        est.makespan += r.makespan;
        est.lower_bound += r.lower_bound;
      }
    } else {
      NPUPLAN_ASSIGN_OR_RETURN(
          DagStreamAllocator::Result r,
          DagStreamAllocator::Run(m, g, opts.auto_mode, ctx.next_stream, &pctx.log, costs, home,
                                  /*main_pin=*/unknown, fresh, opts.never_worse));
      ctx.next_stream += r.streams;
      est.makespan += r.makespan;
      est.lower_bound += r.lower_bound;
    }
  }
  return est;
}

// Dynamic: RefreshContinuousStreamsByNodeIds over the dynamic graphs — ids
// of ordinary nodes first, forced / subgraph-owner / stream-less nodes (and a
// While static body's NetOutput, D5) on 0. Returns the stream count.
int64_t RenumberDynamicStreams(Model& m, const DynamicStreamState& dyn,
                               const AutoModeSetup& setup) {
  const int64_t forced = setup.forced;
  std::map<int64_t, int64_t> first{{forced, 0}};
  std::set<int64_t> ordinary;
  for (GraphId g : dyn.graphs) {
    for (NodeId id : m.graph(g).nodes) {
      Node& n = m.node(id);
      if (n.stream_id < 0 || DynamicStreamAllocator::IsForcedMainStreamNode(n)) {
        n.stream_id = forced;
      } else {
        ordinary.insert(n.stream_id);
      }
    }
  }
  for (GraphId g : setup.graph_order) {
    const Graph& graph = m.graph(g);
    if (setup.unknown_graphs[g.index()] || graph.IsRoot() ||
        !setup.unknown_graphs[graph.parent_graph.index()])
      continue;
    for (NodeId id : graph.nodes) {
      if (m.node(id).type == "NetOutput" && m.node(id).stream_id == 0)
        m.node(id).stream_id = forced;
    }
  }
  // GE renumbers the ordinary ids from 0, sharing 0 with the forced nodes;
  // when CriticalPath put ordinary nodes on the main stream itself, the
  // others follow it instead.
  const bool main_used = ordinary.erase(forced) > 0;
  for (int64_t v : ordinary) {
    first.emplace(v, static_cast<int64_t>(first.size()) - (main_used ? 0 : 1));
  }
  return RemapStreams(m, first);
}

// 3. Custom "AfterAssignLogicStream" passes: the auto multi-stream DAG modes
//    and CriticalPath:N, per graph; a static model keeps the default
//    assignment when the mode's estimates worse (npuplan.autoStreams.neverWorse).
absl::StatusOr<ModeEstimate> RunAutoMode(const std::vector<GraphId>& graph_order,
                                         const std::vector<bool>& unknown_graphs, bool dynamic,
                                         AssignContext& ctx, const DynamicStreamState& dyn,
                                         PassContext& pctx) {
  Model& m = ctx.model;
  const StreamOptions& opts = ctx.stream_options;
  const bool dynamic_multi = dyn.multi_stream && !dyn.graphs.empty();
  // neverWorse=false: GE's plans (no home streams, no comparison with the default).
  AutoModeSetup setup(
      graph_order, unknown_graphs,
      HomeStreams(m, graph_order, unknown_graphs, dynamic_multi || !opts.never_worse));
  // CriticalPath pins the forced nodes to this id while it schedules.
  setup.forced = dynamic_multi ? ctx.next_stream++ : -1;
  setup.subtree_costs = dynamic_multi && opts.auto_mode.algorithm == AutoAlgorithm::kCriticalPath;
  if (setup.subtree_costs) EstimateSubtrees(m, opts, setup);
  const StreamCostModel static_costs(sim::SimOptions{}, /*sync_nodes=*/true);
  const bool guard = !dynamic && opts.never_worse;
  DefaultAssignment saved;
  if (guard) saved = SaveDefault(m, static_costs);
  NPUPLAN_ASSIGN_OR_RETURN(ModeEstimate est, RunModeOnGraphs(ctx, dyn, setup, pctx));
  if (guard) KeepDefaultIfBetter(m, saved, static_costs, opts.auto_mode.algorithm, pctx.log, est);
  if (dynamic_multi) ctx.next_stream = RenumberDynamicStreams(m, dyn, setup);
  return est;
}

// 5. plan.streams: one LogicalStream per id, its user label, its HCCL count.
// `attr_nodes`: every node with attributes of graph_order, in its order
// (only those can carry a label), or null.
void FillStreamResult(Plan& plan, const std::vector<GraphId>& graph_order, int64_t count,
                      bool dynamic, const StreamOptions& opts, const DynamicStreamState& dyn,
                      const ModeEstimate& est, const std::vector<NodeId>* attr_nodes) {
  const Model& m = plan.model;
  StreamResult& s = plan.streams;
  s = StreamResult{};
  s.logical = count;
  s.physical = count;
  s.mode = opts.single_stream ? StreamMode::kSingle : StreamMode::kMulti;
  if (dynamic) s.mode = dyn.multi_stream ? StreamMode::kDynamicMulti : StreamMode::kDynamicSingle;
  s.auto_mode = AutoModeText(opts.auto_mode);
  s.estimated_makespan = est.makespan;
  s.makespan_lower_bound = est.lower_bound;
  s.streams.resize(count);
  for (int64_t i = 0; i < count; ++i) s.streams[i].id = i;
  auto note_label = [&](const Node& n) {
    if (n.stream_id < 0 || n.attrs.empty() || !s.streams[n.stream_id].user_label.empty()) return;
    if (IsInputDataNode(n)) return;  // GE cleared its user label
    s.streams[n.stream_id].user_label = StringAttrOrEmpty(n.attrs, kAttrUserStreamLabel);
  };
  if (attr_nodes != nullptr) {
    for (NodeId id : *attr_nodes) note_label(m.node(id));
    const std::vector<int64_t> hccl = HcclFollowedStreamCountsOf(plan, *attr_nodes);
    for (int64_t i = 0; i < count; ++i) s.streams[i].hccl_followed_count = hccl[i];
    return;
  }
  for (GraphId g : graph_order) {
    const std::vector<NodeId>& nodes = m.graph(g).nodes;
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (k + kNodePrefetch < nodes.size()) {
        const Node& ahead = m.node(nodes[k + kNodePrefetch]);
        __builtin_prefetch(&ahead.stream_id);
        __builtin_prefetch(&ahead.attrs);
      }
      note_label(m.node(nodes[k]));
    }
  }
  const std::vector<int64_t> hccl = HcclFollowedStreamCounts(plan, graph_order);
  for (int64_t i = 0; i < count; ++i) s.streams[i].hccl_followed_count = hccl[i];
}

}  // namespace

}  // namespace stream

LogicalStreamAssignment::LogicalStreamAssignment(const CompileOptions& options)
    : chain_(stream::DefaultChain(stream::SingleStreamOption(options))) {}

LogicalStreamAssignment::LogicalStreamAssignment(
    std::vector<std::unique_ptr<stream::LogicalStreamChainPass>> chain)
    : chain_(std::make_unique<PassPipeline>(std::string(kName))) {
  for (auto& pass : chain) chain_->AddPass(std::move(pass));
}

absl::StatusOr<bool> LogicalStreamAssignment::Run(Plan& plan, PassContext& pctx) {
  using namespace stream;  // NOLINT
  Model& m = plan.model;
  // 1. Options.
  AssignContext ctx(m, pctx.options, pctx.log, pctx.stats);
  NPUPLAN_ASSIGN_OR_RETURN(ctx.stream_options, ReadStreamOptions(pctx.options, m.root().attrs));
  const StreamOptions& opts = ctx.stream_options;
  LogUnknownEngines(m, opts, pctx.log);
  ClearStreams(m);
  DynamicStreamState dyn = DynamicStreamAllocator::Init(opts);

  // 2. DoAssign, graph by graph.
  const std::vector<GraphId> graph_order = m.GraphsPreOrder();
  std::unique_ptr<PassPipeline> default_chain;
  if (chain_ == nullptr) default_chain = DefaultChain(opts.single_stream);
  PassPipeline& chain = chain_ != nullptr ? *chain_ : *default_chain;
  const std::vector<bool> unknown_graphs = UnknownShapeGraphs(plan);
  NPUPLAN_RETURN_IF_ERROR(AssignGraphs(plan, graph_order, unknown_graphs, ctx, dyn, chain, pctx));
  bool dynamic = false;
  for (GraphId g : graph_order) dynamic = dynamic || unknown_graphs[g.index()];

  // 3. The auto multi-stream mode.
  ModeEstimate est;
  const bool ran_auto_mode = opts.auto_mode.rewrites_streams() && !opts.single_stream;
  if (ran_auto_mode) {
    NPUPLAN_ASSIGN_OR_RETURN(est,
                             RunAutoMode(graph_order, unknown_graphs, dynamic, ctx, dyn, pctx));
  }

  // 4. Continuity.
  const int64_t count = RefreshContinuousStreams::Run(m, ctx.next_stream, &pctx.log);

  // 5. Plan fields.
  // The auto modes may reorder nodes: then the nodes are read in their new order.
  const bool attr_nodes_valid = ctx.attr_nodes_complete && !ran_auto_mode;
  FillStreamResult(plan, graph_order, count, dynamic, opts, dyn, est,
                   attr_nodes_valid ? &ctx.attr_nodes : nullptr);
  pctx.stats.Set(kName, "logical_streams", count);
  pctx.log.Record(kName, "LogicalStreamsAssigned", "",
                  Field("mode", StreamModeName(plan.streams.mode)), Field("streams", count));
  if (pctx.instrumentation.verify_each) {
    NPUPLAN_RETURN_IF_ERROR(VerifyStreamIdsContinuous(m));
  }
  return true;
}

}  // namespace npuplan
