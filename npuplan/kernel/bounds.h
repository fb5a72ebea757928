// Certified lower bounds for kernel cache planning (docs/kernel.md, "Lower
// bounds", has the argument of each). Every bound holds for every solution the
// evaluator accepts, whatever its order, spills (L0 spills included) and
// offsets, unless it names a fixed order.
//
//   makespan   max of: the busiest pipe's work plus the spill cycles no plan
//              avoids (`pipe_work`), the longest path (`critical_path`), a
//              one-machine relaxation per pipe with heads and tails solved
//              exactly by Jackson's preemptive schedule (`pipe_heads_tails`;
//              a head is at least the longest path into the node and the
//              largest per-pipe work of its ancestors, a tail likewise),
//              and a cumulative (area) bound per cache: every buffer is
//              resident while its users run (`cache_area`).
//   traffic    free order: a covering LP over the buffers that are live at an
//              operation in every topological order ("must-live" sets);
//              fixed order: the covering LP of generalized caching over the
//              gaps between a buffer's uses in that order. Both LPs are bounded
//              by a feasible dual built greedily (dual ascent), so no LP
//              solver is needed and the value is always a valid bound.
//              Also, for product-shaped graphs (matmul: anchors reading an
//              A, a B and a C tile), a Hong-Kung style window argument with
//              the Loomis-Whitney inequality: reloads every order needs;
//              and on full matmul grids a cut at one instant (the labels
//              between two reads there cannot all be resident).
//   Q1         max V_stay >= the largest must-live total at an operation.
//
// Cost: reachability per buffer, bounded by `max_reach_steps` (a buffer not
// examined is left out, which only weakens the bounds); the fixed-order LP
// is O(sum over positions of live buffers).
#ifndef NPUPLAN_KERNEL_BOUNDS_H_
#define NPUPLAN_KERNEL_BOUNDS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "npuplan/kernel/kernel_graph.h"

namespace npuplan::kernel {

struct BoundOptions {
  int64_t max_reach_steps = 200'000'000;  // budget of the must-live reachability walks
  int max_bitset_nodes = 12'000;          // ancestor/descendant pipe work (n^2/8 bytes)
};

struct KernelBounds {
  // Traffic (extra data movement) over all orders, and cycles every plan
  // spends on SPILL_IN (MTE2) and SPILL_OUT (MTE3).
  int64_t traffic_free_order = 0;
  int64_t spill_in_cycles = 0;
  int64_t spill_out_cycles = 0;
  // The product (Loomis-Whitney) reload bound alone, already folded into
  // traffic_free_order and spill_in_cycles (0 when no product structure).
  int64_t traffic_product = 0;
  int64_t spill_in_cycles_product = 0;
  // The cut bound for full matmul grids (one instant, live labels against
  // the cache), also folded in (0 when the group is not a full grid).
  int64_t traffic_cut = 0;
  int64_t spill_in_cycles_cut = 0;
  // Makespan bounds and their maximum.
  int64_t pipe_work = 0;  // max over pipes of own work (+ the unavoidable spill cycles)
  std::string pipe_work_pipe;
  int64_t critical_path = 0;
  int64_t pipe_heads_tails = 0;
  std::string pipe_heads_tails_pipe;
  int64_t cache_area = 0;
  std::string cache_area_cache;
  int64_t makespan = 0;
  std::string makespan_by;  // which bound gives `makespan`
  // Q1: max V_stay per vstay level and combined.
  std::map<std::string, int64_t> vstay;
  int64_t vstay_combined = 0;
  bool complete = true;  // false: the reachability budget ran out (bounds still valid)
};

KernelBounds ComputeKernelBounds(const KernelGraph& g, const CacheConfig& config,
                                 const BoundOptions& options = {});

// Covering LP of generalized caching on the fixed order of the original nodes
// in `schedule` (spill nodes, ids >= N, are skipped): a lower bound on the
// extra data movement of every solution whose original nodes run in that order.
int64_t FixedOrderTrafficBound(const KernelGraph& g, const CacheConfig& config,
                               const std::vector<int>& schedule);

// The cut bound on an m x n grid of output tiles with k labels per line, x0
// labels resident at once and free_c output tiles resident besides the one
// just finished: the SPILL_INs (of labels, fed buffers and output tiles)
// every order needs. 0 above 576 output tiles. Exposed for tests.
int64_t MatmulCutReloads(int m, int n, int64_t k, int64_t x0, int64_t free_c);

// Dual ascent for  min sum_b w_b z_b  s.t.  sum_{b in A_k} s_b z_b >= D_k,
// 0 <= z <= 1: returns the value of a feasible dual, a lower bound on the LP
// (and on every 0/1 solution). Exposed for tests.
struct CoverRow {
  int64_t demand = 0;
  std::vector<int> vars;
};
double CoverLpDualBound(const std::vector<CoverRow>& rows, const std::vector<int64_t>& size,
                        const std::vector<double>& weight);

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_BOUNDS_H_
