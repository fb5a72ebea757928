#include "npuplan/exec/dependency_checker.h"

#include <algorithm>
#include <tuple>

#include "npuplan/sim/plan_program.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/str_util.h"

namespace npuplan::exec {

DependencyChecker::DependencyChecker(const Plan& plan, const sim::ControlFlow* control_flow)
    : plan_(plan),
      cf_(control_flow),
      num_nodes_(plan.model.num_nodes()),
      deps_(sim::BuildDependencies(plan, control_flow)),
      attached_deps_(sim::BuildAttachedDependencies(plan, control_flow)) {
  attached_begin_.assign(num_nodes_ + 1, 0);
  for (size_t i = 0; i < num_nodes_; ++i) {
    attached_begin_[i + 1] = attached_begin_[i] + plan.model.nodes()[i].attached_stream_ids.size();
  }
  runs_.assign(num_nodes_ + attached_begin_[num_nodes_], kNoTask);
  for (size_t i = 0; i < num_nodes_; ++i) {
    const NodeId v(static_cast<int32_t>(i));
    const int64_t runs = cf_ != nullptr ? cf_->runs[i] : 1;
    if (sim::MainStreamOf(plan, v) < 0 || runs == 0) continue;
    runs_[i] = runs;
    for (size_t a = 0; a < attached_begin_[i + 1] - attached_begin_[i]; ++a) {
      if (sim::AttachedStreamOf(plan, v, static_cast<int32_t>(a)) >= 0) runs_[Slot(v, static_cast<int32_t>(a))] = runs;
    }
  }
  state_.reset(new std::atomic<int64_t>[runs_.size()]);
  Reset();
}

void DependencyChecker::Reset() {
  for (size_t i = 0; i < runs_.size(); ++i) state_[i].store(0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  violations_.clear();
}

void DependencyChecker::Check(NodeId n, int32_t attached, int64_t run, const std::vector<sim::Dependency>& deps) {
  const size_t consumer_depth = cf_ != nullptr ? cf_->depth(plan_.model.node(n)) : 0;
  for (const sim::Dependency& d : deps) {
    const size_t slot = Slot(d.producer, d.producer_attached);
    if (runs_[slot] == kNoTask) continue;
    const int64_t need =
        cf_ != nullptr ? sim::RequiredRuns(*cf_, d, consumer_depth, cf_->depth(plan_.model.node(d.producer)), run) : 1;
    const int64_t st = state_[slot].load(std::memory_order_acquire);
    if (st / 2 >= need) continue;
    std::lock_guard<std::mutex> lock(mu_);
    violations_.push_back({n, d.producer, d.via, d.kind, st % 2 == 1, attached, d.producer_attached, run,
                           need, st / 2});
  }
}

void DependencyChecker::OnStart(NodeId n, int32_t attached, int64_t run) {
  if (attached < 0) {
    Check(n, -1, run, deps_[n.index()]);
    Check(n, -1, run, attached_deps_.of_main[n.index()]);
  } else {
    Check(n, attached, run, attached_deps_.of_attached[n.index()][attached]);
  }
  state_[Slot(n, attached)].store(2 * run + 1, std::memory_order_release);
}

void DependencyChecker::OnFinish(NodeId n, int32_t attached, int64_t run) {
  state_[Slot(n, attached)].store(2 * (run + 1), std::memory_order_release);
}

std::vector<Violation> DependencyChecker::violations() const {
  std::vector<Violation> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out = violations_;
  }
  auto key = [](const Violation& v) {
    return std::tuple(v.consumer, v.consumer_attached, v.consumer_run, v.producer, v.producer_attached);
  };
  std::sort(out.begin(), out.end(), [&](const Violation& a, const Violation& b) { return key(a) < key(b); });
  return out;
}

std::vector<NodeId> DependencyChecker::Unfinished() const {
  std::vector<NodeId> out;
  auto finished = [&](size_t s) {
    return runs_[s] == kNoTask || state_[s].load(std::memory_order_acquire) == 2 * runs_[s];
  };
  for (size_t i = 0; i < num_nodes_; ++i) {
    bool done = finished(i);
    for (size_t s = num_nodes_ + attached_begin_[i]; s < num_nodes_ + attached_begin_[i + 1]; ++s) {
      done = done && finished(s);
    }
    if (!done) out.push_back(NodeId(static_cast<int32_t>(i)));
  }
  return out;
}

std::string DependencyChecker::Describe(const Violation& v) const {
  const Model& m = plan_.model;
  auto task = [&](NodeId n, int32_t attached) {
    if (attached < 0)
      return StrCat("'", EchoName(m.node(n).name), "' (stream ", sim::MainStreamOf(plan_, n), ")");
    return StrCat("'", EchoName(m.node(n).name), "' (attached ", attached, ", stream ",
                  sim::AttachedStreamOf(plan_, n, attached), ")");
  };
  std::string via =
      v.via != v.producer ? StrCat(" via '", EchoName(m.node(v.via).name), "'") : std::string();
  const bool loops = cf_ != nullptr && cf_->iterations() > 1;
  const std::string runs = loops ? StrCat("; consumer run ", v.consumer_run, ", producer runs finished ",
                                          v.producer_runs_done, " of ", v.producer_runs_needed, " needed")
                                 : std::string();
  return StrCat(task(v.consumer, v.consumer_attached), " started before its producer ",
                task(v.producer, v.producer_attached), " finished [", v.kind, via, "; producer ",
                v.producer_started ? "running" : "not started", runs, "]");
}

}  // namespace npuplan::exec
