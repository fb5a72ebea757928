// The graph writer: npuplan.graph/1 through JsonWriter, byte-identical to
// nlohmann's dump(1) of the document with sorted keys (so every object's
// fields are written in key order). Empty optional fields are left out.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/graph_json_internal.h"
#include "npuplan/ir/node_prefetch.h"

namespace npuplan {
namespace {

using graph_json_internal::WriteAttrMap;

// The writer's time is cache misses: per node its struct, its heap arrays
// (outputs and their shapes, inputs, attributes) and its producers' names,
// most of them scattered over the heap. Prefetching them in stages ahead of
// the node being written (struct, then its arrays, then what those point at)
// overlaps the misses of several nodes.
constexpr size_t kStructAhead = 16, kArraysAhead = 8, kTargetsAhead = 4;

void PrefetchArrays(const Node& n) {
  if (!n.outputs.empty()) __builtin_prefetch(n.outputs.data());
  if (!n.inputs.empty()) __builtin_prefetch(n.inputs.data());
  if (!n.control_inputs.empty()) __builtin_prefetch(n.control_inputs.data());
  if (!n.attrs.empty()) __builtin_prefetch(&*n.attrs.begin());
}

// The nodes' names by index, short ones (most generated names) in 16-byte
// slots: a node's inputs name producers anywhere in the model, and reading a
// producer's name from its Node is a cache miss in hundreds of megabytes of
// Nodes; the slots are a table of 16 bytes per node, filled by one
// sequential walk.
class NameTable {
 public:
  explicit NameTable(const Model& model)
      : model_(model), slots_(std::make_unique_for_overwrite<Slot[]>(model.num_nodes())) {
    for (size_t i = 0; i < model.num_nodes(); ++i) {
      PrefetchNode(model, i + kNodePrefetch);
      const std::string& name = model.nodes()[i].name;
      Slot& slot = slots_[i];
      if (name.size() < sizeof(slot.text)) {
        std::memcpy(slot.text, name.data(), name.size());
        slot.size = static_cast<uint8_t>(name.size());
      } else {
        slot.size = kLong;
      }
    }
  }
  std::string_view Of(NodeId id) const {
    const Slot& slot = slots_[id.index()];
    if (slot.size == kLong) return model_.node(id).name;
    return {slot.text, slot.size};
  }
  void Prefetch(NodeId id) const { __builtin_prefetch(&slots_[id.index()]); }

 private:
  struct alignas(16) Slot {
    char text[15];
    uint8_t size;  // kLong: the name is the Node's
  };
  static constexpr uint8_t kLong = 0xff;
  const Model& model_;
  std::unique_ptr<Slot[]> slots_;
};

void PrefetchTargets(const NameTable& names, const Node& n) {
  for (const TensorDesc& t : n.outputs) {
    if (!t.shape.empty()) __builtin_prefetch(t.shape.data());
  }
  for (const OutputRef& in : n.inputs) names.Prefetch(in.node);
  for (NodeId c : n.control_inputs) names.Prefetch(c);
}

void PrefetchAhead(const Model& model, const NameTable& names, const std::vector<NodeId>& nodes,
                   size_t i) {
  if (i + kStructAhead < nodes.size()) PrefetchNodeRecord(model.node(nodes[i + kStructAhead]));
  if (i + kArraysAhead < nodes.size()) PrefetchArrays(model.node(nodes[i + kArraysAhead]));
  if (i + kTargetsAhead < nodes.size())
    PrefetchTargets(names, model.node(nodes[i + kTargetsAhead]));
}

void WriteNode(const Model& model, const NameTable& names, const Node& n, JsonWriter& w) {
  w.BeginObject();
  if (!n.attrs.empty()) {
    w.Key("attrs");
    WriteAttrMap(n.attrs, w);
  }
  if (!n.control_inputs.empty()) {
    w.Key("control_inputs");
    w.BeginArray();
    for (NodeId c : n.control_inputs) w.String(names.Of(c));
    w.EndArray();
  }
  w.Field("engine", n.engine);
  if (!n.inputs.empty()) {
    w.Key("inputs");
    w.BeginArray();
    for (const OutputRef& in : n.inputs) w.StringWithIndex(names.Of(in.node), in.index);
    w.EndArray();
  }
  w.Field("name", n.name);
  if (!n.outputs.empty()) {
    w.Key("outputs");
    w.BeginArray();
    for (const TensorDesc& t : n.outputs) {
      w.BeginObject();
      w.Field("dtype", t.dtype);
      w.Key("shape");
      w.IntArray(t.shape);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!n.subgraphs.empty()) {
    w.Key("subgraphs");
    w.BeginArray();
    for (GraphId g : n.subgraphs) w.String(model.graph(g).name);
    w.EndArray();
  }
  w.Field("type", n.type);
  w.EndObject();
}

// The graph file's own "engines" section, as read.
void WriteEngineOverrides(const Model& model, JsonWriter& w) {
  w.BeginObject();
  for (const auto& [id, c] : model.engine_overrides) {
    w.Key(id);
    w.BeginObject();
    w.Field("attach", c.attach);
    w.Field("compute_cost", c.compute_cost);
    w.Field("independent", c.independent);
    w.Field("scheduler", c.scheduler);
    w.Field("skip_assign_stream", c.skip_assign_stream);
    w.EndObject();
  }
  w.EndObject();
}

void WriteSubgraph(const Model& model, const NameTable& names, const Graph& graph, JsonWriter& w) {
  w.BeginObject();
  if (!graph.attrs.empty()) {
    w.Key("attrs");
    WriteAttrMap(graph.attrs, w);
  }
  w.Field("name", graph.name);
  w.Key("nodes");
  w.BeginArray();
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    PrefetchAhead(model, names, graph.nodes, i);
    WriteNode(model, names, model.node(graph.nodes[i]), w);
  }
  w.EndArray();
  w.Field("parent", model.node(graph.parent_node).name);
  w.EndObject();
}

}  // namespace

void WriteGraph(const Model& model, JsonWriter& w) {
  w.BeginObject();
  if (!model.root().attrs.empty()) {
    w.Key("attrs");
    WriteAttrMap(model.root().attrs, w);
  }
  if (!model.engine_overrides.empty()) {
    w.Key("engines");
    WriteEngineOverrides(model, w);
  }
  w.Field("format", kGraphFormat);
  w.Field("name", model.name());
  w.Key("nodes");
  w.BeginArray();
  const std::vector<NodeId>& nodes = model.root().nodes;
  const NameTable names(model);
  for (size_t i = 0; i < nodes.size(); ++i) {
    PrefetchAhead(model, names, nodes, i);
    WriteNode(model, names, model.node(nodes[i]), w);
  }
  w.EndArray();
  if (!model.options.empty()) {
    w.Key("options");
    w.BeginObject();
    for (const auto& [k, v] : model.options) w.Field(k, v);
    w.EndObject();
  }
  // Subgraphs in pre-order (GraphsPreOrder), each after its owner's graph.
  std::vector<GraphId> order = model.GraphsPreOrder();
  if (order.size() > 1) {
    w.Key("subgraphs");
    w.BeginArray();
    for (GraphId g : order) {
      if (g != kRootGraph) WriteSubgraph(model, names, model.graph(g), w);
    }
    w.EndArray();
  }
  w.EndObject();
}

std::string WriteGraphJson(const Model& model) {
  std::string out;
  JsonWriter w(&out, 1);
  WriteGraph(model, w);
  w.Raw("\n");
  w.Flush();
  return out;
}

}  // namespace npuplan
