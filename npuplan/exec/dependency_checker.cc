#include "npuplan/exec/dependency_checker.h"

#include <algorithm>
#include <tuple>

#include "npuplan/sim/plan_program.h"
#include "npuplan/support/str_util.h"

namespace npuplan::exec {

DependencyChecker::DependencyChecker(const Plan& plan)
    : plan_(plan),
      num_nodes_(plan.model.num_nodes()),
      deps_(sim::BuildDependencies(plan)),
      attached_deps_(sim::BuildAttachedDependencies(plan)) {
  attached_begin_.assign(num_nodes_ + 1, 0);
  for (size_t i = 0; i < num_nodes_; ++i) {
    attached_begin_[i + 1] = attached_begin_[i] + plan.model.nodes()[i].attached_stream_ids.size();
  }
  has_task_.assign(num_nodes_ + attached_begin_[num_nodes_], 0);
  for (size_t i = 0; i < num_nodes_; ++i) {
    const NodeId v(static_cast<int32_t>(i));
    if (sim::MainStreamOf(plan, v) < 0) continue;
    has_task_[i] = 1;
    for (size_t a = 0; a < attached_begin_[i + 1] - attached_begin_[i]; ++a) {
      has_task_[Slot(v, static_cast<int32_t>(a))] = sim::AttachedStreamOf(plan, v, static_cast<int32_t>(a)) >= 0;
    }
  }
  state_.reset(new std::atomic<uint8_t>[has_task_.size()]);
  Reset();
}

void DependencyChecker::Reset() {
  for (size_t i = 0; i < has_task_.size(); ++i) {
    state_[i].store(has_task_[i] ? kNotStarted : kFinished, std::memory_order_relaxed);
  }
  std::lock_guard<std::mutex> lock(mu_);
  violations_.clear();
}

void DependencyChecker::Check(NodeId n, int32_t attached, const std::vector<sim::Dependency>& deps) {
  for (const sim::Dependency& d : deps) {
    const uint8_t st = state_[Slot(d.producer, d.producer_attached)].load(std::memory_order_acquire);
    if (st == kFinished) continue;
    std::lock_guard<std::mutex> lock(mu_);
    violations_.push_back({n, d.producer, d.via, d.kind, st == kRunning, attached, d.producer_attached});
  }
}

void DependencyChecker::OnStart(NodeId n, int32_t attached) {
  if (attached < 0) {
    Check(n, -1, deps_[n.index()]);
    Check(n, -1, attached_deps_.of_main[n.index()]);
  } else {
    Check(n, attached, attached_deps_.of_attached[n.index()][attached]);
  }
  state_[Slot(n, attached)].store(kRunning, std::memory_order_release);
}

void DependencyChecker::OnFinish(NodeId n, int32_t attached) {
  state_[Slot(n, attached)].store(kFinished, std::memory_order_release);
}

std::vector<Violation> DependencyChecker::violations() const {
  std::vector<Violation> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out = violations_;
  }
  auto key = [](const Violation& v) {
    return std::tuple(v.consumer, v.consumer_attached, v.producer, v.producer_attached);
  };
  std::sort(out.begin(), out.end(), [&](const Violation& a, const Violation& b) { return key(a) < key(b); });
  return out;
}

std::vector<NodeId> DependencyChecker::Unfinished() const {
  std::vector<NodeId> out;
  for (size_t i = 0; i < num_nodes_; ++i) {
    bool done = state_[i].load(std::memory_order_acquire) == kFinished;
    for (size_t s = num_nodes_ + attached_begin_[i]; s < num_nodes_ + attached_begin_[i + 1]; ++s) {
      done = done && state_[s].load(std::memory_order_acquire) == kFinished;
    }
    if (!done) out.push_back(NodeId(static_cast<int32_t>(i)));
  }
  return out;
}

std::string DependencyChecker::Describe(const Violation& v) const {
  const Model& m = plan_.model;
  auto task = [&](NodeId n, int32_t attached) {
    if (attached < 0) return StrCat("'", m.node(n).name, "' (stream ", sim::MainStreamOf(plan_, n), ")");
    return StrCat("'", m.node(n).name, "' (attached ", attached, ", stream ", sim::AttachedStreamOf(plan_, n, attached),
                  ")");
  };
  std::string via = v.via != v.producer ? StrCat(" via '", m.node(v.via).name, "'") : std::string();
  return StrCat(task(v.consumer, v.consumer_attached), " started before its producer ",
                task(v.producer, v.producer_attached), " finished [", v.kind, via, "; producer ",
                v.producer_started ? "running" : "not started", "]");
}

}  // namespace npuplan::exec
