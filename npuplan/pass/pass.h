// Pass infrastructure (XLA StatusOr<bool> passes, MLIR/LLVM names and stats).
//
// A pass has a stable kebab-case name used on the CLI, in logs and in dumps;
// it declares the stage facts it requires and provides; Run returns whether
// it changed the plan, or an error. Pipelines are passes and nest.
//
// Passes alongside (Pass::runs_alongside): a pass that declares it runs on a
// second thread while the passes after it run on the calling thread, as long
// as each of them
//   (a) requires no stage the alongside pass provides,
//   (b) preserves structure (no node added, removed or rewired: the node
//       table and the per-node vectors are not reallocated), unless the
//       alongside pass touches none of the per-node parts (kModel, kTasks,
//       kPhysicalStream), and
//   (c) by the Plan parts both declare (Pass::access, a PlanPart bitmask),
//       writes nothing the alongside pass reads or writes and reads nothing
//       it writes.
// Partial join: an alongside pass may declare parts it touches only in its
// first stage (PlanAccess::released) and call PassContext::ReleaseParts()
// once it is done with them. A pass that fails (b)-(c) against the whole
// access but passes them against what is left waits for that call (not for
// the end of the pass) and then runs beside the rest of it; if the pass ends
// without the call, the pipeline joins it. The call is a release store, the
// wait an acquire load: everything the alongside pass did with those parts
// happens before what the waiting pass does with them.
// The pipeline joins the alongside pass before the first pass that does not
// pass (a)-(c), at the end of the pipeline and on every error; a pass that
// declares no access (the default: the whole plan) always joins it. The run
// is otherwise the sequential one: the alongside pass's stages are claimed in
// Plan::established when it starts (written by this thread only; the
// alongside pass must not read it), its sequence number is the one it has in
// order, and the decision log, statistics and warnings of the alongside pass
// and of the passes overlapping it are buffered and appended at the join in
// pipeline order (log lines echoed live, --log-decisions, come at the join:
// the same text, later). Errors: the first in pipeline order, i.e. the
// alongside pass's error wins over that of a pass overlapping it, whose log
// and statistics are then dropped, as if it had never run; an exception on the
// second thread is rethrown on the calling thread at the join. Everything
// runs on the calling thread, one pass after the other, when instrumentation
// observes the plan between passes (verify_each, after_pass), when
// npuplan.passThreads=1, or when no thread can be started.
// In the default pipeline memory-planning (reads the model until it has
// built its lifetimes and happens-before facts, writes plan.memory) overlaps
// task-count-assignment, sync-event-insertion, sync-event-optimization,
// event-reuse and physical-stream-split (they read the model through a const
// reference and write tasks, events, streams, physical_stream); then, once it
// has released the model, stream-activation and sync-node-generation (they
// add nodes), event-minimization, event-id-allocation and device-limit-check
// (it reads the counts only); the pipeline joins it at its end, where the
// compile driver has begun the final verification of everything but
// plan.memory (PassInstrumentation::before_join; docs/architecture.md,
// "Passes alongside").
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

// Parts of a Plan, for what a pass reads and writes (Pass::access), as a
// bitmask: `PlanPart::kTasks | PlanPart::kEvents`. kModel is the whole model:
// graphs, nodes, their attributes and stage fields.
using PlanParts = uint32_t;
struct PlanPart {
  enum : PlanParts {
    kModel = 1u << 0,
    kPartition = 1u << 1,
    kStreams = 1u << 2,
    kEvents = 1u << 3,
    kMemory = 1u << 4,
    kTasks = 1u << 5,
    kPhysicalStream = 1u << 6,
  };
};
constexpr PlanParts kAllPlanParts = (1u << 7) - 1;
// The parts a pass reads and writes (a part written is usually read too: list
// it in both). Over-approximations are safe; a part missing is a data race
// when the pass runs beside an alongside pass.
struct PlanAccess {
  PlanParts reads = kAllPlanParts;
  PlanParts writes = kAllPlanParts;
  // Parts of reads / writes the pass no longer touches once it has called
  // PassContext::ReleaseParts() (an alongside pass: the partial join above).
  PlanParts released = 0;
};

// Instrumentation of a pipeline run (verify-each, dumps).
struct PassInstrumentation {
  bool verify_each = false;
  // Called after each leaf pass with its sequence number (dump-after).
  std::function<absl::Status(int seq, std::string_view pass, const Plan&)> after_pass;
  // Called after each leaf pass with its sequence number, on the calling
  // thread, before after_pass (progress on a terminal). It does not see the
  // plan, so passes may still run alongside: an alongside pass is reported
  // when it is joined, after the passes that overlapped it.
  std::function<void(int seq, std::string_view pass)> progress;
  // Called on the calling thread just before the pipeline blocks to join its
  // alongside pass (before a pass that needs it joined, or at the end), with
  // the Plan parts that pass and the passes still to run may write and the
  // stages they still add. The plan is final but for those: the compile
  // driver starts the final verification of the rest here (compiler.cc).
  // Top-level pipeline only: a nested pipeline does not know the passes
  // after it, so it runs without the hook.
  std::function<void(const Plan&, PlanParts may_still_write, IrProperties stages_to_come)>
      before_join;
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
  // Set by the pipeline for a pass running alongside: called by ReleaseParts.
  std::function<void()> on_release = nullptr;
  // The pass is done with the parts its PlanAccess::released names: passes
  // waiting for them may run now. Once is enough; a no-op when the pass does
  // not run alongside.
  void ReleaseParts() const {
    if (on_release) on_release();
  }
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
  // The Plan parts the pass reads and writes, besides Plan::established
  // (written by the pipeline alone). Default: all of them, so a pass that
  // does not declare its access never runs beside an alongside pass.
  virtual PlanAccess access() const { return {}; }
  // True when the pass may run on a second thread while the passes after it
  // run (the rules: top of this file). Such a pass must declare its access,
  // preserve structure, must not read Plan::established, and may share with
  // the other thread only what is safe to read concurrently (the options,
  // the process-wide caches behind locks).
  virtual bool runs_alongside() const { return false; }
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

// Rules (a)-(c) above: may `later` run while the alongside pass `alongside`
// runs (with `released`: once it has called PassContext::ReleaseParts)?
bool MayRunAlongside(const Pass& alongside, const Pass& later, bool released);

// Fingerprint of the graph structure (nodes, names, edges, subgraphs; not the
// order of each graph's nodes); equal before and after a pass that preserves
// structure.
uint64_t StructuralFingerprint(const Model& model);
// Fingerprint of every graph's node order; equal before and after a pass that
// preserves structure and does not declare may_reorder.
uint64_t OrderFingerprint(const Model& model);

}  // namespace npuplan

#endif  // NPUPLAN_PASS_PASS_H_
