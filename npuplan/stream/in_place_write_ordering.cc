#include "npuplan/stream/in_place_write_ordering.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "npuplan/ir/in_place_writes.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

// Sorts graph g again after edges that point backwards in its order (into an
// end node), keeping the old order wherever the edges allow: Kahn's
// algorithm taking the ready node of the smallest old topo id, so a graph
// whose order stays topological keeps it and only the nodes that must move
// do. A cycle — an end node the graph orders before the write that must
// precede it — is an error naming both.
absl::Status Resort(Model& m, GraphId g, NodeId end, NodeId writer, DecisionLog& log) {
  Graph& graph = m.graph(g);
  const size_t n = graph.nodes.size();
  std::vector<int32_t> missing(n, 0);         // by old topo id: unsorted predecessors
  std::vector<std::vector<int32_t>> succ(n);  // by old topo id
  auto local = [&](NodeId u) -> int64_t {
    if (!u.valid() || u.index() >= m.num_nodes() || m.node(u).graph != g) return -1;
    return m.node(u).topo_id;
  };
  for (size_t i = 0; i < n; ++i) {
    const Node& v = m.node(graph.nodes[i]);
    auto edge = [&](NodeId u) {
      const int64_t k = local(u);
      if (k < 0) return;
      succ[static_cast<size_t>(k)].push_back(static_cast<int32_t>(i));
      ++missing[i];
    };
    for (const OutputRef& in : v.inputs) edge(in.node);
    for (NodeId c : v.control_inputs) edge(c);
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (missing[i] == 0) ready.push(static_cast<int32_t>(i));
  }
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int32_t i = ready.top();
    ready.pop();
    order.push_back(graph.nodes[static_cast<size_t>(i)]);
    for (int32_t k : succ[static_cast<size_t>(i)]) {
      if (--missing[static_cast<size_t>(k)] == 0) ready.push(k);
    }
  }
  if (order.size() != n) {
    return absl::InvalidArgumentError(
        StrCat("[", InPlaceWriteOrdering::kName, "] '", m.node(writer).name,
               "' writes in place memory that '", m.node(end).name, "' (", m.node(end).type,
               ") passes on, so it must come first, but the graph orders it after that node"));
  }
  int64_t moved = 0;
  for (size_t i = 0; i < n; ++i) {
    moved += order[i] != graph.nodes[i] ? 1 : 0;
    m.node(order[i]).topo_id = static_cast<int64_t>(i);
  }
  graph.nodes = std::move(order);
  log.Record(InPlaceWriteOrdering::kName, "InPlaceReordered", "", Field("graph", graph.name),
             Field("nodes_moved", moved));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> InPlaceWriteOrdering::Run(Plan& plan, PassContext& ctx) {
  Model& m = plan.model;
  const InPlaceBuffers buffers = InPlaceBuffers::Of(m);
  ctx.stats.Set(kName, "in_place_buffers", static_cast<int64_t>(buffers.size()));
  if (buffers.size() == 0) return false;
  const std::vector<RequiredPath> pairs =
      RequiredPaths(buffers, [&m](NodeId n) { return m.node(n).topo_id; });
  // End nodes (what a NetOutput returns is read after them): an edge into
  // one may point backwards, so the searches into them look at every node.
  std::vector<NodeId> ends;
  for (size_t b = 0; b < buffers.size(); ++b) {
    for (const InPlaceTouch& t : buffers.touches(b)) {
      if (t.end) ends.push_back(t.node);
    }
  }
  std::sort(ends.begin(), ends.end());
  PathFinder paths(m);
  int64_t added = 0;
  // Per graph, an edge added against its order (into an end node): (graph, end, writer).
  std::vector<std::tuple<GraphId, NodeId, NodeId>> backwards;
  for (const RequiredPath& p : pairs) {
    const auto& [from, to, buffer] = p;
    // Edges added so far count: a later pair they already order gets none.
    // (An edge into an end node may point backwards until the graph is
    // sorted again below: a path through it leads to another end node, whose
    // search is unbounded.) A path into an owner through another of its
    // inputs does not order what its subgraphs read: a control edge does
    // (OwnerEntry).
    if (paths.Reaches(from, to, std::binary_search(ends.begin(), ends.end(), to)) &&
        !UnorderedOwnerEntry(buffers, paths, p).valid())
      continue;
    m.node(to).control_inputs.push_back(from);
    paths.AddedEdge(from, to);
    if (m.node(from).topo_id > m.node(to).topo_id)
      backwards.emplace_back(m.node(to).graph, to, from);
    ++added;
    ctx.log.Record(kName, "InPlaceOrder", "", Field("from", m.node(from).name),
                   Field("to", m.node(to).name));
  }
  ctx.stats.Set(kName, "control_edges_added", added);
  std::sort(backwards.begin(), backwards.end());
  for (size_t i = 0; i < backwards.size(); ++i) {
    const auto& [g, end, writer] = backwards[i];
    if (i > 0 && std::get<0>(backwards[i - 1]) == g) continue;  // one sort per graph
    NPUPLAN_RETURN_IF_ERROR(Resort(m, g, end, writer, ctx.log));
  }
  return added > 0;
}

}  // namespace npuplan
