#include "npuplan/report/plan_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "npuplan/events/resource_use.h"
#include "npuplan/report/html_writer.h"
#include "npuplan/report/report_data.h"
#include "npuplan/report/report_script.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::report {
namespace {

bool InPool(const TensorPlacement& t) { return IsPoolRegion(t.region); }

std::string SummarySection(const Plan& plan, const sim::SimResult& r, const PlanReportOptions& o) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"graph", plan.model.name()});
  if (!o.source.empty()) rows.push_back({"plan file", o.source});
  rows.push_back(
      {"nodes / graphs", StrCat(plan.model.num_nodes(), " / ", plan.model.num_graphs())});
  rows.push_back({"stream mode", plan.streams.mode == StreamMode::kNone
                                     ? "-"
                                     : std::string(StreamModeName(plan.streams.mode))});
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
  const std::vector<std::string> cf = sim::DescribeControlFlow(plan, r.program.control_flow, 5);
  if (!cf.empty()) rows.push_back({"control flow", StrJoin(cf, "\n")});
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
                "compile time (npuplan.maxStreams, maxEventIds, maxNotifyIds) is what the plan was "
                "fitted into. Several device event ids serve more sync edges when their lifetimes "
                "never overlap.</p>\n",
                Table({"resource", "used", "limit", "share", "lower bound"}, rows, "resources"));
}

std::string TimelineSection(const Plan& plan, const sim::SimResult& r, const nlohmann::json& data) {
  std::string out = "<h2 id=\"timeline-heading\">Stream timeline (simulated)</h2>\n";
  if (r.streams.empty()) return out + "<p class=\"note\" id=\"timeline-empty\">No stream runs a task.</p>\n";
  out += R"html(<div id="timeline" class="chart" data-state="loading">
<div class="bar"><input id="tl-search" type="search" placeholder="find a node by name" aria-label="find a node by name" autocomplete="off">
<span id="tl-found" class="note"></span>
<label>colour by <select id="tl-colour"><option value="engine">engine</option><option value="graph">subgraph</option><option value="logical">logical stream</option></select></label>
<label><input type="checkbox" id="tl-events" checked> event arrows</label>
<label><input type="checkbox" id="tl-crit" checked> critical path</label>
<label><input type="checkbox" id="tl-phys"> one lane per physical stream</label>
<label><input type="checkbox" id="tl-idle"> idle streams</label>
<button id="tl-fit" type="button">fit</button><button id="tl-in" type="button">zoom in</button><button id="tl-out" type="button">zoom out</button>
<span id="tl-window" class="note"></span></div>
<ul id="tl-results" hidden></ul>
<canvas id="tl-mini" aria-label="overview of the whole run"></canvas>
<canvas id="tl-main" aria-label="stream timeline"></canvas>
<div id="tl-tip" class="tip" hidden></div>
<p class="legend" id="tl-legend"></p>
<p class="note" id="tl-hidden"></p>
</div>
<noscript><p class="note">The timeline is drawn by the page's inline script; enable JavaScript to see it.</p></noscript>
)html";
  out += StrCat(
      "<p class=\"note\">Wheel: zoom at the pointer (sideways: pan); drag: pan; double-click: zoom in; drag in the "
      "overview to move. Lanes are grouped under their logical stream; the pieces of a stream the physical split "
      "cut share one lane unless \"one lane per physical stream\" is ticked. Narrow tasks are drawn as a column "
      "per pixel whose height is how busy the stream was there. Red arrows run from a record to the wait it "
      "released (drawn for the visible window; above 150 they are bundled per lane pair, the number says how "
      "many). A red bar marks the ",
      r.critical_path.size(), " tasks on the critical path (the longest dependency chain, ", Num(r.critical_path_us),
      " µs).</p>\n");
  if (data.contains("buckets")) {
    out += StrCat("<p class=\"note\" id=\"timeline-aggregated\">", data["items"].get<int64_t>(),
                  " tasks, records and waits exceed the limit of ", data["maxItems"].get<int64_t>(),
                  " drawn one by one (--max-items): each stream shows its busy percentage per time bucket, "
                  "without events or search. <code>npuplan simulate --trace</code> writes every item.</p>\n");
  }
  if (!r.program.skipped.empty()) {
    out += StrCat("<p class=\"note\">Events not simulated: ", HtmlEscape(sim::SkippedSummary(r.program)), ".</p>\n");
  }
  (void)plan;
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
  const std::string table = Table({"stream", "tasks", "busy (µs)", "utilisation"}, rows, "utilisation");
  // Many streams: the numbers folded away under the bars.
  out += r.streams.size() > 12 ? StrCat("<details><summary>the numbers of ", r.streams.size(),
                                        " streams</summary>\n", table, "</details>\n")
                               : table;
  return out;
}

std::string PartitionSection(const Plan& plan) {
  std::string out = "<h2 id=\"partition-heading\">Partition (static / dynamic subgraphs)</h2>\n";
  const PartitionResult& p = plan.partition;
  if (!p.ran)
    return out +
           "<p class=\"note\" id=\"partition-none\">The partition stage did not run for this "
           "plan.</p>\n";
  out += StrCat("<p id=\"partition-decision\">Decision: <b>",
                HtmlEscape(PartitionDecisionName(p.decision)), "</b> — ", HtmlEscape(p.reason),
                "</p>\n");
  if (!p.cluster_counts.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [k, v] : p.cluster_counts) rows.push_back({k, StrCat(v)});
    out += Table({"cluster type", "count"}, rows);
  }
  if (!p.subgraphs.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const PartitionSubgraph& s : p.subgraphs) {
      const std::string kind = s.kind == SubgraphKind::kKnown ? "static (known)"
                               : s.kind == SubgraphKind::kUnknown
                                   ? "dynamic (unknown)"
                                   : std::string(SubgraphKindName(s.kind));
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

std::string MemorySection(const Plan& plan, const nlohmann::json& data) {
  std::string out = "<h2 id=\"memory-heading\">Device memory</h2>\n";
  const MemoryResult& mem = plan.memory;
  if (!mem.planned) {
    return out + "<p class=\"note\" id=\"memory-none\">The memory stage did not run for this plan.</p>\n";
  }
  out += R"html(<div id="memory" class="chart" data-state="loading"><canvas id="mem-main" aria-label="activation pool over plan order"></canvas><div id="mem-tip" class="tip" hidden></div></div>
)html";
  const nlohmann::json& pool = data["pool"];
  out += StrCat(
      "<p class=\"note\">The activation pool as the memory plan lays it out: each buffer (aliases once) at its "
      "offset (y) over its lifetime in plan order (x), over the positions where at least 1 % of the most live "
      "bytes are live (buffers live at all between positions ",
      pool["x0"].get<int64_t>(), " and ", pool["x1"].get<int64_t>(),
      "). Black: live bytes; dashed red: the peak (pool size); dotted blue: the lower bound. Constants, weights and "
      "inputs live in their own regions for the whole run: the band below the chart. The timeline's "
      "\"memory in use\" lane shows the same buffers over simulated time.</p>\n");
  if (!pool.contains("b")) {
    out += StrCat("<p class=\"note\" id=\"memory-aggregated\">", pool["buffers"].get<int64_t>(),
                  " pool buffers exceed the limit drawn one by one (--max-items): only the live-bytes curve is "
                  "drawn.</p>\n");
  }
  std::vector<std::vector<std::string>> rows = {
      {"peak (activation pool)", Bytes(mem.peak)},
      {"lower bound (max live bytes)", Bytes(mem.lower_bound)},
      {"gap", mem.lower_bound > 0 ? StrCat(Num(100.0 * (mem.peak - mem.lower_bound) / mem.lower_bound, 1), "%") : "-"},
      {"proven optimal", mem.optimal ? "yes" : "no"},
      {"pool buffers", StrCat(pool["buffers"].get<int64_t>())},
      {"dynamic (unplanned) tensors", StrCat(mem.dynamic_tensors.size())}};
  if (data.contains("memt")) {
    rows.push_back({"most pool memory in use at once (simulated time)", Bytes(data["memt"]["max"].get<int64_t>())});
  }
  for (const auto& [region, bytes] : mem.region_bytes) rows.push_back({StrCat("region ", region), Bytes(bytes)});
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
  if (options.on_stage) options.on_stage("simulating");
  NPUPLAN_ASSIGN_OR_RETURN(sim::SimResult r, sim::Simulate(plan, options.sim));
  if (options.on_stage) options.on_stage("laying out");
  const nlohmann::json data =
      PlanReportData(plan, r, {options.max_timeline_items, options.max_memory_buffers});
  const std::string title =
      options.title.empty() ? StrCat("npuplan report: ", plan.model.name()) : options.title;
  std::string body = StrCat("<h1>", HtmlEscape(title), "</h1>\n");
  body +=
      "<p class=\"note\">Generated by <code>npuplan report</code>. Hover over a task, buffer or bar for "
      "details. Times are simulated with the cost model (docs/execution.md), not measured.</p>\n";
  body += SummarySection(plan, r, options);
  body += ResourcesSection(plan);
  body += TimelineSection(plan, r, data);
  body += UtilisationSection(r);
  body += PartitionSection(plan);
  body += MemorySection(plan, data);
  body += StrCat("<script type=\"application/json\" id=\"report-data\">", ScriptSafeJson(data), "</script>\n");
  return Page(title, body, ReportScript());
}

}  // namespace npuplan::report
