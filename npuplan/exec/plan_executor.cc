#include "npuplan/exec/plan_executor.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::exec {
namespace {

using Kind = sim::ProgramItem::Kind;

// SplitMix64: a deterministic hash of (seed, node, slot) for the jitter.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Opens once, releasing every stream's first task.
class StartGate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Opens the gate when it goes out of scope, so an early return never leaves
// stream workers blocked.
struct GateOpener {
  StartGate& gate;
  ~GateOpener() { gate.Open(); }
};

}  // namespace

PlanExecutor::PlanExecutor(const Plan& plan, ExecOptions options, sim::PlanProgram program)
    : plan_(plan),
      options_(std::move(options)),
      program_(std::move(program)),
      cost_(sim::NodeCosts(plan, options_.cost)),
      checker_(plan, &program_.control_flow) {}

absl::StatusOr<std::unique_ptr<PlanExecutor>> PlanExecutor::Create(const Plan& plan, ExecOptions options) {
  if (!(options.time_scale >= 0) || !std::isfinite(options.time_scale) ||
      options.jitter_max_us < 0 || options.stream_skew_us < 0) {
    return absl::InvalidArgumentError(
        "ExecOptions: time_scale, jitter_max_us and stream_skew_us must be finite and >= 0");
  }
  if (options.jitter_max_us > kMaxSleepUs || options.stream_skew_us > kMaxSleepUs) {
    return absl::InvalidArgumentError(StrCat(
        "ExecOptions: jitter_max_us and stream_skew_us must be at most ", kMaxSleepUs, " (10 s)"));
  }
  NPUPLAN_ASSIGN_OR_RETURN(sim::ControlFlow cf,
                           sim::ResolveControlFlow(plan, options.control_flow, sim::NodeWork(plan, options.cost, 1.0)));
  NPUPLAN_ASSIGN_OR_RETURN(sim::PlanProgram program, sim::BuildPlanProgram(plan, std::move(cf)));
  std::unique_ptr<PlanExecutor> executor(
      new PlanExecutor(plan, std::move(options), std::move(program)));
  // Each task sleeps cost × time_scale: bounded, so that no run hangs.
  if (executor->options_.time_scale > 0) {
    for (size_t i = 0; i < executor->cost_.size(); ++i) {
      const double sleep_us = executor->cost_[i] * executor->options_.time_scale;
      if (!(sleep_us <= static_cast<double>(kMaxSleepUs))) {
        return absl::InvalidArgumentError(StrCat(
            "node '", EchoName(plan.model.nodes()[i].name), "' would sleep ", sleep_us,
            " us (cost ", executor->cost_[i], " us x time scale ", executor->options_.time_scale,
            "); a task may sleep at most ", kMaxSleepUs, " us: lower the time scale"));
      }
    }
  }
  return executor;
}

absl::StatusOr<ExecResult> PlanExecutor::Run(runtime::Device& device, uint64_t run) {
  checker_.Reset();
  ExecResult result;
  const uint64_t seed = options_.jitter_seed + run;

  // 1. Device objects. Destruction runs backwards: on every return the gate
  // opens first, then the queues drain as the handles are destroyed, and the
  // gate the queued tasks refer to goes last.
  StartGate gate;
  std::vector<runtime::Stream> streams;
  std::vector<runtime::Event> events(program_.syncs.size());
  std::vector<runtime::Notify> notifies(program_.syncs.size());
  GateOpener opener{gate};
  for (const sim::ProgramStream& ps : program_.streams) {
    auto s = runtime::CreateStream(device, options_.stream_priority);
    if (!s.ok()) {
      return absl::Status(s.status().code(), StrCat("creating the device stream for plan stream ", ps.plan_stream,
                                                    ": ", std::string(s.status().message())));
    }
    streams.push_back(std::move(s).value());
  }
  for (size_t k = 0; k < program_.syncs.size(); ++k) {
    const sim::SyncObject& so = program_.syncs[k];
    if (so.kind == sim::SyncObject::Kind::kNotify) {
      auto n = runtime::CreateNotify(device);
      if (!n.ok()) {
        return absl::Status(n.status().code(),
                            StrCat("creating device notify for notify ", so.id, ": ", std::string(n.status().message())));
      }
      notifies[k] = std::move(n).value();
    } else {
      auto e = runtime::CreateEvent(device);
      if (!e.ok()) {
        return absl::Status(e.status().code(),
                            StrCat("creating device event for ", so.kind == sim::SyncObject::Kind::kEvent ? "event " : "activation by node ",
                                   so.id, ": ", std::string(e.status().message())));
      }
      events[k] = std::move(e).value();
    }
  }

  // 2. The gate first on every stream, then every item in global enqueue order.
  const bool jitter = options_.jitter && options_.jitter_max_us > 0;
  const bool skew = options_.jitter && options_.stream_skew_us > 0;
  for (size_t k = 0; k < streams.size(); ++k) {
    const int64_t delay_us =
        skew ? static_cast<int64_t>(Mix(Mix(seed) ^ (k + 1)) % (static_cast<uint64_t>(options_.stream_skew_us) + 1)) : 0;
    NPUPLAN_RETURN_IF_ERROR(device.Launch(streams[k].get(), [&gate, delay_us] {
      gate.Wait();
      if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    }));
  }
  const double scale = options_.time_scale;
  const uint64_t span = static_cast<uint64_t>(options_.jitter_max_us) + 1;
  DependencyChecker* checker = &checker_;
  for (auto [si, ii] : program_.enqueue) {
    const sim::ProgramItem& item = program_.streams[si].items[ii];
    runtime::StreamRef stream = streams[si].get();
    switch (item.kind) {
      case Kind::kTask: {
        const double modelled = item.attached < 0 ? cost_[item.node.index()] : 0.0;
        int64_t sleep_us = static_cast<int64_t>(modelled * scale);
        if (jitter) {
          const uint64_t key = (static_cast<uint64_t>(item.node.value) << 8) ^ static_cast<uint64_t>(item.attached + 1) ^
                               (static_cast<uint64_t>(item.run) * 0x9e3779b97f4a7c15ULL);
          sleep_us += static_cast<int64_t>(Mix(seed * 0x100000001b3ULL ^ Mix(key)) % span);
        }
        const NodeId node = item.node;
        const int32_t attached = item.attached;
        const int64_t run_index = item.run;
        NPUPLAN_RETURN_IF_ERROR(device.Launch(stream, [checker, node, attached, run_index, sleep_us] {
          checker->OnStart(node, attached, run_index);
          if (sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
          checker->OnFinish(node, attached, run_index);
        }));
        ++result.tasks;
        break;
      }
      case Kind::kRecord:
        if (notifies[item.sync]) {
          NPUPLAN_RETURN_IF_ERROR(device.RecordNotify(notifies[item.sync].get(), stream));
        } else {
          NPUPLAN_RETURN_IF_ERROR(device.RecordEvent(events[item.sync].get(), stream));
        }
        break;
      case Kind::kWait:
        if (notifies[item.sync]) {
          NPUPLAN_RETURN_IF_ERROR(device.WaitNotify(stream, notifies[item.sync].get()));
        } else {
          NPUPLAN_RETURN_IF_ERROR(device.WaitEvent(stream, events[item.sync].get()));
        }
        break;
    }
  }

  // 3. Go, and wait for every stream.
  const auto t0 = std::chrono::steady_clock::now();
  gate.Open();
  absl::Status sync;
  for (const runtime::Stream& s : streams) {
    absl::Status st = device.SynchronizeStream(s.get());
    if (sync.ok() && !st.ok()) sync = st;
  }
  result.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  NPUPLAN_RETURN_IF_ERROR(sync);
  result.streams = streams.size();
  if (auto unfinished = checker_.Unfinished(); !unfinished.empty()) {
    return absl::InternalError(StrCat("node '", EchoName(plan_.model.node(unfinished[0]).name),
                                      "' never ran (", unfinished.size(), " nodes unfinished)"));
  }
  result.violations = checker_.violations();
  for (const Violation& v : result.violations) result.messages.push_back(checker_.Describe(v));
  return result;
}

}  // namespace npuplan::exec
