// Compile() of the public API: the compile driver, as `npuplan compile` runs it.
#include "npuplan/api/compile.h"

#include <utility>

#include "npuplan/api/api_internal.h"
#include "npuplan/api/version.h"
#include "npuplan/compiler/compiler.h"
#include "npuplan/pass/decision_log.h"
#include "npuplan/pass/statistics.h"

namespace npuplan::api {
namespace {

using internal::Access;

absl::StatusOr<Plan> CompileImpl(npuplan::Model model, std::vector<std::string> warnings,
                                 const CompileOptions& options) {
  CompileConfig config;
  config.option_overrides = options.options;
  config.read_environment = options.read_environment;
  config.verify_each = options.verify_each;
  config.passes = options.passes;
  std::vector<std::string> option_warnings;  // after the import's, as the CLI prints them
  config.warnings = &option_warnings;
  DecisionLog log(/*keep=*/options.keep_decisions, /*echo=*/nullptr);
  Statistics stats;
  absl::StatusOr<npuplan::Plan> plan = npuplan::Compile(std::move(model), config, log, stats);
  warnings.insert(warnings.end(), option_warnings.begin(), option_warnings.end());
  if (!plan.ok()) return plan.status();
  auto impl = std::make_shared<Plan::Impl>();
  impl->plan = std::move(plan).value();
  impl->warnings = std::move(warnings);
  if (options.keep_decisions) impl->decisions = log.ToJsonLines();
  return Access::MakePlan(std::move(impl));
}

}  // namespace

absl::StatusOr<Plan> Compile(const Model& model, const CompileOptions& options) {
  const Model::Impl& m = Access::Of(model);
  return CompileImpl(m.model, m.warnings, options);
}

absl::StatusOr<Plan> Compile(Model&& model, const CompileOptions& options) {
  Model::Impl& m = Access::Of(model);
  return CompileImpl(std::move(m.model), std::move(m.warnings), options);
}

absl::StatusOr<Plan> CompileFile(const std::string& path, const CompileOptions& options,
                                 const LoadOptions& load) {
  LoadOptions sorted = load;
  auto order = options.options.find("ge.topoSortingMode");
  if (order != options.options.end() && load.topo_sorting_mode.empty()) {
    sorted.topo_sorting_mode = order->second;  // the CLI sorts the graph it reads in this order
  }
  absl::StatusOr<Model> model = Model::Load(path, sorted);
  if (!model.ok()) return model.status();
  return Compile(std::move(model).value(), options);
}

const char* Version() { return NPUPLAN_VERSION_STRING; }

}  // namespace npuplan::api
