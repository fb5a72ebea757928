// Reading the plan a command works on (run, simulate, summary, report): a
// graph or an ONNX model given where a plan belongs gets the message a person
// needs — "this is a graph; compile it first: npuplan compile …" — instead of
// a JSON-path complaint about the "format" field.
#ifndef NPUPLAN_TOOLS_NPUPLAN_PLAN_INPUT_H_
#define NPUPLAN_TOOLS_NPUPLAN_PLAN_INPUT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/plan/plan.h"

namespace npuplan::cli {

// True for an .onnx path or a text whose top-level "format" is npuplan.graph/1.
bool LooksLikeGraph(const std::string& path, std::string_view text);

// "PATH: this is a graph; compile it first: npuplan compile PATH -o STEM.plan.json"
absl::Status CompileFirstError(const std::string& path);

// The plan in `path`; CompileFirstError for a graph or ONNX model, else the
// plan reader's errors.
absl::StatusOr<Plan> ReadPlanInput(const std::string& path, const GraphReadLimits& limits);

}  // namespace npuplan::cli

#endif  // NPUPLAN_TOOLS_NPUPLAN_PLAN_INPUT_H_
