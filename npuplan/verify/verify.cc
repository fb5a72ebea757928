#include "npuplan/verify/verify.h"

#include <exception>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "npuplan/ir/verifier.h"
#include "npuplan/plan/plan_claims.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/thread_time.h"
#include "npuplan/verify/stage_checks.h"
#include "npuplan/verify/verification.h"

namespace npuplan::verify {

namespace {

// Runs `check` and measures it on this thread.
template <typename F>
absl::Status Timed(F&& check, CheckTime& time) {
  const ThreadTimer timer;
  absl::Status s = check();
  time.wall_seconds = timer.WallSeconds();
  time.cpu_seconds = timer.CpuSeconds();
  return s;
}

struct RowRun {
  const StageCheck* row;
  CheckTime time;
  std::optional<absl::Status> status;  // empty: not run (an earlier row failed) or threw
  std::exception_ptr thrown;           // an alongside row's exception (std::bad_alloc)
};

// The alongside rows, in order, until one fails; on their own Verification
// (they read only the plan). An exception (std::bad_alloc) cannot leave the
// thread: it is kept and rethrown on the caller's thread in the row's place.
void RunAlongside(const Plan& plan, std::vector<RowRun*>& rows) {
  for (RowRun* r : rows) {
    try {
      Verification own(plan);
      r->status = Timed([&] { return r->row->check(own); }, r->time);
    } catch (...) {
      r->thrown = std::current_exception();
      return;
    }
    if (!r->status->ok()) return;
  }
}

// Which rows of the table a run takes: the memory row is the one that reads
// plan.memory (VerifyPlanButMemory / VerifyPlanMemory).
enum class Rows { kAll, kButMemory, kMemoryOnly };

bool Takes(Rows rows, const StageCheck& row) {
  const bool memory = row.stage == IrProperty::kMemoryPlanned;
  return rows == Rows::kAll || (rows == Rows::kMemoryOnly) == memory;
}

absl::Status RunStageChecks(const Plan& plan, Rows rows,
                            const std::function<void(const CheckTime&)>& after_check,
                            const std::function<void()>& before_alongside = nullptr) {
  std::vector<RowRun> runs;
  for (const StageCheck& row : StageCheckTable()) {
    if (Has(plan.established, row.stage) && Takes(rows, row))
      runs.push_back({&row, {row.name, 0, 0, false}, {}, {}});
  }
  // One run for the rows in order: what one builds (views, activation, …)
  // the next reuses. From the first row that takes the run onward, the
  // alongside rows go to a second thread; every row before it has passed.
  Verification run(plan);
  auto run_here = [&run](RowRun& r) {
    r.status = Timed([&] { return r.row->check(run); }, r.time);
    return r.status->ok();
  };
  size_t i = 0;
  bool ok = true;
  for (; i < runs.size() && ok && !runs[i].row->takes_run; ++i) ok = run_here(runs[i]);
  if (ok && before_alongside) before_alongside();
  std::vector<RowRun*> alongside;
  for (size_t j = i; ok && j < runs.size(); ++j) {
    if (!runs[j].row->alongside) continue;
    runs[j].time.alongside = true;
    alongside.push_back(&runs[j]);
  }
  std::jthread second;  // joins on every way out
  if (!alongside.empty()) {
    try {
      second = std::jthread(RunAlongside, std::cref(plan), std::ref(alongside));
    } catch (const std::system_error&) {  // no thread to be had: run them here, last
    }
  }
  for (; i < runs.size() && ok; ++i) {
    if (!runs[i].row->alongside) ok = run_here(runs[i]);
  }
  if (second.joinable()) {
    second.join();
  } else if (!alongside.empty()) {
    RunAlongside(plan, alongside);
  }
  // The first failure in table order, as if the rows ran one by one.
  for (const RowRun& r : runs) {
    if (r.thrown) std::rethrow_exception(r.thrown);
    if (!r.status) break;
    if (!r.status->ok()) return *r.status;
    if (after_check) after_check(r.time);
  }
  return absl::OkStatus();
}

// Structure, claims, then the rows: `rows` kAll is VerifyPlan, kButMemory
// its part that reads nothing of plan.memory.
absl::Status VerifyPlanRows(const Plan& plan, Rows rows,
                            const std::function<void(const CheckTime&)>& after_check,
                            const std::function<void()>& before_alongside = nullptr) {
  CheckTime time{"structure"};
  NPUPLAN_RETURN_IF_ERROR(Timed([&] { return VerifyStructure(plan.model); }, time));
  if (after_check) after_check(time);
  // The plan's claims before the stage checks: those size their tables by
  // the stream counts and ids checked here.
  time = CheckTime{"claims"};
  NPUPLAN_RETURN_IF_ERROR(Timed(
      [&] { return rows == Rows::kAll ? VerifyPlanClaims(plan) : VerifyPlanClaimsButMemory(plan); },
      time));
  if (after_check) after_check(time);
  return RunStageChecks(plan, rows, after_check, before_alongside);
}

}  // namespace

absl::Status VerifyStageChecks(const Plan& plan,
                               const std::function<void(const CheckTime&)>& after_check) {
  return RunStageChecks(plan, Rows::kAll, after_check);
}

absl::Status VerifyPlan(const Plan& plan,
                        const std::function<void(const CheckTime&)>& after_check) {
  return VerifyPlanRows(plan, Rows::kAll, after_check);
}

absl::Status VerifyPlanButMemory(const Plan& plan,
                                 const std::function<void(const CheckTime&)>& after_check,
                                 const std::function<void()>& memory_may_start) {
  return VerifyPlanRows(plan, Rows::kButMemory, after_check, memory_may_start);
}

absl::Status VerifyPlanMemory(const Plan& plan,
                              const std::function<void(const CheckTime&)>& after_check) {
  CheckTime time{"claims"};  // the rest of the claims: one row in --stats
  NPUPLAN_RETURN_IF_ERROR(Timed([&] { return VerifyMemorySectionClaim(plan); }, time));
  if (after_check) after_check(time);
  return RunStageChecks(plan, Rows::kMemoryOnly, after_check);
}

absl::Status VerifyPlan(const Plan& plan) { return VerifyPlan(plan, nullptr); }

}  // namespace npuplan::verify
