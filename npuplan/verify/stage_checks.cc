#include "npuplan/verify/stage_checks.h"

#include <vector>

#include "npuplan/plan/execution_view.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/memory_verifier.h"

namespace npuplan::verify {

absl::Status VerifyStreamIds(const Plan& plan) { return VerifyStreamIdsContinuous(plan.model); }

absl::Status VerifyMemory(const Plan& plan) { return memory::VerifyMemoryPlan(plan); }

absl::Status VerifyAttachedStreams(const Plan& plan) {
  const int64_t first = plan.streams.logical;
  const auto& ids = plan.streams.attached;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != first + static_cast<int64_t>(i)) {
      return absl::InternalError(StrCat("verifier[attached-streams]: attached stream ids must be ",
                                        first, "..", first + static_cast<int64_t>(ids.size()) - 1,
                                        " after the main streams"));
    }
  }
  std::vector<uint8_t> used(ids.size(), 0);
  const Model& m = plan.model;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (i + kNodePrefetch < m.num_nodes())
      __builtin_prefetch(&m.nodes()[i + kNodePrefetch].attached_stream_ids);
    const Node& n = m.nodes()[i];
    for (int64_t a : n.attached_stream_ids) {
      if (a < first || a >= first + static_cast<int64_t>(ids.size())) {
        return absl::InternalError(StrCat("verifier[attached-streams]: node '", n.name,
                                          "' has attached stream ", a,
                                          " outside the attached range"));
      }
      used[a - first] = 1;
    }
  }
  for (size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) {
      return absl::InternalError(StrCat("verifier[attached-streams]: attached stream ",
                                        first + static_cast<int64_t>(i), " has no node"));
    }
  }
  return absl::OkStatus();
}

std::span<const StageCheck> StageCheckTable() {
  // A function takes the run when it can (overload resolution picks the
  // Verification& overload), else the plan; the generic lambda defers that
  // choice to each row.
  static constexpr StageCheck kTable[] = {
#define NPUPLAN_STAGE_CHECK(stage, name, function, alongside)                     \
  {IrProperty::stage, name,                                                       \
   [](auto& run) -> absl::Status {                                                \
     static_assert(!(alongside && requires { function(run); }),                   \
                   "a row that runs alongside must not take the Verification&");  \
     if constexpr (requires { function(run); })                                   \
       return function(run);                                                      \
     else                                                                         \
       return function(run.plan());                                               \
   },                                                                             \
   alongside, []<typename R = Verification>(){return requires(R & r){function(r); \
  }                                                                               \
  ;                                                                               \
  }                                                                               \
  ()                                                                              \
  }                                                                               \
  ,
#include "npuplan/verify/stage_checks.def"
  };
  return kTable;
}

}  // namespace npuplan::verify
