// The options of the dynamic-shape partition, read and checked once per run
// (ReadPartitionOptions). Each field names the option it comes from; the
// option table with defaults and help texts is npuplan/pass/options.cc
// (`npuplan options`, docs/options.md).
#ifndef NPUPLAN_PARTITION_PARTITION_OPTIONS_H_
#define NPUPLAN_PARTITION_PARTITION_OPTIONS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/pass/options.h"

namespace npuplan {
namespace partition {

struct PartitionOptions {
  // KNOWN clusters with fewer nodes become UNKNOWN; -1 = whole graph dynamic
  // (ge.exec.static_model_ops_lower_limit; default 4, 6 with merge_known_first).
  int64_t lower_limit = 4;
  // A static root with fewer nodes runs host-scheduled, i.e. whole graph
  // dynamic (ge.exec.hostSchedulingMaxThreshold; 0 = off).
  int64_t host_scheduling_threshold = 0;
  // GE's merge_known_first variant: known TryMerge before anything else, no
  // MergeAllPathFrom (npuplan.partition.mergeKnownFirst).
  bool merge_known_first = false;
  // ge.topoSortingMode=3: keep the node order; merge runs of equal type.
  bool stable_topo = false;
  // Order used to re-sort the graphs after the frames are built.
  TopoSortMode topo_mode = TopoSortMode::kBfs;
  // ge.exec.placement=HOST (GE's host-exec flag): whole graph dynamic.
  bool host_exec = false;
  // ge.tiling_schedule_optimize=1 and npuplan.device.tilingSink: tiling
  // sinks, so a tiling-depend node whose inputs can sink stays known.
  bool tiling_sink = false;
};

// Reads and checks the partition options; errors name the option.
absl::StatusOr<PartitionOptions> ReadPartitionOptions(const CompileOptions& options);

}  // namespace partition
}  // namespace npuplan

#endif  // NPUPLAN_PARTITION_PARTITION_OPTIONS_H_
