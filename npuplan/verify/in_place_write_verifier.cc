// [in-place-writes] (ir/in_place_writes.h): every in-place write is ordered
// with every other touch of the memory it writes by a path in its graph. The
// pairs and the paths are searched in the plan's graph, whatever edges the
// ordering pass added or claims; a path is only ever found where it exists,
// and paths for the pairs of any order imply the rule (in_place_writes.h), so
// wrong topo ids in a plan can reject it but never let it pass. That the
// paths' edges are ordered on the device is [happens-before]'s check.
#include <utility>
#include <vector>

#include "npuplan/ir/in_place_writes.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/stage_checks.h"

namespace npuplan::verify {

absl::Status VerifyInPlaceWrites(const Plan& plan) {
  const Model& m = plan.model;
  const InPlaceBuffers buffers = InPlaceBuffers::Of(m);
  if (buffers.size() == 0) return absl::OkStatus();
  PathFinder paths(m);
  const std::vector<RequiredPath> pairs =
      RequiredPaths(buffers, [&m](NodeId n) { return m.node(n).topo_id; });
  for (const auto& [from, to, buffer] : pairs) {
    if (paths.Reaches(from, to)) continue;
    return absl::InternalError(StrCat(
        "verifier[in-place-writes]: '", m.node(from).name, "' and '", m.node(to).name,
        "' touch memory written in place (_ref_input_index), at least one of them writing, and "
        "no path of data or control edges orders them"));
  }
  // A data edge into an owner does not order its subgraphs' reads of another
  // input: they wait for that input's producer and the owner's control
  // inputs (docs/events.md, "Dependencies").
  for (const RequiredPath& p : pairs) {
    if (const NodeId producer = UnorderedOwnerEntry(buffers, paths, p); producer.valid()) {
      return absl::InternalError(
          StrCat("verifier[in-place-writes]: '", m.node(p.from).name, "' must come before what '",
                 m.node(p.to).name, "' touches in its subgraphs, which wait only for '",
                 m.node(producer).name,
                 "' (the producer of what they read) and the owner's control inputs, and '",
                 m.node(p.from).name, "' precedes none of them"));
    }
  }
  return absl::OkStatus();
}

}  // namespace npuplan::verify
