// Building blocks of the self-contained HTML report (docs/report.md): text
// escaping, deterministic number formatting, a small SVG builder and the page
// skeleton. The page loads nothing: a Content-Security-Policy meta tag
// `default-src 'none'` forbids every fetch; styles are inline, and so is the
// script of a page that has one (`script-src 'unsafe-inline'` then, nothing
// else); SVG hover details are <title> elements.
//
// Every string that reaches the page goes through HtmlEscape (node names,
// reasons, options come from user input). Numbers are printed with a fixed
// precision, so the same input gives the same bytes.
#ifndef NPUPLAN_REPORT_HTML_WRITER_H_
#define NPUPLAN_REPORT_HTML_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npuplan::report {

// Escapes & < > " ' for use in text and in attribute values.
std::string HtmlEscape(std::string_view text);

// Fixed-point number: at most `decimals` decimals, trailing zeros removed
// ("12.5", "3", "-0" printed as "0").
std::string Num(double v, int decimals = 2);

// Bytes in a human unit with the exact count: "1.5 MiB (1572864 B)".
std::string Bytes(int64_t bytes);

// Deterministic fill colour for the i-th category (a fixed palette, cycled).
std::string_view PaletteColor(size_t i);

// "Nice" axis ticks covering [0, max]: 0, step, 2·step, … with step in
// {1, 2, 5}·10^k and at most about `target` ticks. Empty when max <= 0.
std::vector<double> AxisTicks(double max, int target = 8);

// Appends SVG elements to a string. Attribute values are escaped by the
// caller's choice of helper: everything passed as `title` or `text` is escaped.
class Svg {
 public:
  Svg(std::string id, double width, double height, std::string_view aria_label);
  void Rect(double x, double y, double w, double h, std::string_view fill, std::string_view title,
            std::string_view css_class = "");
  void Line(double x1, double y1, double x2, double y2, std::string_view css_class,
            std::string_view title = "");
  void Text(double x, double y, std::string_view text, std::string_view css_class = "",
            std::string_view anchor = "start");
  // Polyline through the points (x0 y0 x1 y1 …).
  void Polyline(const std::vector<double>& xy, std::string_view css_class,
                std::string_view title = "");
  // Raw markup (already escaped); used for <defs>.
  void Raw(std::string_view markup);
  std::string Finish() const;

 private:
  std::string id_;
  double width_, height_;
  std::string label_;
  std::string body_;
};

// A full HTML page: title, CSP, the inline stylesheet, then `body`, then
// `script` (inline JavaScript; none when empty, and then the CSP forbids
// scripts too).
std::string Page(std::string_view title, std::string_view body, std::string_view script = {});

// An HTML table: header cells and rows (all cells escaped).
std::string Table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows,
                  std::string_view css_class = "");

}  // namespace npuplan::report

#endif  // NPUPLAN_REPORT_HTML_WRITER_H_
