// The execution plan: the model plus every stage's results that do not live
// on the nodes themselves. One struct per stage, each owned by the stage that
// fills it; all event bookkeeping lives in EventTable (SPEC E4).
//
// Node-level results live on ir::Node (stream_id, attached_stream_ids) and in
// the per-node vectors here (indexed by NodeId, resized by the stage).
#ifndef NPUPLAN_PLAN_PLAN_H_
#define NPUPLAN_PLAN_PLAN_H_

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/plan/plan_enums.h"
#include "npuplan/support/big_vector.h"

namespace npuplan {

// Dynamic/static partition (issue: partition).
struct PartitionSubgraph {
  std::string name;                  // subgraph name (<root>_sub_<id>_know|_unknow|_input)
  SubgraphKind kind = SubgraphKind::kKnown;
  std::string call_node;             // the PartitionedCall node in the root
  // Member nodes (ids in the plan's model), topological order. Ids, not
  // names: 4 bytes a member instead of a 32-byte string (1M members = 32 MB
  // of fresh heap). The plan JSON lists the names (NodeNames); its reader
  // resolves them back to ids.
  std::vector<NodeId> nodes;
  std::vector<std::string> reasons;  // why it is dynamic (unknown only)

  // The members' names, in `nodes` order, read from `model`.
  std::vector<std::string> NodeNames(const Model& model) const {
    std::vector<std::string> names;
    names.reserve(nodes.size());
    for (NodeId id : nodes) names.push_back(model.node(id).name);
    return names;
  }
};
struct PartitionResult {
  bool ran = false;
  PartitionDecision decision = PartitionDecision::kNone;
  std::string reason;    // why that decision
  std::vector<PartitionSubgraph> subgraphs;
  std::map<std::string, int64_t> cluster_counts;  // by cluster type
  // Marking (mark-unknown-shape-nodes): node name → why it is unknown, and
  // the dynamic-shape nodes that stay static because they run no-tiling.
  bool marked = false;
  std::map<std::string, std::string> unknown_nodes;
  std::vector<std::string> no_tiling_nodes;
  // Per graph (GraphId index): runs on the dynamic-shape path. Written by
  // dynamic-shape-partition, read through partition::UnknownShapeGraphs; in
  // memory only (the verifier recomputes it; not in the plan JSON).
  std::vector<bool> unknown_shape_graphs;
};

// Logical / physical streams (issues: streams, events).
struct LogicalStream {
  int64_t id = 0;
  std::string user_label;
  std::vector<int64_t> attached_ids;
  int64_t physical_count = 1;       // physical streams after the split
  int64_t hccl_followed_count = 0;  // HCCL followed streams
};
struct StreamResult {
  int64_t logical = 0;      // main logical streams (0..logical-1)
  int64_t physical = 0;     // physical streams after the split
  std::vector<int64_t> attached;  // attached stream ids (after the main ones)
  std::vector<int64_t> huge;      // physical ids that are huge streams
  std::map<int64_t, int64_t> split_to_logical;  // physical id → logical id (streams opened by the split only)
  // Physical ids of a node's attached streams when the split moved them
  // (NodeId index → one id per attached_stream_ids entry); absent = unchanged.
  std::map<int64_t, std::vector<int64_t>> attached_physical;
  int64_t task_limit = 0;       // per-stream task limit the split used (0 = unlimited depth, no split)
  int64_t huge_task_limit = 0;  // limit of the streams in `huge`
  std::vector<LogicalStream> streams;
  bool assigned_by_stream_pass = false;
  StreamMode mode = StreamMode::kNone;
  std::string auto_mode;            // ge.autoMultistreamParallelMode in effect ("" = none), e.g. "LoadBalance:4"
  int64_t estimated_makespan = 0;   // DAG / CriticalPath modes: cost-model makespan, summed over graphs (0 = not run)
  int64_t makespan_lower_bound = 0; // max(critical path, work / N), summed over graphs
};

// Synchronisation events and notifies (issue: events).
//
// SyncEvent is kept small (24 bytes): a 1M-node graph carries millions of
// them and every events pass walks the table. Kind and reason are enums; their
// names ("event", "data-edge", …) are produced by the plan writer and parsed
// back by the reader (SyncKindName / ParseSyncKind, SyncReasonName /
// ParseSyncReason), so the plan JSON is unchanged.
enum class SyncKind : uint8_t { kEvent, kNotify };  // order = table order (events first)
enum class SyncReason : uint8_t {
  kNone,           // "" (a plan file without a reason)
  kDataEdge,       // "data-edge"
  kControlEdge,    // "control-edge"
  kSubgraphEntry,  // "subgraph-entry"
  kSubgraphEnd,    // "subgraph-end"
  kSubgraphInput,  // "subgraph-input"
  kAttached,       // "attached"
  kAttachedEnd,    // "attached-end"
  kSplit,          // "split"
  kLoop,           // "loop"
  kLoopFork,  // "loop-fork": one run of a static loop's cond/body to the next (plan/loop_order.h)
  kLoopNext,  // "loop-next": the loop's last run to its first run of the next iteration
  kLoopJoin,  // "loop-join": a stream's last task of a host-run loop's run to where the host syncs
  kOwnerControl,  // "owner-control": a control input of an owner to its subgraph
                  // (ir/owner_control_inputs.h)
};
inline constexpr std::string_view kSyncKindNames[] = {"event", "notify"};
inline constexpr std::string_view kSyncReasonNames[] = {
    "",          "data-edge",    "control-edge", "subgraph-entry", "subgraph-end", "subgraph-input",
    "attached",  "attached-end", "split",        "loop",           "loop-fork",    "loop-next",
    "loop-join", "owner-control"};
static_assert(std::size(kSyncReasonNames) == static_cast<size_t>(SyncReason::kOwnerControl) + 1,
              "one name per SyncReason");
constexpr std::string_view SyncKindName(SyncKind k) { return kSyncKindNames[static_cast<size_t>(k)]; }
constexpr std::string_view SyncReasonName(SyncReason r) { return kSyncReasonNames[static_cast<size_t>(r)]; }
// nullopt for a name that is not in the table.
inline std::optional<SyncKind> ParseSyncKind(std::string_view name) {
  for (size_t i = 0; i < std::size(kSyncKindNames); ++i) {
    if (kSyncKindNames[i] == name) return static_cast<SyncKind>(i);
  }
  return std::nullopt;
}
inline std::optional<SyncReason> ParseSyncReason(std::string_view name) {
  for (size_t i = 0; i < std::size(kSyncReasonNames); ++i) {
    if (kSyncReasonNames[i] == name) return static_cast<SyncReason>(i);
  }
  return std::nullopt;
}

struct SyncEvent {
  int32_t id = 0;
  NodeId send;  // recording node
  NodeId recv;  // waiting node
  // Which stream of the node records / waits: -1 = its main stream, i >= 0 =
  // its i-th attached stream (Node::attached_stream_ids[i]).
  int32_t send_attached = -1;
  int32_t recv_attached = -1;
  SyncKind kind = SyncKind::kEvent;
  SyncReason reason = SyncReason::kNone;
};

// An event that orders a loop's next iteration, not the pass it is in: GE's
// FpBp loop event to a StreamSwitch ("loop"). One-pass orderings (the
// happens-before sweep, the events optimisation) leave it out. A static
// loop's "loop-next" events are ordinary forward events: into the tail gates,
// or into an attached-only stream's first slot from the head gate or a main
// slot before it (plan/loop_order.h, "Loop order").
constexpr bool OrdersNextIteration(const SyncEvent& e) { return e.reason == SyncReason::kLoop; }
static_assert(sizeof(SyncEvent) == 24, "SyncEvent is walked millions of times: keep it compact");
struct EventTable {
  // On whole 2 MiB transparent huge pages from 2 MiB (BigVector): a 1M-node
  // graph's table is tens of MB, and faulted in 4 KiB at a time even its
  // unaligned ends cost hundreds of page faults per insertion.
  BigVector<SyncEvent> events;
  int64_t event_count = 0;   // distinct event ids (after reuse)
  int64_t notify_count = 0;  // distinct notify ids
  std::map<std::string, int64_t> counts;  // "naive" / "ge" / "exact" counts when computed
};

// Device memory (issue: memory).
struct TensorPlacement {
  NodeId node;
  int32_t output = 0;  // output anchor, or -1 for the node's workspace
  MemoryRegion region = MemoryRegion::kActivation;
  int64_t offset = 0;
  int64_t size = 0;
  int64_t first_use = 0;  // lifetime in plan order (half-open upper bound)
  int64_t last_use = 0;
  std::string buffer;   // owner tensor ("node:i") of the logical buffer; aliases share it
  int64_t stream = -1;  // logical stream of the node (-1 = none)
};
struct MemoryResult {
  bool planned = false;
  int64_t alignment = 512;
  BigVector<TensorPlacement> tensors;  // ~1M at 1M nodes: from the huge-page cache
  std::map<std::string, int64_t> region_bytes;
  int64_t peak = 0;         // activation region size
  int64_t lower_bound = 0;  // max live bytes at one instant
  bool optimal = false;     // peak == lower_bound (proven optimal)
  std::vector<std::string> dynamic_tensors;  // unknown-size tensors, not planned ("node:i")
};

struct Plan {
  Model model;
  IrProperties established = 0;  // stages completed
  // The stage whose sub-passes are running (0 outside one): a --dump-after
  // snapshot taken between two sub-passes of logical-stream-assignment has
  // that stage's results on some nodes but cannot claim the stage yet. Its
  // content is then allowed without the claim, and the plan is never complete.
  IrProperties in_progress = 0;
  PartitionResult partition;
  StreamResult streams;
  EventTable events;
  MemoryResult memory;
  // Per-node results indexed by NodeId (resize with EnsureNodeVectors()).
  std::vector<int64_t> tasks;            // task count per node
  std::vector<int64_t> physical_stream;  // physical stream per node (-1 = none)

  void EnsureNodeVectors() {
    tasks.resize(model.num_nodes(), 0);
    physical_stream.resize(model.num_nodes(), -1);
  }
};

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_PLAN_H_
