#include "npuplan/exec/plan_executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "npuplan/support/echo.h"
#include "npuplan/support/split_mix.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::exec {
namespace {

using Kind = sim::ProgramItem::Kind;

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

// (If/Case owner, branch) pairs both ends of e lie under.
std::vector<std::pair<int32_t, size_t>> BranchesOf(const Model& m, const SyncEvent& e) {
  auto above = [&](NodeId n) {
    std::vector<std::pair<int32_t, size_t>> out;
    for (GraphId g = m.node(n).graph; m.graph(g).parent_node.valid();
         g = m.node(m.graph(g).parent_node).graph) {
      const Node& owner = m.node(m.graph(g).parent_node);
      if (owner.type != "If" && owner.type != "StatelessIf" && owner.type != "Case" &&
          owner.type != "StatelessCase") {
        continue;
      }
      for (size_t b = 0; b < owner.subgraphs.size(); ++b) {
        if (owner.subgraphs[b] == g) out.emplace_back(m.graph(g).parent_node.value, b);
      }
    }
    return out;
  };
  const auto a = above(e.send), b = above(e.recv);
  std::vector<std::pair<int32_t, size_t>> both;
  for (const auto& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) both.push_back(x);
  }
  return both;
}

bool InOtherBranches(const Plan& plan, const SyncEvent& x, const SyncEvent& y) {
  for (const auto& [o1, b1] : BranchesOf(plan.model, x)) {
    for (const auto& [o2, b2] : BranchesOf(plan.model, y)) {
      if (o1 == o2 && b1 != b2) return true;
    }
  }
  return false;
}

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
      checker_(plan, &program_.control_flow) {
  BuildEventObjects();
}

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
  if (executor->options_.check_memory) {
    NPUPLAN_ASSIGN_OR_RETURN(
        executor->memory_races_,
        MemoryRaceChecker::Check(plan, executor->program_, executor->options_.memory_check_budget));
  }
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
  std::vector<runtime::Event> events(object_sync_.size());  // per event object
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
    }
  }
  for (size_t o = 0; o < object_sync_.size(); ++o) {
    const sim::SyncObject& so = program_.syncs[object_sync_[o]];
    // A plan event id is one device object; activation and host syncs (one
    // record, a wait per stream) keep the plain event.
    auto e = runtime::CreateEvent(device, so.kind == sim::SyncObject::Kind::kEvent
                                              ? runtime::kEventWaitReset
                                              : runtime::kEventDefault);
    if (!e.ok()) {
      return absl::Status(
          e.status().code(),
          StrCat("creating device event for ",
                 so.kind == sim::SyncObject::Kind::kEvent      ? "event "
                 : so.kind == sim::SyncObject::Kind::kHostSync ? "the host's sync in loop node "
                                                               : "activation by node ",
                 so.id, ": ", std::string(e.status().message())));
    }
    events[o] = std::move(e).value();
  }

  auto misuses = std::make_shared<MisuseCollector>();
  device.AddObserver(misuses);
  ObserverGuard guard{device, misuses.get()};

  // 2. The gate first on every stream, then every item in global enqueue order.
  const bool jitter = options_.jitter && options_.jitter_max_us > 0;
  const bool skew = options_.jitter && options_.stream_skew_us > 0;
  for (size_t k = 0; k < streams.size(); ++k) {
    const int64_t delay_us =
        skew ? static_cast<int64_t>(SplitMix64(SplitMix64(seed) ^ (k + 1)) %
                                    (static_cast<uint64_t>(options_.stream_skew_us) + 1))
             : 0;
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
          sleep_us +=
              static_cast<int64_t>(SplitMix64(seed * 0x100000001b3ULL ^ SplitMix64(key)) % span);
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
          NPUPLAN_RETURN_IF_ERROR(device.RecordEvent(events[ObjectOf(item)].get(), stream));
        }
        break;
      case Kind::kWait:
        if (notifies[item.sync]) {
          NPUPLAN_RETURN_IF_ERROR(device.WaitNotify(stream, notifies[item.sync].get()));
        } else {
          NPUPLAN_RETURN_IF_ERROR(device.WaitEvent(stream, events[ObjectOf(item)].get()));
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
  std::map<uint64_t, size_t> object_of_event;  // device event id → event object
  for (size_t o = 0; o < events.size(); ++o) {
    if (events[o]) object_of_event[events[o].get().id] = o;
  }
  // Destroyed now, so that a record no wait consumed is reported with the rest.
  for (runtime::Event& e : events) e.reset();
  std::map<uint64_t, size_t> stream_of;  // device stream id → program stream
  for (size_t k = 0; k < streams.size(); ++k) stream_of[streams[k].get().id] = k;
  for (const runtime::EventMisuse& m : misuses->Take()) {
    auto it = object_of_event.find(m.event_id);
    if (it == object_of_event.end()) continue;  // not this run's
    result.event_misuses.push_back(DescribeMisuse(m, it->second, stream_of));
  }
  std::sort(result.event_misuses.begin(), result.event_misuses.end());
  result.messages.insert(result.messages.end(), result.event_misuses.begin(),
                         result.event_misuses.end());
  result.memory_race_count = memory_races_.problems();
  result.memory_races = memory_races_.messages;
  result.memory_check_skipped = memory_races_.skipped;
  result.messages.insert(result.messages.end(), result.memory_races.begin(),
                         result.memory_races.end());
  return result;
}

int32_t PlanExecutor::ObjectOf(const sim::ProgramItem& item) const {
  return item.event >= 0 && object_of_edge_[item.event] >= 0 ? object_of_edge_[item.event]
                                                             : object_of_sync_[item.sync];
}

// Device event objects: one per plan event id (and per implicit sync),
// except that the edges of one id lying in different branches of one If /
// Case — which never both run (one branch runs here too, ExecOptions::
// control_flow) — get one object per group of edges that can run together.
void PlanExecutor::BuildEventObjects() {
  const auto& evs = plan_.events.events;
  object_of_edge_.assign(evs.size(), -1);
  object_of_sync_.assign(program_.syncs.size(), -1);
  std::vector<std::vector<int32_t>> edges_of_sync(program_.syncs.size());
  for (const sim::ProgramStream& ps : program_.streams) {
    for (const sim::ProgramItem& item : ps.items) {
      if (item.kind == Kind::kRecord && item.event >= 0)
        edges_of_sync[item.sync].push_back(static_cast<int32_t>(item.event));
    }
  }
  for (size_t k = 0; k < program_.syncs.size(); ++k) {
    if (program_.syncs[k].kind == sim::SyncObject::Kind::kNotify) continue;
    object_of_sync_[k] = static_cast<int32_t>(object_sync_.size());
    object_sync_.push_back(static_cast<int32_t>(k));
    std::vector<int32_t>& edges = edges_of_sync[k];
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    if (std::none_of(edges.begin(), edges.end(),
                     [&](int32_t e) { return !BranchesOf(plan_.model, evs[e]).empty(); })) {
      continue;
    }
    // Groups: edges that can run together (not in other branches) join.
    std::vector<int32_t> group(edges.size());
    for (size_t i = 0; i < edges.size(); ++i) group[i] = static_cast<int32_t>(i);
    std::function<int32_t(int32_t)> find = [&](int32_t x) {
      return group[x] == x ? x : group[x] = find(group[x]);
    };
    for (size_t i = 0; i < edges.size(); ++i) {
      for (size_t j = i + 1; j < edges.size(); ++j) {
        if (!InOtherBranches(plan_, evs[edges[i]], evs[edges[j]]))
          group[find(static_cast<int32_t>(j))] = find(static_cast<int32_t>(i));
      }
    }
    std::map<int32_t, int32_t> object_of_group;
    for (size_t i = 0; i < edges.size(); ++i) {
      const int32_t root = find(static_cast<int32_t>(i));
      auto [it, fresh] = object_of_group.try_emplace(root, -1);
      if (fresh) {
        it->second = object_of_group.size() == 1 ? object_of_sync_[k]
                                                 : static_cast<int32_t>(object_sync_.size());
        if (object_of_group.size() > 1) object_sync_.push_back(static_cast<int32_t>(k));
      }
      object_of_edge_[edges[i]] = it->second;
    }
  }
  records_of_object_.assign(object_sync_.size(), {});
  for (auto [si, ii] : program_.enqueue) {
    const sim::ProgramItem& item = program_.streams[si].items[ii];
    if (item.kind == Kind::kRecord &&
        program_.syncs[item.sync].kind != sim::SyncObject::Kind::kNotify) {
      records_of_object_[ObjectOf(item)].push_back(item.event);
    }
  }
}

std::string PlanExecutor::DescribeMisuse(const runtime::EventMisuse& m, size_t object,
                                         const std::map<uint64_t, size_t>& stream_of) const {
  // Generation g of a device object is its g-th record in enqueue order.
  auto edge_of = [&](uint64_t generation) -> std::string {
    const auto& records = records_of_object_[object];
    const int64_t i =
        generation >= 1 && generation <= records.size() ? records[generation - 1] : -1;
    if (i < 0) return StrCat("record ", generation);
    const SyncEvent& e = plan_.events.events[static_cast<size_t>(i)];
    return StrCat("'", plan_.model.node(e.send).name, "' -> '", plan_.model.node(e.recv).name, "'");
  };
  auto it = stream_of.find(m.stream_id);
  const std::string stream = it == stream_of.end()
                                 ? std::string("?")
                                 : std::to_string(program_.streams[it->second].plan_stream);
  const std::string id = StrCat("event id ", program_.syncs[object_sync_[object]].id);
  switch (m.kind) {
    case runtime::EventMisuse::Kind::kRecordWhilePending:
      return StrCat(id, ": ", edge_of(m.generation), " recorded it on stream ", stream,
                    " while the record of ", edge_of(m.pending),
                    " was still pending (not yet consumed by its wait)");
    case runtime::EventMisuse::Kind::kForeignRecord:
      return StrCat(id, ": the wait of ", edge_of(m.generation), " on stream ", stream,
                    " was pending while the record of ", edge_of(m.pending),
                    " had set it (it could consume it)");
    case runtime::EventMisuse::Kind::kRecordLost:
      return StrCat(id, ": the wait of ", edge_of(m.generation), " on stream ", stream,
                    " found its record overwritten or consumed");
    case runtime::EventMisuse::Kind::kWaitWithoutRecord:
      return StrCat(id, ": a wait on stream ", stream,
                    " has no record enqueued before it (a wait-reset device blocks there)");
    case runtime::EventMisuse::Kind::kRecordNeverWaited:
      return StrCat(id, ": the record of ", edge_of(m.pending),
                    " was never consumed by a wait (the next run's wait on this id passes on it)");
  }
  return id;
}

}  // namespace npuplan::exec
