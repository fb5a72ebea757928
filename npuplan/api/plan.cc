// Plan of the public API: accessors, the plan file, verify/simulate/run.
#include "npuplan/api/plan.h"

#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "npuplan/api/api_internal.h"
#include "npuplan/exec/plan_executor.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/pass/pass.h"
#include "npuplan/plan/plan_claims.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/runtime/cpu_device.h"
#include "npuplan/sim/plan_program.h"
#include "npuplan/sim/simulator.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/plan_complete.h"
#include "npuplan/verify/verify.h"

namespace npuplan::api {
namespace internal {

absl::Status VerifyPlanIndependently(const npuplan::Plan& plan, bool partial) {
  // As `npuplan verify`: without --partial also every stage the content needs.
  NPUPLAN_RETURN_IF_ERROR(verify::VerifyPlan(plan));
  return partial ? absl::OkStatus() : verify::VerifyPlanComplete(plan);
}

}  // namespace internal

namespace {

using internal::Access;

// The CLI names the plan file in front of verify/simulate/run errors.
absl::Status NameSource(const Plan::Impl& impl, const absl::Status& s) {
  if (s.ok() || impl.source.empty()) return s;
  return absl::Status(s.code(), StrCat(impl.source, ": ", std::string(s.message())));
}

int64_t StreamOf(const npuplan::Plan& plan, NodeId n, int32_t attached) {
  if (!n.valid() || n.index() >= plan.model.num_nodes()) return -1;
  if (attached < 0) return sim::MainStreamOf(plan, n);
  if (static_cast<size_t>(attached) >= plan.model.node(n).attached_stream_ids.size()) return -1;
  return sim::AttachedStreamOf(plan, n, attached);
}

std::string NameOf(const npuplan::Plan& plan, NodeId n) {
  return n.valid() && n.index() < plan.model.num_nodes() ? plan.model.node(n).name : std::string();
}

void BuildEventsByNode(const Plan::Impl& impl) {
  const npuplan::Plan& p = impl.plan;
  impl.sends.assign(p.model.num_nodes(), {});
  impl.recvs.assign(p.model.num_nodes(), {});
  for (const SyncEvent& e : p.events.events) {
    if (e.send.valid() && e.send.index() < p.model.num_nodes())
      impl.sends[e.send.index()].push_back(e.id);
    if (e.recv.valid() && e.recv.index() < p.model.num_nodes())
      impl.recvs[e.recv.index()].push_back(e.id);
  }
}

NodeInfo MakeNodeInfo(const Plan::Impl& impl, size_t i) {
  std::call_once(impl.events_by_node_once, [&] { BuildEventsByNode(impl); });
  const npuplan::Plan& p = impl.plan;
  const Node& n = p.model.nodes()[i];
  NodeInfo info;
  info.name = n.name;
  info.type = n.type;
  info.engine = n.engine;
  info.graph = p.model.graph(n.graph).name;
  info.topo_id = n.topo_id;
  info.logical_stream = n.stream_id;
  const int64_t physical = i < p.physical_stream.size() ? p.physical_stream[i] : -1;
  info.stream = physical >= 0 ? physical : n.stream_id;  // as the plan file's nodes.<name>.stream
  info.attached_streams = n.attached_stream_ids;
  info.tasks = i < p.tasks.size() ? p.tasks[i] : 0;
  info.send_events = impl.sends[i];
  info.recv_events = impl.recvs[i];
  return info;
}

// A plan read from a file or text is checked as the CLI's summary, simulate
// and run check theirs: its structure and its claims about itself (stream
// counts and ids, tasks, stages), so that no accessor sizes a table by a
// count the file made up. The messages are `npuplan verify`'s.
absl::StatusOr<Plan> FromParsed(absl::StatusOr<npuplan::Plan> parsed, const std::string& source) {
  if (!parsed.ok()) return parsed.status();
  absl::Status claims = VerifyStructure(parsed->model);
  if (claims.ok()) claims = VerifyPlanClaims(*parsed);
  if (!claims.ok())
    return absl::Status(claims.code(), StrCat(source, ": ", std::string(claims.message())));
  auto impl = std::make_shared<Plan::Impl>();
  impl->plan = std::move(parsed).value();
  impl->source = source;
  return Access::MakePlan(std::move(impl));
}

}  // namespace

Plan::Plan(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

absl::StatusOr<Plan> Plan::Read(const std::string& path, const ReadLimits& limits) {
  ScopedMaxFileBytes limit(limits.max_file_bytes);
  return FromParsed(ReadPlanFile(path, internal::ToReadLimits(limits)), path);
}

absl::StatusOr<Plan> Plan::FromJson(std::string_view json, const std::string& source,
                                    const ReadLimits& limits) {
  return FromParsed(ParsePlanJson(json, source, internal::ToReadLimits(limits)), source);
}

const std::string& Plan::name() const { return impl_->plan.model.name(); }
size_t Plan::num_nodes() const { return impl_->plan.model.num_nodes(); }
const std::vector<std::string>& Plan::warnings() const { return impl_->warnings; }
const std::string& Plan::decisions() const { return impl_->decisions; }
std::string Plan::ToJson() const { return WritePlanJson(impl_->plan); }
absl::Status Plan::Write(const std::string& path) const {
  // Named as `compile -o` names it (the same messages), streamed as it writes.
  return WritePlanFile(impl_->plan, path, "-o");
}

PlanSummary Plan::summary() const {
  const npuplan::Plan& p = impl_->plan;
  PlanSummary s;
  s.name = p.model.name();
  s.nodes = static_cast<int64_t>(p.model.num_nodes());
  s.graphs = static_cast<int64_t>(p.model.num_graphs());
  s.logical_streams = p.streams.logical;
  s.physical_streams = p.streams.physical;
  s.attached_streams = static_cast<int64_t>(p.streams.attached.size());
  s.events = p.events.event_count;
  s.notifies = p.events.notify_count;
  s.sync_pairs = static_cast<int64_t>(p.events.events.size());
  s.event_counts = p.events.counts;
  s.memory_peak = p.memory.peak;
  s.memory_lower_bound = p.memory.lower_bound;
  s.stream_mode = std::string(StreamModeName(p.streams.mode));
  s.auto_mode = p.streams.auto_mode;
  for (uint32_t bit = 1; bit != 0; bit <<= 1) {  // the plan file's order: by bit
    if ((p.established & bit) == 0) continue;
    if (std::string name = PropertyNames(bit); !name.empty()) s.stages.push_back(std::move(name));
  }
  return s;
}

std::vector<StreamInfo> Plan::streams() const {
  const npuplan::Plan& p = impl_->plan;
  std::vector<StreamInfo> out;
  out.reserve(p.streams.streams.size());
  for (const LogicalStream& ls : p.streams.streams) {
    StreamInfo s;
    s.id = ls.id;
    s.label = ls.user_label;
    s.physical_count = ls.physical_count;
    s.attached_ids = ls.attached_ids;
    s.hccl_followed_count = ls.hccl_followed_count;
    out.push_back(std::move(s));
  }
  // Node and task counts per logical stream, by the nodes' own stream ids.
  std::map<int64_t, StreamInfo*> by_id;
  for (StreamInfo& s : out) by_id[s.id] = &s;
  for (size_t i = 0; i < p.model.num_nodes(); ++i) {
    auto it = by_id.find(p.model.nodes()[i].stream_id);
    if (it == by_id.end()) continue;
    it->second->num_nodes += 1;
    // Plan values (a plan read from a file may claim 2^62 tasks per node): saturates.
    it->second->tasks =
        CheckedAdd(it->second->tasks, i < p.tasks.size() ? p.tasks[i] : 0).value_or(INT64_MAX);
  }
  return out;
}

std::vector<EventInfo> Plan::events() const {
  const npuplan::Plan& p = impl_->plan;
  std::vector<EventInfo> out;
  out.reserve(p.events.events.size());
  for (const SyncEvent& e : p.events.events) {
    EventInfo info;
    info.id = e.id;
    info.kind = std::string(SyncKindName(e.kind));
    info.reason = std::string(SyncReasonName(e.reason));
    info.send = NameOf(p, e.send);
    info.recv = NameOf(p, e.recv);
    info.send_attached = e.send_attached;
    info.recv_attached = e.recv_attached;
    info.send_stream = StreamOf(p, e.send, e.send_attached);
    info.recv_stream = StreamOf(p, e.recv, e.recv_attached);
    out.push_back(std::move(info));
  }
  return out;
}

std::optional<NodeInfo> Plan::node(std::string_view name) const {
  NodeId id = impl_->plan.model.FindNode(name);
  if (!id.valid()) return std::nullopt;
  return MakeNodeInfo(*impl_, id.index());
}

NodeInfo Plan::node_at(size_t index) const { return MakeNodeInfo(*impl_, index); }

std::vector<std::string> Plan::node_names() const {
  std::vector<std::string> names;
  names.reserve(impl_->plan.model.num_nodes());
  for (const Node& n : impl_->plan.model.nodes()) names.push_back(n.name);
  return names;
}

MemoryInfo Plan::memory() const {
  const npuplan::Plan& p = impl_->plan;
  const MemoryResult& m = p.memory;
  MemoryInfo out;
  out.planned = m.planned;
  out.alignment = m.alignment;
  out.peak = m.peak;
  out.lower_bound = m.lower_bound;
  out.optimal = m.optimal;
  out.region_bytes = m.region_bytes;
  out.dynamic_tensors = m.dynamic_tensors;
  out.tensors.reserve(m.tensors.size());
  for (const TensorPlacement& t : m.tensors) {
    out.tensors.push_back(TensorInfo{NameOf(p, t.node), t.output,
                                     std::string(MemoryRegionName(t.region)), t.offset, t.size,
                                     t.first_use, t.last_use, t.buffer, t.stream});
  }
  return out;
}

absl::Status Plan::Verify(const VerifyOptions& options) const {
  return NameSource(*impl_, internal::VerifyPlanIndependently(impl_->plan, options.partial));
}

absl::StatusOr<SimulationResult> Plan::Simulate(const SimulateOptions& options) const {
  // NaN fails every comparison: test for what is allowed.
  auto allowed = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!allowed(options.launch_overhead_us) || !allowed(options.record_us) ||
      !allowed(options.wait_latency_us)) {
    return absl::InvalidArgumentError(
        "simulate: --launch-overhead-us, --record-us and --wait-latency-us must be finite "
        "and >= 0");
  }
  const npuplan::Plan& p = impl_->plan;
  sim::SimOptions o;
  o.launch_overhead_us = options.launch_overhead_us;
  o.record_us = options.record_us;
  o.wait_latency_us = options.wait_latency_us;
  o.cost.use_cost_attr = !options.ignore_cost_attr;
  absl::StatusOr<sim::SimResult> r = sim::Simulate(p, o);
  if (!r.ok()) return NameSource(*impl_, r.status());
  if (!options.trace_file.empty()) {
    NPUPLAN_RETURN_IF_ERROR(WriteFileAtomically(options.trace_file, sim::ChromeTraceJson(p, *r)));
  }
  SimulationResult out;
  out.makespan_us = r->makespan;
  out.lower_bound_us = r->lower_bound;
  out.critical_path_us = r->critical_path_us;
  out.total_work_us = r->total_work;
  for (NodeId n : r->critical_path) out.critical_path.push_back(NameOf(p, n));
  for (const sim::SimStreamStats& s : r->streams) {
    out.streams.push_back(StreamBusy{s.plan_stream, s.tasks, s.busy_us, s.utilisation});
  }
  out.report_text = sim::SimReportText(p, *r);
  out.report_json = sim::SimReportJson(p, *r, o);
  return out;
}

absl::StatusOr<RunResult> Plan::Run(const RunOptions& options) const {
  if (options.repeat < 1 || options.jitter_max_us < 0 || options.time_scale < 0 ||
      options.stream_skew_us < 0) {
    return absl::InvalidArgumentError(
        "run: --repeat must be >= 1; --jitter-max-us, --stream-skew-us and --time-scale >= 0");
  }
  exec::ExecOptions o;
  o.jitter = options.jitter_seed.has_value();
  o.jitter_seed = options.jitter_seed.value_or(0);
  o.jitter_max_us = options.jitter_max_us;
  o.time_scale = options.time_scale;
  o.stream_skew_us = options.stream_skew_us;
  absl::StatusOr<std::unique_ptr<exec::PlanExecutor>> executor =
      exec::PlanExecutor::Create(impl_->plan, o);
  if (!executor.ok()) return NameSource(*impl_, executor.status());
  runtime::CpuDevice device;
  RunResult out;
  out.runs = options.repeat;
  for (int64_t r = 0; r < options.repeat; ++r) {
    NPUPLAN_ASSIGN_OR_RETURN(exec::ExecResult result,
                             (*executor)->Run(device, static_cast<uint64_t>(r)));
    out.tasks = static_cast<int64_t>(result.tasks);
    out.streams = static_cast<int64_t>(result.streams);
    out.wall_ms += result.wall_ms;
    const size_t bad = result.problems();  // as `npuplan run` counts them
    out.violations += static_cast<int64_t>(bad);
    out.memory_races += static_cast<int64_t>(result.memory_race_count);
    out.runs_with_violations += bad == 0 ? 0 : 1;
    for (const std::string& m : result.messages) out.messages.push_back(StrCat("run ", r, ": ", m));
  }
  out.skipped_events = static_cast<int64_t>((*executor)->program().skipped.size());
  return out;
}

}  // namespace npuplan::api
