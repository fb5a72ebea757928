#include "npuplan/ir/graph_json.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "npuplan/support/str_util.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"

namespace npuplan {
namespace {

using json = nlohmann::json;

absl::Status Bad(std::string_view source, const std::string& where, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(source, ": ", where, ": ", what));
}

std::string JsonTypeName(const json& j) { return j.type_name(); }

// "node:3" → ("node", 3); "node" → ("node", 0).
bool SplitInputRef(std::string_view ref, std::string_view& name, int64_t& index) {
  size_t colon = ref.rfind(':');
  if (colon == std::string_view::npos) {
    name = ref;
    index = 0;
    return !name.empty();
  }
  name = ref.substr(0, colon);
  std::string_view num = ref.substr(colon + 1);
  if (name.empty() || num.empty()) return false;
  auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), index);
  return ec == std::errc() && ptr == num.data() + num.size() && index >= 0 && index < (1 << 20);
}

absl::StatusOr<TensorDesc> ParseTensor(const json& j, std::string_view src, const std::string& where) {
  if (!j.is_object()) return Bad(src, where, "expected an object {\"shape\": [...], \"dtype\": ...}");
  TensorDesc t;
  for (const auto& [key, value] : j.items()) {
    if (key == "shape") {
      if (!value.is_array()) return Bad(src, where + ".shape", "expected an array of integers");
      int64_t product = 1;
      bool overflow = false;
      for (size_t i = 0; i < value.size(); ++i) {
        const json& d = value[i];
        std::string dw = StrCat(where, ".shape[", i, "]");
        if (!d.is_number_integer()) return Bad(src, dw, "expected an integer dim");
        int64_t dim = d.get<int64_t>();
        if (dim < kUnknownRank) return Bad(src, dw, StrCat("dim ", dim, " is below -2"));
        if (dim == kUnknownRank && value.size() != 1) {
          return Bad(src, dw, "-2 (unknown rank) must be the only dim");
        }
        if (dim >= 0 && __builtin_mul_overflow(product, dim, &product)) overflow = true;
        t.shape.push_back(dim);
      }
      if (overflow) return Bad(src, where + ".shape", "the product of the dims overflows int64");
    } else if (key == "dtype") {
      if (!value.is_string()) return Bad(src, where + ".dtype", "expected a string");
      t.dtype = value.get<std::string>();
      if (!DTypeSize(t.dtype)) return Bad(src, where + ".dtype", StrCat("unknown dtype '", t.dtype, "'"));
    } else {
      return Bad(src, where, StrCat("unknown field '", key, "'"));
    }
  }
  if (auto bytes = t.ByteSize(); !t.IsDynamic() && !bytes) {
    return Bad(src, where + ".shape", "the tensor's byte size overflows int64");
  }
  return t;
}

absl::StatusOr<AttrMap> ParseAttrMap(const json& j, std::string_view src, const std::string& where) {
  if (!j.is_object()) return Bad(src, where, StrCat("expected an object, got ", JsonTypeName(j)));
  AttrMap attrs;
  for (const auto& [key, value] : j.items()) {
    auto v = AttrFromJson(value, StrCat(where, ".", key));
    if (!v.ok()) return Bad(src, StrCat(where, ".", key), std::string(v.status().message()));
    attrs.emplace(key, std::move(v).value());
  }
  return attrs;
}

struct PendingNode {
  NodeId id;
  const json* j;
  std::string where;
};

absl::Status ParseNodeShell(const json& j, std::string_view src, const std::string& where, Model& model,
                            GraphId g, const EngineTable& table, std::vector<PendingNode>& pending) {
  if (!j.is_object()) return Bad(src, where, "expected a node object");
  Node node;
  bool has_name = false, has_type = false;
  for (const auto& [key, value] : j.items()) {
    std::string kw = StrCat(where, ".", key);
    if (key == "name") {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
        return Bad(src, kw, "expected a non-empty string");
      }
      node.name = value.get<std::string>();
      has_name = true;
    } else if (key == "type") {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
        return Bad(src, kw, "expected a non-empty string");
      }
      node.type = value.get<std::string>();
      has_type = true;
    } else if (key == "engine") {
      if (!value.is_string()) return Bad(src, kw, "expected a string");
      node.engine = value.get<std::string>();
    } else if (key == "outputs") {
      if (!value.is_array()) return Bad(src, kw, "expected an array of tensor descriptions");
      for (size_t i = 0; i < value.size(); ++i) {
        NPUPLAN_ASSIGN_OR_RETURN(TensorDesc t, ParseTensor(value[i], src, StrCat(kw, "[", i, "]")));
        node.outputs.push_back(std::move(t));
      }
    } else if (key == "attrs") {
      NPUPLAN_ASSIGN_OR_RETURN(node.attrs, ParseAttrMap(value, src, kw));
    } else if (key == "inputs" || key == "control_inputs" || key == "subgraphs") {
      if (!value.is_array()) return Bad(src, kw, "expected an array of strings");
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string()) return Bad(src, StrCat(kw, "[", i, "]"), "expected a string");
      }
    } else if (key == "stream" || key == "topo_id") {
      // Written by tools that annotate graphs; the plan carries the real values.
    } else {
      return Bad(src, where, StrCat("unknown field '", key, "'"));
    }
  }
  if (!has_name) return Bad(src, where, "missing field 'name'");
  if (!has_type) return Bad(src, where + " ('" + node.name + "')", "missing field 'type'");
  if (model.FindNode(node.name).valid()) {
    return Bad(src, where + ".name", StrCat("duplicate node name '", node.name, "'"));
  }
  if (node.engine.empty()) node.engine = table.EngineForOp(node.type);
  if (table.Find(node.engine) == nullptr) {
    return Bad(src, where, StrCat("node '", node.name, "' has unknown engine '", node.engine,
                                        "' (not in the engine table; add it with --engines or \"engines\")"));
  }
  NodeId id = model.AddNode(g, std::move(node));
  pending.push_back({id, &j, where});
  return absl::OkStatus();
}

absl::Status ParseNodeList(const json& j, std::string_view src, const std::string& where, Model& model,
                           GraphId g, const EngineTable& table, std::vector<PendingNode>& pending) {
  if (!j.is_array()) return Bad(src, where, "expected an array of nodes");
  for (size_t i = 0; i < j.size(); ++i) {
    NPUPLAN_RETURN_IF_ERROR(ParseNodeShell(j[i], src, StrCat(where, "[", i, "]"), model, g, table, pending));
  }
  return absl::OkStatus();
}

// Second phase: inputs, control inputs and subgraph links, now that every name exists.
absl::Status ResolveNode(const PendingNode& p, std::string_view src, Model& model,
                         std::vector<NodeId>& subgraph_owner) {
  Node& node = model.node(p.id);
  const json& j = *p.j;
  if (auto it = j.find("inputs"); it != j.end()) {
    for (size_t i = 0; i < it->size(); ++i) {
      std::string w = StrCat(p.where, ".inputs[", i, "]");
      const std::string& ref = (*it)[i].get_ref<const std::string&>();
      std::string_view name;
      int64_t index;
      if (!SplitInputRef(ref, name, index)) {
        return Bad(src, w, StrCat("malformed input '", ref, "' (expected \"node:index\")"));
      }
      NodeId producer = model.FindNode(name);
      if (!producer.valid()) return Bad(src, w, StrCat("unknown node '", name, "'"));
      const Node& prod = model.node(producer);
      if (index >= static_cast<int64_t>(prod.outputs.size())) {
        return Bad(src, w, StrCat("output anchor ", index, " of '", name, "' is out of range (it has ",
                                        prod.outputs.size(), " outputs)"));
      }
      if (prod.graph != node.graph) {
        return Bad(src, w, StrCat("input '", name, "' is in graph '", model.graph(prod.graph).name,
                                        "', not in this node's graph '", model.graph(node.graph).name, "'"));
      }
      model.node(p.id).inputs.push_back(OutputRef{producer, static_cast<int32_t>(index)});
    }
  }
  if (auto it = j.find("control_inputs"); it != j.end()) {
    for (size_t i = 0; i < it->size(); ++i) {
      std::string w = StrCat(p.where, ".control_inputs[", i, "]");
      const std::string& name = (*it)[i].get_ref<const std::string&>();
      NodeId producer = model.FindNode(name);
      if (!producer.valid()) return Bad(src, w, StrCat("unknown node '", name, "'"));
      if (model.node(producer).graph != model.node(p.id).graph) {
        return Bad(src, w, StrCat("control input '", name, "' is in another graph"));
      }
      model.node(p.id).control_inputs.push_back(producer);
    }
  }
  if (auto it = j.find("subgraphs"); it != j.end()) {
    for (size_t i = 0; i < it->size(); ++i) {
      std::string w = StrCat(p.where, ".subgraphs[", i, "]");
      const std::string& name = (*it)[i].get_ref<const std::string&>();
      GraphId g = model.FindGraph(name);
      if (!g.valid() || g == kRootGraph) return Bad(src, w, StrCat("subgraph '", name, "' is not defined"));
      if (subgraph_owner[g.index()].valid()) {
        return Bad(src, w, StrCat("subgraph '", name, "' is owned twice (by '",
                                        model.node(subgraph_owner[g.index()]).name, "' and '",
                                        model.node(p.id).name, "')"));
      }
      subgraph_owner[g.index()] = p.id;
      model.node(p.id).subgraphs.push_back(g);
      model.graph(g).parent_node = p.id;
      model.graph(g).parent_graph = model.node(p.id).graph;
    }
  }
  return absl::OkStatus();
}

}  // namespace

json AttrToJson(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, AttrMap>) {
          json o = json::object();
          for (const auto& [k, vv] : x) o[k] = AttrToJson(vv);
          return o;
        } else if constexpr (std::is_same_v<T, AttrValue::MapList>) {
          json a = json::array();
          for (const auto& m : x) {
            json o = json::object();
            for (const auto& [k, vv] : m) o[k] = AttrToJson(vv);
            a.push_back(std::move(o));
          }
          return a;
        } else if constexpr (std::is_same_v<T, AttrValue::BoolList>) {
          json a = json::array();
          for (bool b : x) a.push_back(b);
          return a;
        } else {
          return json(x);
        }
      },
      v.get());
}

absl::StatusOr<AttrValue> AttrFromJson(const json& j, const std::string& where) {
  switch (j.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return absl::InvalidArgumentError("integer attribute out of int64 range");
      }
      return AttrValue(j.get<int64_t>());
    case json::value_t::number_float:
      return AttrValue(j.get<double>());
    case json::value_t::boolean:
      return AttrValue(j.get<bool>());
    case json::value_t::string:
      return AttrValue(j.get<std::string>());
    case json::value_t::object: {
      AttrMap m;
      for (const auto& [k, v] : j.items()) {
        NPUPLAN_ASSIGN_OR_RETURN(AttrValue av, AttrFromJson(v, where + "." + k));
        m.emplace(k, std::move(av));
      }
      return AttrValue(std::move(m));
    }
    case json::value_t::array: {
      if (j.empty()) return AttrValue(AttrValue::IntList{});
      auto all = [&](auto pred) {
        for (const auto& e : j) {
          if (!pred(e)) return false;
        }
        return true;
      };
      if (all([](const json& e) { return e.is_number_integer(); })) {
        AttrValue::IntList l;
        for (const auto& e : j) l.push_back(e.get<int64_t>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_number(); })) {
        AttrValue::FloatList l;
        for (const auto& e : j) l.push_back(e.get<double>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_boolean(); })) {
        AttrValue::BoolList l;
        for (const auto& e : j) l.push_back(e.get<bool>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_string(); })) {
        AttrValue::StringList l;
        for (const auto& e : j) l.push_back(e.get<std::string>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_object(); })) {
        AttrValue::MapList l;
        for (size_t i = 0; i < j.size(); ++i) {
          NPUPLAN_ASSIGN_OR_RETURN(AttrValue av, AttrFromJson(j[i], StrCat(where, "[", i, "]")));
          l.push_back(std::move(*std::get_if<AttrMap>(&av.get())));
        }
        return AttrValue(std::move(l));
      }
      return absl::InvalidArgumentError("list attribute mixes element types");
    }
    default:
      return absl::InvalidArgumentError(StrCat("unsupported attribute value of type ", j.type_name()));
  }
}

absl::StatusOr<Model> GraphFromJson(const json& j, std::string_view src, const GraphReadOptions& opts) {
  if (!j.is_object()) return Bad(src, "$", "expected a JSON object");
  auto fmt = j.find("format");
  if (fmt == j.end()) return Bad(src, "$", "missing field 'format' (expected \"npuplan.graph/1\")");
  if (!fmt->is_string() || fmt->get_ref<const std::string&>() != kGraphFormat) {
    return Bad(src, "$.format", StrCat("unsupported format ", fmt->dump(), " (expected \"npuplan.graph/1\")"));
  }
  Model model;
  model.engine_table = opts.engines ? *opts.engines : EngineTable::Default();
  for (const auto& [key, value] : j.items()) {
    if (key == "format" || key == "nodes" || key == "subgraphs") continue;
    std::string kw = "$." + key;
    if (key == "name") {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
        return Bad(src, kw, "expected a non-empty string");
      }
      model.set_name(value.get<std::string>());
    } else if (key == "attrs") {
      NPUPLAN_ASSIGN_OR_RETURN(model.root().attrs, ParseAttrMap(value, src, kw));
    } else if (key == "options") {
      if (!value.is_object()) return Bad(src, kw, "expected an object of option strings");
      for (const auto& [k, v] : value.items()) {
        if (v.is_string()) {
          model.options[k] = v.get<std::string>();
        } else if (v.is_number_integer() || v.is_boolean()) {
          model.options[k] = v.dump();
        } else {
          return Bad(src, kw + "." + k, "expected a string");
        }
      }
    } else if (key == "engines") {
      if (!value.is_object()) return Bad(src, kw, "expected an object of engine configurations");
      for (const auto& [id, entry] : value.items()) {
        EngineConfig conf;
        // Defaults of an override come from the existing entry when there is one.
        if (const EngineConfig* base = model.engine_table.Find(id)) conf = *base;
        NPUPLAN_RETURN_IF_ERROR(ParseEngineConfig(id, entry, src, conf));
        model.engine_overrides[id] = conf;
        model.engine_table.SetEngine(conf);
      }
    } else {
      return Bad(src, "$", StrCat("unknown field '", key, "'"));
    }
  }
  std::vector<PendingNode> pending;
  if (auto it = j.find("nodes"); it != j.end()) {
    NPUPLAN_RETURN_IF_ERROR(ParseNodeList(*it, src, "$.nodes", model, kRootGraph, model.engine_table, pending));
  }
  std::vector<const json*> sub_parent;
  if (auto it = j.find("subgraphs"); it != j.end()) {
    if (!it->is_array()) return Bad(src, "$.subgraphs", "expected an array of subgraphs");
    for (size_t i = 0; i < it->size(); ++i) {
      const json& sg = (*it)[i];
      std::string w = StrCat("$.subgraphs[", i, "]");
      if (!sg.is_object()) return Bad(src, w, "expected a subgraph object");
      auto name = sg.find("name");
      if (name == sg.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
        return Bad(src, w, "missing or empty 'name'");
      }
      if (model.FindGraph(name->get<std::string>()).valid()) {
        return Bad(src, w + ".name", StrCat("duplicate graph name '", name->get<std::string>(), "'"));
      }
      GraphId g = model.AddDetachedGraph(name->get<std::string>());
      for (const auto& [key, value] : sg.items()) {
        if (key == "name" || key == "parent" || key == "nodes") continue;
        if (key == "attrs") {
          NPUPLAN_ASSIGN_OR_RETURN(model.graph(g).attrs, ParseAttrMap(value, src, w + ".attrs"));
        } else {
          return Bad(src, w, StrCat("unknown field '", key, "'"));
        }
      }
      auto parent = sg.find("parent");
      if (parent != sg.end() && !parent->is_string()) return Bad(src, w + ".parent", "expected a node name");
      sub_parent.push_back(parent == sg.end() ? nullptr : &*parent);
      if (auto nodes = sg.find("nodes"); nodes != sg.end()) {
        NPUPLAN_RETURN_IF_ERROR(ParseNodeList(*nodes, src, w + ".nodes", model, g, model.engine_table, pending));
      }
    }
  }
  std::vector<NodeId> owner(model.num_graphs());
  for (const PendingNode& p : pending) NPUPLAN_RETURN_IF_ERROR(ResolveNode(p, src, model, owner));
  for (size_t g = 1; g < model.num_graphs(); ++g) {
    std::string w = StrCat("$.subgraphs[", g - 1, "]");
    const std::string& gname = model.graph(GraphId(static_cast<int32_t>(g))).name;
    if (!owner[g].valid()) {
      return Bad(src, w, StrCat("subgraph '", gname, "' is not listed in any node's \"subgraphs\""));
    }
    const json* parent = sub_parent[g - 1];
    if (parent != nullptr && parent->get_ref<const std::string&>() != model.node(owner[g]).name) {
      return Bad(src, w + ".parent",
                 StrCat("subgraph '", gname, "' names parent '", parent->get<std::string>(),
                              "' but is listed by node '", model.node(owner[g]).name, "'"));
    }
  }
  if (opts.topo_sort) {
    auto mode = TopoSortMode::kBfs;
    if (auto it = model.options.find("ge.topoSortingMode"); it != model.options.end()) {
      auto parsed = ParseTopoSortMode(it->second);
      if (!parsed.ok()) return Bad(src, "$.options", std::string(parsed.status().message()));
      mode = *parsed;
    }
    absl::Status s = TopologicalSort(model, mode);
    if (!s.ok()) return absl::InvalidArgumentError(StrCat(src, ": ", s.message()));
  } else {
    RenumberTopoIds(model);
  }
  return model;
}

absl::StatusOr<Model> ParseGraphJson(std::string_view text, std::string_view source, const GraphReadOptions& opts) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Re-parse with exceptions only to get the position of the error.
    try {
      (void)json::parse(text);
    } catch (const json::parse_error& e) {
      return absl::InvalidArgumentError(StrCat(source, ": not valid JSON: ", e.what()));
    }
    return absl::InvalidArgumentError(StrCat(source, ": not valid JSON"));
  }
  return GraphFromJson(j, source, opts);
}

absl::StatusOr<Model> ReadGraphFile(const std::string& path, const GraphReadOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseGraphJson(text, path, opts);
}

namespace {
json NodeToJson(const Model& model, const Node& n) {
  json j = json::object();
  j["name"] = n.name;
  j["type"] = n.type;
  j["engine"] = n.engine;
  if (!n.inputs.empty()) {
    json a = json::array();
    for (const OutputRef& in : n.inputs) a.push_back(StrCat(model.node(in.node).name, ":", in.index));
    j["inputs"] = std::move(a);
  }
  if (!n.control_inputs.empty()) {
    json a = json::array();
    for (NodeId c : n.control_inputs) a.push_back(model.node(c).name);
    j["control_inputs"] = std::move(a);
  }
  if (!n.outputs.empty()) {
    json a = json::array();
    for (const TensorDesc& t : n.outputs) a.push_back(json{{"shape", t.shape}, {"dtype", t.dtype}});
    j["outputs"] = std::move(a);
  }
  if (!n.attrs.empty()) {
    json o = json::object();
    for (const auto& [k, v] : n.attrs) o[k] = AttrToJson(v);
    j["attrs"] = std::move(o);
  }
  if (!n.subgraphs.empty()) {
    json a = json::array();
    for (GraphId g : n.subgraphs) a.push_back(model.graph(g).name);
    j["subgraphs"] = std::move(a);
  }
  return j;
}

json AttrsToJson(const AttrMap& attrs) {
  json o = json::object();
  for (const auto& [k, v] : attrs) o[k] = AttrToJson(v);
  return o;
}
}  // namespace

json GraphToJson(const Model& model) {
  json j = json::object();
  j["format"] = kGraphFormat;
  j["name"] = model.name();
  if (!model.root().attrs.empty()) j["attrs"] = AttrsToJson(model.root().attrs);
  if (!model.options.empty()) j["options"] = model.options;
  if (!model.engine_overrides.empty()) {
    json e = json::object();
    for (const auto& [id, c] : model.engine_overrides) {
      e[id] = json{{"independent", c.independent}, {"skip_assign_stream", c.skip_assign_stream},
                   {"attach", c.attach},           {"scheduler", c.scheduler},
                   {"compute_cost", c.compute_cost}};
    }
    j["engines"] = std::move(e);
  }
  json nodes = json::array();
  for (NodeId n : model.root().nodes) nodes.push_back(NodeToJson(model, model.node(n)));
  j["nodes"] = std::move(nodes);
  json subs = json::array();
  for (GraphId g : model.GraphsPreOrder()) {
    if (g == kRootGraph) continue;
    const Graph& graph = model.graph(g);
    json s = json::object();
    s["name"] = graph.name;
    s["parent"] = model.node(graph.parent_node).name;
    if (!graph.attrs.empty()) s["attrs"] = AttrsToJson(graph.attrs);
    json sn = json::array();
    for (NodeId n : graph.nodes) sn.push_back(NodeToJson(model, model.node(n)));
    s["nodes"] = std::move(sn);
    subs.push_back(std::move(s));
  }
  if (!subs.empty()) j["subgraphs"] = std::move(subs);
  return j;
}

std::string WriteGraphJson(const Model& model) { return GraphToJson(model).dump(1) + "\n"; }

}  // namespace npuplan
