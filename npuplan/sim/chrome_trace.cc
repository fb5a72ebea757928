// ChromeTraceJson (declared in simulator.h): the simulated run as a Chrome
// trace-event file, laid out for what Perfetto's importer does with it.
//
//   processes   pid 0: the graph (memory counters, streams of no logical
//               stream); pid L+1: logical stream L, its split pieces and its
//               attached streams as threads (tid = stream index + 1, unique
//               across processes: Perfetto treats tids as global);
//   slices      tasks (X, named after the node), records (X "record e3"),
//               waits that blocked (X "wait e3", from the moment the stream
//               reached it to its release); slices on one thread never
//               overlap, so they nest;
//   flows (v1)  one per wait bound to a record, id unique per occurrence,
//               named "e3 a → b" (event id and edge): `s` inside the record
//               slice, `f` at the release time with next-slice binding,
//               written before the slice that follows the release, so it
//               binds to the first slice that starts at or after the
//               release (the released task, or the next blocked wait) —
//               never to a slice that started before the record;
//   counters    "activation memory in use" (bytes, trace_views.h) and
//               "constants and inputs".
// Times are whole ns written as µs, each timestamp plus half a ns: Perfetto
// truncates ts·1000 and dur·1000 to integers separately, and without the half
// a slice could end 1 ns after the next one on its thread starts (so they
// would not nest). No "displayTimeUnit": some Perfetto versions read "ns"
// there as the unit of ts.
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "npuplan/plan/task_model.h"
#include "npuplan/sim/simulator.h"
#include "npuplan/sim/trace_views.h"
#include "npuplan/support/str_util.h"

namespace npuplan::sim {
namespace {

using Kind = ProgramItem::Kind;

struct SyncText {
  std::string label;  // "e3", "n2", "activation by x"
  std::string edge;   // "a → b"
  std::string reason;
};

// Label of a record/wait's sync object; the edge and reason come from its
// event-table entry (filled by the caller).
SyncText DescribeSync(const Plan& plan, const SimResult& r, const SimItem& it) {
  SyncText t;
  const SyncObject& so = r.program.syncs[it.sync];
  const Model& m = plan.model;
  if (so.kind == SyncObject::Kind::kActivation) {
    t.label = StrCat("activation by ", m.node(NodeId(static_cast<int32_t>(so.id))).name);
    t.reason = "activation";
    return t;
  }
  if (so.kind == SyncObject::Kind::kHostSync) {
    t.label = StrCat("host sync in ", m.node(NodeId(static_cast<int32_t>(so.id))).name);
    t.reason = "host-sync";
    return t;
  }
  t.label = StrCat(so.kind == SyncObject::Kind::kNotify ? "n" : "e", so.id);
  return t;
}

}  // namespace

std::string ChromeTraceJson(const Plan& plan, const SimResult& result) {
  using nlohmann::json;
  auto nanos = [](double us) { return std::llround(us * 1000.0); };
  auto Ts = [&](double us) { return (static_cast<double>(nanos(us)) + 0.5) / 1000.0; };
  auto Dur = [&](double from, double to) { return static_cast<double>(nanos(to) - nanos(from)) / 1000.0; };
  const Model& m = plan.model;
  const std::vector<StreamInfo> info = DescribeStreams(plan, result);
  const size_t ns = result.streams.size();
  json events = json::array();
  auto pid_of = [&](size_t s) { return info[s].logical >= 0 ? info[s].logical + 1 : 0; };

  // Metadata: processes (logical streams) and threads (physical streams).
  std::map<int64_t, std::string> processes = {{0, m.name()}};
  for (size_t s = 0; s < ns; ++s) {
    if (info[s].logical < 0) continue;
    processes[pid_of(s)] = StrCat(m.name(), ": logical stream ", info[s].logical,
                                  info[s].label.empty() ? std::string() : StrCat(" '", info[s].label, "'"));
  }
  for (const auto& [pid, name] : processes) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
    events.push_back(
        {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
  }
  for (size_t s = 0; s < ns; ++s) {
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid_of(s)}, {"tid", s + 1},
                      {"args", {{"name", info[s].name}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid_of(s)}, {"tid", s + 1},
                      {"args", {{"sort_index", s}}}});
  }

  // Which waits each record released (flow id = the wait's item index).
  std::vector<std::vector<int32_t>> released(result.items.size());
  for (size_t g = 0; g < result.items.size(); ++g) {
    const SimItem& it = result.items[g];
    if (it.kind == Kind::kWait && it.bound >= 0) released[it.bound].push_back(static_cast<int32_t>(g));
  }
  // The event-table entry of each record/wait (item order = program order).
  std::vector<int64_t> table_entry(result.items.size(), -1);
  {
    size_t g = 0;
    for (const ProgramStream& ps : result.program.streams) {
      for (const ProgramItem& p : ps.items) table_entry[g++] = p.event;
    }
  }
  auto text_of = [&](size_t g) {
    SyncText t = DescribeSync(plan, result, result.items[g]);
    if (table_entry[g] >= 0 && static_cast<size_t>(table_entry[g]) < plan.events.events.size()) {
      const SyncEvent& e = plan.events.events[table_entry[g]];
      t.edge = StrCat(m.node(e.send).name, " → ", m.node(e.recv).name);
      t.reason = std::string(SyncReasonName(e.reason));
    }
    return t;
  };
  auto flow_name = [&](const SyncText& t) { return t.edge.empty() ? t.label : StrCat(t.label, " ", t.edge); };
  const bool loops = result.program.control_flow.iterations() > 1;

  for (size_t g = 0; g < result.items.size(); ++g) {
    const SimItem& it = result.items[g];
    const Node& node = m.node(it.node);
    const int64_t pid = pid_of(it.stream);
    const size_t tid = static_cast<size_t>(it.stream) + 1;
    if (it.kind == Kind::kTask) {
      json e = {{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", Ts(it.start)}, {"dur", Dur(it.start, it.end)}};
      e["name"] = it.attached < 0 ? node.name : StrCat(node.name, " (attached ", it.attached, ")");
      e["cat"] = node.engine.empty() ? std::string("task") : node.engine;
      e["args"] = {{"type", node.type},
                   {"graph", m.graph(node.graph).name},
                   {"cost_us", result.node_cost[it.node.index()]},
                   {"tasks", it.attached < 0 ? result.node_tasks[it.node.index()] : AttachedNodeTasks(node)}};
      if (loops) e["args"]["run"] = it.run;
      events.push_back(std::move(e));
      continue;
    }
    const SyncText t = text_of(g);
    json args = {{"node", node.name}};
    if (!t.edge.empty()) args["edge"] = t.edge;
    if (!t.reason.empty()) args["reason"] = t.reason;
    if (it.kind == Kind::kRecord) {
      events.push_back({{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", Ts(it.start)}, {"dur", Dur(it.start, it.end)},
                        {"name", StrCat("record ", t.label)}, {"cat", "sync"}, {"args", args}});
      for (int32_t w : released[g]) {
        events.push_back({{"ph", "s"}, {"id", w}, {"name", flow_name(text_of(w))}, {"cat", "sync"}, {"pid", pid},
                          {"tid", tid}, {"ts", Ts(it.start + (it.end - it.start) / 2)}});
      }
      continue;
    }
    if (it.end > it.ready) {
      args["blocked_us"] = it.end - it.ready;
      events.push_back({{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", Ts(it.ready)}, {"dur", Dur(it.ready, it.end)},
                        {"name", StrCat("wait ", t.label)}, {"cat", "sync"}, {"args", args}});
    }
    if (it.bound >= 0) {
      events.push_back({{"ph", "f"}, {"id", g}, {"name", flow_name(t)}, {"cat", "sync"}, {"pid", pid},
                        {"tid", tid}, {"ts", Ts(it.end)}});
    }
  }

  // Memory counters.
  const MemoryInUse mem = PoolMemoryInUse(plan, result);
  if (plan.memory.planned) {
    const size_t counter_tid = ns + 1;
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", counter_tid},
                      {"args", {{"name", "memory"}}}});
    auto counter = [&](const char* name, double ts, int64_t bytes) {
      events.push_back({{"ph", "C"}, {"name", name}, {"pid", 0}, {"tid", counter_tid}, {"ts", Ts(ts)},
                        {"args", {{"bytes", bytes}}}});
    };
    counter("activation memory in use", 0, 0);
    for (const auto& [ts, bytes] : mem.steps) counter("activation memory in use", ts, bytes);
    counter("constants and inputs", 0, mem.constant_bytes);
    counter("constants and inputs", result.makespan, mem.constant_bytes);
  }

  json other = {{"graph", m.name()}, {"makespan_us", result.makespan}};
  const std::vector<std::string> cf = DescribeControlFlow(plan, result.program.control_flow, 1000);
  if (!cf.empty()) other["control_flow"] = cf;
  json j = {{"traceEvents", std::move(events)}, {"otherData", std::move(other)}};
  return j.dump(1) + "\n";
}

}  // namespace npuplan::sim
