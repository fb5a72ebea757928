#include "npuplan/stream/in_place_write_ordering.h"

#include <utility>
#include <vector>

#include "npuplan/ir/in_place_writes.h"

namespace npuplan {

absl::StatusOr<bool> InPlaceWriteOrdering::Run(Plan& plan, PassContext& ctx) {
  Model& m = plan.model;
  const InPlaceBuffers buffers = InPlaceBuffers::Of(m);
  ctx.stats.Set(kName, "in_place_buffers", static_cast<int64_t>(buffers.size()));
  if (buffers.size() == 0) return false;
  const std::vector<std::pair<NodeId, NodeId>> pairs =
      RequiredPaths(buffers, [&m](NodeId n) { return m.node(n).topo_id; });
  PathFinder paths(m);
  int64_t added = 0;
  for (const auto& [from, to] : pairs) {
    // Edges added so far count: a later pair they already order gets none.
    if (paths.Reaches(from, to)) continue;
    m.node(to).control_inputs.push_back(from);
    paths.AddedEdge(from, to);
    ++added;
    ctx.log.Record(kName, "InPlaceOrder", "", Field("from", m.node(from).name),
                   Field("to", m.node(to).name));
  }
  ctx.stats.Set(kName, "control_edges_added", added);
  return added > 0;
}

}  // namespace npuplan
