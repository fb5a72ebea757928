// The compile driver: options → pipeline → verified plan.
//
// Compile() validates the options (one place: npuplan/pass/options.cc), builds
// the default pipeline (or the one named by `passes`; pass_registry.h), runs it with the
// decision log and statistics, and verifies the final plan independently.
#ifndef NPUPLAN_COMPILER_COMPILER_H_
#define NPUPLAN_COMPILER_COMPILER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/compiler/pass_registry.h"
#include "npuplan/pass/pass.h"
#include "npuplan/plan/plan.h"

namespace npuplan {

// Handed to CompileConfig::alongside_final_verification, which may start
// while memory-planning still runs (when no pass left writes anything else:
// compiler.cc). Until AwaitFinal() returns true the work may read only
// plan.model and plan.events; then the whole plan. False: the compile failed
// and the work should stop (its output is not used).
class FinalPlanGate {
 public:
  bool AwaitFinal() const {
    int s;
    while ((s = state_.load(std::memory_order_acquire)) == kPending)
      state_.wait(kPending, std::memory_order_acquire);
    return s == kFinal;
  }

 private:
  friend class FinalVerification;
  void Open(bool final) {
    state_.store(final ? kFinal : kAbandoned, std::memory_order_release);
    state_.notify_all();
  }
  bool opened() const { return state_.load(std::memory_order_acquire) != kPending; }
  static constexpr int kPending = 0, kFinal = 1, kAbandoned = 2;
  mutable std::atomic<int> state_{kPending};
};

struct CompileConfig {
  // --option KEY=VALUE overrides (win over the graph file's "options").
  std::map<std::string, std::string> option_overrides;
  // Read environment variables GE reads (ENABLE_DYNAMIC_SHAPE_MULTI_STREAM).
  bool read_environment = true;
  // Verify after every pass (--verify-each); the final plan is always verified.
  bool verify_each = false;
  // Comma-separated pass names replacing the default pipeline ("" = default).
  std::string passes;
  // Dump the plan after passes whose name matches this ECMAScript regex into dump_dir.
  std::string dump_after;
  std::string dump_dir;
  // Receives one-line warnings (option near-misses, options that do nothing);
  // null: dropped.
  std::vector<std::string>* warnings = nullptr;
  // Called after every leaf pass with its sequence number and name (progress
  // on a terminal), in the order the passes finish: memory-planning, which
  // runs beside the events passes after it, when it is joined; may be empty.
  std::function<void(int seq, std::string_view pass)> on_pass;
  // Work on the final plan that overlaps its verification: it runs on a
  // second thread while the final verification runs (reading the same const
  // plan, so it must not touch the log or the statistics), and Compile
  // returns its error when the plan verified but it failed. It may start
  // before the passes have ended: it reads what FinalPlanGate allows until
  // AwaitFinal() says the plan is final. Its output must not be used when
  // Compile fails (the CLI writes the plan to a temporary file and renames it
  // only on success). `alongside_name` names it in the statistics, as a part
  // of "verify (final plan)".
  std::function<absl::Status(const Plan&, const FinalPlanGate&)> alongside_final_verification;
  std::string alongside_name = "alongside";
};

absl::StatusOr<Plan> Compile(Model model, const CompileConfig& config, DecisionLog& log, Statistics& stats);

}  // namespace npuplan

#endif  // NPUPLAN_COMPILER_COMPILER_H_
