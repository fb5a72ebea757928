#include "tools/npuplan/model_loader.h"

#include <cstdio>

#include "CLI/CLI.hpp"
#include "npuplan/ir/verifier.h"
#include "npuplan/plan/plan_claims.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/flag_checks.h"
#include "tools/npuplan/plan_input.h"

namespace npuplan::cli {

void AddReadLimitFlags(CLI::App* cmd, LoadOptions* load) {
  GraphReadLimits& l = load->limits;
  cmd->add_option("--max-nodes", l.max_nodes, "Reader limit: nodes in all graphs")
      ->check(PositiveInt())
      ->capture_default_str()
      ->group("Input limits");
  cmd->add_option("--max-edges", l.max_edges, "Reader limit: data + control inputs in all graphs")
      ->check(PositiveInt())
      ->capture_default_str()
      ->group("Input limits");
  cmd->add_option("--max-string-bytes", l.max_string_bytes,
                  "Reader limit: bytes of one JSON string or key")
      ->check(PositiveInt())
      ->capture_default_str()
      ->group("Input limits");
  cmd->add_option("--max-attr-elements", l.max_attr_elements,
                  "Reader limit: values inside one attribute value")
      ->check(PositiveInt())
      ->capture_default_str()
      ->group("Input limits");
  cmd->add_option(
         "--max-depth", l.max_depth,
         "Reader limit: subgraph nesting depth, and list/map nesting in one attribute value")
      ->check(PositiveInt())
      ->capture_default_str()
      ->group("Input limits");
  AddMaxFileBytesFlag(cmd);
}

void AddInputShapeFlag(CLI::App* cmd, LoadOptions* load) {
  cmd->add_option("--input-shape", load->input_shapes,
                  "ONNX input shape NAME=1x3x224x224 (repeatable; fixes a dynamic input's dims)");
  cmd->add_option("--dim", load->dims,
                  "ONNX symbolic dim NAME=VALUE, e.g. batch=1 (repeatable; pins the dim everywhere the model names it)");
  cmd->add_flag("--strict-shapes", load->strict_shapes,
                "ONNX: a node whose output shapes inference cannot determine from known input shapes is an error");
  cmd->add_flag("--allow-unknown-ops", load->allow_unknown_ops,
                "ONNX: import ops without a known schema as opaque ops (AI CPU, unknown shapes) instead of failing");
}

absl::StatusOr<LoadedInput> LoadInput(const std::string& path, const LoadOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(LoadedInput in, api::internal::LoadSourceFile(path, opts));
  for (const std::string& w : in.warnings)
    std::fprintf(stderr, "warning: %s\n", EchoMessage(w).c_str());
  return in;
}

absl::Status CheckPlanClaims(const Plan& plan, const std::string& source) {
  absl::Status s = VerifyStructure(plan.model);
  if (s.ok()) s = VerifyPlanClaims(plan);
  if (s.ok()) return s;
  return absl::Status(s.code(), StrCat(source, ": ", std::string(s.message())));
}

absl::StatusOr<Plan> LoadPlan(const std::string& path, const LoadOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(Plan plan, ReadPlanInput(path, opts.limits));
  NPUPLAN_RETURN_IF_ERROR(CheckPlanClaims(plan, path));
  return plan;
}

absl::StatusOr<Model> LoadModel(const std::string& path, const LoadOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(LoadedInput in, LoadInput(path, opts));
  return std::move(in.plan.model);
}

}  // namespace npuplan::cli
