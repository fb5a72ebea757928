#include "npuplan/report/plan_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "npuplan/events/resource_use.h"
#include "npuplan/report/html_writer.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::report {
namespace {

bool InPool(const TensorPlacement& t) {
  return t.region == "activation" || t.region == "workspace";
}

struct PoolBuffer {
  std::string name;
  int64_t offset = 0, size = 0, lower = 0, upper = 0;
  std::vector<std::string> members;
};

// Pool buffers keyed by their buffer name (aliases share one), in name order.
std::map<std::string, PoolBuffer> PoolBuffers(const Plan& plan) {
  std::map<std::string, PoolBuffer> out;
  const MemoryResult& mem = plan.memory;
  for (const TensorPlacement& t : mem.tensors) {
    if (!InPool(t)) continue;
    std::string member = t.node.valid() && t.node.index() < plan.model.num_nodes()
                             ? StrCat(plan.model.node(t.node).name,
                                      t.output < 0 ? std::string(":ws") : StrCat(":", t.output))
                             : StrCat("#", t.output);
    const std::string key = t.buffer.empty() ? member : t.buffer;
    auto [it, fresh] = out.try_emplace(key);
    PoolBuffer& b = it->second;
    if (fresh) {
      b.name = key;
      b.offset = t.offset;
      b.size = t.size;
      b.lower = t.first_use;
      b.upper = t.last_use;
    } else {
      b.size = std::max(b.size, t.size);
      b.lower = std::min(b.lower, t.first_use);
      b.upper = std::max(b.upper, t.last_use);
    }
    b.members.push_back(std::move(member));
  }
  return out;
}

std::string SyncLabel(const sim::SimResult& r, int32_t sync) {
  if (sync < 0 || sync >= static_cast<int32_t>(r.program.syncs.size())) return "sync";
  const sim::SyncObject& s = r.program.syncs[sync];
  switch (s.kind) {
    case sim::SyncObject::Kind::kEvent:
      return StrCat("e", s.id);
    case sim::SyncObject::Kind::kNotify:
      return StrCat("n", s.id);
    case sim::SyncObject::Kind::kActivation:
      return StrCat("activation a", s.id);
  }
  return "sync";
}

std::string NodeName(const Plan& plan, NodeId n) {
  if (!n.valid() || n.index() >= plan.model.num_nodes()) return "?";
  return plan.model.node(n).name;
}

std::string SummarySection(const Plan& plan, const sim::SimResult& r, const PlanReportOptions& o) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"graph", plan.model.name()});
  if (!o.source.empty()) rows.push_back({"plan file", o.source});
  rows.push_back(
      {"nodes / graphs", StrCat(plan.model.num_nodes(), " / ", plan.model.num_graphs())});
  rows.push_back({"stream mode", plan.streams.mode.empty() ? "-" : plan.streams.mode});
  if (!plan.streams.auto_mode.empty())
    rows.push_back({"auto multi-stream mode", plan.streams.auto_mode});
  rows.push_back({"streams (logical / physical / attached)",
                  StrCat(plan.streams.logical, " / ", plan.streams.physical, " / ",
                         plan.streams.attached.size())});
  rows.push_back(
      {"events / notifies", StrCat(plan.events.event_count, " / ", plan.events.notify_count)});
  if (!plan.events.counts.empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : plan.events.counts) parts.push_back(StrCat(k, " ", v));
    rows.push_back({"event counts by optimisation", StrJoin(parts, ", ")});
  }
  if (plan.memory.planned) {
    rows.push_back({"memory peak / lower bound",
                    StrCat(Bytes(plan.memory.peak), " / ", Bytes(plan.memory.lower_bound),
                           plan.memory.optimal ? " (optimal)" : "")});
  }
  rows.push_back({"simulated makespan", StrCat(Num(r.makespan), " µs")});
  rows.push_back(
      {"lower bound (max(critical path, work / streams))", StrCat(Num(r.lower_bound), " µs")});
  rows.push_back({"critical path / total work",
                  StrCat(Num(r.critical_path_us), " µs / ", Num(r.total_work), " µs")});
  rows.push_back({"tasks simulated", StrCat(r.program.num_tasks)});
  return StrCat("<h2 id=\"summary-heading\">Summary</h2>\n",
                Table({"what", "value"}, rows, "summary"));
}

// Device resources against the device limits (issue 23): streams, event ids
// with the sync edges behind them and the proved lower bound, notifies, memory.
std::string ResourcesSection(const Plan& plan) {
  const events::ResourceUse u = events::PlanResourceUse(plan, CompileOptions());
  auto share = [](int64_t used, int64_t limit) {
    return limit > 0
               ? StrCat(Num(100.0 * static_cast<double>(used) / static_cast<double>(limit)), " %")
               : "-";
  };
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"device streams", StrCat(u.streams), StrCat(u.stream_budget),
                  share(u.streams, u.stream_budget), "-"});
  rows.push_back({"event ids", StrCat(u.event_ids), StrCat(u.event_budget),
                  share(u.event_ids, u.event_budget),
                  StrCat(u.event_lower_bound, " (", u.event_edges, " sync edges",
                         u.event_exact ? "; minimum reached" : "", ")")});
  rows.push_back({"notify ids", StrCat(u.notify_ids), StrCat(u.notify_budget),
                  share(u.notify_ids, u.notify_budget),
                  StrCat(u.notify_lower_bound, " (", u.notify_edges, " sync edges)")});
  if (plan.memory.planned) {
    rows.push_back(
        {"activation memory", Bytes(u.memory_peak), "-", "-", Bytes(u.memory_lower_bound)});
  }
  return StrCat("<h2 id=\"resources-heading\">Device resources</h2>\n",
                "<p class=\"note\">Against the device limits (npuplan.device.*); a budget given at "
                "compile time "
                "(npuplan.maxStreams, maxEventIds, maxNotifyIds) is what the plan was fitted into. "
                "Several device "
                "event ids serve more sync edges when their lifetimes never overlap.</p>\n",
                Table({"resource", "used", "limit", "share", "lower bound"}, rows, "resources"));
}

std::string TimelineSection(const Plan& plan, const sim::SimResult& r, const PlanReportOptions& o) {
  std::string out = "<h2 id=\"timeline-heading\">Stream timeline (simulated)</h2>\n";
  if (r.streams.empty())
    return out + "<p class=\"note\" id=\"timeline-empty\">No stream runs a task.</p>\n";
  const double left = 120, top = 24, lane_h = 22, gap = 6,
               width = std::max(200.0, o.timeline_width);
  const double n = static_cast<double>(r.streams.size());
  const double height = top + n * (lane_h + gap) + 10;
  const double span = r.makespan > 0 ? r.makespan : 1.0;
  const double scale = width / span;
  auto X = [&](double t) { return left + t * scale; };
  auto LaneY = [&](int32_t s) { return top + s * (lane_h + gap); };

  // Engines in name order → colours.
  std::set<std::string> engine_set;
  for (const sim::SimItem& it : r.items) {
    if (it.kind == sim::ProgramItem::Kind::kTask)
      engine_set.insert(plan.model.node(it.node).engine);
  }
  std::map<std::string, size_t> color;
  for (const std::string& e : engine_set) color.emplace(e, color.size());
  std::set<size_t> on_path;
  for (NodeId n : r.schedule_path) on_path.insert(n.index());

  Svg svg("timeline", left + width + 20, height, "stream timeline");
  svg.Raw(
      "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" "
      "markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" "
      "fill=\"#c03\"/></marker></defs>\n");
  for (double t : AxisTicks(span, 10)) {
    svg.Line(X(t), top - 4, X(t), height - 10, "grid");
    svg.Text(X(t), top - 8, StrCat(Num(t), " µs"), "tick", "middle");
  }
  for (size_t s = 0; s < r.streams.size(); ++s) {
    const sim::SimStreamStats& st = r.streams[s];
    svg.Rect(left, LaneY(s), width, lane_h, "",
             StrCat("stream ", st.plan_stream, ": ", st.tasks, " tasks, busy ", Num(st.busy_us),
                    " µs, utilisation ", Num(100 * st.utilisation, 1), "%"),
             "lane");
    svg.Text(4, LaneY(s) + lane_h * 0.7,
             StrCat("stream ", st.plan_stream, " (", Num(100 * st.utilisation, 0), "%)"),
             "lane-label");
  }
  size_t num_items = 0;  // tasks, records and drawn waits
  for (const sim::SimItem& it : r.items)
    num_items += it.kind != sim::ProgramItem::Kind::kWait || it.end > it.ready;
  const bool aggregated = num_items > o.max_timeline_items;
  if (aggregated) {
    // Too many items for one element each: per stream, the busy fraction of
    // each of kBuckets equal time buckets, as a bar whose height is that fraction.
    constexpr size_t kBuckets = 600;
    const double bucket_us = span / kBuckets;
    std::vector<std::vector<double>> busy(r.streams.size(), std::vector<double>(kBuckets, 0.0));
    std::vector<std::vector<int64_t>> starts(r.streams.size(), std::vector<int64_t>(kBuckets, 0));
    for (const sim::SimItem& it : r.items) {
      if (it.kind == sim::ProgramItem::Kind::kWait || it.end <= it.start) continue;
      const size_t first = std::min(kBuckets - 1, static_cast<size_t>(it.start / bucket_us));
      const size_t last = std::min(kBuckets - 1, static_cast<size_t>(it.end / bucket_us));
      if (it.kind == sim::ProgramItem::Kind::kTask) ++starts[it.stream][first];
      for (size_t b = first; b <= last; ++b) {
        busy[it.stream][b] += std::max(
            0.0, std::min(it.end, (b + 1) * bucket_us) - std::max(it.start, b * bucket_us));
      }
    }
    for (size_t st = 0; st < r.streams.size(); ++st) {
      for (size_t b = 0; b < kBuckets; ++b) {
        const double frac = std::min(1.0, busy[st][b] / bucket_us);
        if (frac <= 0) continue;
        const double h = std::max(1.0, frac * (lane_h - 4));
        svg.Rect(X(b * bucket_us), LaneY(st) + lane_h - 2 - h, std::max(0.5, bucket_us * scale), h,
                 "",
                 StrCat("stream ", r.streams[st].plan_stream, ", ", Num(b * bucket_us), "–",
                        Num((b + 1) * bucket_us), " µs: busy ", Num(100 * frac, 1), "%, ",
                        starts[st][b], " task(s) started"),
                 "bucket");
      }
    }
  }
  for (const sim::SimItem& it : r.items) {
    if (aggregated) break;
    const double y = LaneY(it.stream);
    const std::string node = NodeName(plan, it.node);
    switch (it.kind) {
      case sim::ProgramItem::Kind::kTask: {
        const Node& nd = plan.model.node(it.node);
        std::string title = StrCat(node, "\nengine: ", nd.engine, "\ntype: ", nd.type);
        if (it.attached >= 0) title += StrCat("\nattached stream slot ", it.attached);
        const double cost = it.node.index() < r.node_cost.size() ? r.node_cost[it.node.index()] : 0;
        title += StrCat("\ncost: ", Num(cost), " µs (on stream ", Num(it.end - it.start),
                        " µs)\nstart ", Num(it.start), " µs, end ", Num(it.end), " µs");
        const bool crit = on_path.count(it.node.index()) > 0 && it.attached < 0;
        if (crit) title += "\non the schedule path";
        svg.Rect(X(it.start), y + 2, std::max(0.5, (it.end - it.start) * scale), lane_h - 4,
                 PaletteColor(color[nd.engine]), title, crit ? "task crit" : "task");
        break;
      }
      case sim::ProgramItem::Kind::kRecord:
        svg.Rect(X(it.start), y + lane_h - 6, std::max(1.0, (it.end - it.start) * scale), 5, "",
                 StrCat("record ", SyncLabel(r, it.sync), " after ", node, "\nat ", Num(it.start),
                        " µs"),
                 "record");
        break;
      case sim::ProgramItem::Kind::kWait:
        if (it.end > it.ready + 1e-9) {
          svg.Rect(X(it.ready), y + 1, std::max(0.5, (it.end - it.ready) * scale), 5, "",
                   StrCat("wait ", SyncLabel(r, it.sync), " before ", node, "\nblocked ",
                          Num(it.end - it.ready), " µs (", Num(it.ready), "–", Num(it.end), ")"),
                   "wait");
        }
        break;
    }
  }
  // Event arrows last, so they are drawn on top.
  for (const sim::SimItem& it : r.items) {
    if (aggregated) break;
    if (it.kind != sim::ProgramItem::Kind::kWait || it.bound < 0 ||
        it.bound >= static_cast<int32_t>(r.items.size())) {
      continue;
    }
    const sim::SimItem& rec = r.items[it.bound];
    svg.Line(X(rec.end), LaneY(rec.stream) + lane_h / 2, X(it.end), LaneY(it.stream) + lane_h / 2,
             "event",
             StrCat(SyncLabel(r, it.sync), ": ", NodeName(plan, rec.node), " (stream ",
                    r.streams[rec.stream].plan_stream, ") → ", NodeName(plan, it.node), " (stream ",
                    r.streams[it.stream].plan_stream, ")"));
  }
  out += svg.Finish();
  if (aggregated) {
    out += StrCat("<p class=\"note\" id=\"timeline-aggregated\">", num_items,
                  " tasks, records and waits exceed the "
                  "limit of ",
                  o.max_timeline_items,
                  " drawn one by one (--max-items): each stream shows its busy "
                  "fraction per ",
                  Num(span / 600),
                  " µs bucket, and events are not drawn. <code>npuplan simulate "
                  "--trace</code> writes every item for a trace viewer.</p>\n");
    return out;
  }
  out += "<p class=\"legend\">";
  for (const auto& [e, i] : color) {
    out += StrCat("<span><span class=\"swatch\" style=\"background:", PaletteColor(i), "\"></span>",
                  HtmlEscape(e), "</span>");
  }
  out +=
      "<span><span class=\"swatch\" style=\"background:#222\"></span>record</span>"
      "<span><span class=\"swatch\" style=\"background:#bbb\"></span>blocked wait</span>"
      "<span><span class=\"swatch\" style=\"border:2px solid #d00\"></span>schedule path</span>"
      "<span>red arrow: event from record to the wait it released</span></p>\n";
  if (!r.program.skipped.empty()) {
    out += StrCat("<p class=\"note\">", r.program.skipped.size(),
                  " event(s) not simulated (loop-carried or sender after receiver).</p>\n");
  }
  return out;
}

std::string UtilisationSection(const sim::SimResult& r) {
  std::string out = "<h2 id=\"utilisation-heading\">Per-stream utilisation</h2>\n";
  if (r.streams.empty()) return out + "<p class=\"note\">No streams.</p>\n";
  const double left = 120, bar_h = 16, gap = 4, width = 400;
  Svg svg("utilisation", left + width + 80, r.streams.size() * (bar_h + gap) + gap,
          "utilisation per stream");
  std::vector<std::vector<std::string>> rows;
  for (size_t s = 0; s < r.streams.size(); ++s) {
    const sim::SimStreamStats& st = r.streams[s];
    const double y = gap + s * (bar_h + gap);
    svg.Text(4, y + bar_h * 0.75, StrCat("stream ", st.plan_stream));
    svg.Rect(left, y, width, bar_h, "", "", "lane");
    svg.Rect(left, y, std::max(0.0, st.utilisation) * width, bar_h, "",
             StrCat("stream ", st.plan_stream, ": ", Num(100 * st.utilisation, 1), "%"), "util");
    svg.Text(left + width + 6, y + bar_h * 0.75, StrCat(Num(100 * st.utilisation, 1), "%"));
    rows.push_back({StrCat(st.plan_stream), StrCat(st.tasks), Num(st.busy_us),
                    StrCat(Num(100 * st.utilisation, 1), "%")});
  }
  out += svg.Finish();
  out += Table({"stream", "tasks", "busy (µs)", "utilisation"}, rows, "utilisation");
  return out;
}

std::string PartitionSection(const Plan& plan) {
  std::string out = "<h2 id=\"partition-heading\">Partition (static / dynamic subgraphs)</h2>\n";
  const PartitionResult& p = plan.partition;
  if (!p.ran)
    return out +
           "<p class=\"note\" id=\"partition-none\">The partition stage did not run for this "
           "plan.</p>\n";
  out += StrCat("<p id=\"partition-decision\">Decision: <b>", HtmlEscape(p.decision), "</b> — ",
                HtmlEscape(p.reason), "</p>\n");
  if (!p.cluster_counts.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [k, v] : p.cluster_counts) rows.push_back({k, StrCat(v)});
    out += Table({"cluster type", "count"}, rows);
  }
  if (!p.subgraphs.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const PartitionSubgraph& s : p.subgraphs) {
      const std::string kind = s.kind == "known"     ? "static (known)"
                               : s.kind == "unknown" ? "dynamic (unknown)"
                                                     : s.kind;
      rows.push_back({s.name, kind, s.call_node, StrCat(s.nodes.size()), StrJoin(s.reasons, "; ")});
    }
    out += Table({"subgraph", "kind", "call node", "nodes", "why dynamic"}, rows, "partition");
  }
  if (!p.unknown_nodes.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [n, why] : p.unknown_nodes) rows.push_back({n, why});
    out += StrCat("<details><summary>", p.unknown_nodes.size(),
                  " node(s) with unknown shapes, and why</summary>\n", Table({"node", "why"}, rows),
                  "</details>\n");
  }
  if (!p.no_tiling_nodes.empty()) {
    out += StrCat("<p class=\"note\">Dynamic-shape nodes kept static (no-tiling): ",
                  HtmlEscape(StrJoin(p.no_tiling_nodes, ", ")), "</p>\n");
  }
  return out;
}

std::string MemorySection(const Plan& plan, const PlanReportOptions& o) {
  std::string out = "<h2 id=\"memory-heading\">Device memory over time</h2>\n";
  const MemoryResult& mem = plan.memory;
  if (!mem.planned)
    return out +
           "<p class=\"note\" id=\"memory-none\">The memory stage did not run for this plan.</p>\n";
  const std::map<std::string, PoolBuffer> buffers = PoolBuffers(plan);
  const std::vector<int64_t> live = LiveActivationBytes(mem);
  const int64_t max_live = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
  const double steps = std::max<double>(1.0, static_cast<double>(live.size()));
  const double left = 90, top = 16, width = 1000, plot_h = 280, height = top + plot_h + 36;
  const double ymax =
      static_cast<double>(std::max<int64_t>({mem.peak, max_live, mem.lower_bound, 1}));
  auto X = [&](double t) { return left + t / steps * width; };
  auto Y = [&](double bytes) { return top + plot_h - bytes / ymax * plot_h; };

  Svg svg("memory", left + width + 140, height, "activation memory over plan order");
  for (double b : AxisTicks(ymax, 6)) {
    svg.Line(left, Y(b), left + width, Y(b), "grid");
    const std::string label = Bytes(static_cast<int64_t>(b));
    svg.Text(left - 4, Y(b) + 4, label.substr(0, label.find(" (")), "tick", "end");
  }
  for (double t : AxisTicks(steps, 10))
    svg.Text(X(t), top + plot_h + 14, Num(t, 0), "tick", "middle");
  svg.Text(left + width / 2, top + plot_h + 30, "plan-order position", "axis-label", "middle");
  svg.Line(left, top + plot_h, left + width, top + plot_h, "axis");
  svg.Line(left, top, left, top + plot_h, "axis");
  const bool draw_buffers = buffers.size() <= o.max_memory_buffers;
  for (const auto& [name, b] : buffers) {
    if (!draw_buffers) break;
    if (b.upper <= b.lower || b.size <= 0) continue;
    svg.Rect(
        X(b.lower), Y(b.offset + b.size), std::max(0.5, X(b.upper) - X(b.lower)),
        std::max(0.5, Y(b.offset) - Y(b.offset + b.size)), "",
        StrCat("buffer ", name, " [", StrJoin(b.members, ", "), "]\noffset ", b.offset, ", size ",
               Bytes(b.size), "\nlive in plan order [", b.lower, ", ", b.upper, ")"),
        "tensor");
  }
  std::vector<double> xy;
  xy.reserve(4 * live.size());
  for (size_t t = 0; t < live.size(); ++t) {
    for (double v : {X(t), Y(live[t]), X(t + 1), Y(live[t])}) xy.push_back(v);
  }
  if (!xy.empty()) svg.Polyline(xy, "live", StrCat("live bytes (max ", Bytes(max_live), ")"));
  svg.Line(left, Y(mem.peak), left + width, Y(mem.peak), "peak", StrCat("peak ", Bytes(mem.peak)));
  svg.Text(left + width + 4, Y(mem.peak) + 4, "peak");
  svg.Line(left, Y(mem.lower_bound), left + width, Y(mem.lower_bound), "bound",
           StrCat("lower bound ", Bytes(mem.lower_bound)));
  svg.Text(left + width + 4, Y(mem.lower_bound) + (mem.lower_bound == mem.peak ? 16 : 4),
           "lower bound");
  out += svg.Finish();
  if (!draw_buffers) {
    out += StrCat("<p class=\"note\" id=\"memory-aggregated\">", buffers.size(),
                  " pool buffers exceed the limit of ", o.max_memory_buffers,
                  " drawn one by one (--max-items): only the live-bytes curve is drawn.</p>\n");
  }
  out +=
      "<p class=\"legend\"><span><span class=\"swatch\" style=\"background:#9ecae1\"></span>pool "
      "buffer "
      "(offset × lifetime)</span><span>black: live bytes</span><span "
      "style=\"color:#d62728\">dashed red: peak "
      "(pool size)</span><span style=\"color:#1f77b4\">dotted blue: lower bound</span></p>\n";
  std::vector<std::vector<std::string>> rows = {
      {"peak (activation pool)", Bytes(mem.peak)},
      {"lower bound (max live bytes)", Bytes(mem.lower_bound)},
      {"gap", mem.lower_bound > 0
                  ? StrCat(Num(100.0 * (mem.peak - mem.lower_bound) / mem.lower_bound, 1), "%")
                  : "-"},
      {"proven optimal", mem.optimal ? "yes" : "no"},
      {"pool buffers", StrCat(buffers.size())},
      {"dynamic (unplanned) tensors", StrCat(mem.dynamic_tensors.size())}};
  for (const auto& [region, bytes] : mem.region_bytes)
    rows.push_back({StrCat("region ", region), Bytes(bytes)});
  out += Table({"memory", "value"}, rows, "memory");
  return out;
}

}  // namespace

std::vector<int64_t> LiveActivationBytes(const MemoryResult& memory) {
  std::map<std::string, std::tuple<int64_t, int64_t, int64_t>> buffers;  // size, lower, upper
  int64_t end = 0;
  for (const TensorPlacement& t : memory.tensors) {
    if (!InPool(t)) continue;
    const std::string key = t.buffer.empty() ? StrCat(t.node.index(), ":", t.output) : t.buffer;
    auto [it, fresh] = buffers.try_emplace(key, t.size, t.first_use, t.last_use);
    if (!fresh) {
      auto& [size, lo, hi] = it->second;
      size = std::max(size, t.size);
      lo = std::min(lo, t.first_use);
      hi = std::max(hi, t.last_use);
    }
    end = std::max(end, t.last_use);
  }
  std::vector<int64_t> delta(static_cast<size_t>(std::max<int64_t>(end, 0)) + 1, 0);
  for (const auto& [key, b] : buffers) {
    const auto& [size, lo, hi] = b;
    if (hi <= lo || lo < 0) continue;
    delta[lo] += size;
    delta[hi] -= size;
  }
  std::vector<int64_t> live(static_cast<size_t>(std::max<int64_t>(end, 0)), 0);
  int64_t run = 0;
  for (size_t t = 0; t < live.size(); ++t) {
    run += delta[t];
    live[t] = run;
  }
  return live;
}

absl::Status CheckMemoryForReport(const Plan& plan) {
  // Lifetimes are plan-order positions; anything far beyond the node count is
  // a corrupted plan (and would make LiveActivationBytes allocate that much).
  const int64_t limit = 4 * static_cast<int64_t>(plan.model.num_nodes()) + 16;
  for (size_t i = 0; i < plan.memory.tensors.size(); ++i) {
    const TensorPlacement& t = plan.memory.tensors[i];
    if (t.first_use < 0 || t.last_use < t.first_use || t.last_use > limit || t.offset < 0 ||
        t.size < 0 || t.size > (int64_t{1} << 50) || t.offset > (int64_t{1} << 50)) {
      return absl::InvalidArgumentError(StrCat(
          "memory.tensors[", i, "]: lifetime [", t.first_use, ", ", t.last_use, "), offset ",
          t.offset, ", size ", t.size, " out of range (plan order 0..", limit, ", bytes 0..2^50)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PlanReportHtml(const Plan& plan, const PlanReportOptions& options) {
  if (plan.memory.planned) NPUPLAN_RETURN_IF_ERROR(CheckMemoryForReport(plan));
  NPUPLAN_ASSIGN_OR_RETURN(sim::SimResult r, sim::Simulate(plan, options.sim));
  const std::string title =
      options.title.empty() ? StrCat("npuplan report: ", plan.model.name()) : options.title;
  std::string body = StrCat("<h1>", HtmlEscape(title), "</h1>\n");
  body +=
      "<p class=\"note\">Generated by <code>npuplan report</code>. Hover over a task, event, "
      "buffer or bar for "
      "details. Times are simulated with the cost model (docs/execution.md), not measured.</p>\n";
  body += SummarySection(plan, r, options);
  body += ResourcesSection(plan);
  body += TimelineSection(plan, r, options);
  body += UtilisationSection(r);
  body += PartitionSection(plan);
  body += MemorySection(plan, options);
  return Page(title, body);
}

}  // namespace npuplan::report
