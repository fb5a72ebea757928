// Views of a simulated run shared by the Chrome trace (simulator.h) and the
// HTML report (npuplan/report): what each stream is, and the planned memory
// in use over simulated time.
//
// Streams. The program's streams are physical streams; a logical stream the
// physical split cut into pieces (StreamResult::split_to_logical) keeps its
// id for the first piece. A stream whose tasks are all attached-stream tasks
// is an attached stream; it belongs to the logical stream of the first node
// it serves.
//
//   stream 0                              a logical stream, not split
//   stream 35 (logical 2, piece 3 of 9)   a later piece of logical stream 2
//   attached stream 7 (of logical 1)
//
// Memory in use. Each activation-pool buffer (activation and workspace
// regions; aliases sharing TensorPlacement::buffer count once) is in use from
// the start of the first of its members' producers that runs a task to the
// end of the last task that produces or reads a member (the whole run for a
// graph output read by the root NetOutput). Plans lay buffers out in plan
// order; this maps them onto the simulated times of the nodes that touch
// them, so it is an estimate of when the memory is needed, not a second plan.
// Constants and inputs (their own regions) are in use for the whole run.
#ifndef NPUPLAN_SIM_TRACE_VIEWS_H_
#define NPUPLAN_SIM_TRACE_VIEWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "npuplan/plan/plan.h"
#include "npuplan/sim/simulator.h"

namespace npuplan::sim {

struct StreamInfo {
  int64_t plan_stream = 0;
  int64_t logical = -1;  // the logical stream it belongs to (-1: none known)
  int32_t piece = 0;     // 0 = the logical stream's own id, 1.. the later split pieces by id
  int32_t pieces = 1;    // physical streams of that logical stream (attached ones not counted)
  bool attached = false;
  std::string label;     // the logical stream's user stream label
  std::string name;      // as above
};

// One entry per SimResult::streams entry, in the same order.
std::vector<StreamInfo> DescribeStreams(const Plan& plan, const SimResult& result);

struct BufferUse {
  std::string name;      // buffer name (owner tensor)
  int64_t size = 0;
  double start = 0, end = 0;  // simulated µs
};
struct MemoryInUse {
  std::vector<BufferUse> buffers;           // pool buffers, by name
  std::vector<std::pair<double, int64_t>> steps;  // (time, bytes in use from then on), ascending time
  int64_t max_bytes = 0;                    // max of steps
  int64_t constant_bytes = 0;               // constants + inputs regions
};
// Empty (no buffers, no steps) when the plan has no memory plan.
MemoryInUse PoolMemoryInUse(const Plan& plan, const SimResult& result);

}  // namespace npuplan::sim

#endif  // NPUPLAN_SIM_TRACE_VIEWS_H_
