#include "npuplan/compiler/compiler.h"

#include <atomic>
#include <exception>
#include <filesystem>
#include <new>
#include <optional>
#include <regex>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/thread_time.h"
#include "npuplan/verify/verify.h"

namespace npuplan {

namespace {

absl::StatusOr<Plan> CompileOnce(Model model, const CompileConfig& config, DecisionLog& log,
                                 Statistics& stats);

// An id budget (npuplan.maxEventIds / maxNotifyIds) the plan did not fit.
bool IsIdBudgetError(const absl::Status& s) {
  if (!absl::IsResourceExhausted(s)) return false;
  const std::string_view m(s.message().data(), s.message().size());
  return m.find("npuplan.maxEventIds") != std::string_view::npos ||
         m.find("npuplan.maxNotifyIds") != std::string_view::npos;
}
bool IsStreamBudgetError(const absl::Status& s) {
  const std::string_view m(s.message().data(), s.message().size());
  return absl::IsResourceExhausted(s) && m.rfind("[stream-budget]", 0) == 0;
}

}  // namespace

absl::StatusOr<Plan> Compile(Model model, const CompileConfig& config, DecisionLog& log, Statistics& stats) {
  CompileOptions options =
      CompileOptions::FromModel(model, config.option_overrides, config.read_environment);
  NPUPLAN_RETURN_IF_ERROR(options.Validate());  // warnings: once, by the compile that returns
  const bool id_budget =
      config.passes.empty() && config.dump_after.empty() &&
      (options.Has("npuplan.maxEventIds") || options.Has("npuplan.maxNotifyIds"));
  if (!id_budget) return CompileOnce(std::move(model), config, log, stats);
  // Id budgets (issue 23): when the plan needs more ids than the budget, fewer
  // streams mean fewer sync edges. Find the most streams (npuplan.maxStreams,
  // which stream-budget meets by merging) whose plan fits: too few streams
  // fail in stream-budget, too many in the id budget; bisect between.
  const Model spare = model;
  CompileConfig quiet = config;  // the attempts print no warnings and write nothing
  quiet.warnings = nullptr;
  quiet.alongside_final_verification = nullptr;
  DecisionLog first_log(false);
  Statistics first_stats;
  absl::StatusOr<Plan> first = CompileOnce(Model(spare), quiet, first_log, first_stats);
  if (first.ok() || !IsIdBudgetError(first.status()))
    return CompileOnce(std::move(model), config, log, stats);
  int64_t lo = 1, hi = first_stats.Get("stream-budget", "streams_needed") - 1, best = 0,
          attempts = 1;
  while (lo <= hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    CompileConfig c = quiet;
    c.option_overrides["npuplan.maxStreams"] = std::to_string(mid);
    DecisionLog l(false);
    Statistics st;
    absl::StatusOr<Plan> p = CompileOnce(Model(spare), c, l, st);
    ++attempts;
    if (p.ok()) {
      best = mid;
      lo = mid + 1;
    } else if (IsStreamBudgetError(p.status())) {
      lo = mid + 1;
    } else if (IsIdBudgetError(p.status())) {
      hi = mid - 1;
    } else {
      return p.status();
    }
  }
  if (best == 0) {
    return absl::Status(
        first.status().code(),
        StrCat(first.status().message(), "; no stream budget (npuplan.maxStreams) makes it fit (",
               attempts, " compiles tried)"));
  }
  CompileConfig c = config;
  c.option_overrides["npuplan.maxStreams"] = std::to_string(best);
  log.Record("compile", "IdBudgetStreams", "", Field("max_streams", best),
             Field("attempts", attempts));
  return CompileOnce(std::move(model), c, log, stats);
}

// The final plan is always verified, whatever --verify-each says, and the
// caller's alongside work (the CLI writes the plan) runs meanwhile on a
// second thread; its error counts only when the plan verified.
// When the pipeline's last join waits only for memory-planning — the passes
// still running or to run may write plan.memory and nothing else, and add no
// stage (PassInstrumentation::before_join) — the alongside work starts then,
// up to where it needs plan.memory (FinalPlanGate), and everything but the
// memory check starts on a thread of its own: the calling thread joins
// memory-planning as soon as it ends and opens the gate, so the writing does
// not wait for those checks. The memory check runs once memory-planning has
// ended and the checks VerifyPlan runs before its memory row have passed
// (it assumes what they establish), beside the rest. The checks are the same and
// see the same final data: only when they run changes. If the early part
// fails, the whole verification runs again at the end, so the message is the
// one a verification in one piece gives.
namespace {

// Whether Plan::EnsureNodeVectors would change nothing.
bool NodeVectorsSized(const Plan& plan) {
  return plan.tasks.size() == plan.model.num_nodes() &&
         plan.physical_stream.size() == plan.model.num_nodes();
}

}  // namespace

class FinalVerification {
 public:
  FinalVerification(const Plan& plan, const CompileConfig& config) : plan_(plan), config_(config) {}
  FinalVerification(const FinalVerification&) = delete;
  FinalVerification& operator=(const FinalVerification&) = delete;
  // However the compile ends, the alongside work is not left waiting.
  ~FinalVerification() {
    if (!gate_.opened()) gate_.Open(false);
  }

  // PassInstrumentation::before_join.
  void BeforeJoin(PlanParts may_still_write, IrProperties stages_to_come) {
    if (early_ran_ || (may_still_write & ~PlanParts{PlanPart::kMemory}) != 0 ||
        stages_to_come != 0 || !NodeVectorsSized(plan_)) {
      return;
    }
    early_ran_ = true;
    // First: the writing is the longest of the jobs left (memory-planning's
    // rest, these checks and it), and what it cannot write yet waits at the gate.
    StartAlongside();
    try {
      early_thread_ = std::jthread([this] { RunEarly(); });
    } catch (const std::system_error&) {  // no thread to be had: here
      RunEarly();
    }
  }

  // The pipeline failed: the alongside work stops at the gate.
  void Abandon() { gate_.Open(false); }

  // After the pipeline: the rest of the verification, then the alongside work's result.
  absl::Status Finish(Statistics& stats) {
    const ThreadTimer timer;
    gate_.Open(true);
    if (!alongside_.joinable()) StartAlongside();
    // Nothing but plan.memory changed since (BeforeJoin's conditions; the
    // node vectors were sized, so CompileOnce left them alone).
    absl::Status verified;
    std::vector<verify::CheckTime> memory_checks;
    bool memory_ran = false;
    if (early_ran_ && (AwaitEarly() & kMemoryMayStart) != 0) {
      // Beside the rest of the early checks, as the memory row runs in VerifyPlan.
      verified = verify::VerifyPlanMemory(
          plan_, [&memory_checks](const verify::CheckTime& t) { memory_checks.push_back(t); });
      memory_ran = true;
    }
    if (early_thread_.joinable()) early_thread_.join();
    if (early_thrown_) {
      if (alongside_.joinable()) alongside_.join();
      std::rethrow_exception(early_thrown_);
    }
    if (memory_ran && early_.ok()) {
      checks_.insert(checks_.end(), memory_checks.begin(), memory_checks.end());
    } else {
      checks_.clear();
      verified =
          verify::VerifyPlan(plan_, [this](const verify::CheckTime& t) { checks_.push_back(t); });
    }
    if (alongside_.joinable()) alongside_.join();
    if (alongside_later_ && verified.ok()) RunAlongside();
    const double wall = timer.WallSeconds();
    // Each check as a part of the step (as memory-planning's stages), timed
    // on the thread that ran it; the step's CPU is theirs and the alongside
    // work's, its wall the time this thread spent on it.
    double cpu = 0;
    for (const verify::CheckTime& t : checks_) {
      stats.AddSeconds(StrCat("verify: ", t.check), t.wall_seconds, t.cpu_seconds, /*part=*/true);
      cpu += t.cpu_seconds;
    }
    if (config_.alongside_final_verification) {
      stats.AddSeconds(config_.alongside_name, alongside_wall_, alongside_cpu_, /*part=*/true);
      cpu += alongside_cpu_;
    }
    stats.AddSeconds("verify (final plan)", wall, cpu);
    if (!verified.ok()) {
      return absl::InternalError(
          StrCat("the final plan failed verification: ", std::string(verified.message())));
    }
    if (alongside_thrown_) std::rethrow_exception(alongside_thrown_);
    return alongside_status_;
  }

 private:
  // The checks but the memory check, on the early thread (or here).
  void RunEarly() {
    try {
      early_ = verify::VerifyPlanButMemory(
          plan_, [this](const verify::CheckTime& t) { checks_.push_back(t); },
          [this] { MarkEarly(kMemoryMayStart); });
    } catch (...) {
      early_thrown_ = std::current_exception();  // rethrown on the calling thread
    }
    MarkEarly(kEarlyEnded);
  }
  void MarkEarly(int bit) {
    early_state_.fetch_or(bit, std::memory_order_release);
    early_state_.notify_all();
  }
  // Until the memory check may start or the early checks have ended.
  int AwaitEarly() const {
    int s;
    while ((s = early_state_.load(std::memory_order_acquire)) == 0)
      early_state_.wait(0, std::memory_order_acquire);
    return s;
  }

  void StartAlongside() {
    if (!config_.alongside_final_verification || alongside_later_) return;
    try {
      alongside_ = std::jthread([this] { RunAlongside(); });
    } catch (const std::system_error&) {  // no thread to be had: after the verification
      alongside_later_ = true;
    }
  }

  void RunAlongside() {
    const ThreadTimer timer;
    try {
      alongside_status_ = config_.alongside_final_verification(plan_, gate_);
    } catch (...) {
      alongside_thrown_ = std::current_exception();
    }
    alongside_wall_ = timer.WallSeconds();
    alongside_cpu_ = timer.CpuSeconds();
  }

  const Plan& plan_;
  const CompileConfig& config_;
  FinalPlanGate gate_;
  bool early_ran_ = false;
  static constexpr int kMemoryMayStart = 1, kEarlyEnded = 2;
  std::atomic<int> early_state_{0};
  absl::Status early_;                     // written by the early thread: read after its join
  std::exception_ptr early_thrown_;        // the same
  std::vector<verify::CheckTime> checks_;  // the early thread's, then the memory check's
  absl::Status alongside_status_;
  std::exception_ptr alongside_thrown_;  // rethrown on the calling thread
  double alongside_wall_ = 0, alongside_cpu_ = 0;
  bool alongside_later_ = false;
  // Last: joined (on every way out) before the rest is destroyed.
  std::jthread early_thread_;
  std::jthread alongside_;
};

namespace {

// From the input check to memory-planning, the passes run on one thread and
// take about 500 bytes per node of fresh per-node arrays (BigVector; 1M-node
// generated graphs). A second thread faults that much in meanwhile, so the
// faults and the zeroing of those pages leave the passes' thread. Not for
// small graphs (a thread for a few MB), nor under npuplan.passThreads=1.
constexpr size_t kPrefaultBytesPerNode = 512;
constexpr size_t kPrefaultFromNodes = size_t{1} << 15;

// PrefaultHugePages on a second thread from construction until destruction
// (or until done).
class PagePrefault {
 public:
  explicit PagePrefault(size_t bytes) {
    if (bytes == 0) return;
    try {
      thread_ = std::jthread([this, bytes] {
        try {
          PrefaultHugePages(bytes, stop_);
        } catch (const std::bad_alloc&) {  // the passes fault their pages themselves
        }
      });
    } catch (const std::system_error&) {  // no thread to be had: the same
    }
  }
  PagePrefault(const PagePrefault&) = delete;
  PagePrefault& operator=(const PagePrefault&) = delete;
  ~PagePrefault() { stop_.store(true, std::memory_order_relaxed); }

 private:
  std::atomic<bool> stop_{false};
  std::jthread thread_;  // after stop_: joined before stop_ is destroyed
};

size_t PrefaultBytes(const Model& model, const CompileOptions& options) {
  if (model.num_nodes() < kPrefaultFromNodes || options.Get("npuplan.passThreads") == "1") return 0;
  return kPrefaultBytesPerNode * model.num_nodes();
}

absl::StatusOr<Plan> CompileOnce(Model model, const CompileConfig& config, DecisionLog& log,
                                 Statistics& stats) {
  // The passes' freed per-node arrays stay cached (BigVector) until the final
  // verification has reused them — the same sizes, where fresh pages would
  // cost faults and zeroing — and go back to the system however this ends.
  const absl::Cleanup release_cached_pages = [] { ReleaseCachedHugePages(); };
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
  const PagePrefault prefault(PrefaultBytes(plan.model, options));
  const StepTimer input_timer;
  NPUPLAN_RETURN_IF_ERROR(verify::VerifyPlan(plan));
  input_timer.Record(stats, "verify (input graph)");

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
  // Progress sees no plan: passes may still run alongside (pass.h).
  if (config.on_pass) ctx.instrumentation.progress = config.on_pass;
  if (dump_re) {
    ctx.instrumentation.after_pass = [&](int seq, std::string_view pass,
                                         const Plan& p) -> absl::Status {
      if (!std::regex_search(std::string(pass), *dump_re)) return absl::OkStatus();
      std::string file = fmt::format("{}/{:03d}.{}.plan.json", config.dump_dir, seq, pass);
      return WritePlanFile(p, file, "output");  // the messages of WriteFileAtomically
    };
  }
  FinalVerification final_verification(plan, config);
  ctx.instrumentation.before_join = [&final_verification](const Plan&, PlanParts may_still_write,
                                                          IrProperties stages_to_come) {
    final_verification.BeforeJoin(may_still_write, stages_to_come);
  };
  if (absl::Status ran = pipeline->Run(plan, ctx).status(); !ran.ok()) {
    final_verification.Abandon();
    return ran;
  }
  // Not even a same-size resize while the early checks may read the plan.
  if (!NodeVectorsSized(plan)) plan.EnsureNodeVectors();
  NPUPLAN_RETURN_IF_ERROR(final_verification.Finish(stats));
  return plan;
}

}  // namespace

}  // namespace npuplan
