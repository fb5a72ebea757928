// The report page's inline script (report_script.cc): draws the stream
// timeline and the memory chart from the page's JSON data (report_data.h) on
// canvases — zoom, pan, minimap, level of detail, arrows, search, tooltips.
// No library, no network: the page's CSP allows inline script and nothing else.
#ifndef NPUPLAN_REPORT_REPORT_SCRIPT_H_
#define NPUPLAN_REPORT_REPORT_SCRIPT_H_

#include <string_view>

namespace npuplan::report {

std::string_view ReportScript();

}  // namespace npuplan::report

#endif  // NPUPLAN_REPORT_REPORT_SCRIPT_H_
