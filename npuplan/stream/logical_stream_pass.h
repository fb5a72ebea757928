// Shared state of GE's logical stream passes (ge-reference §2.1–2.2).
//
// The driver (LogicalStreamAssignment) runs, for the root graph and then every
// subgraph in pre-order (GE's DoAssign), a chain of LogicalStreamPass objects
// over that graph's engine subgraphs. Each pass is one class, one file and one
// test; it logs its decisions under its own kebab-case name. The passes share
// one AssignContext per compilation (GE's Context: `next_stream` is global
// across root and subgraphs) and get a fresh GraphState per graph (GE
// recreates the pass objects, so label and engine maps are per graph).
//
// The chain is registered (stream/passes.def, NPUPLAN_STREAM_PASS): each
// LogicalStreamPass runs wrapped in a LogicalStreamChainPass inside a
// PassPipeline, so that --verify-each, --dump-after and the pipeline's
// checks apply after each sub-pass on each graph, as after every other pass.
#ifndef NPUPLAN_STREAM_LOGICAL_STREAM_PASS_H_
#define NPUPLAN_STREAM_LOGICAL_STREAM_PASS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/engine_table.h"
#include "npuplan/ir/graph.h"
#include "npuplan/pass/decision_log.h"
#include "npuplan/pass/options.h"
#include "npuplan/pass/pass.h"
#include "npuplan/pass/statistics.h"
#include "npuplan/stream/engine_partition.h"
#include "npuplan/stream/stream_options.h"

namespace npuplan::stream {

// Node attributes read by the passes (GE names).
inline constexpr char kAttrNewStreamId[] = "NewStreamId";
inline constexpr char kAttrParallelGroup[] = "_parallel_group";
inline constexpr char kAttrRtsLabelNode[] = "_rts_label_node";
inline constexpr char kAttrForceAttachStream[] = "_force_attach_stream";
inline constexpr char kAttrFusion[] = "fusion";
inline constexpr char kAttrIsUnknownShape[] = "_is_unknown_shape";

// GE's Subgraph record: an engine subgraph being assigned.
struct StreamSubgraph {
  const EngineSubgraph* info = nullptr;
  const EngineConfig* conf = nullptr;
  int64_t stream_id = -1;        // -1 = unassigned
  int64_t max_parallel_num = 1;  // from ge.streamMaxParallelNum (StreamOptions::max_parallel)
  int32_t reused_subgraph = -1;  // owner whose stream this one borrowed (chains collapsed)
  int32_t engine_id = 0;         // index of info->engine in GraphState::engines
  bool visited_by_reuse = false; // CouldReuse's force-attach "first time" flag
  bool force_attach = false;     // a member has `_force_attach_stream`
};

// Per-node facts the passes test, read once per graph (GraphState::node_flags,
// indexed by topo_id) instead of one attribute-map lookup per node per pass.
enum NodeFlag : uint8_t {
  kNodeLabelled = 1,        // HasStreamLabel(node)
  kNodeNewStreamId = 2,     // has `NewStreamId`
  kNodeParallelGroup = 4,   // has `_parallel_group`
  kNodeUserLabelAttr = 8,   // has `_user_stream_label` (any type or value; not on Data-like inputs)
  kNodeRtsLabel = 16,       // `_rts_label_node` is true
  kNodeForceAttach = 32,    // has `_force_attach_stream`
};

// Compilation-wide state (GE's LogicalStreamPass::Context minus default_stream).
struct AssignContext {
  AssignContext(Model& m, const CompileOptions& o, DecisionLog& l, Statistics& s)
      : model(m), options(o), log(l), stats(s) {}
  Model& model;
  const CompileOptions& options;
  DecisionLog& log;
  Statistics& stats;
  int64_t next_stream = 0;      // global id counter across root and subgraphs
  StreamOptions stream_options;  // the run's options, read once (ReadStreamOptions)
  // The nodes with attributes of the graphs assigned so far, in graph order
  // then node order (the engine partitions' attr_nodes); incomplete when a
  // graph was assigned without a partition.
  std::vector<NodeId> attr_nodes;
  bool attr_nodes_complete = true;
};

// Per-graph state (one DoAssign).
struct GraphState {
  GraphId graph;
  EnginePartition partition;
  BigVector<StreamSubgraph> subgraphs;    // parallel to partition.subgraphs
  int64_t default_stream = -1;            // parent node's stream for static function subgraphs
  bool owner_graph_unknown = false;       // the parent node's graph is unknown-shape
  GraphEdges edges;                       // the graph's edges as topo indices (preds and succs)
  BigVector<uint8_t> node_flags;          // NodeFlag bits, indexed by topo_id
  std::vector<std::string_view> engines;  // distinct engines of the subgraphs, first appearance order

  const Graph& g(const Model& m) const { return m.graph(graph); }
  // Engine subgraph of a node of this graph.
  const StreamSubgraph& SubgraphOf(const Node& n) const { return subgraphs[partition.subgraph_of[n.topo_id]]; }
};

// One object runs on every graph of a compilation: per-graph state lives in
// GraphState, never in the pass.
class LogicalStreamPass {
 public:
  virtual ~LogicalStreamPass() = default;
  virtual std::string_view name() const = 0;
  // Returns whether any stream changed; errors abort the assignment.
  virtual absl::StatusOr<bool> Run(GraphState& graph, AssignContext& ctx) = 0;
};

// The chains a registered sub-pass belongs to (stream/passes.def).
enum ChainMode : uint8_t { kSingleChain = 1, kMultiChain = 2, kBothChains = 3 };

// A LogicalStreamPass as a Pass of the registry: it runs on the graph that
// logical-stream-assignment bound it to (Bind), and fails with
// FailedPrecondition outside it. Errors read "[name] ... (graph 'g')".
class LogicalStreamChainPass final : public Pass {
 public:
  explicit LogicalStreamChainPass(std::unique_ptr<LogicalStreamPass> pass)
      : pass_(std::move(pass)) {}
  std::string_view name() const override { return pass_->name(); }
  IrProperties required() const override {
    return static_cast<IrProperties>(IrProperty::kTopoSorted);
  }
  // Sub-passes assign streams only (SPEC G5); none reorders.
  bool preserves_structure() const override { return true; }
  void Bind(GraphState* graph, AssignContext* ctx) {
    graph_ = graph;
    ctx_ = ctx;
  }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;

 private:
  std::unique_ptr<LogicalStreamPass> pass_;
  GraphState* graph_ = nullptr;
  AssignContext* ctx_ = nullptr;
};

// The registered sub-pass called `name` (stream/passes.def), or nullptr.
std::unique_ptr<LogicalStreamChainPass> MakeChainPass(std::string_view name);
// The registered chain for single- or multi-stream mode, in registry order.
std::unique_ptr<PassPipeline> DefaultChain(bool single_stream);
// Names of every registered sub-pass, in registry order.
std::vector<std::string_view> ChainPassNames();

// Forms the engine subgraphs of `g` into `gs` and attaches each one's engine
// configuration and max_parallel_num (GE's ConvertSubgraphs); fills the
// graph's edges and node flags. `gs` must not move afterwards (records point
// into its partition).
absl::Status InitGraphState(GraphState& gs, const Model& model, GraphId g, const AssignContext& ctx,
                            int64_t default_stream, bool owner_graph_unknown);

// Small shared helpers.
bool HasStreamLabel(const Node& node);  // `_stream_label` or `_user_stream_label` set and non-empty
// A string attribute, or "" when absent or of another type (no copy).
const std::string& StringAttrOrEmpty(const AttrMap& attrs, std::string_view key);
std::string AttrAsKey(const AttrValue& v);  // stable text of a scalar attribute
bool IsHcomNode(const Node& node, const EngineTable& table);  // engine independent or type Hcom*/Horovod*

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_LOGICAL_STREAM_PASS_H_
