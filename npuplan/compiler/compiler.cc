#include "npuplan/compiler/compiler.h"

#include <filesystem>
#include <optional>
#include <regex>

#include "npuplan/plan/plan_json.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {

absl::StatusOr<Plan> Compile(Model model, const CompileConfig& config, DecisionLog& log, Statistics& stats) {
  CompileOptions options = CompileOptions::FromModel(model, config.option_overrides, config.read_environment);
  NPUPLAN_RETURN_IF_ERROR(options.Validate(config.warnings));

  std::unique_ptr<PassPipeline> pipeline;
  if (config.passes.empty()) {
    NPUPLAN_ASSIGN_OR_RETURN(pipeline, BuildDefaultPipeline(options));
  } else {
    NPUPLAN_ASSIGN_OR_RETURN(pipeline, BuildPipelineFromNames(config.passes, options));
  }

  Plan plan;
  plan.model = std::move(model);
  plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  plan.EnsureNodeVectors();
  NPUPLAN_RETURN_IF_ERROR(VerifyPlan(plan));

  PassContext ctx{options, log, stats};
  ctx.warnings = config.warnings;
  ctx.instrumentation.verify_each = config.verify_each;
  std::optional<std::regex> dump_re;
  if (!config.dump_after.empty()) {
    try {
      dump_re.emplace(config.dump_after);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(StrCat("--dump-after: invalid regular expression '", config.dump_after, "'"));
    }
    if (config.dump_dir.empty()) return absl::InvalidArgumentError("--dump-after needs --dump-dir");
    std::error_code ec;
    std::filesystem::create_directories(config.dump_dir, ec);
    if (ec) return absl::InvalidArgumentError(StrCat("--dump-dir ", config.dump_dir, ": ", ec.message()));
  }
  if (dump_re || config.on_pass) {
    ctx.instrumentation.after_pass = [&](int seq, std::string_view pass, const Plan& p) -> absl::Status {
      if (config.on_pass) config.on_pass(seq, pass);
      if (!dump_re || !std::regex_search(std::string(pass), *dump_re)) return absl::OkStatus();
      std::string file = fmt::format("{}/{:03d}.{}.plan.json", config.dump_dir, seq, pass);
      return WriteFileAtomically(file, WritePlanJson(p));
    };
  }
  NPUPLAN_RETURN_IF_ERROR(pipeline->Run(plan, ctx).status());
  plan.EnsureNodeVectors();
  // The final plan is always verified, whatever --verify-each says.
  absl::Status verified = VerifyPlan(plan);
  if (!verified.ok()) {
    return absl::InternalError(StrCat("the final plan failed verification: ", std::string(verified.message())));
  }
  return plan;
}

}  // namespace npuplan
