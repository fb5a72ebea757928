// The plan reader's check of the fields it does not turn into Plan data: a
// field present in a plan file is either read or checked, never ignored.
//   - unknown fields (outside the graph, which its own reader checks) are
//     errors naming the JSON path;
//   - derived fields must agree with the plan read from the same file:
//     $.summary (node, graph, stream and event counts, memory figures),
//     $.nodes.<n>.graph / topo_id / send_events / recv_events, and
//     $.nodes.<n>.stream before the physical split (= logical_stream);
//   - $.nodes, when present, has an entry for every node; a stage is listed
//     once; integers narrower than int64 (send_attached, recv_attached,
//     memory tensor outputs) are in range instead of truncated.
#ifndef NPUPLAN_PLAN_PLAN_JSON_FIELDS_H_
#define NPUPLAN_PLAN_PLAN_JSON_FIELDS_H_

#include <string_view>

#include "absl/status/status.h"
#include "npuplan/plan/plan.h"
#include "npuplan/support/json_document.h"

namespace npuplan {

// InvalidArgument "<src>: <JSON path>: <what>" for the first field that fails.
absl::Status CheckPlanDocumentFields(const JsonText& doc, const Plan& plan, std::string_view src);

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_PLAN_JSON_FIELDS_H_
