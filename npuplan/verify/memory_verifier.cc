#include "npuplan/verify/memory_verifier.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/sort_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/address_painter.h"
#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/tensor_lifetimes.h"
#include "npuplan/verify/verification.h"

namespace npuplan::memory {
namespace {

absl::Status Fail(std::string_view rule, std::string_view what) {
  return absl::InternalError(StrCat("verifier[", rule, "]: ", what));
}

// "'name' (stream s)" for messages.
std::string Describe(const Model& m, const LogicalBuffer& b) {
  std::string streams;
  for (NodeId u : b.uses) {
    std::string s = StrCat(m.node(u).stream_id);
    if (streams.find(s) == std::string::npos) streams += streams.empty() ? s : "," + s;
  }
  return StrCat("'", b.name, "' (streams ", streams.empty() ? "-" : streams, ", plan order [",
                b.lower, ",", b.upper, ")", b.pinned.empty() ? "" : ", pinned",
                b.live_to_end ? ", graph output" : "", ")");
}

// What the placement checks fill: each buffer's offset and how many of its
// tensors are placed, and which planned tensors (entries of
// TensorLifetimes::buffer_of) are placed.
struct Placed {
  std::vector<int64_t> offset;
  std::vector<int> seen;
  std::vector<uint8_t> tensors;
};

// One placement against its recomputed tensor and buffer.
absl::Status CheckPlacement(const Model& m, const TensorLifetimes& lt, const TensorPlacement& tp,
                            bool order_changed, Placed& placed) {
  if (!tp.node.valid() || tp.node.index() >= m.num_nodes())
    return Fail("memory-tensors", "a placement names no node");
  TensorRef r{tp.node, tp.output};
  // Only a failure names the tensor (no string per placement).
  auto name = [&m, r] { return TensorName(m, r); };
  // A tensor that is not planned fails below the first time it is placed, so
  // only planned ones (entries of buffer_of) can be placed twice.
  const BufferIndex::const_iterator it = lt.buffer_of.find(r);
  if (it != lt.buffer_of.end() && placed.tensors[it - lt.buffer_of.begin()]++ > 0)
    return Fail("memory-tensors", StrCat("tensor '", name(), "' is placed twice"));
  if (it == lt.buffer_of.end()) {
    return Fail("memory-tensors",
                StrCat("tensor '", name(), "' is placed but is not a planned tensor of the graph ",
                       "(no such output, no workspace, or unknown size)"));
  }
  const int32_t buffer = it->second;
  const LogicalBuffer& b = lt.buffers[buffer];
  const MemoryRegion region =
      r.output == TensorRef::kWorkspace ? MemoryRegion::kWorkspace : b.region;
  if (tp.size != b.size) {
    return Fail("memory-tensors",
                StrCat("tensor '", name(), "' has size ", tp.size, " but needs ", b.size, " (",
                       b.bytes, " bytes aligned to ", lt.alignment, ")"));
  }
  if (tp.region != region) {
    return Fail("memory-tensors",
                StrCat("tensor '", name(), "' is in region '", MemoryRegionName(tp.region),
                       "', expected '", MemoryRegionName(region), "'"));
  }
  if (tp.offset < 0 || tp.offset % lt.alignment != 0) {
    return Fail("memory-align", StrCat("tensor '", name(), "' offset ", tp.offset,
                                       " is not a non-negative multiple of ", lt.alignment));
  }
  // The sweeps below form offset + size: a placement whose end does not
  // fit in int64 would wrap into a small address range.
  if (!CheckedAdd(tp.offset, b.size)) {
    return Fail("memory-tensors", StrCat("tensor '", name(), "' at offset ", tp.offset,
                                         " with size ", b.size, " ends beyond int64"));
  }
  if (!order_changed && (tp.first_use != b.lower || tp.last_use != b.upper)) {
    return Fail("memory-tensors",
                StrCat("tensor '", name(), "' lifetime [", tp.first_use, ",", tp.last_use,
                       ") differs from the recomputed [", b.lower, ",", b.upper, ")"));
  }
  if (placed.seen[buffer]++ > 0 && placed.offset[buffer] != tp.offset) {
    return Fail("memory-tensors", StrCat("tensor '", name(), "' at offset ", tp.offset,
                                         " does not share the buffer of '", b.name, "' at offset ",
                                         placed.offset[buffer], " (ref / subgraph alias)"));
  }
  placed.offset[buffer] = tp.offset;
  // The buffer's name, like its lifetime, is only the recomputed one until
  // Send/Recv nodes or loop gates change the graph (aliases may then group
  // differently).
  if ((!order_changed && tp.buffer != b.name) || tp.stream != m.node(tp.node).stream_id) {
    return Fail("memory-tensors", StrCat("tensor '", name(), "' says buffer '", EchoName(tp.buffer),
                                         "' on stream ", tp.stream, "; it is in buffer '", b.name,
                                         "' and its node on stream ", m.node(tp.node).stream_id));
  }
  return absl::OkStatus();
}

// 1. Placements ↔ tensors.
absl::Status CheckPlacements(const Plan& plan, const TensorLifetimes& lt, Placed& placed) {
  const Model& m = plan.model;
  const MemoryResult& mem = plan.memory;
  // Nodes inserted after memory planning shift the positions: Send/Recv nodes,
  // and the loop gates stream-activation places.
  const bool order_changed =
      Has(plan.established, IrProperty::kSyncNodes) ||
      std::any_of(m.nodes().begin(), m.nodes().end(), [](const Node& n) { return IsLoopGate(n); });
  placed.offset.assign(lt.buffers.size(), -1);
  placed.seen.assign(lt.buffers.size(), 0);
  placed.tensors.assign(lt.buffer_of.size(), 0);
  for (size_t i = 0; i < mem.tensors.size(); ++i) {
    // CheckPlacement reads each placement's node: fetched a few ahead.
    if (i + 8 < mem.tensors.size()) {
      const NodeId ahead = mem.tensors[i + 8].node;
      if (ahead.valid() && ahead.index() < m.num_nodes())
        __builtin_prefetch(&m.node(ahead).stream_id);
    }
    NPUPLAN_RETURN_IF_ERROR(CheckPlacement(m, lt, mem.tensors[i], order_changed, placed));
  }
  if (mem.dynamic_tensors != lt.dynamic) {
    return Fail("memory-tensors",
                StrCat("dynamic_tensors lists [", EchoName(StrJoin(mem.dynamic_tensors, ",")),
                       "] but the unknown-size tensors are [", StrJoin(lt.dynamic, ","), "]"));
  }
  // Every member of a buffer is an entry of buffer_of: only when some entry
  // is unplaced is the first such member (by buffer) looked for.
  if (std::find(placed.tensors.begin(), placed.tensors.end(), uint8_t{0}) == placed.tensors.end())
    return absl::OkStatus();
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    for (const TensorRef& r : lt.buffers[b].members) {
      if (const auto it = lt.buffer_of.find(r);
          it == lt.buffer_of.end() || placed.tensors[it - lt.buffer_of.begin()] == 0)
        return Fail("memory-tensors", StrCat("tensor '", TensorName(m, r), "' has no placement"));
    }
  }
  return absl::OkStatus();
}

// The pool: every address-overlapping pair must be ordered by H. Ordered is
// transitive, so it suffices that each buffer is ordered after the last
// buffer (by plan order) on every byte it covers: sweep by lower and paint
// the address space with the owner (slots of the gcd of the offsets and
// sizes when there are at most a few per buffer, else a std::map).
// O(n log n). Returns the pool's end.
absl::StatusOr<int64_t> CheckPoolOverlap(const Model& m, const TensorLifetimes& lt,
                                         const StreamAwareReuse& reuse,
                                         const std::vector<int64_t>& offset,
                                         std::vector<int>& list) {
  int64_t region_end = 0, unit = 0;
  for (int b : list) {
    region_end = std::max(region_end, offset[b] + lt.buffers[b].size);
    unit = std::gcd(std::gcd(unit, offset[b]), lt.buffers[b].size);
  }
  // By (lower, index): `list` is in index order, so a stable sort by lower
  // (a counting sort over plan positions).
  NPUPLAN_RET_CHECK(std::is_sorted(list.begin(), list.end()));
  StableSortByKey(list, [&](int b) { return lt.buffers[b].lower; });
  AddressPainter painted(region_end, std::max<int64_t>(unit, 1),
                         4 * static_cast<int64_t>(list.size()) + 64);
  for (int b : list) {
    const int64_t end_b = offset[b] + lt.buffers[b].size;
    int unordered = -1;  // the first buffer on b's bytes not ordered before it
    painted.Paint(offset[b], end_b, b, [&](int a) {
      if (unordered < 0 && a >= 0 && !reuse.Ordered(a, b)) unordered = a;
    });
    if (unordered < 0) continue;
    const int a = unordered;
    return Fail(
        "memory-overlap",
        StrCat(Describe(m, lt.buffers[a]), " at [", offset[a], ",", offset[a] + lt.buffers[a].size,
               ") and ", Describe(m, lt.buffers[b]), " at [", offset[b], ",", end_b,
               ") share memory, but neither's uses provably happen before the other's "
               "(stream order + "
               "dependencies)"));
  }
  return region_end;
}

// A region outside the pool: no two buffers share an address, and the
// region's total covers them. Returns the region's end.
absl::StatusOr<int64_t> CheckRegionOverlap(const Model& m, const MemoryResult& mem,
                                           const TensorLifetimes& lt, const StreamAwareReuse& reuse,
                                           const std::vector<int64_t>& offset,
                                           const std::string& region, std::vector<int>& list) {
  int64_t region_end = 0;
  std::sort(list.begin(), list.end(), [&](int a, int b) {
    return std::make_pair(offset[a], a) < std::make_pair(offset[b], b);
  });
  for (size_t i = 0; i < list.size(); ++i) {
    const int a = list[i];
    const int64_t end_a = offset[a] + lt.buffers[a].size;
    region_end = std::max(region_end, end_a);
    for (size_t j = i + 1; j < list.size() && offset[list[j]] < end_a; ++j) {
      const int b = list[j];
      if (region == "pool" && reuse.MayShare(a, b)) continue;
      return Fail(
          "memory-overlap",
          StrCat(Describe(m, lt.buffers[a]), " at [", offset[a], ",", end_a, ") and ",
                 Describe(m, lt.buffers[b]), " at [", offset[b], ",",
                 offset[b] + lt.buffers[b].size, ") share memory, but ",
                 region == "pool" ? "neither's uses provably happen before the other's (stream "
                                    "order + dependencies)"
                                  : StrCat("buffers of region '", region, "' never share")));
    }
  }
  if (region != "pool") {
    auto it = mem.region_bytes.find(region);
    if (it == mem.region_bytes.end() || it->second < region_end) {
      return Fail("memory-peak", StrCat("region '", region, "' total ",
                                        it == mem.region_bytes.end() ? 0 : it->second,
                                        " does not cover its buffers (", region_end, " bytes)"));
    }
  }
  return region_end;
}

// 3. Peak and bound.
absl::Status CheckPeak(const MemoryResult& mem, int64_t pool_end,
                       const std::map<std::string, std::vector<int>>& by_region) {
  if (mem.peak != pool_end) {
    return Fail("memory-peak",
                StrCat("peak ", mem.peak, " but the activation pool ends at ", pool_end));
  }
  if (mem.lower_bound < 0 || mem.lower_bound > mem.peak) {
    return Fail("memory-peak",
                StrCat("lower bound ", mem.lower_bound, " is not in [0, peak ", mem.peak, "]"));
  }
  if (mem.optimal != (mem.peak == mem.lower_bound)) {
    return Fail("memory-peak", StrCat("optimal is ", mem.optimal ? "true" : "false", " but peak ",
                                      mem.peak, mem.optimal ? " is above" : " equals",
                                      " the lower bound ", mem.lower_bound));
  }
  for (const auto& [region, bytes] : mem.region_bytes) {
    if (region == "activation" ? bytes != mem.peak : !by_region.count(region)) {
      return Fail("memory-peak",
                  StrCat("region_bytes.", EchoName(region), " is ", bytes,
                         region == "activation" ? StrCat(" but the peak is ", mem.peak)
                                                : std::string(" but no buffer is in that region")));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyMemoryPlan(const Plan& plan) {
  verify::Verification run(plan);
  return VerifyMemoryPlan(run);
}

absl::Status VerifyMemoryPlan(verify::Verification& run) {
  const Plan& plan = run.plan();
  const Model& m = plan.model;
  const MemoryResult& mem = plan.memory;
  if (!mem.planned)
    return Fail("memory-tensors",
                "memory-planned is established but the plan has no memory section");
  // The option's range (npuplan.memory.alignment): a power of two up to 2^30.
  if (mem.alignment < 1 || mem.alignment > (int64_t{1} << 30) ||
      (mem.alignment & (mem.alignment - 1)) != 0) {
    return Fail("memory-align",
                StrCat("alignment ", mem.alignment, " is not a power of two in [1, 2^30]"));
  }
  absl::StatusOr<TensorLifetimes> lts = ComputeTensorLifetimes(m, mem.alignment);
  if (!lts.ok()) return Fail("memory-tensors", std::string(lts.status().message()));
  const TensorLifetimes& lt = *lts;
  Placed placed;
  NPUPLAN_RETURN_IF_ERROR(CheckPlacements(plan, lt, placed));

  // 2. Address overlap: pool buffers by offset, then a sweep.
  StreamAwareReuse reuse(m, lt, nullptr, run.DynamicGraphs());
  // Listed per region enum first (a map lookup per buffer would cost more
  // than the lists), then keyed by name, "pool" for the pool's regions.
  std::vector<int> listed[std::size(kMemoryRegionNames)];
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    if (lt.buffers[b].size == 0) continue;
    const MemoryRegion r =
        lt.buffers[b].planned_in_pool() ? MemoryRegion::kActivation : lt.buffers[b].region;
    listed[static_cast<size_t>(r)].push_back(static_cast<int>(b));
  }
  std::map<std::string, std::vector<int>> by_region;
  for (size_t r = 0; r < std::size(listed); ++r) {
    if (listed[r].empty()) continue;
    const MemoryRegion region = static_cast<MemoryRegion>(r);
    by_region[IsPoolRegion(region) ? std::string("pool") : std::string(MemoryRegionName(region))] =
        std::move(listed[r]);
  }
  int64_t pool_end = 0;
  for (auto& [region, list] : by_region) {
    if (region == "pool") {
      NPUPLAN_ASSIGN_OR_RETURN(pool_end, CheckPoolOverlap(m, lt, reuse, placed.offset, list));
    } else {
      NPUPLAN_RETURN_IF_ERROR(
          CheckRegionOverlap(m, mem, lt, reuse, placed.offset, region, list).status());
    }
  }
  return CheckPeak(mem, pool_end, by_region);
}

}  // namespace npuplan::memory
