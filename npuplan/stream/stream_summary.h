// Stream allocation summary (SPEC S9; GE's GetStreamAllocationSummary):
// per logical stream its id, user stream label, attached stream ids, physical
// stream count (1 until the physical split runs), HCCL followed stream count
// and nodes; the lists GE's StreamAllocationSummary returns; and whether a
// custom stream pass assigned the streams.
//
// HCCL followed streams (GE's CollectStreamInfosFromKnownGraph): a node's
// `used_stream_num` attribute (int, the slave streams an HCCL operator drives,
// set by GE's HCCL kernel builder) counts when > 0. Per physical stream the
// smallest such value among its nodes is kept; a logical stream's count is
// the sum over its physical streams. Nodes without a stream and nodes of
// unknown-shape graphs do not count (GE's unknown-graph summary has no HCCL
// count).
#ifndef NPUPLAN_STREAM_STREAM_SUMMARY_H_
#define NPUPLAN_STREAM_STREAM_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/plan/plan.h"

namespace npuplan {

struct LogicalStreamInfo {
  int64_t id = 0;
  std::string user_stream_label;
  std::vector<int64_t> attached_stream_ids;
  int64_t physical_stream_num = 1;
  int64_t hccl_followed_stream_num = 0;
  std::vector<std::string> nodes;  // graph pre-order, topological within a graph
};

struct StreamAllocationSummary {
  std::vector<LogicalStreamInfo> logical_streams;     // GetAllLogicalStreamInfos
  std::vector<std::string> user_stream_labels;        // GetUsrStreamLabels (per logical stream)
  std::vector<int64_t> physical_stream_nums;          // GetPhysicalStreamNums (per logical stream)
  std::vector<int64_t> attached_stream_ids;           // GetAttachedStreamIds
  std::vector<int64_t> hccl_followed_stream_nums;     // GetHcclFollowedStreamNums (per logical stream)
  bool assigned_by_stream_pass = false;               // IsAssignedByStreamPass
  std::string mode;                                   // "multi", "single", …
};

// FailedPrecondition when the plan has no logical streams yet.
absl::StatusOr<StreamAllocationSummary> GetStreamAllocationSummary(const Plan& plan);
// HCCL followed stream count per logical stream id (0..plan.streams.logical-1),
// as above; the physical stream of a node is plan.physical_stream when set.
std::vector<int64_t> HcclFollowedStreamCounts(const Plan& plan);
// The same over `graphs` (the model's GraphsPreOrder(), when the caller has it).
std::vector<int64_t> HcclFollowedStreamCounts(const Plan& plan, const std::vector<GraphId>& graphs);
// The same read from `candidates` alone: every node with attributes of the
// graphs counted (a node without counts nothing).
std::vector<int64_t> HcclFollowedStreamCountsOf(const Plan& plan,
                                                const std::vector<NodeId>& candidates);
inline constexpr char kAttrUsedStreamNum[] = "used_stream_num";
// Human-readable text, one block per logical stream.
std::string StreamSummaryToText(const StreamAllocationSummary& summary);
// Deterministic JSON (sorted keys).
std::string StreamSummaryToJson(const StreamAllocationSummary& summary);

}  // namespace npuplan

#endif  // NPUPLAN_STREAM_STREAM_SUMMARY_H_
