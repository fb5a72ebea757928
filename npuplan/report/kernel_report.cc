#include "npuplan/report/kernel_report.h"

#include <algorithm>
#include <filesystem>

#include "nlohmann/json.hpp"
#include "npuplan/kernel/evaluator.h"
#include "npuplan/report/html_writer.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::report {

using kernel::KernelGraph;
using kernel::KernelSolution;
using kernel::NodeKind;

std::vector<CacheOccupancy> ComputeCacheOccupancy(const KernelGraph& graph,
                                                  const KernelSolution& solution,
                                                  const kernel::CacheConfig& config) {
  std::vector<CacheOccupancy> out(config.levels.size());
  for (size_t l = 0; l < config.levels.size(); ++l) {
    out[l].type = config.levels[l].name;
    out[l].capacity = config.levels[l].capacity;
  }
  std::vector<int64_t> resident(out.size(), 0), vstay(out.size(), 0);
  const int n = graph.num_nodes();
  for (size_t pos = 0; pos < solution.schedule.size(); ++pos) {
    const int id = solution.schedule[pos];
    if (id >= 0 && id < n) {
      const kernel::KernelNode& node = graph.nodes[id];
      if (node.kind != NodeKind::kOp && graph.HasBuffer(node.buf_id)) {
        const kernel::KernelBuffer& b = graph.buffer(node.buf_id);
        const int64_t d = node.kind == NodeKind::kAlloc ? b.size : -b.size;
        resident[b.level] += d;
        vstay[b.level] += d;
      }
    } else if (id >= n) {
      const size_t k = static_cast<size_t>(id - n) / 2;
      const bool is_out = (id - n) % 2 == 0;
      if (k < solution.spills.size() && graph.HasBuffer(solution.spills[k].buf_id)) {
        const kernel::KernelBuffer& b = graph.buffer(solution.spills[k].buf_id);
        resident[b.level] += is_out ? -b.size : b.size;
        out[b.level].spills.push_back({static_cast<int64_t>(pos), is_out, b.buf_id, b.size});
      }
    }
    for (size_t l = 0; l < out.size(); ++l) {
      out[l].resident.push_back(resident[l]);
      out[l].vstay.push_back(vstay[l]);
    }
  }
  return out;
}

bool LooksLikeKernelReport(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && !j.contains("format") && j.contains("case") && j.contains("max_vstay");
}

namespace {

std::string MetricValue(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object()) {
    std::vector<std::string> parts;
    for (auto it = v.begin(); it != v.end(); ++it)
      parts.push_back(StrCat(it.key(), " ", MetricValue(it.value())));
    return StrJoin(parts, ", ");
  }
  return v.dump();
}

// Step curve through (position, value) as polyline points, one point pair
// per change of value.
std::vector<double> Steps(const std::vector<int64_t>& v, double left, double width, double top,
                          double plot_h, double ymax, bool closed) {
  const double steps = std::max<double>(1.0, static_cast<double>(v.size()));
  auto X = [&](double t) { return left + t / steps * width; };
  auto Y = [&](double b) { return top + plot_h - b / ymax * plot_h; };
  std::vector<double> xy;
  auto point = [&xy](double x, double y) {
    xy.push_back(x);
    xy.push_back(y);
  };
  int64_t prev = 0;
  point(X(0), Y(0));
  for (size_t t = 0; t < v.size(); ++t) {
    if (v[t] != prev) {
      point(X(t), Y(prev));
      point(X(t), Y(v[t]));
      prev = v[t];
    }
  }
  point(X(v.size()), Y(prev));
  if (closed) point(X(v.size()), Y(0));
  return xy;
}

std::string CacheChart(const CacheOccupancy& c) {
  const int64_t max_res =
      c.resident.empty() ? 0 : *std::max_element(c.resident.begin(), c.resident.end());
  const int64_t max_vstay = c.vstay.empty() ? 0 : *std::max_element(c.vstay.begin(), c.vstay.end());
  const int spills_out = static_cast<int>(
      std::count_if(c.spills.begin(), c.spills.end(), [](auto& s) { return s.out; }));
  std::string out =
      StrCat("<h3>", HtmlEscape(c.type), "</h3>\n<p>capacity ", c.capacity, ", max resident ",
             max_res, ", max V_stay ", max_vstay, ", spills ", spills_out, "</p>\n");
  const double left = 70, top = 12, width = 1000, plot_h = 160, height = top + plot_h + 34;
  const double steps = std::max<double>(1.0, static_cast<double>(c.resident.size()));
  const double ymax = static_cast<double>(std::max<int64_t>({c.capacity, max_res, max_vstay, 1}));
  auto X = [&](double t) { return left + t / steps * width; };
  auto Y = [&](double b) { return top + plot_h - b / ymax * plot_h; };
  Svg svg(StrCat("cache-", c.type), left + width + 90, height, StrCat("occupancy of ", c.type));
  for (double b : AxisTicks(ymax, 5)) {
    svg.Line(left, Y(b), left + width, Y(b), "grid");
    svg.Text(left - 4, Y(b) + 4, Num(b, 0), "tick", "end");
  }
  for (double t : AxisTicks(steps, 10))
    svg.Text(X(t), top + plot_h + 14, Num(t, 0), "tick", "middle");
  svg.Text(left + width / 2, top + plot_h + 30, "schedule position", "axis-label", "middle");
  svg.Line(left, top + plot_h, left + width, top + plot_h, "axis");
  svg.Line(left, top, left, top + plot_h, "axis");
  svg.Polyline(Steps(c.resident, left, width, top, plot_h, ymax, true), "resident",
               StrCat(c.type, ": bytes resident (max ", max_res, ")"));
  svg.Polyline(Steps(c.vstay, left, width, top, plot_h, ymax, false), "vstay",
               StrCat(c.type, ": V_stay (max ", max_vstay, ")"));
  svg.Line(left, Y(c.capacity), left + width, Y(c.capacity), "capacity",
           StrCat("capacity ", c.capacity));
  svg.Text(left + width + 4, Y(c.capacity) + 4, "capacity");
  for (const CacheOccupancy::Spill& s : c.spills) {
    const double x = X(s.position + 0.5);
    svg.Line(x, top, x, top + plot_h, s.out ? "spill-out" : "spill-in",
             StrCat(s.out ? "SPILL_OUT" : "SPILL_IN", " buffer ", s.buf_id, " (size ", s.size,
                    ") at position ", s.position));
  }
  out += svg.Finish();
  return out;
}

// Lower bounds of the report JSON ("bounds", from `kernel plan`) as table rows.
std::vector<std::vector<std::string>> BoundRows(const nlohmann::json& j) {
  std::vector<std::vector<std::string>> rows;
  if (!j.contains("bounds") || !j["bounds"].is_object()) return rows;
  const nlohmann::json& b = j["bounds"];
  const nlohmann::json gap = j.contains("gap") && j["gap"].is_object() ? j["gap"] : nlohmann::json::object();
  auto get = [](const nlohmann::json& o, const char* k) { return o.contains(k) ? MetricValue(o[k]) : std::string("-"); };
  rows.push_back({"makespan", get(j, "makespan"), StrCat(get(b, "makespan"), " (", get(b, "makespan_by"), ")"),
                  get(gap, "makespan")});
  rows.push_back({"extra data movement, any order", get(j, "extra_data_movement"), get(b, "traffic_free_order"),
                  get(gap, "traffic_free_order")});
  if (b.contains("traffic_fixed_order")) {
    rows.push_back({"extra data movement, this operation order", get(j, "extra_data_movement"),
                    get(b, "traffic_fixed_order"), get(gap, "traffic_fixed_order")});
  }
  return rows;
}

// The traffic/makespan frontier (`kernel plan --pareto`) with the two bounds
// as dashed lines; the chosen plan is the filled square.
std::string FrontierChart(const nlohmann::json& points, int64_t ms_bound, int64_t traffic_bound,
                          int64_t chosen_traffic, int64_t chosen_ms) {
  int64_t max_t = std::max<int64_t>(traffic_bound, 1), max_ms = std::max<int64_t>(ms_bound, 1);
  for (const auto& p : points) {
    max_t = std::max(max_t, p.value("extra_data_movement", int64_t{0}));
    max_ms = std::max(max_ms, p.value("makespan", int64_t{0}));
  }
  const double left = 80, top = 12, width = 700, plot_h = 300, height = top + plot_h + 40;
  const double xmax = static_cast<double>(max_t) * 1.05, ymax = static_cast<double>(max_ms) * 1.05;
  auto X = [&](double t) { return left + t / xmax * width; };
  auto Y = [&](double m) { return top + plot_h - m / ymax * plot_h; };
  Svg svg("kernel-frontier", left + width + 120, height, "traffic / makespan frontier");
  for (double m : AxisTicks(ymax, 6)) {
    svg.Line(left, Y(m), left + width, Y(m), "grid");
    svg.Text(left - 4, Y(m) + 4, Num(m, 0), "tick", "end");
  }
  for (double t : AxisTicks(xmax, 8)) svg.Text(X(t), top + plot_h + 14, Num(t, 0), "tick", "middle");
  svg.Text(left + width / 2, top + plot_h + 32, "extra data movement", "axis-label", "middle");
  svg.Line(left, top + plot_h, left + width, top + plot_h, "axis");
  svg.Line(left, top, left, top + plot_h, "axis");
  svg.Line(left, Y(static_cast<double>(ms_bound)), left + width, Y(static_cast<double>(ms_bound)), "capacity",
           StrCat("makespan lower bound ", ms_bound));
  svg.Text(left + width + 4, Y(static_cast<double>(ms_bound)) + 4, "makespan bound");
  svg.Line(X(static_cast<double>(traffic_bound)), top, X(static_cast<double>(traffic_bound)), top + plot_h,
           "capacity", StrCat("traffic lower bound ", traffic_bound));
  std::vector<double> xy;
  for (const auto& p : points) {
    const int64_t t = p.value("extra_data_movement", int64_t{0}), m = p.value("makespan", int64_t{0});
    xy.push_back(X(static_cast<double>(t)));
    xy.push_back(Y(static_cast<double>(m)));
    const bool chosen = t == chosen_traffic && m == chosen_ms;
    svg.Rect(X(static_cast<double>(t)) - 4, Y(static_cast<double>(m)) - 4, 8, 8, chosen ? "#1f77b4" : "#ffffff",
             StrCat(p.value("candidate", std::string()), ": movement ", t, ", makespan ", m,
                    chosen ? " (chosen)" : ""),
             "frontier-point");
  }
  if (xy.size() >= 4) svg.Polyline(xy, "vstay", "frontier");
  return svg.Finish();
}

}  // namespace

absl::StatusOr<std::string> KernelReportHtml(const KernelReportInput& input) {
  nlohmann::json j = nlohmann::json::parse(input.report_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(StrCat(input.report_path, ": not a JSON object"));
  }
  if (!j.contains("case") || !j["case"].is_string() || j["case"].get<std::string>().empty()) {
    return absl::InvalidArgumentError(
        StrCat(input.report_path,
               ": kernel report has no \"case\" string (expected the <case>_report.json of "
               "`npuplan kernel plan`)"));
  }
  const std::string case_name = j["case"].get<std::string>();
  if (input.case_path.empty()) {
    return absl::InvalidArgumentError(StrCat(
        input.report_path, ": a kernel report needs --case CASE.json (the kernel graph of case '",
        case_name, "')"));
  }
  kernel::CacheConfig config;
  NPUPLAN_ASSIGN_OR_RETURN(KernelGraph graph, kernel::LoadKernelGraph(input.case_path, config));
  if (graph.name != case_name) {
    return absl::InvalidArgumentError(StrCat(input.report_path, ": report is for case '", case_name,
                                             "' but ", input.case_path, " is case '", graph.name,
                                             "'"));
  }
  const std::filesystem::path dir = std::filesystem::path(input.report_path).parent_path();
  auto path_of = [&](std::string_view suffix) {
    return (dir / StrCat(case_name, suffix)).string();
  };
  KernelSolution sol;
  {
    const std::string p = path_of("_schedule.txt");
    NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(p));
    NPUPLAN_ASSIGN_OR_RETURN(sol.schedule, kernel::ParseScheduleText(text, p));
  }
  {
    const std::string p = path_of("_memory.txt");
    NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(p));
    NPUPLAN_ASSIGN_OR_RETURN(sol.offsets, kernel::ParseMemoryText(text, p));
  }
  {
    const std::string p = path_of("_spill.txt");
    NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(p));
    NPUPLAN_ASSIGN_OR_RETURN(sol.spills, kernel::ParseSpillText(text, p));
  }
  absl::StatusOr<kernel::KernelMetrics> metrics = kernel::EvaluateSolution(graph, sol, config);
  if (!metrics.ok()) {
    return absl::Status(metrics.status().code(),
                        StrCat(path_of("_*.txt"), ": the solution is invalid: ",
                               std::string(metrics.status().message())));
  }
  const std::vector<CacheOccupancy> occ = ComputeCacheOccupancy(graph, sol, config);

  const std::string title = StrCat("npuplan kernel report: ", case_name);
  std::string body = StrCat("<h1>", HtmlEscape(title), "</h1>\n");
  body +=
      "<p class=\"note\">Generated by <code>npuplan report</code> from the files of <code>npuplan "
      "kernel "
      "plan</code>; the solution was re-checked by the independent evaluator. Hover over a curve "
      "or a spill "
      "marker for details.</p>\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"case file", input.case_path});
  rows.push_back({"nodes / buffers", StrCat(graph.num_nodes(), " / ", graph.buffers.size())});
  for (auto it = j.begin(); it != j.end(); ++it)
    rows.push_back({it.key(), MetricValue(it.value())});
  rows.push_back(
      {"re-evaluated: spills / extra movement / makespan",
       StrCat(metrics->spills, " / ", metrics->extra_movement, " / ", metrics->makespan)});
  body += StrCat("<h2 id=\"metrics-heading\">Metrics</h2>\n",
                 Table({"metric", "value"}, rows, "metrics"));
  if (const auto bound_rows = BoundRows(j); !bound_rows.empty()) {
    body += StrCat(
        "<h2 id=\"bounds-heading\">Lower bounds</h2>\n<p class=\"note\">Every valid plan of this case "
        "needs at least the bound (arguments: docs/kernel.md, \"Lower bounds\"); gap = plan / bound.</p>\n",
        Table({"quantity", "plan", "lower bound", "gap"}, bound_rows, "bounds"));
  }
  // The frontier: from the report (`--pareto`) or <case>_pareto.json beside it.
  nlohmann::json points = j.contains("pareto") ? j["pareto"] : nlohmann::json();
  if (!points.is_array()) {
    if (auto text = ReadFile(path_of("_pareto.json")); text.ok()) {
      nlohmann::json pj = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
      if (pj.is_object() && pj.contains("points")) points = pj["points"];
    }
  }
  if (points.is_array() && !points.empty() && j.contains("bounds") && j["bounds"].is_object()) {
    const nlohmann::json& b = j["bounds"];
    bool ok = b.contains("makespan") && b["makespan"].is_number_integer() && b.contains("traffic_free_order") &&
              b["traffic_free_order"].is_number_integer();
    for (const auto& p : points) {
      ok = ok && p.is_object() && p.contains("extra_data_movement") && p["extra_data_movement"].is_number_integer() &&
           p.contains("makespan") && p["makespan"].is_number_integer();
    }
    if (ok) {
      body += StrCat("<h2 id=\"frontier-heading\">Traffic / makespan frontier</h2>\n<p class=\"note\">",
                     points.size(),
                     " non-dominated verified plans the planner built; dashed red: the lower bounds; filled: "
                     "the chosen plan.</p>\n",
                     FrontierChart(points, b["makespan"].get<int64_t>(), b["traffic_free_order"].get<int64_t>(),
                                   metrics->extra_movement, metrics->makespan));
    }
  }
  body +=
      "<h2 id=\"cache-heading\">Cache occupancy per cache type</h2>\n"
      "<p class=\"legend\"><span><span class=\"swatch\" style=\"background:#a1d99b\"></span>bytes "
      "resident "
      "(spilled buffers excluded)</span><span style=\"color:#9467bd\">dashed purple: V_stay (ALLOC "
      "− FREE)"
      "</span><span style=\"color:#d62728\">dashed red: capacity</span><span "
      "style=\"color:#d62728\">red "
      "tick: SPILL_OUT</span><span style=\"color:#2ca02c\">green tick: SPILL_IN</span></p>\n";
  std::vector<std::string> unused;
  for (const CacheOccupancy& c : occ) {
    const bool used = std::any_of(c.vstay.begin(), c.vstay.end(), [](int64_t v) { return v != 0; });
    if (!used) {
      unused.push_back(c.type);
      continue;
    }
    body += CacheChart(c);
  }
  if (!unused.empty()) {
    body +=
        StrCat("<p class=\"note\">Cache types no buffer uses: ", HtmlEscape(StrJoin(unused, ", ")),
               "</p>\n");
  }
  return Page(title, body);
}

}  // namespace npuplan::report
