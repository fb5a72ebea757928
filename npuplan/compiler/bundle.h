// Bundles (issue 23 item 4): N graphs that one process loads on one device —
// e.g. one model exported at many batch sizes — with their device resources
// planned together.
//
//   sequential (default): the graphs run one at a time, so streams, event
//     ids and notify ids come from one shared pool (what GE's V1 reusable
//     stream pool was designed to do: ge-reference §5) and every graph's
//     activation memory starts at offset 0 of one shared arena. The device
//     total is the maximum over the graphs.
//   concurrent: every graph gets its own range of device stream ids, event
//     ids, notify ids and activation memory, one after another in graph
//     order. The device total is the sum.
// Either total is checked against the budgets (npuplan.maxStreams /
// maxEventIds / maxNotifyIds, default the device limits).
//
// The manifest (`npuplan.bundle/1`, written by `npuplan bundle compile`):
//   {"format": "npuplan.bundle/1", "mode": "sequential" | "concurrent",
//    "budget": {"streams", "event_ids", "notify_ids"},
//    "device": {"streams", "event_ids", "notify_ids", "memory_bytes"},
//    "graphs": [{"name", "input", "plan", "streams", "stream_base",
//                "device_stream_ids": [...], "event_ids", "event_base",
//                "event_ids_lower_bound", "sync_edges", "notify_ids",
//                "notify_base", "memory_peak", "memory_offset"}]}
// VerifyBundle recomputes every number from the plans and the mode.
#ifndef NPUPLAN_COMPILER_BUNDLE_H_
#define NPUPLAN_COMPILER_BUNDLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npuplan/plan/plan.h"

namespace npuplan {

inline constexpr char kBundleFormat[] = "npuplan.bundle/1";
// The input list `npuplan gen --batch-sizes` writes and `bundle compile --manifest` reads:
// {"format": "npuplan.bundle-input/1", "graphs": ["file", ...]} (paths relative to it).
inline constexpr char kBundleInputFormat[] = "npuplan.bundle-input/1";

struct BundleGraph {
  std::string name;   // unique in the bundle (the input's file stem)
  std::string input;  // the graph file as given
  std::string plan;   // plan file, relative to the manifest
  // From the plan.
  int64_t streams = 0, event_ids = 0, event_ids_lower_bound = 0, sync_edges = 0, notify_ids = 0;
  int64_t memory_peak = 0, memory_alignment = 1;
  // Laid out by the mode.
  int64_t stream_base = 0, event_base = 0, notify_base = 0, memory_offset = 0;
};

struct BundleBudget {
  int64_t streams = 0, event_ids = 0, notify_ids = 0;
};

struct Bundle {
  bool concurrent = false;
  BundleBudget budget;
  std::vector<BundleGraph> graphs;
  // Device totals (max over graphs, or the sum).
  int64_t streams = 0, event_ids = 0, notify_ids = 0, memory_bytes = 0;
};

// A graph's resource numbers from its plan (the name, input and plan file are the caller's).
BundleGraph BundleGraphFromPlan(const Plan& plan);
// Bases and totals of `graphs` for the mode.
Bundle LayoutBundle(std::vector<BundleGraph> graphs, bool concurrent, const BundleBudget& budget);
// ResourceExhausted naming the first total above its budget and the graphs behind it.
absl::Status CheckBundleBudget(const Bundle& bundle);

std::string BundleToJson(const Bundle& bundle);
absl::StatusOr<Bundle> BundleFromJson(std::string_view text, std::string_view source);
// The manifest against the plans it names (same order; `from_plans[i]` =
// BundleGraphFromPlan of graph i's plan): every number is recomputed from the
// plans and the mode; names are unique; the budget must hold.
absl::Status VerifyBundle(const Bundle& manifest, const std::vector<BundleGraph>& from_plans);
// Per graph and totals against the budget, one line each.
std::string BundleSummaryText(const Bundle& bundle);
// Reads a bundle-input list: the graph paths, resolved against its directory.
absl::StatusOr<std::vector<std::string>> ReadBundleInput(std::string_view text,
                                                         const std::string& path);

}  // namespace npuplan

#endif  // NPUPLAN_COMPILER_BUNDLE_H_
