#include "npuplan/sim/trace_views.h"

#include <algorithm>
#include <limits>
#include <map>

#include "npuplan/support/str_util.h"

namespace npuplan::sim {
namespace {

using Kind = ProgramItem::Kind;

// The logical stream of a (non-attached) physical stream, or -1.
int64_t LogicalOf(const Plan& plan, int64_t physical) {
  if (auto it = plan.streams.split_to_logical.find(physical); it != plan.streams.split_to_logical.end()) {
    return it->second;
  }
  return physical >= 0 && physical < plan.streams.logical ? physical : -1;
}

}  // namespace

std::vector<StreamInfo> DescribeStreams(const Plan& plan, const SimResult& result) {
  const size_t ns = result.streams.size();
  std::vector<StreamInfo> out(ns);
  // Attached: every task on the stream is an attached-stream task.
  std::vector<int> main_tasks(ns, 0), attached_tasks(ns, 0);
  std::vector<NodeId> first_attached(ns);
  for (const SimItem& it : result.items) {
    if (it.kind != Kind::kTask) continue;
    if (it.attached < 0) {
      ++main_tasks[it.stream];
    } else {
      if (attached_tasks[it.stream]++ == 0) first_attached[it.stream] = it.node;
    }
  }
  std::map<int64_t, std::vector<size_t>> pieces;  // logical → stream indices (ascending plan id)
  for (size_t s = 0; s < ns; ++s) {
    StreamInfo& info = out[s];
    info.plan_stream = result.streams[s].plan_stream;
    info.attached = main_tasks[s] == 0 && attached_tasks[s] > 0;
    if (info.attached) {
      info.logical = LogicalOf(plan, MainStreamOf(plan, first_attached[s]));
    } else {
      info.logical = LogicalOf(plan, info.plan_stream);
      if (info.logical >= 0) pieces[info.logical].push_back(s);
    }
    if (info.logical >= 0 && info.logical < static_cast<int64_t>(plan.streams.streams.size())) {
      info.label = plan.streams.streams[info.logical].user_label;
    }
  }
  for (const auto& [logical_id, list] : pieces) {
    // The piece that keeps the logical id first, then the others by id.
    // (A named copy: clang 14 cannot capture a structured binding.)
    const auto logical = logical_id;
    std::vector<size_t> order = list;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return (out[a].plan_stream != logical) < (out[b].plan_stream != logical);
    });
    for (size_t i = 0; i < order.size(); ++i) {
      out[order[i]].piece = static_cast<int32_t>(i);
      out[order[i]].pieces = static_cast<int32_t>(order.size());
    }
  }
  for (StreamInfo& info : out) {
    if (info.attached) {
      info.name = info.logical >= 0 ? StrCat("attached stream ", info.plan_stream, " (of logical ", info.logical, ")")
                                    : StrCat("attached stream ", info.plan_stream);
    } else if (info.pieces > 1 || (info.logical >= 0 && info.logical != info.plan_stream)) {
      info.name = StrCat("stream ", info.plan_stream, " (logical ", info.logical, ", piece ", info.piece + 1, " of ",
                         info.pieces, ")");
    } else {
      info.name = StrCat("stream ", info.plan_stream);
    }
  }
  return out;
}

MemoryInUse PoolMemoryInUse(const Plan& plan, const SimResult& result) {
  MemoryInUse out;
  const MemoryResult& mem = plan.memory;
  if (!mem.planned) return out;
  for (const char* region : {"constant", "input"}) {
    if (auto it = mem.region_bytes.find(region); it != mem.region_bytes.end()) out.constant_bytes += it->second;
  }
  const Model& m = plan.model;
  const size_t n = m.num_nodes();
  // Simulated span of every node's main tasks (all runs); NaN-free: -1 = none.
  constexpr double kNone = -1;
  std::vector<double> start(n, kNone), end(n, kNone);
  for (const SimItem& it : result.items) {
    if (it.kind != Kind::kTask || it.attached >= 0 || it.node.index() >= n) continue;
    double& s = start[it.node.index()];
    s = s == kNone ? it.start : std::min(s, it.start);
    end[it.node.index()] = std::max(end[it.node.index()], it.end);
  }
  // Per output anchor (flat: out_base[node] + index): when its last reader's
  // task ends, and whether the root NetOutput reads it (live to the end).
  std::vector<size_t> out_base(n + 1, 0);
  for (size_t i = 0; i < n; ++i) out_base[i + 1] = out_base[i] + m.nodes()[i].outputs.size();
  std::vector<double> last_read(out_base[n], kNone);
  std::vector<char> to_end(out_base[n], 0);
  for (size_t i = 0; i < n; ++i) {
    const Node& c = m.nodes()[i];
    const bool root_out = c.type == "NetOutput" && c.graph == kRootGraph;
    for (const OutputRef& in : c.inputs) {
      if (!in.node.valid() || in.node.index() >= n || in.index < 0) continue;
      const size_t slot = out_base[in.node.index()] + static_cast<size_t>(in.index);
      if (slot >= out_base[in.node.index() + 1]) continue;
      last_read[slot] = std::max(last_read[slot], end[i]);
      to_end[slot] |= root_out ? 1 : 0;
    }
  }
  std::map<std::string, BufferUse> buffers;
  for (const TensorPlacement& t : mem.tensors) {
    if (!IsPoolRegion(t.region) || !t.node.valid() || t.node.index() >= n) continue;
    const std::string key = t.buffer.empty() ? StrCat(m.node(t.node).name, ":", t.output) : t.buffer;
    auto [it, fresh] = buffers.try_emplace(key);
    BufferUse& b = it->second;
    if (fresh) {
      b.name = key;
      b.start = std::numeric_limits<double>::infinity();
      b.end = kNone;
    }
    b.size = std::max(b.size, t.size);
    if (start[t.node.index()] != kNone) {
      b.start = std::min(b.start, start[t.node.index()]);
      b.end = std::max(b.end, end[t.node.index()]);
    }
    const size_t slot = out_base[t.node.index()] + static_cast<size_t>(std::max(t.output, 0));
    if (t.output < 0 || slot >= out_base[t.node.index() + 1]) continue;
    b.end = std::max(b.end, last_read[slot]);
    if (to_end[slot]) b.end = std::max(b.end, result.makespan);
  }
  std::vector<std::pair<double, int64_t>> delta;
  for (auto& [key, b] : buffers) {
    if (b.start == std::numeric_limits<double>::infinity()) b.start = 0;  // no member ran a task: an input's alias
    if (b.end < b.start) b.end = b.start;
    out.buffers.push_back(b);
    if (b.end <= b.start || b.size <= 0) continue;
    delta.emplace_back(b.start, b.size);
    delta.emplace_back(b.end, -b.size);
  }
  std::sort(delta.begin(), delta.end());
  int64_t live = 0;
  for (size_t i = 0; i < delta.size();) {
    const double t = delta[i].first;
    for (; i < delta.size() && delta[i].first == t; ++i) live += delta[i].second;
    out.steps.emplace_back(t, live);
    out.max_bytes = std::max(out.max_bytes, live);
  }
  return out;
}

}  // namespace npuplan::sim
