#include "npuplan/pass/pass.h"

#include <atomic>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

absl::Status AnnotateAfter(const absl::Status& s, std::string_view pass) {
  if (s.ok()) return s;
  std::string msg(s.message());
  if (msg.find("(after pass '") != std::string::npos || msg.find("[" + std::string(pass) + "]") == 0) {
    return s;
  }
  return absl::Status(s.code(), StrCat(msg, " (after pass '", pass, "')"));
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}
uint64_t HashStr(std::string_view s) { return std::hash<std::string_view>()(s); }

// Passes may run alongside others (pass.h): not while instrumentation looks
// at the plan between passes, nor under npuplan.passThreads=1.
bool AlongsideAllowed(const PassContext& ctx) {
  return !ctx.instrumentation.verify_each && !ctx.instrumentation.after_pass &&
         ctx.options.Get("npuplan.passThreads") != "1";
}

// One pass running on a second thread with its own log, statistics and
// warnings, and the buffers of the passes that run meanwhile on the calling
// thread (`during()`); Join appends both, in pipeline order, to the
// pipeline's context.
class AlongsideRun {
 public:
  AlongsideRun(Pass& pass, PassContext& ctx)
      : pass_(pass),
        main_(ctx),
        log_(ctx.log.Buffer()),
        stats_(ctx.stats.Buffer()),
        ctx_{ctx.options, log_, stats_},
        during_log_(ctx.log.Buffer()),
        during_stats_(ctx.stats.Buffer()),
        during_{ctx.options, during_log_, during_stats_} {
    ctx_.sequence = ctx.sequence;
    ctx_.sub_passes = ctx.sub_passes;
    ctx_.warnings = ctx.warnings != nullptr ? &warnings_ : nullptr;
    during_.sequence = ctx.sequence + 1;  // the alongside pass is the one before
    during_.sub_passes = ctx.sub_passes;
    during_.warnings = ctx.warnings != nullptr ? &during_warnings_ : nullptr;
    during_.instrumentation.progress = ctx.instrumentation.progress;
    ctx_.on_release = [this] {
      state_.fetch_or(kReleased, std::memory_order_release);
      state_.notify_all();
    };
  }
  AlongsideRun(const AlongsideRun&) = delete;
  AlongsideRun& operator=(const AlongsideRun&) = delete;

  const Pass& pass() const { return pass_; }
  PassContext& during() { return during_; }

  // Starts the pass on a second thread; false when no thread can be had.
  bool Start(Plan& plan) {
    try {
      thread_ = std::jthread([this, &plan] {
        const ThreadCpuTiming thread_cpu;  // its own CPU, and its stages' (StepTimer)
        const StepTimer timer;
        try {
          result_ = pass_.Run(plan, ctx_);
        } catch (...) {
          thrown_ = std::current_exception();
          Finish();
          return;  // untimed, as when it throws on the calling thread
        }
        timer.Record(stats_, pass_.name(), /*part=*/ctx_.sub_passes);
        Finish();
      });
    } catch (const std::system_error&) {
      return false;
    }
    main_cpu_.emplace();  // the passes overlapping it: this thread's CPU only
    return true;
  }

  // Whether the pass has released its PlanAccess::released parts yet.
  bool Released() const { return (state_.load(std::memory_order_acquire) & kReleased) != 0; }

  // Waits until the pass has released its PlanAccess::released parts or has
  // ended; true when it released them (the partial join of pass.h).
  bool AwaitRelease() {
    int state;
    while ((state = state_.load(std::memory_order_acquire)) == 0)
      state_.wait(0, std::memory_order_acquire);
    return (state & kReleased) != 0;
  }

  // Waits for the pass and appends its log, statistics and warnings to the
  // pipeline's; then, when it succeeded, those of the passes that ran
  // meanwhile. Returns its result (its error: theirs are dropped, as a
  // sequential run never reaches them); rethrows its exception.
  absl::StatusOr<bool> Join() {
    thread_.join();
    main_cpu_.reset();
    Append(log_, stats_, warnings_);
    if (thrown_) std::rethrow_exception(thrown_);
    if (!result_.ok()) return AnnotateAfter(result_.status(), pass_.name());
    Append(during_log_, during_stats_, during_warnings_);
    main_.sequence = during_.sequence;
    if (main_.instrumentation.progress)
      main_.instrumentation.progress(ctx_.sequence + 1, pass_.name());
    return *result_;
  }

 private:
  void Append(DecisionLog& log, const Statistics& stats, std::vector<std::string>& warnings) {
    main_.log.AppendFrom(std::move(log));
    main_.stats.AppendFrom(stats);
    if (main_.warnings != nullptr) {
      main_.warnings->insert(main_.warnings->end(), std::make_move_iterator(warnings.begin()),
                             std::make_move_iterator(warnings.end()));
    }
  }

  void Finish() {
    state_.fetch_or(kEnded, std::memory_order_release);
    state_.notify_all();
  }

  static constexpr int kReleased = 1, kEnded = 2;
  Pass& pass_;
  PassContext& main_;
  std::atomic<int> state_{0};  // kReleased | kEnded, set by the pass's thread
  // The alongside pass's.
  DecisionLog log_;
  Statistics stats_;
  std::vector<std::string> warnings_;
  PassContext ctx_;
  absl::StatusOr<bool> result_ = false;
  std::exception_ptr thrown_;
  // The overlapping passes'.
  DecisionLog during_log_;
  Statistics during_stats_;
  std::vector<std::string> during_warnings_;
  PassContext during_;
  std::optional<ThreadCpuTiming> main_cpu_;
  std::jthread thread_;  // last: joined (on every way out) before the rest is destroyed
};

}  // namespace

bool MayRunAlongside(const Pass& alongside, const Pass& later, bool released) {
  if (later.runs_alongside()) return false;  // one alongside pass at a time
  if ((later.required() & alongside.provided()) != 0) return false;
  PlanAccess a = alongside.access();
  if (released) {
    a.reads &= ~a.released;
    a.writes &= ~a.released;
  }
  constexpr PlanParts kPerNode = PlanPart::kModel | PlanPart::kTasks | PlanPart::kPhysicalStream;
  if (!later.preserves_structure() && ((a.reads | a.writes) & kPerNode) != 0) return false;
  const PlanAccess l = later.access();
  return (l.writes & (a.reads | a.writes)) == 0 && (l.reads & a.writes) == 0;
}

uint64_t StructuralFingerprint(const Model& model) {
  // Independent of each graph's node order: nodes in id order, each with its
  // graph, so that a pass allowed to reorder (Pass::may_reorder) passes.
  uint64_t h = model.num_nodes();
  for (const Graph& g : model.graphs()) h = Mix(Mix(h, HashStr(g.name)), g.nodes.size());
  for (size_t i = 0; i < model.num_nodes(); ++i) {
    const Node& n = model.node(NodeId(static_cast<int32_t>(i)));
    h = Mix(h, HashStr(n.name));
    h = Mix(h, HashStr(n.type));
    h = Mix(h, n.graph.value);
    for (const OutputRef& in : n.inputs) h = Mix(Mix(h, in.node.value), in.index);
    for (NodeId c : n.control_inputs) h = Mix(h, c.value + 0x1000000ULL);
    for (GraphId sg : n.subgraphs) h = Mix(h, sg.value + 0x2000000ULL);
  }
  return h;
}

uint64_t OrderFingerprint(const Model& model) {
  uint64_t h = model.num_graphs();
  for (const Graph& g : model.graphs()) {
    h = Mix(h, g.nodes.size());
    for (NodeId id : g.nodes) h = Mix(h, id.value);
  }
  return h;
}

absl::StatusOr<bool> PassPipeline::Run(Plan& plan, PassContext& ctx) {
  bool changed_any = false;
  const bool alongside_allowed = AlongsideAllowed(ctx);
  std::optional<AlongsideRun> alongside;
  // Waits for the alongside pass, if any: its error, else OK.
  auto join = [&]() -> absl::Status {
    if (!alongside) return absl::OkStatus();
    absl::StatusOr<bool> r = alongside->Join();
    alongside.reset();
    NPUPLAN_RETURN_IF_ERROR(r.status());
    changed_any |= *r;
    return absl::OkStatus();
  };
  // A pass's error: the alongside pass ran before it, so its error wins.
  auto fail = [&](absl::Status s) -> absl::Status {
    NPUPLAN_RETURN_IF_ERROR(join());
    return s;
  };
  // PassInstrumentation::before_join, before a blocking join ahead of
  // passes_[next] (or at the end): what may still change, by the declared
  // accesses (a nested pipeline declares none: everything).
  auto before_join = [&](size_t next) {
    if (!alongside || !ctx.instrumentation.before_join) return;
    const PlanAccess a = alongside->pass().access();
    PlanParts writes = alongside->Released() ? a.writes & ~a.released : a.writes;
    IrProperties stages = 0;
    for (size_t k = next; k < passes_.size(); ++k) {
      writes |= passes_[k]->access().writes;
      stages |= passes_[k]->provided();
    }
    ctx.instrumentation.before_join(plan, writes, stages & ~plan.established);
  };
  for (size_t index = 0; index < passes_.size(); ++index) {
    const std::unique_ptr<Pass>& pass = passes_[index];
    if (alongside && !MayRunAlongside(alongside->pass(), *pass, /*released=*/false)) {
      // A partial join when the pass only needs what the alongside pass
      // releases; a full one when it ended without releasing it.
      if (!MayRunAlongside(alongside->pass(), *pass, /*released=*/true) ||
          !alongside->AwaitRelease()) {
        before_join(index);
        NPUPLAN_RETURN_IF_ERROR(join());
      }
    }
    PassContext& run_ctx = alongside ? alongside->during() : ctx;
    const bool is_pipeline = dynamic_cast<const PassPipeline*>(pass.get()) != nullptr;
    // A nested pipeline runs without the hook (it does not know what follows it).
    auto hook = is_pipeline ? std::exchange(run_ctx.instrumentation.before_join, nullptr)
                            : decltype(run_ctx.instrumentation.before_join)();
    const absl::Cleanup restore_hook = [&] {
      if (hook) run_ctx.instrumentation.before_join = std::move(hook);
    };
    if ((pass->required() & ~plan.established) != 0) {
      return fail(absl::FailedPreconditionError(
          StrCat("pass '", pass->name(), "' requires stage(s) [",
                 PropertyNames(pass->required() & ~plan.established), "] that have not run")));
    }
    if (alongside_allowed && !is_pipeline && pass->runs_alongside()) {
      alongside.emplace(*pass, ctx);
      if (alongside->Start(plan)) {
        // Claimed now, as a sequential run would have it after the pass: the
        // passes that could see its results missing join it first.
        plan.established |= pass->provided();
        ++ctx.sequence;
        continue;
      }
      alongside.reset();  // no second thread: it runs here
    }
    const bool verify = run_ctx.instrumentation.verify_each && !is_pipeline;
    uint64_t before = 0, order_before = 0;
    if (verify && pass->preserves_structure()) {
      before = StructuralFingerprint(plan.model);
      if (!pass->may_reorder()) order_before = OrderFingerprint(plan.model);
    }
    const StepTimer timer;
    absl::StatusOr<bool> changed = false;
    if (alongside) {
      try {
        changed = pass->Run(plan, run_ctx);
      } catch (...) {
        // Sequentially the alongside pass ran first: its error or exception wins.
        const std::exception_ptr thrown = std::current_exception();
        NPUPLAN_RETURN_IF_ERROR(join());
        std::rethrow_exception(thrown);
      }
    } else {
      changed = pass->Run(plan, run_ctx);
    }
    if (!is_pipeline) timer.Record(run_ctx.stats, pass->name(), /*part=*/run_ctx.sub_passes);
    if (!changed.ok()) return fail(AnnotateAfter(changed.status(), pass->name()));
    plan.established |= pass->provided();
    changed_any |= *changed;
    if (is_pipeline) continue;
    ++run_ctx.sequence;
    const StepTimer verify_timer;
    if (verify) {
      if (pass->preserves_structure() && StructuralFingerprint(plan.model) != before) {
        return fail(absl::InternalError(
            StrCat("verifier[frozen-graph]: pass '", pass->name(),
                   "' changed the graph structure while it must be frozen (SPEC G5)")));
      }
      if (pass->preserves_structure() && !pass->may_reorder() && OrderFingerprint(plan.model) != order_before) {
        return fail(absl::InternalError(
            StrCat("verifier[frozen-order]: pass '", pass->name(),
                   "' changed a graph's execution order and does not declare may_reorder")));
      }
      // After a sub-pass the plan is inside its holder's stage
      // (plan.in_progress): the claims allow that stage's partial results.
      if (absl::Status s = AnnotateAfter(verify::VerifyPlan(plan), pass->name()); !s.ok())
        return fail(s);
      if (!run_ctx.sub_passes)
        verify_timer.Record(run_ctx.stats, "verify-each");  // else in the holder's time
    }
    if (run_ctx.instrumentation.progress)
      run_ctx.instrumentation.progress(run_ctx.sequence, pass->name());
    if (run_ctx.instrumentation.after_pass) {
      if (absl::Status s = run_ctx.instrumentation.after_pass(run_ctx.sequence, pass->name(), plan);
          !s.ok()) {
        return fail(s);
      }
    }
  }
  before_join(passes_.size());
  NPUPLAN_RETURN_IF_ERROR(join());
  return changed_any;
}

std::string PassPipeline::Describe() const {
  std::string out;
  for (const auto& pass : passes_) {
    if (!out.empty()) out += ",";
    if (const PassPipeline* p = pass->nested()) {
      out += StrCat(pass->name(), "(", p->Describe(), ")");
    } else {
      out += std::string(pass->name());
    }
  }
  return out;
}

}  // namespace npuplan
