#include "npuplan/stream/stream_summary.h"

#include <map>
#include <nlohmann/json.hpp>

#include "npuplan/ir/node_prefetch.h"
#include "npuplan/stream/logical_stream_assignment.h"
#include "npuplan/support/str_util.h"

namespace npuplan {

std::vector<int64_t> HcclFollowedStreamCounts(const Plan& plan) {
  return HcclFollowedStreamCounts(plan, plan.model.GraphsPreOrder());
}

namespace {

// One node's share of HcclFollowedStreamCounts.
void NoteHcclFollowed(const Plan& plan, NodeId id, std::map<int64_t, int64_t>& min_per_physical) {
  const Node& n = plan.model.node(id);
  if (n.stream_id < 0 || n.attrs.empty()) return;
  const int64_t used = GetIntAttr(n.attrs, kAttrUsedStreamNum).value_or(0);
  if (used <= 0) return;
  int64_t physical = n.stream_id;
  if (id.index() < plan.physical_stream.size() && plan.physical_stream[id.index()] >= 0) {
    physical = plan.physical_stream[id.index()];
  }
  auto [it, inserted] = min_per_physical.emplace(physical, used);
  if (!inserted) it->second = std::min(it->second, used);
}

std::vector<int64_t> HcclCounts(const Plan& plan,
                                const std::map<int64_t, int64_t>& min_per_physical) {
  const StreamResult& sr = plan.streams;
  std::vector<int64_t> counts(std::max<int64_t>(sr.logical, 0), 0);
  for (const auto& [physical, used] : min_per_physical) {
    int64_t logical = physical;
    if (auto it = sr.split_to_logical.find(physical); it != sr.split_to_logical.end())
      logical = it->second;
    if (logical >= 0 && logical < static_cast<int64_t>(counts.size())) counts[logical] += used;
  }
  return counts;
}

}  // namespace

std::vector<int64_t> HcclFollowedStreamCounts(const Plan& plan,
                                              const std::vector<GraphId>& graphs) {
  const Model& m = plan.model;
  std::map<int64_t, int64_t> min_per_physical;
  const std::vector<bool> unknown_graphs = stream::UnknownShapeGraphs(plan);
  for (GraphId g : graphs) {
    if (unknown_graphs[g.index()]) continue;
    // One or two cache misses per node struct: fetched ahead.
    const std::vector<NodeId>& nodes = m.graph(g).nodes;
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (k + kNodePrefetch < nodes.size()) {
        const Node& ahead = m.node(nodes[k + kNodePrefetch]);
        __builtin_prefetch(&ahead.stream_id);
        __builtin_prefetch(&ahead.attrs);
      }
      NoteHcclFollowed(plan, nodes[k], min_per_physical);
    }
  }
  return HcclCounts(plan, min_per_physical);
}

std::vector<int64_t> HcclFollowedStreamCountsOf(const Plan& plan,
                                                const std::vector<NodeId>& candidates) {
  std::map<int64_t, int64_t> min_per_physical;
  const std::vector<bool> unknown_graphs = stream::UnknownShapeGraphs(plan);
  for (NodeId id : candidates) {
    if (!unknown_graphs[plan.model.node(id).graph.index()])
      NoteHcclFollowed(plan, id, min_per_physical);
  }
  return HcclCounts(plan, min_per_physical);
}

absl::StatusOr<StreamAllocationSummary> GetStreamAllocationSummary(const Plan& plan) {
  if (!Has(plan.established, IrProperty::kLogicalStreams)) {
    return absl::FailedPreconditionError(
        "stream summary: the plan has no logical streams (run logical-stream-assignment)");
  }
  const Model& m = plan.model;
  const StreamResult& sr = plan.streams;
  StreamAllocationSummary s;
  s.assigned_by_stream_pass = sr.assigned_by_stream_pass;
  s.mode = std::string(StreamModeName(sr.mode));
  s.attached_stream_ids = sr.attached;
  s.logical_streams.resize(sr.logical);
  for (int64_t i = 0; i < sr.logical; ++i) {
    LogicalStreamInfo& info = s.logical_streams[i];
    info.id = i;
    if (i < static_cast<int64_t>(sr.streams.size())) {
      const LogicalStream& ls = sr.streams[i];
      info.user_stream_label = ls.user_label;
      info.attached_stream_ids = ls.attached_ids;
      info.physical_stream_num = ls.physical_count;
      info.hccl_followed_stream_num = ls.hccl_followed_count;
    }
  }
  // Recomputed from the nodes: the physical split may have run since.
  const std::vector<int64_t> hccl = HcclFollowedStreamCounts(plan);
  for (int64_t i = 0; i < sr.logical; ++i) s.logical_streams[i].hccl_followed_stream_num = hccl[i];
  if (!sr.split_to_logical.empty()) {
    // A logical stream keeps its own id as its first piece; the map lists the
    // extra pieces (and may list the first one too).
    for (auto& info : s.logical_streams) info.physical_stream_num = 1;
    for (const auto& [phys, logical] : sr.split_to_logical) {
      if (logical >= 0 && logical < sr.logical && phys != logical) {
        ++s.logical_streams[logical].physical_stream_num;
      }
    }
  }
  for (GraphId g : m.GraphsPreOrder()) {
    for (NodeId id : m.graph(g).nodes) {
      const Node& n = m.node(id);
      if (n.stream_id >= 0 && n.stream_id < sr.logical)
        s.logical_streams[n.stream_id].nodes.push_back(n.name);
    }
  }
  for (const auto& info : s.logical_streams) {
    s.user_stream_labels.push_back(info.user_stream_label);
    s.physical_stream_nums.push_back(info.physical_stream_num);
    s.hccl_followed_stream_nums.push_back(info.hccl_followed_stream_num);
  }
  return s;
}

std::string StreamSummaryToText(const StreamAllocationSummary& s) {
  int64_t physical = 0;
  for (int64_t p : s.physical_stream_nums) physical += p;
  std::string out = StrCat(
      "logical streams: ", s.logical_streams.size(), " (mode ", s.mode.empty() ? "?" : s.mode,
      "), physical streams: ", physical, ", attached streams: ", s.attached_stream_ids.size(),
      ", assigned by stream pass: ", s.assigned_by_stream_pass ? "yes" : "no", "\n");
  for (const LogicalStreamInfo& i : s.logical_streams) {
    out += StrCat("stream ", i.id, ": ", i.nodes.size(), " nodes, physical ", i.physical_stream_num,
                  ", hccl followed ", i.hccl_followed_stream_num);
    if (!i.user_stream_label.empty()) out += StrCat(", user label '", i.user_stream_label, "'");
    if (!i.attached_stream_ids.empty())
      out += StrCat(", attached [", StrJoin(i.attached_stream_ids, ", "), "]");
    out += "\n";
    if (!i.nodes.empty()) out += StrCat("  ", StrJoin(i.nodes, " "), "\n");
  }
  return out;
}

std::string StreamSummaryToJson(const StreamAllocationSummary& s) {
  nlohmann::json j = nlohmann::json::object();
  nlohmann::json list = nlohmann::json::array();
  for (const LogicalStreamInfo& i : s.logical_streams) {
    list.push_back({{"logical_stream_id", i.id},
                    {"user_stream_label", i.user_stream_label},
                    {"attached_stream_ids", i.attached_stream_ids},
                    {"physical_stream_num", i.physical_stream_num},
                    {"hccl_followed_stream_num", i.hccl_followed_stream_num},
                    {"nodes", i.nodes}});
  }
  j["logical_streams"] = std::move(list);
  j["user_stream_labels"] = s.user_stream_labels;
  j["physical_stream_nums"] = s.physical_stream_nums;
  j["attached_stream_ids"] = s.attached_stream_ids;
  j["hccl_followed_stream_nums"] = s.hccl_followed_stream_nums;
  j["assigned_by_stream_pass"] = s.assigned_by_stream_pass;
  j["mode"] = s.mode;
  return j.dump(1) + "\n";
}

}  // namespace npuplan
