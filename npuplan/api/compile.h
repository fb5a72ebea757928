// npuplan public API: compile a model into a verified plan (docs/api.md).
//
// Compile() is `npuplan compile`: the same option validation, pipeline and
// final independent verification, so the plan's ToJson() is byte-identical to
// the CLI's plan file for the same input and options, and an error's message
// is the CLI's `error:` line without `error: `.
#ifndef NPUPLAN_API_COMPILE_H_
#define NPUPLAN_API_COMPILE_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "npuplan/api/model.h"
#include "npuplan/api/plan.h"

namespace npuplan::api {

struct CompileOptions {
  // GE options (docs/options.md), as `--option KEY=VALUE`; they win over the
  // graph's own "options".
  std::map<std::string, std::string> options;
  // Read the environment variables GE reads (ENABLE_DYNAMIC_SHAPE_MULTI_STREAM).
  bool read_environment = true;
  bool verify_each = false;     // --verify-each
  std::string passes;           // --passes a,b,c ("" = the default pipeline)
  bool keep_decisions = false;  // keep the decision log (Plan::decisions(); --remarks)
};

// Compiles a copy of `model` (the model stays usable).
absl::StatusOr<Plan> Compile(const Model& model, const CompileOptions& options = {});
// Compiles `model` itself (no copy).
absl::StatusOr<Plan> Compile(Model&& model, const CompileOptions& options = {});
// Loads the file with Model::Load, then compiles it: `npuplan compile PATH`.
absl::StatusOr<Plan> CompileFile(const std::string& path, const CompileOptions& options = {},
                                 const LoadOptions& load = {});

// The library's version ("0.1.0"); NPUPLAN_VERSION_STRING is the headers'.
const char* Version();

}  // namespace npuplan::api

#endif  // NPUPLAN_API_COMPILE_H_
