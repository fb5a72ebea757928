// Pass infrastructure (XLA StatusOr<bool> passes, MLIR/LLVM names and stats).
//
// A pass has a stable kebab-case name used on the CLI, in logs and in dumps;
// it declares the stage facts it requires and provides; Run returns whether
// it changed the plan, or an error. Pipelines are passes and nest.
#ifndef NPUPLAN_PASS_PASS_H_
#define NPUPLAN_PASS_PASS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/pass/decision_log.h"
#include "npuplan/pass/options.h"
#include "npuplan/pass/statistics.h"
#include "npuplan/plan/plan.h"

namespace npuplan {

// Instrumentation of a pipeline run (verify-each, dumps).
struct PassInstrumentation {
  bool verify_each = false;
  // Called after each leaf pass with its sequence number (dump-after).
  std::function<absl::Status(int seq, std::string_view pass, const Plan&)> after_pass;
};

struct PassContext {
  const CompileOptions& options;
  DecisionLog& log;
  Statistics& stats;
  PassInstrumentation instrumentation = {};
  int sequence = 0;  // leaf passes run so far
  // One-line warnings for the user (an option that does nothing, …); the CLI
  // prints them as "warning: …". Null: dropped.
  std::vector<std::string>* warnings = nullptr;
  // True while a pass runs its own chain of sub-passes (logical-stream-
  // assignment): their times are --stats parts of that pass's step.
  bool sub_passes = false;
};

class PassPipeline;

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual IrProperties required() const { return 0; }
  virtual IrProperties provided() const { return 0; }
  // True when the pass must not add, remove or rewire nodes (SPEC G5: logical
  // stream allocation and memory planning see a frozen graph). Checked with a
  // structural fingerprint when verification is on.
  virtual bool preserves_structure() const { return false; }
  // True when a structure-preserving pass may still rewrite the order of a
  // graph's nodes (another topological order; npuplan.stream.reorder). The
  // order is checked with its own fingerprint otherwise.
  virtual bool may_reorder() const { return false; }
  // The passes this one runs inside itself, if any (a pipeline; a pass with
  // a chain of sub-passes): Describe() prints them as `name(a,b)`.
  virtual const PassPipeline* nested() const { return nullptr; }
  virtual absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) = 0;
};

class PassPipeline final : public Pass {
 public:
  explicit PassPipeline(std::string name) : name_(std::move(name)) {}

  template <typename T, typename... Args>
  T& AddPass(Args&&... args) {
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }
  void AddPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }

  std::string_view name() const override { return name_; }
  const PassPipeline* nested() const override { return this; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
  // "a,b,pipeline(c,d)" (LLVM --print-pipeline-passes; --passes reads it).
  std::string Describe() const;
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

// Fingerprint of the graph structure (nodes, names, edges, subgraphs; not the
// order of each graph's nodes); equal before and after a pass that preserves
// structure.
uint64_t StructuralFingerprint(const Model& model);
// Fingerprint of every graph's node order; equal before and after a pass that
// preserves structure and does not declare may_reorder.
uint64_t OrderFingerprint(const Model& model);

}  // namespace npuplan

#endif  // NPUPLAN_PASS_PASS_H_
