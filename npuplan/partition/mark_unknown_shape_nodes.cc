// Marking runs in four phases over all graphs:
//   1. per node, the (b), (f), (a), (c), (d) rules, with no-tiling detection;
//   2. if any (a)–(d) node exists, no-tiling nodes revert to unknown;
//   3. children before parents: a known node owning a graph with an unknown
//      node becomes unknown ("subgraph contains unknown");
//   4. Const/Constant data inputs of unknown nodes are pulled in.
#include "npuplan/partition/mark_unknown_shape_nodes.h"

#include <algorithm>
#include <optional>
#include <string>

#include "npuplan/ir/node_prefetch.h"
#include "npuplan/partition/op_types.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace partition {
namespace {

constexpr std::string_view kMarkPass = MarkUnknownShapeNodes::kName;

absl::Status BadAttr(const Node& n, std::string_view attr, std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat("[", kMarkPass, "] node '", n.name, "' (", n.type, "): attribute ", attr, " ", what));
}

// A bool attribute: nullopt when absent; InvalidArgument when not a bool.
absl::StatusOr<std::optional<bool>> BoolAttr(const Node& n, std::string_view key) {
  const AttrValue* v = FindAttr(n.attrs, key);
  if (v == nullptr) return std::optional<bool>();
  if (const bool* b = v->as<bool>()) return std::optional<bool>(*b);
  return BadAttr(n, key, StrCat("must be a bool, got ", v->TypeName()));
}

// A list of strings given as a string list or one comma-separated string.
absl::StatusOr<std::vector<std::string>> StringListAttr(const Node& n, std::string_view key) {
  std::vector<std::string> out;
  const AttrValue* v = FindAttr(n.attrs, key);
  if (v == nullptr) return out;
  if (const auto* l = v->as<AttrValue::StringList>()) return *l;
  if (const auto* s = v->as<std::string>()) {
    size_t start = 0;
    while (start <= s->size()) {
      size_t comma = s->find(',', start);
      std::string item = s->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!item.empty()) out.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }
  if (const auto* l = v->as<AttrValue::IntList>(); l && l->empty()) return out;  // [] parses as int list
  return BadAttr(n, key, StrCat("must be a list of engine names, got ", v->TypeName()));
}

bool AlwaysNoTiling(std::string_view t) {
  return t == "MemcpyAsync" || t == "StreamMerge" || t == "PartitionedCall";
}

bool InputDynamic(const Model& m, const OutputRef& in) {
  const Node& p = m.node(in.node);
  return in.index >= 0 && static_cast<size_t>(in.index) < p.outputs.size() && p.outputs[in.index].IsDynamic();
}

bool HasDynamicShape(const Model& m, const Node& n) {
  for (const TensorDesc& t : n.outputs) {
    if (t.IsDynamic()) return true;
  }
  for (const OutputRef& in : n.inputs) {
    if (InputDynamic(m, in)) return true;
  }
  return false;
}

// GE's no-tiling capability (ge-reference §7, IsNodeSupportNoTiling), see the
// header. Data-like nodes and NetOutput skip the engine checks (GE: they need
// no tiling of their own).
absl::StatusOr<bool> CanRunNoTiling(const Model& m, const Node& n, const std::vector<uint8_t>& no_tiling) {
  if (AlwaysNoTiling(n.type)) return true;
  // Every attribute is read (and a malformed one reported) before deciding.
  NPUPLAN_ASSIGN_OR_RETURN(auto inline_engines, StringListAttr(n, "_op_tiling_inline_engine"));
  NPUPLAN_ASSIGN_OR_RETURN(auto export_engines, StringListAttr(n, "_op_export_shape_engine"));
  auto has = [&](const std::vector<std::string>& l) { return std::find(l.begin(), l.end(), n.engine) != l.end(); };
  const bool engines_ok =
      IsDataType(n.type) || n.type == "NetOutput" || (has(inline_engines) && has(export_engines));
  // The shape bound concerns dynamic outputs only (GE checks the output
  // tensors' ranges): a node without one (NetOutput) needs none.
  bool bounded = std::none_of(n.outputs.begin(), n.outputs.end(), [](const TensorDesc& t) { return t.IsDynamic(); });
  if (const AttrValue* v = FindAttr(n.attrs, "_op_max_shape")) {
    const auto* s = v->as<std::string>();
    const auto* l = v->as<AttrValue::IntList>();
    if (s == nullptr && l == nullptr) return BadAttr(n, "_op_max_shape", "must be a string or a list of ints");
    bounded = (s && !s->empty()) || (l && !l->empty());
  }
  if (const AttrValue* v = FindAttr(n.attrs, "_shape_range")) {
    const auto* l = v->as<AttrValue::IntList>();
    if (l == nullptr || l->size() % 2 != 0) {
      return BadAttr(n, "_shape_range", "must be a flat list of [min, max] int pairs");
    }
    bool all = !l->empty();
    for (size_t i = 0; i < l->size(); i += 2) {
      if ((*l)[i] < 0 || (*l)[i + 1] < (*l)[i]) all = false;  // -1 max = unbounded
    }
    bounded = bounded || all;
  }
  if (!engines_ok || !bounded) return false;
  for (const OutputRef& in : n.inputs) {
    if (!InputDynamic(m, in)) continue;
    const Node& p = m.node(in.node);
    if (!IsDataType(p.type) && !no_tiling[in.node.index()]) return false;
  }
  return true;
}

// Rule (c): a tiling-dependent op whose tiling input is dynamic or not constant.
absl::StatusOr<bool> TilingDependDynamic(const Model& m, const Node& n) {
  NPUPLAN_ASSIGN_OR_RETURN(std::optional<bool> flag, BoolAttr(n, "_dynamic_tiling_depend_op"));
  if (flag.value_or(false)) return true;
  const AttrValue* v = FindAttr(n.attrs, "_tiling_depend_inputs");
  if (v == nullptr) return false;
  const auto* l = v->as<AttrValue::IntList>();
  if (l == nullptr) return BadAttr(n, "_tiling_depend_inputs", StrCat("must be a list of input indices, got ", v->TypeName()));
  for (int64_t i : *l) {
    if (i < 0 || i >= static_cast<int64_t>(n.inputs.size())) {
      return BadAttr(n, "_tiling_depend_inputs",
                     StrCat("names input ", i, " but the node has ", n.inputs.size(), " data inputs"));
    }
    const OutputRef& in = n.inputs[i];
    if (!IsConstType(m.node(in.node).type) || InputDynamic(m, in)) return true;
  }
  return false;
}

std::string_view StatName(MarkReason r) {
  switch (r) {
    case MarkReason::kForceUnknown: return "rule_force_unknown";
    case MarkReason::kHostCpu: return "rule_host_cpu";
    case MarkReason::kDynamicShape: return "rule_dynamic_shape";
    case MarkReason::kSubgraphUnknown: return "rule_subgraph_unknown";
    case MarkReason::kTilingDepend: return "rule_tiling_depend";
    case MarkReason::kAddrRefresh: return "rule_addr_refresh";
    case MarkReason::kConstInput: return "rule_const_input";
    case MarkReason::kNoTilingReverted: return "no_tiling_reverted";
    default: return "other";
  }
}

}  // namespace

std::string_view ReasonText(MarkReason r) {
  switch (r) {
    case MarkReason::kKnown: return "known";
    case MarkReason::kForceUnknown: return "force_unknown";
    case MarkReason::kHostCpu: return "HostCpu engine";
    case MarkReason::kDynamicShape: return "dynamic shape";
    case MarkReason::kSubgraphUnknown: return "subgraph contains unknown";
    case MarkReason::kTilingDepend: return "tiling depend not sinkable";
    case MarkReason::kAddrRefresh: return "_is_support_addr_refresh=false";
    case MarkReason::kConstInput: return "const input of unknown";
    case MarkReason::kNoTilingReverted: return "dynamic shape (no-tiling reverted)";
    case MarkReason::kPathAbsorption: return "path absorption";
    case MarkReason::kSmallCluster: return "small cluster demotion";
    case MarkReason::kControlFlowGroup: return "control-flow group";
    case MarkReason::kRefVariable: return "ref-variable input";
    case MarkReason::kDataFlowHandle: return "data-flow handle";
  }
  return "?";
}

bool EntersPartitionFlow(MarkReason r) {
  return r == MarkReason::kForceUnknown || r == MarkReason::kDynamicShape || r == MarkReason::kTilingDepend ||
         r == MarkReason::kAddrRefresh || r == MarkReason::kNoTilingReverted;
}

absl::StatusOr<MarkResult> ComputeUnknownShapeMarks(const Model& model, const CompileOptions& options,
                                                    DecisionLog* log, Statistics* stats) {
  NPUPLAN_ASSIGN_OR_RETURN(const PartitionOptions read, ReadPartitionOptions(options));
  return ComputeUnknownShapeMarks(model, read, log, stats);
}

absl::StatusOr<MarkResult> ComputeUnknownShapeMarks(const Model& model,
                                                    const PartitionOptions& options,
                                                    DecisionLog* log, Statistics* stats) {
  const size_t n = model.num_nodes();
  MarkResult res;
  res.reason.assign(n, MarkReason::kKnown);
  res.no_tiling.assign(n, 0);
  const bool tiling_sink = options.tiling_sink;
  std::vector<GraphId> order = model.GraphsPreOrder();
  std::reverse(order.begin(), order.end());  // subgraphs before their owners
  const bool logging = log != nullptr && log->enabled();

  // Which outputs are dynamic, per node, in one sequential pass (bit k =
  // output k, for k < 7; bit 7 = more outputs, checked directly): rule (a)
  // then reads one byte per producer instead of its tensor's shape.
  std::vector<uint8_t> dyn_out(n, 0);
  std::vector<uint8_t> owns_graphs(n, 0);  // phase 3 reads only these nodes again
  // Both walks below are cache misses on each node's struct and the arrays
  // it points to: fetched in stages ahead of the node being read.
  constexpr size_t kStructAhead = 16, kArraysAhead = 8, kShapeAhead = 4;
  for (size_t i = 0; i < n; ++i) {
    if (i + kStructAhead < n) PrefetchNodeRecord(model.nodes()[i + kStructAhead]);
    if (i + kArraysAhead < n && !model.nodes()[i + kArraysAhead].outputs.empty())
      __builtin_prefetch(model.nodes()[i + kArraysAhead].outputs.data());
    if (i + kShapeAhead < n && !model.nodes()[i + kShapeAhead].outputs.empty() &&
        !model.nodes()[i + kShapeAhead].outputs[0].shape.empty())
      __builtin_prefetch(model.nodes()[i + kShapeAhead].outputs[0].shape.data());
    owns_graphs[i] = !model.nodes()[i].subgraphs.empty();
    const std::vector<TensorDesc>& outs = model.nodes()[i].outputs;
    uint8_t bits = outs.size() > 7 ? 0x80 : 0;
    for (size_t k = 0; k < outs.size() && k < 7; ++k) {
      if (outs[k].IsDynamic()) bits |= static_cast<uint8_t>(1u << k);
    }
    dyn_out[i] = bits;
  }
  auto has_dynamic_shape = [&](const Node& node, NodeId id) {
    const uint8_t own = dyn_out[id.index()];
    if ((own & 0x7f) != 0 || ((own & 0x80) && HasDynamicShape(model, node))) return true;
    for (const OutputRef& in : node.inputs) {
      if (in.index < 0 || !in.node.valid() || in.node.index() >= n) {
        if (InputDynamic(model, in)) return true;
        continue;
      }
      const uint8_t bits = dyn_out[in.node.index()];
      if (in.index < 7 ? ((bits >> in.index) & 1) != 0 : (bits & 0x80) && InputDynamic(model, in)) return true;
    }
    return false;
  };
  // 1. Node rules.
  for (GraphId g : order) {
    const std::vector<NodeId>& nodes = model.graph(g).nodes;
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (k + kStructAhead < nodes.size()) PrefetchNodeRecord(model.node(nodes[k + kStructAhead]));
      if (k + kArraysAhead < nodes.size()) {
        const Node& ahead = model.node(nodes[k + kArraysAhead]);
        if (!ahead.inputs.empty()) __builtin_prefetch(ahead.inputs.data());
      }
      const NodeId id = nodes[k];
      const Node& node = model.node(id);
      if (g == kRootGraph && !res.root_special)
        res.root_special = owns_graphs[id.index()] || IsSpecialType(node.type);
      // The attribute rules need attributes (most nodes of a large graph
      // have none: four lookups saved per node).
      std::optional<bool> is_unknown, force, addr;
      bool tiling_dynamic = false;
      if (!node.attrs.empty()) {
        NPUPLAN_ASSIGN_OR_RETURN(is_unknown, BoolAttr(node, "_is_unknown_shape"));
        NPUPLAN_ASSIGN_OR_RETURN(force, BoolAttr(node, "_force_unknown_shape"));
        NPUPLAN_ASSIGN_OR_RETURN(addr, BoolAttr(node, "_is_support_addr_refresh"));
        NPUPLAN_ASSIGN_OR_RETURN(tiling_dynamic, TilingDependDynamic(model, node));
      }
      MarkReason r = MarkReason::kKnown;
      bool dynamic = has_dynamic_shape(node, id);
      bool no_tiling = false;
      if (dynamic) {
        NPUPLAN_ASSIGN_OR_RETURN(no_tiling, CanRunNoTiling(model, node, res.no_tiling));
      }
      if (is_unknown.value_or(false) || force.value_or(false)) {
        r = MarkReason::kForceUnknown;
      } else if (node.engine == "DNN_VM_HOST_CPU") {
        r = MarkReason::kHostCpu;
      } else if (dynamic && !no_tiling) {
        r = MarkReason::kDynamicShape;
      } else if (tiling_dynamic && !tiling_sink) {
        r = MarkReason::kTilingDepend;
      } else if (addr.has_value() && !*addr) {
        r = MarkReason::kAddrRefresh;
      }
      if (tiling_dynamic && tiling_sink && r == MarkReason::kKnown) {
        if (stats) stats->Add(kMarkPass, "tiling_sink");
        if (logging) log->Record(kMarkPass, "TilingSink", "", Field("node", node.name));
      }
      res.reason[id.index()] = r;
      if (r == MarkReason::kKnown && dynamic && no_tiling) {
        res.no_tiling[id.index()] = 1;
        ++res.no_tiling_count;
        if (!IsDataType(node.type) && node.type != "NetOutput") ++res.no_tiling_op_count;
      }
      if (EntersPartitionFlow(r)) ++res.trigger_count;
    }
  }
  // 2. No-tiling reverts when dynamic nodes exist.
  if (res.trigger_count > 0 && res.no_tiling_count > 0) {
    for (size_t i = 0; i < n; ++i) {
      if (!res.no_tiling[i]) continue;
      res.no_tiling[i] = 0;
      res.reason[i] = MarkReason::kNoTilingReverted;
      ++res.trigger_count;
      if (logging)
        log->Record(kMarkPass, "NoTilingReverted", "", Field("node", model.nodes()[i].name));
    }
    res.no_tiling_count = 0;
    res.no_tiling_op_count = 0;
  }
  // 3 + 4. Owners of unknown subgraphs; Const inputs of unknown nodes.
  std::vector<uint8_t> graph_unknown(model.num_graphs(), 0);
  for (GraphId g : order) {
    const Graph& graph = model.graph(g);
    for (NodeId id : graph.nodes) {
      if (res.reason[id.index()] != MarkReason::kKnown || !owns_graphs[id.index()]) continue;
      for (GraphId sg : model.node(id).subgraphs) {
        if (graph_unknown[sg.index()]) {
          res.reason[id.index()] = MarkReason::kSubgraphUnknown;
          break;
        }
      }
    }
    for (NodeId id : graph.nodes) {
      MarkReason r = res.reason[id.index()];
      if (r == MarkReason::kKnown || r == MarkReason::kConstInput) continue;
      for (const OutputRef& in : model.node(id).inputs) {
        if (IsConstType(model.node(in.node).type) &&
            res.reason[in.node.index()] == MarkReason::kKnown) {
          res.reason[in.node.index()] = MarkReason::kConstInput;
        }
      }
    }
    for (NodeId id : graph.nodes) {
      if (res.reason[id.index()] != MarkReason::kKnown) graph_unknown[g.index()] = 1;
    }
  }
  for (GraphId g : model.GraphsPreOrder()) {
    for (NodeId id : model.graph(g).nodes) {
      MarkReason r = res.reason[id.index()];
      if (r == MarkReason::kKnown && !res.no_tiling[id.index()]) continue;  // nothing to count or log
      const Node& node = model.node(id);
      if (r != MarkReason::kKnown) {
        ++res.unknown_count;
        if (stats) stats->Add(kMarkPass, StatName(r));
        if (logging) {
          log->Record(kMarkPass, "UnknownShapeNode", "", Field("node", node.name),
                      Field("type", node.type), Field("reason", ReasonText(r)));
        }
      } else if (res.no_tiling[id.index()]) {
        if (stats) stats->Add(kMarkPass, "no_tiling");
        if (logging)
          log->Record(kMarkPass, "NoTiling", "", Field("node", node.name),
                      Field("type", node.type));
      }
    }
  }
  return res;
}

}  // namespace partition

absl::StatusOr<bool> MarkUnknownShapeNodes::Run(Plan& plan, PassContext& ctx) {
  NPUPLAN_ASSIGN_OR_RETURN(partition::MarkResult marks,
                           partition::ComputeUnknownShapeMarks(plan.model, ctx.options, &ctx.log, &ctx.stats));
  PartitionResult& out = plan.partition;
  out.marked = true;
  out.unknown_nodes.clear();
  out.no_tiling_nodes.clear();
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    const Node& node = plan.model.nodes()[i];
    if (marks.reason[i] != partition::MarkReason::kKnown) {
      out.unknown_nodes[node.name] = std::string(partition::ReasonText(marks.reason[i]));
    } else if (marks.no_tiling[i]) {
      out.no_tiling_nodes.push_back(node.name);
    }
  }
  std::sort(out.no_tiling_nodes.begin(), out.no_tiling_nodes.end());
  return true;
}

}  // namespace npuplan
