#include "npuplan/compiler/compiler.h"

#include <exception>
#include <filesystem>
#include <optional>
#include <regex>
#include <system_error>
#include <thread>

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

namespace {

// The final plan is always verified, whatever --verify-each says. The
// caller's alongside work (the CLI writes the plan) runs meanwhile on a
// second thread; its error counts only when the plan verified.
absl::Status VerifyFinalPlan(const Plan& plan, const CompileConfig& config, Statistics& stats) {
  const StepTimer final_timer;
  absl::Status alongside_status;
  std::exception_ptr alongside_thrown;  // rethrown here, as if it ran on this thread
  double alongside_wall = 0, alongside_cpu = 0;
  auto run_alongside = [&] {
    const ThreadTimer timer;
    try {
      alongside_status = config.alongside_final_verification(plan);
    } catch (...) {
      alongside_thrown = std::current_exception();
    }
    alongside_wall = timer.WallSeconds();
    alongside_cpu = timer.CpuSeconds();
  };
  std::jthread alongside;  // joins on every way out
  bool alongside_later = false;
  if (config.alongside_final_verification) {
    try {
      alongside = std::jthread(run_alongside);
    } catch (const std::system_error&) {  // no thread to be had: after the verification
      alongside_later = true;
    }
  }
  // Each check as a part of the step (as memory-planning's stages), timed on
  // the thread that ran it.
  absl::Status verified = verify::VerifyPlan(plan, [&](const verify::CheckTime& t) {
    stats.AddSeconds(StrCat("verify: ", t.check), t.wall_seconds, t.cpu_seconds, /*part=*/true);
  });
  if (alongside.joinable()) alongside.join();
  if (alongside_later && verified.ok()) run_alongside();
  if (config.alongside_final_verification) {
    stats.AddSeconds(config.alongside_name, alongside_wall, alongside_cpu, /*part=*/true);
  }
  final_timer.Record(stats, "verify (final plan)");
  if (!verified.ok()) {
    return absl::InternalError(
        StrCat("the final plan failed verification: ", std::string(verified.message())));
  }
  if (alongside_thrown) std::rethrow_exception(alongside_thrown);
  return alongside_status;
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
  NPUPLAN_RETURN_IF_ERROR(pipeline->Run(plan, ctx).status());
  plan.EnsureNodeVectors();
  NPUPLAN_RETURN_IF_ERROR(VerifyFinalPlan(plan, config, stats));
  return plan;
}

}  // namespace

}  // namespace npuplan
