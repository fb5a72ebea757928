// npuplan public API: a compiled execution plan (docs/api.md).
//
// A Plan is immutable and cheap to copy (copies share it). Its accessors read
// the streams, events, nodes, memory and headline numbers without JSON;
// ToJson() is the plan file `npuplan compile -o` writes, byte for byte.
// Verify(), Simulate() and Run() are `npuplan verify`, `simulate` and `run`.
// Every method is safe to call from several threads at once.
#ifndef NPUPLAN_API_PLAN_H_
#define NPUPLAN_API_PLAN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npuplan/api/model.h"

namespace npuplan::api {

// One logical stream (the plan's streams.list; `npuplan summary`).
struct StreamInfo {
  int64_t id = 0;
  std::string label;                  // user stream label ("" = none)
  int64_t physical_count = 1;         // physical streams after the task-capacity split
  std::vector<int64_t> attached_ids;  // attached streams of its nodes
  int64_t hccl_followed_count = 0;
  int64_t num_nodes = 0;  // nodes whose logical stream this is
  int64_t tasks = 0;      // their device tasks
};

// One synchronisation: `send` records it on its stream, `recv` waits for it.
struct EventInfo {
  int64_t id = 0;
  std::string kind;            // "event" | "notify"
  std::string reason;          // "data-edge", "control-edge", "subgraph-entry", …
  std::string send;            // recording node
  std::string recv;            // waiting node
  int64_t send_stream = -1;    // physical stream the record runs on
  int64_t recv_stream = -1;    // physical stream the wait runs on
  int32_t send_attached = -1;  // -1: the node's main stream, i: its i-th attached stream
  int32_t recv_attached = -1;
};

struct NodeInfo {
  std::string name;
  std::string type;
  std::string engine;
  std::string graph;     // the graph it belongs to
  int64_t topo_id = -1;  // position in its graph's topological order
  int64_t stream = -1;   // physical stream (-1: none)
  int64_t logical_stream = -1;
  std::vector<int64_t> attached_streams;
  int64_t tasks = 0;
  std::vector<int64_t> send_events;  // ids it records
  std::vector<int64_t> recv_events;  // ids it waits for
};

struct TensorInfo {
  std::string node;
  int32_t output = 0;  // output anchor, -1 = the node's workspace
  std::string region;  // "activation" | "input" | "constant" | "workspace"
  int64_t offset = 0;
  int64_t size = 0;
  int64_t first_use = 0;  // lifetime in plan order, half-open
  int64_t last_use = 0;
  std::string buffer;  // the logical buffer ("node:i"); aliases share it
  int64_t stream = -1;
};

struct MemoryInfo {
  bool planned = false;
  int64_t alignment = 0;
  int64_t peak = 0;         // activation region bytes
  int64_t lower_bound = 0;  // max live bytes at one instant
  bool optimal = false;     // peak == lower_bound
  std::map<std::string, int64_t> region_bytes;
  std::vector<TensorInfo> tensors;
  std::vector<std::string> dynamic_tensors;  // unknown-size tensors ("node:i"), not planned
};

// The plan's headline numbers (its "summary" and stream mode).
struct PlanSummary {
  std::string name;
  int64_t nodes = 0;
  int64_t graphs = 0;
  int64_t logical_streams = 0;
  int64_t physical_streams = 0;
  int64_t attached_streams = 0;
  int64_t events = 0;      // distinct event ids
  int64_t notifies = 0;    // distinct notify ids
  int64_t sync_pairs = 0;  // record/wait pairs
  // The plan file's event_counts: sync edges kept by each redundancy removal
  // ("naive", "ge", "exact") and the device ids they use ("device_event_ids",
  // its "_lower_bound" and "_exact", the same for "device_notify_ids"; issue 23).
  std::map<std::string, int64_t> event_counts;
  int64_t memory_peak = 0;
  int64_t memory_lower_bound = 0;
  std::string stream_mode;          // "multi" | "single" | "dynamic-single" | "dynamic-multi"
  std::string auto_mode;            // ge.autoMultistreamParallelMode in effect ("" = none)
  std::vector<std::string> stages;  // stage facts the plan establishes
};

struct VerifyOptions {
  // `npuplan verify --partial`: only the stages the plan claims (a partial
  // pipeline's plan, CompileOptions::passes). By default a plan must also
  // carry every stage its content needs (sync-events for streams that
  // depend on each other), as `npuplan verify` requires.
  bool partial = false;
};

struct SimulateOptions {
  double launch_overhead_us = 1.0;  // per device task
  double record_us = 0.5;           // a record occupies its stream
  double wait_latency_us = 1.0;     // record done → waiter released
  bool ignore_cost_attr = false;    // estimate every node's cost, ignoring _cost
  std::string trace_file;           // write a Chrome/Perfetto trace here ("" = none)
};

struct StreamBusy {
  int64_t stream = 0;  // plan stream id
  int64_t tasks = 0;
  double busy_us = 0;
  double utilisation = 0;  // busy / makespan
};

struct SimulationResult {
  double makespan_us = 0;
  double lower_bound_us = 0;  // max(critical path, work / streams)
  double critical_path_us = 0;
  double total_work_us = 0;
  std::vector<std::string> critical_path;  // node names, source → sink
  std::vector<StreamBusy> streams;
  std::string report_text;  // what `npuplan simulate` prints
  std::string report_json;  // what `npuplan simulate --json` prints (npuplan.sim/1)
};

struct RunOptions {
  std::optional<uint64_t> jitter_seed;  // --jitter SEED (run r uses SEED + r); none = no jitter
  int64_t repeat = 1;
  int64_t jitter_max_us = 200;
  int64_t stream_skew_us = 0;
  double time_scale = 0.0;  // µs slept per modelled µs (0: no-op tasks)
};

struct RunResult {
  int64_t runs = 0;
  int64_t tasks = 0;       // per run
  int64_t streams = 0;     // device streams
  // Over all runs, as `npuplan run` counts them: dependency violations,
  // device id misuses and memory races (0 = the plan ran clean).
  int64_t violations = 0;
  int64_t memory_races = 0;  // of those: memory races and hazards (exec/memory_race_checker.h)
  int64_t runs_with_violations = 0;
  std::vector<std::string> messages;  // one per violation, "run R: …"
  int64_t skipped_events = 0;         // loop-carried or backward events the CPU back end skips
  double wall_ms = 0;                 // summed over runs
};

class Plan {
 public:
  struct Impl;  // opaque: defined inside the library only

  // A plan file (npuplan.plan/1), as `npuplan verify|simulate|run` read it.
  static absl::StatusOr<Plan> Read(const std::string& path, const ReadLimits& limits = {});
  static absl::StatusOr<Plan> FromJson(std::string_view json, const std::string& source = "<json>",
                                       const ReadLimits& limits = {});

  const std::string& name() const;
  size_t num_nodes() const;
  PlanSummary summary() const;
  std::vector<StreamInfo> streams() const;
  std::vector<EventInfo> events() const;
  // Nodes by name, or by index 0..num_nodes()-1 (the model's node order).
  std::optional<NodeInfo> node(std::string_view name) const;
  NodeInfo node_at(size_t index) const;
  std::vector<std::string> node_names() const;  // in index order
  MemoryInfo memory() const;
  // What the CLI prints as `warning: …` while compiling: the ONNX import's,
  // then the options' (near-misses, options that do nothing).
  const std::vector<std::string>& warnings() const;
  // The decision log as JSON lines (CompileOptions::keep_decisions; else "").
  const std::string& decisions() const;

  // The plan file, byte-identical to `npuplan compile -o`.
  std::string ToJson() const;
  // Writes ToJson() to `path` as the CLI does: atomically, no partial file on
  // failure.
  absl::Status Write(const std::string& path) const;
  // The independent verifier (`npuplan verify`, `--partial` with
  // options.partial); errors name the file the plan was read from, as the
  // CLI's do.
  absl::Status Verify(const VerifyOptions& options = {}) const;
  absl::StatusOr<SimulationResult> Simulate(const SimulateOptions& options = {}) const;
  absl::StatusOr<RunResult> Run(const RunOptions& options = {}) const;

 private:
  friend struct internal::Access;
  explicit Plan(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace npuplan::api

#endif  // NPUPLAN_API_PLAN_H_
