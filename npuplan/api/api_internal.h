// Internal (not installed): the handles' contents, shared by the API's .cc
// files. Nothing here reaches a public header.
#ifndef NPUPLAN_API_API_INTERNAL_H_
#define NPUPLAN_API_API_INTERNAL_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "npuplan/api/model.h"
#include "npuplan/api/plan.h"
#include "npuplan/api/source_loader.h"
#include "npuplan/plan/plan.h"

namespace npuplan::api {

struct Model::Impl {
  npuplan::Model model;
  std::vector<std::string> warnings;
};

struct Plan::Impl {
  npuplan::Plan plan;
  std::string source;  // the file it was read from ("" = compiled here)
  std::vector<std::string> warnings;
  std::string decisions;
  // Per-node event ids, built on first use (node(), node_at()).
  mutable std::once_flag events_by_node_once;
  mutable std::vector<std::vector<int64_t>> sends, recvs;
};

namespace internal {

// The one door into the handles for the API's own .cc files.
struct Access {
  static Model MakeModel(npuplan::Model model, std::vector<std::string> warnings);
  static Model::Impl& Of(Model& m) { return *m.impl_; }
  static const Model::Impl& Of(const Model& m) { return *m.impl_; }
  static Plan MakePlan(std::shared_ptr<const Plan::Impl> impl) { return Plan(std::move(impl)); }
  static const Plan::Impl& Of(const Plan& p) { return *p.impl_; }
};

// The public LoadOptions as the loader's (and the CLI's) options.
SourceOptions ToSourceOptions(const LoadOptions& options);
GraphReadLimits ToReadLimits(const ReadLimits& limits);

// The independent verifier, called from this one place (Plan::Verify,
// Compile's final check lives in the compile driver).
absl::Status VerifyPlanIndependently(const npuplan::Plan& plan, bool partial);

}  // namespace internal
}  // namespace npuplan::api

#endif  // NPUPLAN_API_API_INTERNAL_H_
