#include "npuplan/exec/dependency_checker.h"

#include <algorithm>

#include "npuplan/sim/plan_program.h"
#include "npuplan/support/str_util.h"

namespace npuplan::exec {

DependencyChecker::DependencyChecker(const Plan& plan)
    : plan_(plan), deps_(sim::BuildDependencies(plan)), state_(new std::atomic<uint8_t>[plan.model.num_nodes()]) {
  const size_t n = plan.model.num_nodes();
  has_task_.resize(n);
  for (size_t i = 0; i < n; ++i) has_task_[i] = sim::MainStreamOf(plan, NodeId(static_cast<int32_t>(i))) >= 0;
  Reset();
}

void DependencyChecker::Reset() {
  for (size_t i = 0; i < has_task_.size(); ++i) {
    state_[i].store(has_task_[i] ? kNotStarted : kFinished, std::memory_order_relaxed);
  }
  std::lock_guard<std::mutex> lock(mu_);
  violations_.clear();
}

void DependencyChecker::OnStart(NodeId n) {
  for (const sim::Dependency& d : deps_[n.index()]) {
    const uint8_t st = state_[d.producer.index()].load(std::memory_order_acquire);
    if (st == kFinished) continue;
    std::lock_guard<std::mutex> lock(mu_);
    violations_.push_back({n, d.producer, d.via, d.kind, st == kRunning});
  }
  state_[n.index()].store(kRunning, std::memory_order_release);
}

void DependencyChecker::OnFinish(NodeId n) { state_[n.index()].store(kFinished, std::memory_order_release); }

std::vector<Violation> DependencyChecker::violations() const {
  std::vector<Violation> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out = violations_;
  }
  std::sort(out.begin(), out.end(), [](const Violation& a, const Violation& b) {
    return std::pair(a.consumer, a.producer) < std::pair(b.consumer, b.producer);
  });
  return out;
}

std::vector<NodeId> DependencyChecker::Unfinished() const {
  std::vector<NodeId> out;
  for (size_t i = 0; i < has_task_.size(); ++i) {
    if (state_[i].load(std::memory_order_acquire) != kFinished) out.push_back(NodeId(static_cast<int32_t>(i)));
  }
  return out;
}

std::string DependencyChecker::Describe(const Violation& v) const {
  const Model& m = plan_.model;
  std::string via = v.via != v.producer ? StrCat(" via '", m.node(v.via).name, "'") : std::string();
  return StrCat("'", m.node(v.consumer).name, "' (stream ", sim::MainStreamOf(plan_, v.consumer),
                ") started before its producer '", m.node(v.producer).name, "' (stream ",
                sim::MainStreamOf(plan_, v.producer), ") finished [", v.kind, via, "; producer ",
                v.producer_started ? "running" : "not started", "]");
}

}  // namespace npuplan::exec
