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

}  // namespace npuplan::testing
