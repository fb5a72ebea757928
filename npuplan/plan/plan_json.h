// The plan format `npuplan.plan/1` (docs/plan-format.md): deterministic JSON
// with sorted keys; node entries keyed by name; events in id order.
#ifndef NPUPLAN_PLAN_PLAN_JSON_H_
#define NPUPLAN_PLAN_PLAN_JSON_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/plan/plan.h"
#include "npuplan/support/json_writer.h"

namespace npuplan {

inline constexpr std::string_view kPlanFormat = "npuplan.plan/1";
// The stages a plan lists in "stages", in the order they are written.
inline constexpr IrProperty kPlanStages[] = {
    IrProperty::kTopoSorted,  IrProperty::kPartitioned, IrProperty::kLogicalStreams, IrProperty::kAttachedStreams,
    IrProperty::kMemoryPlanned, IrProperty::kTasks,     IrProperty::kSyncEvents,     IrProperty::kPhysicalStreams,
    IrProperty::kActiveStreams, IrProperty::kSyncNodes};

// The plan's whole text.
std::string WritePlanJson(const Plan& plan);
// The same text streamed to `sink` in chunks (JsonWriter::kChunkBytes), so a
// large plan is never whole in memory; the sink's first error is returned.
absl::Status WritePlanJson(const Plan& plan, const JsonChunkSink& sink);
// The same, for a plan still being finished on another thread: it writes the
// keys that read only plan.model and plan.events ("event_counts", "events",
// "format", "graph"), then calls `await_rest` and writes the rest once it
// returns true; false stops it with a Cancelled error (the plan will not be
// used). The text is the same as above.
absl::Status WritePlanJson(const Plan& plan, const JsonChunkSink& sink,
                           const std::function<bool()>& await_rest);
// The plan written to the file `path` in one OutputTransaction (`what` names
// it in messages, e.g. "-o"), streamed as above: nothing is left behind on an
// error.
absl::Status WritePlanFile(const Plan& plan, const std::string& path, std::string_view what);
// The plan's "graph" goes through the graph reader with `limits`
// (plan_json_reader.cc). Every other field is typed and range-checked: ids are
// bounded by what the file's own counts allow (docs/plan-format.md).
absl::StatusOr<Plan> ParsePlanJson(std::string_view text, std::string_view source,
                                   const GraphReadLimits& limits = {});
absl::StatusOr<Plan> ReadPlanFile(const std::string& path, const GraphReadLimits& limits = {});

// True when the top-level "format" member is npuplan.plan/1 (read without
// parsing the document; a "format" string anywhere else never counts).
bool LooksLikePlan(std::string_view text);

namespace plan_json_internal {
// The model's node indices in the writer's "nodes" order: by name
// (std::string order), equal names by index. Exposed for its test.
std::vector<uint32_t> NodesByName(const Model& m);
}  // namespace plan_json_internal

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_PLAN_JSON_H_
