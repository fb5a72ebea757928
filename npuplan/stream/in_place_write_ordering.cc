#include "npuplan/stream/in_place_write_ordering.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "npuplan/ir/in_place_writes.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

// Each NetOutput in `ends` to the end of its graph, which keeps the order
// topological: a NetOutput has no successor in its graph (else an error: the
// edge added into it would close a cycle or leave the order unsorted).
absl::Status MoveToTheEnd(Model& m, std::vector<NodeId> ends, DecisionLog& log) {
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  for (NodeId end : ends) {
    Graph& g = m.graph(m.node(end).graph);
    for (NodeId id : g.nodes) {
      const Node& n = m.node(id);
      const bool reads_end = std::any_of(n.inputs.begin(), n.inputs.end(),
                                         [&](const OutputRef& r) { return r.node == end; }) ||
                             std::find(n.control_inputs.begin(), n.control_inputs.end(), end) !=
                                 n.control_inputs.end();
      if (reads_end) {
        return absl::InvalidArgumentError(
            StrCat("[", InPlaceWriteOrdering::kName, "] NetOutput '", m.node(end).name,
                   "' has a successor '", n.name,
                   "' in its graph: an in-place write that must precede it cannot be ordered"));
      }
    }
    log.Record(InPlaceWriteOrdering::kName, "InPlaceEndMoved", "", Field("node", m.node(end).name),
               Field("from", m.node(end).topo_id), Field("to", g.nodes.size() - 1));
    g.nodes.erase(std::find(g.nodes.begin(), g.nodes.end(), end));
    g.nodes.push_back(end);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      m.node(g.nodes[i]).topo_id = static_cast<int64_t>(i);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> InPlaceWriteOrdering::Run(Plan& plan, PassContext& ctx) {
  Model& m = plan.model;
  const InPlaceBuffers buffers = InPlaceBuffers::Of(m);
  ctx.stats.Set(kName, "in_place_buffers", static_cast<int64_t>(buffers.size()));
  if (buffers.size() == 0) return false;
  const std::vector<std::pair<NodeId, NodeId>> pairs =
      RequiredPaths(buffers, [&m](NodeId n) { return m.node(n).topo_id; });
  PathFinder paths(m);
  int64_t added = 0;
  std::vector<NodeId> ends_to_move;  // NetOutputs that now follow a node after them
  for (const auto& [from, to] : pairs) {
    // Edges added so far count: a later pair they already order gets none.
    // (An edge into a NetOutput may point backwards until the NetOutput
    // moves; it ends every path it is on, so the searches stay right.)
    if (paths.Reaches(from, to)) continue;
    m.node(to).control_inputs.push_back(from);
    paths.AddedEdge(from, to);
    if (m.node(from).topo_id > m.node(to).topo_id) ends_to_move.push_back(to);
    ++added;
    ctx.log.Record(kName, "InPlaceOrder", "", Field("from", m.node(from).name),
                   Field("to", m.node(to).name));
  }
  ctx.stats.Set(kName, "control_edges_added", added);
  NPUPLAN_RETURN_IF_ERROR(MoveToTheEnd(m, ends_to_move, ctx.log));
  return added > 0;
}

}  // namespace npuplan
