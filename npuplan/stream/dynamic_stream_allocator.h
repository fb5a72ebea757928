// DynamicStreamAllocator (`dynamic-stream-allocator`, SPEC D1–D5; GE's
// DynamicStreamAllocator, ge-reference §3): logical streams for the root graph
// and every unknown-shape subgraph of a dynamic-shape model.
//
// D1: one stream unless ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1 (the option of
// that name, read from the environment by CompileOptions);
// ge.autoMultistreamParallelMode alone never enables multi-stream.
// D2, per unknown-shape graph, on its engine subgraphs (engine_partition.h):
//   1. AssignEnginesOwningStream: AIcoreEngine, VectorEngine, DNN_HCCL and
//      DSAEngine subgraphs get their engine's stream (one id per engine,
//      shared by all dynamic graphs);
//   2. ac_parallel_enable=1: AssignAicpuCanParallel (an AI CPU subgraph with
//      no input, only no-task inputs without inputs, or no reusable producer
//      gets the AI CPU engine stream); else AssignIndependentAicpuNode
//      (subgraphs holding DropOutGenMask, DropOutDoMaskV3, GetNext,
//      DynamicGetNext, DynamicGetNextV2 get it);
//   3. AssignWithReuse: producers first, then consumers; AI CPU never reuses
//      an independent (HCCL) peer; same engine, an `attach` engine, or a peer
//      that itself borrowed from our engine may reuse; the stream is taken
//      from the owner at the end of the `reused_subgraph` chain, if it has one;
//   4. AssignRemainSubgraphNeedAssignStream: the engine stream;
//   5. subgraph streams → nodes (skip-engine subgraphs: none);
//   6. ReassignStreamByStreamLabel: a labelled node → its label's stream
//      (shared across engines and graphs).
// D3/D4 Refresh: engines whose stream kept a node are ordered by
// (compute_cost, name) and get 0, 1, …; label streams follow in label order;
// Data-like, Variable-like, constants, ConstPlaceHolder, NetOutput,
// FileConstant, nodes owning subgraphs and nodes without a stream → 0.
// D5: a While's static body NetOutput stays on 0 (node-stream-update-pass puts
// it on the reserved main id, which Refresh maps to 0).
//
// The driver (logical_stream_assignment.cc) reserves the main id first, calls
// AssignGraph per unknown-shape graph in pre-order (ids from the shared
// AssignContext counter) and Refresh once; known-shape subgraphs keep GE's
// static chain on ids after the dynamic ones.
//
// Decision keywords: DynamicEngineStream (graph, subgraph, engine, stream,
// rule=owning/aicpu-parallel/independent-aicpu/reuse/remain),
// DynamicLabelStream (node, label, stream), DynamicForcedMainStream (node,
// reason), DynamicStreamsRefreshed (engines, labels, streams).
#ifndef NPUPLAN_STREAM_DYNAMIC_STREAM_ALLOCATOR_H_
#define NPUPLAN_STREAM_DYNAMIC_STREAM_ALLOCATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/stream/logical_stream_pass.h"

namespace npuplan::stream {

// Compilation-wide state of the dynamic allocator (GE: engine_streams_,
// stream_label_ids_; next_stream_ is AssignContext::next_stream).
struct DynamicStreamState {
  bool multi_stream = false;  // ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1
  bool ac_parallel = false;   // ac_parallel_enable=1
  int64_t main_stream = -1;   // reserved id of forced nodes (→ 0 by Refresh)
  std::map<std::string, int64_t> engine_streams;  // engine → id
  std::map<std::string, int64_t> label_streams;   // stream label → id
  std::vector<GraphId> graphs;                    // unknown-shape graphs, pre-order
};

class DynamicStreamAllocator {
 public:
  static constexpr std::string_view kName = "dynamic-stream-allocator";

  // The state the options start it in (D1; ReadStreamOptions checks
  // ac_parallel_enable: "", "0" or "1").
  static DynamicStreamState Init(const StreamOptions& options);

  // D2 steps 1–6 on one unknown-shape graph (its engine subgraphs in `gs`).
  // Multi-stream mode only; the single-stream case is the driver's.
  static absl::Status AssignGraph(GraphState& gs, AssignContext& ctx, DynamicStreamState& st);

  // D3/D4: the engine-priority refresh over all dynamic graphs. Returns the
  // old id → new id map for the dynamic ids (0..d-1); the caller renumbers
  // every other used id after them (RemapStreams).
  static std::map<int64_t, int64_t> Refresh(Model& model, AssignContext& ctx, const DynamicStreamState& st);

  // GE's forced-main-stream types (ge-reference §3) and subgraph owners.
  static bool IsForcedMainStreamNode(const Node& node);
};

// Renumbers every node's stream: ids in `first` map as given; every other used
// id follows in ascending order after the largest mapped id. Returns the count.
int64_t RemapStreams(Model& model, const std::map<int64_t, int64_t>& first);

}  // namespace npuplan::stream

#endif  // NPUPLAN_STREAM_DYNAMIC_STREAM_ALLOCATOR_H_
