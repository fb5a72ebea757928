#include "npuplan/report/html_writer.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "npuplan/support/str_util.h"

namespace npuplan::report {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control characters other than tab/newline are not valid in HTML text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += "&#xFFFD;";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string Num(double v, int decimals) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") return "0";  // (an assignment here trips gcc 12's -Wrestrict)
  return s;
}

std::string Bytes(int64_t bytes) {
  static constexpr std::array<const char*, 4> kUnits = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return StrCat(bytes, " B");
  double v = static_cast<double>(bytes);
  size_t u = 0;
  v /= 1024.0;
  while (v >= 1024.0 && u + 1 < kUnits.size()) {
    v /= 1024.0;
    ++u;
  }
  return StrCat(Num(v, 1), " ", kUnits[u], " (", bytes, " B)");
}

std::string_view PaletteColor(size_t i) {
  static constexpr std::array<std::string_view, 10> kPalette = {
      "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948",
      "#76b7b2", "#ff9da7", "#9c755f", "#bab0ac", "#e15759"};
  return kPalette[i % kPalette.size()];
}

std::vector<double> AxisTicks(double max, int target) {
  std::vector<double> ticks;
  if (!(max > 0) || !std::isfinite(max) || target < 1) return ticks;
  const double raw = max / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  for (int i = 0; i * step <= max * (1 + 1e-9); ++i) ticks.push_back(i * step);
  return ticks;
}

Svg::Svg(std::string id, double width, double height, std::string_view aria_label)
    : id_(std::move(id)), width_(width), height_(height), label_(aria_label) {}

void Svg::Rect(double x, double y, double w, double h, std::string_view fill,
               std::string_view title, std::string_view css_class) {
  body_ += StrCat("<rect x=\"", Num(x), "\" y=\"", Num(y), "\" width=\"", Num(w), "\" height=\"",
                  Num(h), "\"");
  if (!fill.empty()) body_ += StrCat(" fill=\"", HtmlEscape(fill), "\"");
  if (!css_class.empty()) body_ += StrCat(" class=\"", HtmlEscape(css_class), "\"");
  if (title.empty()) {
    body_ += "/>\n";
  } else {
    body_ += StrCat("><title>", HtmlEscape(title), "</title></rect>\n");
  }
}

void Svg::Line(double x1, double y1, double x2, double y2, std::string_view css_class,
               std::string_view title) {
  body_ += StrCat("<line x1=\"", Num(x1), "\" y1=\"", Num(y1), "\" x2=\"", Num(x2), "\" y2=\"",
                  Num(y2), "\" class=\"", HtmlEscape(css_class), "\"");
  if (title.empty()) {
    body_ += "/>\n";
  } else {
    body_ += StrCat("><title>", HtmlEscape(title), "</title></line>\n");
  }
}

void Svg::Text(double x, double y, std::string_view text, std::string_view css_class,
               std::string_view anchor) {
  body_ += StrCat("<text x=\"", Num(x), "\" y=\"", Num(y), "\"");
  if (!css_class.empty()) body_ += StrCat(" class=\"", HtmlEscape(css_class), "\"");
  if (anchor != "start") body_ += StrCat(" text-anchor=\"", HtmlEscape(anchor), "\"");
  body_ += StrCat(">", HtmlEscape(text), "</text>\n");
}

void Svg::Polyline(const std::vector<double>& xy, std::string_view css_class,
                   std::string_view title) {
  std::string pts;
  for (size_t i = 0; i + 1 < xy.size(); i += 2) {
    if (i) pts += ' ';
    pts += StrCat(Num(xy[i]), ",", Num(xy[i + 1]));
  }
  body_ += StrCat("<polyline points=\"", pts, "\" class=\"", HtmlEscape(css_class), "\"");
  if (title.empty()) {
    body_ += "/>\n";
  } else {
    body_ += StrCat("><title>", HtmlEscape(title), "</title></polyline>\n");
  }
}

void Svg::Raw(std::string_view markup) { body_.append(markup); }

std::string Svg::Finish() const {
  return StrCat("<svg id=\"", HtmlEscape(id_), "\" width=\"", Num(width_), "\" height=\"",
                Num(height_), "\" viewBox=\"0 0 ", Num(width_), " ", Num(height_),
                "\" role=\"img\" aria-label=\"", HtmlEscape(label_), "\">\n", body_, "</svg>\n");
}

namespace {
constexpr std::string_view kStyle = R"css(
body { font-family: sans-serif; font-size: 14px; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; }
.note { color: #555; font-size: 0.9em; }
svg { display: block; margin: 0.5em 0; background: #fff; border: 1px solid #ddd; }
svg text { font-size: 11px; fill: #333; }
svg .lane { fill: #f4f4f4; }
svg .axis { stroke: #999; stroke-width: 1; }
svg .grid { stroke: #e4e4e4; stroke-width: 1; }
svg .task { stroke: #333; stroke-width: 0.3; }
svg .crit { stroke: #d00; stroke-width: 1.2; }
svg .record { fill: #222; }
svg .wait { fill: #bbb; }
svg .event { stroke: #c03; stroke-width: 0.8; marker-end: url(#arrow); opacity: 0.7; }
svg .peak { stroke: #d62728; stroke-width: 1.5; stroke-dasharray: 6 3; }
svg .bound { stroke: #1f77b4; stroke-width: 1.5; stroke-dasharray: 2 2; }
svg .capacity { stroke: #d62728; stroke-width: 1.5; stroke-dasharray: 6 3; }
svg .live { fill: none; stroke: #111; stroke-width: 1.5; }
svg .vstay { fill: none; stroke: #9467bd; stroke-width: 1.2; stroke-dasharray: 4 2; }
svg .tensor { fill: #9ecae1; stroke: #3182bd; stroke-width: 0.3; opacity: 0.8; }
svg .resident { fill: #a1d99b; stroke: #31a354; stroke-width: 0.5; }
svg .spill-out { stroke: #d62728; stroke-width: 1.5; }
svg .spill-in { stroke: #2ca02c; stroke-width: 1.5; }
svg .util { fill: #4e79a7; }
svg .bucket { fill: #4e79a7; }
.legend span { display: inline-block; margin-right: 1em; }
table.summary td { white-space: pre-line; }
.chart { position: relative; max-width: 1800px; }
.chart canvas { display: block; margin: 4px 0; border: 1px solid #ddd; }
#tl-main { cursor: grab; }
.bar { display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: center; margin: 6px 0; }
.bar input[type=search] { width: 22em; padding: 3px 6px; }
.bar button { padding: 2px 8px; }
#tl-results { list-style: none; margin: 0 0 6px; padding: 4px; border: 1px solid #ccc; max-height: 14em; overflow-y: auto; background: #fcfcfc; font-size: 0.9em; }
#tl-results li { padding: 1px 4px; cursor: pointer; }
#tl-results li:hover { background: #e8eef7; }
.tip { position: absolute; z-index: 2; pointer-events: none; background: #fffff4; border: 1px solid #999; padding: 4px 7px; font-size: 12px; max-width: 44em; box-shadow: 1px 1px 4px rgba(0,0,0,.2); }
.tip div:first-child { font-weight: bold; }
.swatch { display: inline-block; width: 12px; height: 12px; vertical-align: middle; border: 1px solid #555; margin-right: 3px; }
)css";
}  // namespace

std::string Page(std::string_view title, std::string_view body, std::string_view script) {
  const bool scripted = !script.empty();
  return StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'",
      scripted ? "; script-src 'unsafe-inline'" : "", "\">\n",
      "<meta name=\"viewport\" content=\"width=device-width\">\n"
      "<meta name=\"generator\" content=\"npuplan report\">\n<title>",
      HtmlEscape(title), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n", body,
      scripted ? StrCat("<script>\n", script, "</script>\n") : std::string(), "</body>\n</html>\n");
}

std::string Table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, std::string_view css_class) {
  std::string out = "<table";
  if (!css_class.empty()) out += StrCat(" class=\"", HtmlEscape(css_class), "\"");
  out += "><thead><tr>";
  for (const auto& h : header) out += StrCat("<th>", HtmlEscape(h), "</th>");
  out += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const auto& c : row) out += StrCat("<td>", HtmlEscape(c), "</td>");
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  return out;
}

}  // namespace npuplan::report
