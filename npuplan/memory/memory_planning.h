// memory-planning (SPEC M1, issue #7 items 1, 2, 5): device memory offsets for
// every tensor of the model, between logical stream allocation and task /
// event generation (GE: logical streams → memory → GenTask).
//
// Stages:
//   1. Lifetimes (tensor_lifetimes.h): logical buffers with sizes aligned to
//      npuplan.memory.alignment, regions, plan-order lifetimes, uses.
//   2. Conflicts (stream_aware_reuse.h): buffers disjoint in plan order that
//      no happens-before fact orders become extra conflicts — exact pairs
//      for buffers with few, widened lifetimes for hubs (near-linear size).
//   3. The interval solver (interval_solver.h) packs the activation pool
//      (activations + workspaces) under npuplan.memory.searchSteps (and an
//      opt-in npuplan.memory.timeLimit); the stream sweep (stream_sweep.h)
//      places it again with per-stream release times; the lower peak wins.
//      Graph inputs and constants are laid out back to back in their regions.
//   4. plan.memory: per tensor offset / size / region / lifetime / buffer /
//      stream, region totals, peak (= activation pool size), lower bound.
//
//   offset ^   s0: a ──► c        a:0 and c:0 share [0, 512) (same stream);
//          |   s1: b              b:0 is stacked: nothing orders it
//          |  [b:0 ]              against c's uses, although b precedes c
//          |  [a:0 ][c:0 ]        in plan order
//          +------------------> plan order
//
// Requires: logical-streams. Provides: memory-planned. Preserves structure.
// Decision keywords (one per buffer, then one summary):
//   BufferPlaced   buffer= region= offset= size= lifetime=[lo,hi)
//   BufferReused   buffer= reuses= offset= size= cross_stream=true|false
//   BufferPinned   buffer= reason=
//   BufferDynamic  tensor= reason=unknown-size
//   MemoryPlanned  peak= lower_bound= gap= buffers= extra_conflicts= optimal=
//                  method=greedy|search|sweep|stream-sweep
#ifndef NPUPLAN_MEMORY_MEMORY_PLANNING_H_
#define NPUPLAN_MEMORY_MEMORY_PLANNING_H_

#include "npuplan/pass/pass.h"

namespace npuplan {

class MemoryPlanning final : public Pass {
 public:
  std::string_view name() const override { return "memory-planning"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kLogicalStreams); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kMemoryPlanned); }
  bool preserves_structure() const override { return true; }
  // The model only until it has built its lifetimes and happens-before facts
  // (PassContext::ReleaseParts: the passes that add nodes may run then).
  PlanAccess access() const override {
    return {PlanPart::kModel, PlanPart::kMemory, /*released=*/PlanPart::kModel};
  }
  bool runs_alongside() const override { return true; }  // beside the events passes
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_MEMORY_MEMORY_PLANNING_H_
