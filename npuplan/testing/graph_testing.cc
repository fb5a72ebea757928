#include "npuplan/testing/graph_testing.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/support/status_macros.h"

namespace npuplan::testing {

absl::StatusOr<Model> ParseVerifiedGraph(std::string_view json_text) {
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded()) return absl::InvalidArgumentError("test graph is not valid JSON");
  if (j.is_object() && !j.contains("format")) j["format"] = kGraphFormat;
  NPUPLAN_ASSIGN_OR_RETURN(Model model, GraphFromJson(j, "<test>"));
  NPUPLAN_RETURN_IF_ERROR(VerifyStructure(model));
  return model;
}

TestStreamIds ApplyTestStreams(Model& model) {
  TestStreamIds ids;
  for (size_t i = 0; i < model.num_nodes(); ++i) {
    Node& n = model.node(NodeId(static_cast<int32_t>(i)));
    if (auto s = GetIntAttr(n.attrs, "_test_stream")) {
      n.stream_id = *s;
      n.attrs.erase("_test_stream");
    }
    if (const AttrValue* v = FindAttr(n.attrs, "_test_attached"); v && v->is<AttrValue::IntList>()) {
      n.attached_stream_ids = *v->as<AttrValue::IntList>();
      n.attrs.erase("_test_attached");
    }
    ids.max_main = std::max(ids.max_main, n.stream_id);
    ids.max_any = std::max(ids.max_any, n.stream_id);
    for (int64_t a : n.attached_stream_ids) ids.max_any = std::max(ids.max_any, a);
  }
  return ids;
}

const Node& NodeNamed(const Model& model, std::string_view name) {
  NodeId id = model.FindNode(name);
  if (!id.valid()) {
    std::fprintf(stderr, "test bug: no node named '%.*s'\n", static_cast<int>(name.size()), name.data());
    std::abort();
  }
  return model.node(id);
}

std::vector<std::string> NodeOrder(const Model& model, GraphId g) {
  std::vector<std::string> names;
  for (NodeId n : model.graph(g).nodes) names.push_back(model.node(n).name);
  return names;
}

NodeId AddFirstActiveStreamActive(Model& model, GraphId g) {
  Node active;
  active.name = model.graph(g).name + "_StreamActive";
  active.type = "StreamActive";
  active.engine = model.engine_table.EngineForOp(active.type);
  active.attrs["subgraph_first_active"] = AttrValue(true);
  active.attrs["_rts_label_node"] = AttrValue(true);
  auto is_source = [&](NodeId id) {
    const std::string& type = model.node(id).type;
    return type == "Data" || type == "Const";
  };
  std::vector<NodeId> heads;
  for (NodeId id : model.graph(g).nodes) {
    const Node& n = model.node(id);
    if (is_source(id) || n.inputs.empty()) continue;
    if (std::all_of(n.inputs.begin(), n.inputs.end(),
                    [&](const OutputRef& in) { return is_source(in.node); }))
      heads.push_back(id);
  }
  const NodeId added = model.AddNode(g, std::move(active));
  for (NodeId h : heads) model.node(h).control_inputs.push_back(added);
  std::vector<NodeId>& nodes = model.graph(g).nodes;
  std::rotate(nodes.begin(), nodes.end() - 1, nodes.end());  // first, as GE's AddNodeFront
  return added;
}

}  // namespace npuplan::testing
