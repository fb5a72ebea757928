#include "npuplan/ir/verifier.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <deque>
#include <functional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "npuplan/support/big_vector.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

absl::Status Fail(std::string_view rule, std::string_view what) {
  return absl::InternalError(StrCat("verifier[", rule, "]: ", what));
}

const char* PropertyName(IrProperty p) {
  switch (p) {
    case IrProperty::kTopoSorted: return "topo-sorted";
    case IrProperty::kPartitioned: return "partitioned";
    case IrProperty::kLogicalStreams: return "logical-streams";
    case IrProperty::kAttachedStreams: return "attached-streams";
    case IrProperty::kMemoryPlanned: return "memory-planned";
    case IrProperty::kTasks: return "tasks";
    case IrProperty::kSyncEvents: return "sync-events";
    case IrProperty::kPhysicalStreams: return "physical-streams";
    case IrProperty::kActiveStreams: return "active-streams";
    case IrProperty::kSyncNodes: return "sync-nodes";
  }
  return "?";
}

// 1. Node names are non-empty and unique. When the model's name index finds
// every node under its own name, no two nodes share one (a name maps to one
// id, and FindNode compares the names themselves, so a stale index cannot
// pass a duplicate); otherwise the set below finds the first failure.
absl::Status CheckNames(const Model& model) {
  const size_t n = model.num_nodes();
  bool indexed = true;
  for (size_t i = 0; i < n && indexed; ++i) {
    const std::string& name = model.nodes()[i].name;
    indexed = !name.empty() && model.FindNode(name).value == static_cast<int32_t>(i);
  }
  if (indexed) return absl::OkStatus();
  std::unordered_set<std::string_view> names;
  names.reserve(n);
  for (const Node& node : model.nodes()) {
    if (node.name.empty()) return Fail("names", "a node has an empty name");
    if (!names.insert(node.name).second)
      return Fail("names", StrCat("duplicate node name '", EchoName(node.name), "'"));
  }
  return absl::OkStatus();
}

// 2. Every node in exactly one graph list, the one it names.
absl::Status CheckMembership(const Model& model) {
  const size_t n = model.num_nodes();
  const size_t ng = model.num_graphs();
  std::vector<int> listed(n, 0);
  for (size_t g = 0; g < ng; ++g) {
    for (NodeId id : model.graphs()[g].nodes) {
      if (!id.valid() || id.index() >= n) {
        return Fail("membership", StrCat("graph '", EchoName(model.graphs()[g].name),
                                         "' lists an invalid node id"));
      }
      if (model.node(id).graph.index() != g) {
        return Fail("membership",
                    StrCat("node '", EchoName(model.node(id).name), "' is listed by graph '",
                           model.graphs()[g].name, "' but belongs to another graph"));
      }
      ++listed[id.index()];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (listed[i] != 1) {
      return Fail("membership", StrCat("node '", EchoName(model.nodes()[i].name), "' is listed ",
                                       listed[i], " times in its graph"));
    }
  }
  return absl::OkStatus();
}

// 3. Edges name existing nodes and outputs in the same graph.
absl::Status CheckEdges(const Model& model) {
  const size_t n = model.num_nodes();
  for (const Node& node : model.nodes()) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const OutputRef& in = node.inputs[i];
      if (!in.node.valid() || in.node.index() >= n) {
        return Fail("edges",
                    StrCat("node '", EchoName(node.name), "' input ", i, " names no node"));
      }
      const Node& p = model.node(in.node);
      if (in.index < 0 || in.index >= static_cast<int32_t>(p.outputs.size())) {
        return Fail("edges", StrCat("node '", EchoName(node.name), "' input ", i, " uses output ",
                                    in.index, " of '", EchoName(p.name), "', which has ",
                                    p.outputs.size(), " outputs"));
      }
      if (p.graph != node.graph) {
        return Fail("edges", StrCat("node '", EchoName(node.name), "' input ", i, " comes from '",
                                    EchoName(p.name), "' in another graph"));
      }
    }
    for (NodeId c : node.control_inputs) {
      if (!c.valid() || c.index() >= n)
        return Fail("edges",
                    StrCat("node '", EchoName(node.name), "' has an invalid control input"));
      if (model.node(c).graph != node.graph) {
        return Fail("edges", StrCat("node '", EchoName(node.name), "' control input '",
                                    EchoName(model.node(c).name), "' is in another graph"));
      }
    }
  }
  return absl::OkStatus();
}

// 4. Each subgraph has one owner, which it names, and the root none.
absl::Status CheckOwnership(const Model& model) {
  const size_t ng = model.num_graphs();
  std::vector<int> owned(ng, 0);
  for (const Node& node : model.nodes()) {
    for (GraphId g : node.subgraphs) {
      if (!g.valid() || g.index() >= ng || g == kRootGraph) {
        return Fail("ownership",
                    StrCat("node '", EchoName(node.name), "' owns an invalid subgraph"));
      }
      ++owned[g.index()];
      const Graph& sg = model.graph(g);
      if (!sg.parent_node.valid() || model.node(sg.parent_node).name != node.name) {
        return Fail("ownership", StrCat("subgraph '", EchoName(sg.name), "' is listed by '",
                                        EchoName(node.name), "' but names another parent"));
      }
    }
  }
  for (size_t g = 1; g < ng; ++g) {
    const Graph& sg = model.graphs()[g];
    if (owned[g] != 1) {
      return Fail("ownership",
                  StrCat("subgraph '", EchoName(sg.name), "' is owned ", owned[g], " times"));
    }
    if (sg.parent_graph != model.node(sg.parent_node).graph) {
      return Fail("ownership",
                  StrCat("subgraph '", EchoName(sg.name), "' has an inconsistent parent graph"));
    }
  }
  if (model.root().parent_node.valid()) return Fail("ownership", "the root graph has a parent");
  return absl::OkStatus();
}

// No ownership cycle: every graph reaches the root. Each walk up stops at a
// graph already known to reach it (linear in graphs, however deep the
// nesting); meeting a graph of the walk itself is a cycle.
absl::Status CheckOwnershipAcyclic(const Model& model) {
  const size_t ng = model.num_graphs();
  constexpr uint8_t kUnknown = 0, kOnWalk = 1, kReaches = 2;
  std::vector<uint8_t> state(ng, kUnknown);
  state[0] = kReaches;
  std::vector<size_t> walk;
  for (size_t g = 1; g < ng; ++g) {
    walk.clear();
    size_t cur = g;
    while (state[cur] == kUnknown) {
      state[cur] = kOnWalk;
      walk.push_back(cur);
      cur = model.graphs()[cur].parent_graph.index();
    }
    if (state[cur] == kOnWalk) {
      return Fail("ownership", StrCat("subgraph '", EchoName(model.graphs()[g].name),
                                      "' is not reachable from the root"));
    }
    for (size_t w : walk) state[w] = kReaches;
  }
  return absl::OkStatus();
}

// 5. _parent_node_index of subgraph Data nodes names an input of the owner.
absl::Status CheckParentIndex(const Model& model) {
  const size_t ng = model.num_graphs();
  for (size_t g = 1; g < ng; ++g) {
    const Graph& sg = model.graphs()[g];
    const Node& parent = model.node(sg.parent_node);
    for (NodeId id : sg.nodes) {
      const Node& node = model.node(id);
      if (auto idx = GetIntAttr(node.attrs, "_parent_node_index")) {
        if (*idx < 0 || *idx >= static_cast<int64_t>(parent.inputs.size())) {
          return Fail("parent-index",
                      StrCat("node '", EchoName(node.name), "' has _parent_node_index ", *idx,
                             " but parent '", EchoName(parent.name), "' has ", parent.inputs.size(),
                             " inputs"));
        }
      }
    }
  }
  return absl::OkStatus();
}

// 6. Acyclic and topo ids: position i in the graph list ⇔ topo_id i, and
//    every predecessor comes earlier. Together they prove acyclicity.
absl::Status CheckTopoOrder(const Model& model) {
  const size_t ng = model.num_graphs();
  for (size_t g = 0; g < ng; ++g) {
    const Graph& graph = model.graphs()[g];
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node& node = model.node(graph.nodes[i]);
      if (node.topo_id != static_cast<int64_t>(i)) {
        return Fail("topo-ids",
                    StrCat("node '", EchoName(node.name), "' has topo id ", node.topo_id,
                           " at position ", i, " of graph '", EchoName(graph.name), "'"));
      }
    }
    for (NodeId id : graph.nodes) {
      const Node& node = model.node(id);
      auto check = [&](NodeId p, const char* kind) -> absl::Status {
        const Node& pn = model.node(p);
        if (pn.topo_id >= node.topo_id) {
          return Fail(
              "acyclic",
              StrCat(kind, " edge '", EchoName(pn.name), "' -> '", EchoName(node.name),
                     "' goes backwards in topological order (a cycle or an unsorted graph)"));
        }
        return absl::OkStatus();
      };
      for (const OutputRef& in : node.inputs) NPUPLAN_RETURN_IF_ERROR(check(in.node, "data"));
      for (NodeId c : node.control_inputs) NPUPLAN_RETURN_IF_ERROR(check(c, "control"));
    }
  }
  return absl::OkStatus();
}

// Whether every node name is non-empty and unique, from the names alone
// (not the model's name index): their hashes are radix-sorted and only names
// of equal hash are compared.
bool NamesUnique(const Model& model) {
  const size_t n = model.num_nodes();
  // (hash << 32 | index): sorting by the high half groups equal hashes.
  BigVector<uint64_t> keys(n), tmp(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = model.nodes()[i].name;
    if (name.empty()) return false;
    const uint64_t h = std::hash<std::string_view>{}(name);
    keys[i] = (static_cast<uint64_t>(static_cast<uint32_t>(h ^ (h >> 32))) << 32) | i;
  }
  // LSD radix sort on the hash, 16 bits a round.
  for (int shift = 32; shift < 64; shift += 16) {
    std::vector<size_t> start((size_t{1} << 16) + 1, 0);
    for (uint64_t k : keys) ++start[((k >> shift) & 0xffff) + 1];
    for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
    for (uint64_t k : keys) tmp[start[(k >> shift) & 0xffff]++] = k;
    keys.swap(tmp);
  }
  std::vector<std::string_view> run;
  for (size_t i = 0; i + 1 < n;) {
    size_t j = i + 1;
    while (j < n && (keys[j] >> 32) == (keys[i] >> 32)) ++j;
    if (j - i > 1) {
      run.clear();
      for (size_t k = i; k < j; ++k) run.push_back(model.nodes()[keys[k] & 0xffffffffu].name);
      std::sort(run.begin(), run.end());
      if (std::adjacent_find(run.begin(), run.end()) != run.end()) return false;
    }
    i = j;
  }
  return true;
}

// Whether checks 1, 2, 3 and 6 (names, membership, edges, topo order) all
// hold. Linear passes over the nodes and graph lists that read each
// producer's facts from one compact array, where the checks one by one read
// every producer's node twice (edges, topo order). On false the checks run
// one by one, for the first failure's message.
bool NodeChecksHold(const Model& model) {
  const size_t n = model.num_nodes();
  const size_t ng = model.num_graphs();
  if (n > static_cast<size_t>(INT32_MAX) || !NamesUnique(model)) return false;
  struct Facts {
    int64_t topo;
    int32_t graph;
    int32_t outputs;
  };
  BigVector<Facts> facts(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = model.nodes()[i];
    if (node.outputs.size() > static_cast<size_t>(INT32_MAX)) return false;
    facts[i] = {node.topo_id, node.graph.value, static_cast<int32_t>(node.outputs.size())};
  }
  // Membership and positions: each node listed once, by its own graph, at
  // the position of its topo id.
  BigVector<uint8_t> listed(n, 0);
  for (size_t g = 0; g < ng; ++g) {
    const std::vector<NodeId>& list = model.graphs()[g].nodes;
    for (size_t i = 0; i < list.size(); ++i) {
      const NodeId id = list[i];
      if (!id.valid() || id.index() >= n || listed[id.index()]) return false;
      const Facts& f = facts[id.index()];
      if (f.graph != static_cast<int32_t>(g) || f.topo != static_cast<int64_t>(i)) return false;
      listed[id.index()] = 1;
    }
  }
  if (std::find(listed.begin(), listed.end(), 0) != listed.end()) return false;
  // Edges: existing producers and anchors in the same graph, earlier in topo order.
  for (size_t i = 0; i < n; ++i) {
    const Node& node = model.nodes()[i];
    const Facts& f = facts[i];
    for (const OutputRef& in : node.inputs) {
      if (!in.node.valid() || in.node.index() >= n) return false;
      const Facts& p = facts[in.node.index()];
      if (in.index < 0 || in.index >= p.outputs || p.graph != f.graph || p.topo >= f.topo)
        return false;
    }
    for (NodeId c : node.control_inputs) {
      if (!c.valid() || c.index() >= n) return false;
      const Facts& p = facts[c.index()];
      if (p.graph != f.graph || p.topo >= f.topo) return false;
    }
  }
  return true;
}

}  // namespace

std::string PropertyNames(IrProperties props) {
  std::vector<std::string> names;
  for (uint32_t bit = 1; bit != 0 && bit <= props; bit <<= 1) {
    if (props & bit) names.push_back(PropertyName(static_cast<IrProperty>(bit)));
  }
  return StrJoin(names, ",");
}

absl::Status VerifyStructure(const Model& model) {
  if (NodeChecksHold(model)) {
    NPUPLAN_RETURN_IF_ERROR(CheckOwnership(model));
    NPUPLAN_RETURN_IF_ERROR(CheckOwnershipAcyclic(model));
    return CheckParentIndex(model);
  }
  return VerifyStructureCheckByCheck(model);
}

absl::Status VerifyStructureCheckByCheck(const Model& model) {
  NPUPLAN_RETURN_IF_ERROR(CheckNames(model));
  NPUPLAN_RETURN_IF_ERROR(CheckMembership(model));
  NPUPLAN_RETURN_IF_ERROR(CheckEdges(model));
  NPUPLAN_RETURN_IF_ERROR(CheckOwnership(model));
  NPUPLAN_RETURN_IF_ERROR(CheckOwnershipAcyclic(model));
  NPUPLAN_RETURN_IF_ERROR(CheckParentIndex(model));
  return CheckTopoOrder(model);
}

absl::Status VerifyStreamIdsContinuous(const Model& model) {
  // n nodes use at most n distinct main ids, so a hole lies in 0..n
  // whenever one exists: the table has n + 1 entries whatever ids a file
  // holds.
  const size_t n = model.num_nodes();
  std::vector<uint8_t> used(n + 1, 0);
  int64_t max_id = -1;
  for (const Node& node : model.nodes()) {
    if (node.stream_id < -1) {
      return Fail("stream-ids", StrCat("node '", EchoName(node.name), "' has invalid stream id ",
                                       node.stream_id));
    }
    if (node.stream_id < 0) continue;
    max_id = std::max(max_id, node.stream_id);
    if (static_cast<uint64_t>(node.stream_id) <= n) used[node.stream_id] = 1;
    // An attached stream below the largest main one is used by its node's
    // attached task even when no node has it as its main stream (the
    // Send/Recv nodes of another attached stream may sit above it).
    for (int64_t a : node.attached_stream_ids) {
      if (a >= 0 && static_cast<uint64_t>(a) <= n) used[a] = 1;
    }
  }
  for (int64_t s = 0; s <= max_id && static_cast<uint64_t>(s) <= n; ++s) {
    if (!used[s]) {
      return Fail("stream-ids", StrCat("stream ids are not continuous: no node is on stream ", s,
                                       " but stream ", max_id, " is used"));
    }
  }
  return absl::OkStatus();
}

}  // namespace npuplan
