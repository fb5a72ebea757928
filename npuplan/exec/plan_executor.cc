#include "npuplan/exec/plan_executor.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <condition_variable>
#include <mutex>
#include <thread>

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

// Collects the misuses of this run's wait-reset events (any thread).
class MisuseCollector final : public runtime::RuntimeObserver {
 public:
  void on_event_misuse(const runtime::EventMisuse& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    misuses_.push_back(e);
  }
  std::vector<runtime::EventMisuse> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(misuses_);
  }

 private:
  std::mutex mu_;
  std::vector<runtime::EventMisuse> misuses_;
};

// Removes the observer on every return.
struct ObserverGuard {
  runtime::Device& device;
  const runtime::RuntimeObserver* observer;
  ~ObserverGuard() { device.RemoveObserver(observer); }
};

}  // namespace

PlanExecutor::PlanExecutor(const Plan& plan, ExecOptions options, sim::PlanProgram program)
    : plan_(plan),
      options_(std::move(options)),
      program_(std::move(program)),
      cost_(sim::NodeCosts(plan, options_.cost)),
      checker_(plan) {}

absl::StatusOr<std::unique_ptr<PlanExecutor>> PlanExecutor::Create(const Plan& plan, ExecOptions options) {
  if (options.time_scale < 0 || options.jitter_max_us < 0 || options.stream_skew_us < 0) {
    return absl::InvalidArgumentError("ExecOptions: time_scale, jitter_max_us and stream_skew_us must be >= 0");
  }
  NPUPLAN_ASSIGN_OR_RETURN(sim::PlanProgram program, sim::BuildPlanProgram(plan));
  return std::unique_ptr<PlanExecutor>(new PlanExecutor(plan, std::move(options), std::move(program)));
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
      // A plan event id is one device object; activation syncs (one record,
      // a wait per activated stream) keep the plain event.
      auto e = runtime::CreateEvent(device, so.kind == sim::SyncObject::Kind::kEvent ? runtime::kEventWaitReset
                                                                                     : runtime::kEventDefault);
      if (!e.ok()) {
        return absl::Status(e.status().code(),
                            StrCat("creating device event for ", so.kind == sim::SyncObject::Kind::kEvent ? "event " : "activation by node ",
                                   so.id, ": ", std::string(e.status().message())));
      }
      events[k] = std::move(e).value();
    }
  }

  auto misuses = std::make_shared<MisuseCollector>();
  device.AddObserver(misuses);
  ObserverGuard guard{device, misuses.get()};

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
          const uint64_t key = (static_cast<uint64_t>(item.node.value) << 8) ^ static_cast<uint64_t>(item.attached + 1);
          sleep_us += static_cast<int64_t>(Mix(seed * 0x100000001b3ULL ^ Mix(key)) % span);
        }
        const NodeId node = item.node;
        const int32_t attached = item.attached;
        NPUPLAN_RETURN_IF_ERROR(device.Launch(stream, [checker, node, attached, sleep_us] {
          checker->OnStart(node, attached);
          if (sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
          checker->OnFinish(node, attached);
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
    return absl::InternalError(StrCat("node '", plan_.model.node(unfinished[0]).name, "' never ran (",
                                      unfinished.size(), " nodes unfinished)"));
  }
  result.violations = checker_.violations();
  for (const Violation& v : result.violations) result.messages.push_back(checker_.Describe(v));
  std::map<uint64_t, size_t> sync_of_event;  // device event id → sync index
  for (size_t k = 0; k < events.size(); ++k) {
    if (events[k]) sync_of_event[events[k].get().id] = k;
  }
  std::map<uint64_t, size_t> stream_of;  // device stream id → program stream
  for (size_t k = 0; k < streams.size(); ++k) stream_of[streams[k].get().id] = k;
  for (const runtime::EventMisuse& m : misuses->Take()) {
    auto it = sync_of_event.find(m.event_id);
    if (it == sync_of_event.end()) continue;  // not this run's
    result.event_misuses.push_back(DescribeMisuse(m, it->second, stream_of));
  }
  std::sort(result.event_misuses.begin(), result.event_misuses.end());
  result.messages.insert(result.messages.end(), result.event_misuses.begin(), result.event_misuses.end());
  return result;
}

std::string PlanExecutor::DescribeMisuse(const runtime::EventMisuse& m, size_t sync,
                                         const std::map<uint64_t, size_t>& stream_of) const {
  // Generation g of a sync object is its g-th record in enqueue order.
  auto edge_of = [&](uint64_t generation) -> std::string {
    uint64_t g = 0;
    for (auto [si, ii] : program_.enqueue) {
      const sim::ProgramItem& item = program_.streams[si].items[ii];
      if (item.kind != Kind::kRecord || item.sync != static_cast<int32_t>(sync) || ++g != generation) continue;
      if (item.event < 0) break;
      const SyncEvent& e = plan_.events.events[static_cast<size_t>(item.event)];
      return StrCat("'", plan_.model.node(e.send).name, "' -> '", plan_.model.node(e.recv).name, "'");
    }
    return StrCat("record ", generation);
  };
  auto it = stream_of.find(m.stream_id);
  const std::string stream =
      it == stream_of.end() ? std::string("?") : std::to_string(program_.streams[it->second].plan_stream);
  const std::string id = StrCat("event id ", program_.syncs[sync].id);
  switch (m.kind) {
    case runtime::EventMisuse::Kind::kRecordWhilePending:
      return StrCat(id, ": ", edge_of(m.generation), " recorded it on stream ", stream, " while the record of ",
                    edge_of(m.pending), " was still pending (not yet consumed by its wait)");
    case runtime::EventMisuse::Kind::kForeignRecord:
      return StrCat(id, ": the wait of ", edge_of(m.generation), " on stream ", stream,
                    " was pending while the record of ", edge_of(m.pending), " had set it (it could consume it)");
    case runtime::EventMisuse::Kind::kRecordLost:
      return StrCat(id, ": the wait of ", edge_of(m.generation), " on stream ", stream,
                    " found its record overwritten or consumed");
  }
  return id;
}

}  // namespace npuplan::exec
