#include "npuplan/gen/graph_generator.h"

#include <random>

#include "npuplan/ir/in_place_writes.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

// Builds nodes into one graph with short calls.
class Builder {
 public:
  Builder(Model& model, GraphId graph, const EngineTable& table) : model_(model), graph_(graph), table_(table) {}

  NodeId Add(std::string name, std::string type, std::vector<OutputRef> inputs, std::vector<int64_t> shape,
             std::string engine = "", std::string dtype = "float16") {
    Node n;
    n.name = std::move(name);
    n.type = std::move(type);
    n.engine = engine.empty() ? table_.EngineForOp(n.type) : std::move(engine);
    n.inputs = std::move(inputs);
    if (n.type != "NetOutput") n.outputs.push_back(TensorDesc{std::move(shape), std::move(dtype)});
    return model_.AddNode(graph_, std::move(n));
  }
  OutputRef Out(NodeId id) const { return OutputRef{id, 0}; }
  Node& node(NodeId id) { return model_.node(id); }

 private:
  Model& model_;
  GraphId graph_;
  const EngineTable& table_;
};

constexpr int64_t kNodesPerLayer = 26;  // approximate, used for target_nodes

// Nodes of one layer at most: 23 in the root (with HCCL and AI CPU), +7 when
// its FFN sits in an If (then/else bodies), +8 with a While (cond/body).
int64_t MaxNodesPerLayer(const GeneratorOptions& o) {
  return 23 + (o.if_every > 0 ? 7 : 0) + (o.while_every > 0 ? 8 : 0);
}

// Largest tensor the layers create, in float16 elements: the FFN activation
// [8, seq, 4*hidden], the attention scores [8, seq, seq], the FFN weight
// [hidden, 4*hidden]. nullopt when a product overflows.
std::optional<int64_t> LargestTensorBytes(const GeneratorOptions& o) {
  CheckedProduct<> ffn, scores, weight;
  const bool ok = ffn.Mul(8) && ffn.Mul(o.seq) && ffn.Mul(4) && ffn.Mul(o.hidden) && ffn.Mul(2) &&  //
                  scores.Mul(8) && scores.Mul(o.seq) && scores.Mul(o.seq) && scores.Mul(2) &&        //
                  weight.Mul(o.hidden) && weight.Mul(4) && weight.Mul(o.hidden) && weight.Mul(2);
  if (!ok) return std::nullopt;
  return std::max({ffn.value(), scores.value(), weight.value()});
}

}  // namespace

absl::Status CheckGeneratorSize(const GeneratorOptions& o, const GraphReadLimits& limits) {
  if (o.layers < 1 && o.target_nodes <= 0) return absl::InvalidArgumentError("gen: --layers must be >= 1");
  if (o.hidden < 1 || o.seq < 1) return absl::InvalidArgumentError("gen: --hidden and --seq must be >= 1");
  const int64_t layers = o.target_nodes > 0 ? std::max<int64_t>(1, o.target_nodes / kNodesPerLayer) : o.layers;
  std::optional<int64_t> nodes = CheckedMul(layers, MaxNodesPerLayer(o));
  if (nodes) nodes = CheckedAdd(*nodes, 3);  // input, apply_grads, output
  if (!nodes || *nodes > limits.max_nodes) {
    return absl::InvalidArgumentError(
        StrCat("gen: ", o.target_nodes > 0 ? StrCat("--nodes ", o.target_nodes) : StrCat("--layers ", o.layers),
               " gives up to ", nodes ? StrCat(*nodes) : std::string("more than 2^63"),
               " nodes, more than a graph may have (", limits.max_nodes,
               ", the reader's --max-nodes default): `verify` would reject it"));
  }
  if (o.batch < 1 || o.batch > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError("gen: --batch must be in [1, 1048576]");
  }
  if (!LargestTensorBytes(o)) {
    return absl::InvalidArgumentError(StrCat("gen: --hidden ", o.hidden, " and --seq ", o.seq,
                                             " give tensors whose byte size overflows int64 (the FFN activation is "
                                             "[8, seq, 4*hidden] float16, the attention scores [8, seq, seq])"));
  }
  return absl::OkStatus();
}

absl::Status CheckRandomDagSize(int64_t nodes, int64_t max_fanin, const GraphReadLimits& limits) {
  if (nodes < 1) return absl::InvalidArgumentError("gen --random-dag needs --nodes N >= 1");
  if (max_fanin < 1) return absl::InvalidArgumentError("gen --max-fanin must be >= 1");
  if (nodes > limits.max_nodes) {
    return absl::InvalidArgumentError(StrCat("gen --random-dag: --nodes ", nodes, " is more than a graph may have (",
                                             limits.max_nodes, ", the reader's --max-nodes default)"));
  }
  std::optional<int64_t> edges = CheckedMul(nodes - 1, max_fanin);
  if (!edges || *edges > limits.max_edges) {
    return absl::InvalidArgumentError(StrCat("gen --random-dag: --nodes ", nodes, " with --max-fanin ", max_fanin,
                                             " gives up to ", edges ? StrCat(*edges) : std::string("more than 2^63"),
                                             " edges, more than a graph may have (", limits.max_edges,
                                             ", the reader's --max-edges default)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Model> GenerateTransformer(const GeneratorOptions& o) {
  NPUPLAN_RETURN_IF_ERROR(CheckGeneratorSize(o));
  int64_t layers = o.target_nodes > 0 ? std::max<int64_t>(1, o.target_nodes / kNodesPerLayer) : o.layers;
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);

  Model model;
  model.set_name(StrCat("transformer_l", layers));
  const EngineTable& table = model.engine_table;
  Builder b(model, kRootGraph, table);
  const int64_t batch = o.dynamic_input ? kUnknownDim : o.batch;
  std::vector<int64_t> act = {batch, o.seq, o.hidden};
  NodeId x = b.Add("input", "Data", {}, act);
  NodeId prev_layer_out = x;
  std::vector<NodeId> layer_outs;
  std::vector<NodeId> pending_allreduce;

  for (int64_t l = 0; l < layers; ++l) {
    std::string p = StrCat("l", l, "_");
    bool dyn = coin(rng) < o.dynamic_prob;
    std::vector<int64_t> a = act;
    if (dyn) a[1] = kUnknownDim;
    auto w = [&](const std::string& name, int64_t rows, int64_t cols) {
      return b.Add(p + name, "Const", {}, {rows, cols});
    };
    NodeId ln1 = b.Add(p + "ln1", "LayerNorm", {b.Out(prev_layer_out)}, a);
    NodeId q = b.Add(p + "q", "MatMulV2", {b.Out(ln1), b.Out(w("wq", o.hidden, o.hidden))}, a);
    NodeId k = b.Add(p + "k", "MatMulV2", {b.Out(ln1), b.Out(w("wk", o.hidden, o.hidden))}, a);
    NodeId v = b.Add(p + "v", "MatMulV2", {b.Out(ln1), b.Out(w("wv", o.hidden, o.hidden))}, a);
    std::vector<int64_t> scores = {a[0], a[1], a[1]};
    NodeId qk = b.Add(p + "qk", "BatchMatMulV2", {b.Out(q), b.Out(k)}, scores);
    NodeId sm = b.Add(p + "softmax", "Softmax", {b.Out(qk)}, scores, "VectorEngine");
    NodeId av = b.Add(p + "av", "BatchMatMulV2", {b.Out(sm), b.Out(v)}, a);
    NodeId proj = b.Add(p + "proj", "MatMulV2", {b.Out(av), b.Out(w("wo", o.hidden, o.hidden))}, a);
    NodeId res1 = b.Add(p + "res1", "Add", {b.Out(proj), b.Out(prev_layer_out)}, a);
    NodeId ln2 = b.Add(p + "ln2", "LayerNorm", {b.Out(res1)}, a);

    NodeId ffn_out;
    bool use_if = o.if_every > 0 && (l % o.if_every) == o.if_every - 1;
    if (use_if) {
      // FFN inside an If: then = full FFN, else = identity-like cast.
      NodeId cond = b.Add(p + "cond", "Const", {}, {1}, "", "bool");
      NodeId iff = b.Add(p + "if", "If", {b.Out(cond), b.Out(ln2)}, a);
      GraphId then_g = model.AddSubgraph(iff, p + "then");
      GraphId else_g = model.AddSubgraph(iff, p + "else");
      for (GraphId g : {then_g, else_g}) {
        Builder sb(model, g, table);
        std::string sp = model.graph(g).name + "_";
        NodeId in = sb.Add(sp + "in", "Data", {}, a);
        sb.node(in).attrs["_parent_node_index"] = int64_t{1};
        NodeId body_out;
        if (g == then_g) {
          NodeId wf1 = sb.Add(sp + "w1", "Const", {}, {o.hidden, 4 * o.hidden});
          NodeId f1 = sb.Add(sp + "ffn1", "MatMulV2", {sb.Out(in), sb.Out(wf1)}, {a[0], a[1], 4 * o.hidden});
          NodeId g1 = sb.Add(sp + "gelu", "Gelu", {sb.Out(f1)}, {a[0], a[1], 4 * o.hidden}, "VectorEngine");
          NodeId wf2 = sb.Add(sp + "w2", "Const", {}, {4 * o.hidden, o.hidden});
          body_out = sb.Add(sp + "ffn2", "MatMulV2", {sb.Out(g1), sb.Out(wf2)}, a);
        } else {
          body_out = sb.Add(sp + "cast", "Cast", {sb.Out(in)}, a);
        }
        sb.Add(sp + "out", "NetOutput", {sb.Out(body_out)}, {});
      }
      ffn_out = iff;
    } else {
      NodeId f1 = b.Add(p + "ffn1", "MatMulV2", {b.Out(ln2), b.Out(w("w1", o.hidden, 4 * o.hidden))},
                        {a[0], a[1], 4 * o.hidden});
      NodeId g1 = b.Add(p + "gelu", "Gelu", {b.Out(f1)}, {a[0], a[1], 4 * o.hidden}, "VectorEngine");
      ffn_out = b.Add(p + "ffn2", "MatMulV2", {b.Out(g1), b.Out(w("w2", 4 * o.hidden, o.hidden))}, a);
      if (coin(rng) < o.stream_label_prob) {
        for (NodeId n : {f1, g1, ffn_out}) b.node(n).attrs["_stream_label"] = StrCat("ffn_", l % 4);
      }
    }
    NodeId dropped = ffn_out;
    if (o.aicpu) {
      NodeId mask = b.Add(p + "dropout_mask", "DropOutGenMask", {}, {1, o.hidden}, "", "uint8");
      dropped = b.Add(p + "dropout", "DropOutDoMaskV3", {b.Out(ffn_out), b.Out(mask)}, a, "AIcoreEngine");
    }
    NodeId res2 = b.Add(p + "res2", "Add", {b.Out(dropped), b.Out(res1)}, a);
    if (o.while_every > 0 && (l % o.while_every) == o.while_every - 1) {
      NodeId loop = b.Add(p + "while", "While", {b.Out(res2)}, a);
      GraphId cond_g = model.AddSubgraph(loop, p + "while_cond");
      GraphId body_g = model.AddSubgraph(loop, p + "while_body");
      {
        Builder sb(model, cond_g, table);
        NodeId in = sb.Add(p + "wc_in", "Data", {}, a);
        sb.node(in).attrs["_parent_node_index"] = int64_t{0};
        NodeId c = sb.Add(p + "wc_less", "Less", {sb.Out(in)}, {1}, "", "bool");
        sb.Add(p + "wc_out", "NetOutput", {sb.Out(c)}, {});
      }
      {
        Builder sb(model, body_g, table);
        NodeId in = sb.Add(p + "wb_in", "Data", {}, a);
        sb.node(in).attrs["_parent_node_index"] = int64_t{0};
        NodeId r = sb.Add(p + "wb_relu", "Relu", {sb.Out(in)}, a);
        NodeId m = sb.Add(p + "wb_mul", "Mul", {sb.Out(r), sb.Out(in)}, a);
        sb.Add(p + "wb_out", "NetOutput", {sb.Out(m)}, {});
      }
      res2 = loop;
    }
    if (o.hccl) {
      NodeId ar = b.Add(p + "allreduce", "HcomAllReduce", {b.Out(proj)}, a);
      b.node(ar).attrs["fusion"] = int64_t{1};
      b.node(ar).attrs["group"] = std::string("hccl_world_group");
      pending_allreduce.push_back(ar);
    }
    if (!layer_outs.empty() && coin(rng) < o.control_edge_prob) {
      size_t from = std::uniform_int_distribution<size_t>(0, layer_outs.size() - 1)(rng);
      b.node(ln1).control_inputs.push_back(layer_outs[from]);
    }
    layer_outs.push_back(res2);
    prev_layer_out = res2;
  }
  std::vector<OutputRef> outs = {b.Out(prev_layer_out)};
  if (!pending_allreduce.empty()) {
    // Gradients are applied at the end (an AddN of all-reduced grads).
    std::vector<OutputRef> grads;
    for (NodeId ar : pending_allreduce) grads.push_back(b.Out(ar));
    NodeId apply = b.Add("apply_grads", "AddN", std::move(grads), act);
    outs.push_back(b.Out(apply));
  }
  b.Add("output", "NetOutput", std::move(outs), {});
  NPUPLAN_RETURN_IF_ERROR(TopologicalSort(model));
  return model;
}

Model GenerateRandomDag(int64_t nodes, int64_t max_fanin, uint64_t seed, int64_t hccl_every) {
  std::mt19937_64 rng(seed);
  Model model;
  model.set_name(StrCat("random_dag_", nodes));
  model.root().nodes.reserve(nodes);
  for (int64_t i = 0; i < nodes; ++i) {
    Node n;
    n.name = StrCat("n", i);
    bool hccl = hccl_every > 0 && i % hccl_every == hccl_every - 1;
    n.type = i == 0 ? "Data" : (hccl ? "HcomAllReduce" : "Add");
    n.engine = i == 0 ? "DNN_VM_GE_LOCAL" : (hccl ? "DNN_HCCL" : "AIcoreEngine");
    n.outputs.push_back(TensorDesc{{1024}, "float16"});
    if (i > 0) {
      int64_t fanin = 1 + static_cast<int64_t>(rng() % max_fanin);
      // Mostly local edges (like real models) with occasional long skips.
      for (int64_t e = 0; e < fanin; ++e) {
        int64_t back = (rng() % 8 == 0) ? 1 + static_cast<int64_t>(rng() % i) : 1 + static_cast<int64_t>(rng() % std::min<int64_t>(i, 16));
        n.inputs.push_back(OutputRef{NodeId(static_cast<int32_t>(i - back)), 0});
      }
    }
    model.AddNode(kRootGraph, std::move(n));
  }
  RenumberTopoIds(model);
  return model;
}

Model GenerateFanOut(int64_t consumers) {
  Model model;
  model.set_name(StrCat("fan_out_", consumers));
  Builder b(model, kRootGraph, model.engine_table);
  const std::vector<int64_t> shape = {1024};
  model.root().nodes.reserve(consumers + 3);
  NodeId in = b.Add("input", "Data", {}, shape);
  NodeId hub = b.Add("hub", "Relu", {b.Out(in)}, shape, "AIcoreEngine");
  std::vector<OutputRef> outs;
  outs.reserve(consumers);
  for (int64_t i = 0; i < consumers; ++i) {
    const bool vector = i % 2 == 1;
    outs.push_back(b.Out(b.Add(StrCat("c", i), vector ? "Gelu" : "Relu", {b.Out(hub)}, shape,
                               vector ? "VectorEngine" : "AIcoreEngine")));
  }
  b.Add("output", "NetOutput", std::move(outs), {});
  RenumberTopoIds(model);
  return model;
}

Model GenerateNestedIf(int64_t depth) {
  Model model;
  model.set_name(StrCat("nested_if_", depth));
  const std::vector<int64_t> shape = {8, 1024};
  GraphId g = kRootGraph;
  Builder root(model, g, model.engine_table);
  OutputRef value = root.Out(root.Add("input", "Data", {}, shape));
  for (int64_t level = 0; level <= depth; ++level) {
    Builder b(model, g, model.engine_table);
    const std::string p = StrCat("d", level, "_");
    if (g != kRootGraph) {
      NodeId in = b.Add(p + "in", "Data", {}, shape);
      b.node(in).attrs["_parent_node_index"] = int64_t{1};
      value = b.Out(in);
    }
    if (level == depth) {  // the innermost then branch
      b.Add(p + "out", "NetOutput", {b.Out(b.Add(p + "relu", "Relu", {value}, shape))}, {});
      break;
    }
    NodeId cond = b.Add(p + "cond", "Const", {}, {1}, "", "bool");
    NodeId iff = b.Add(p + "if", "If", {b.Out(cond), value}, shape);
    b.Add(p + "out", "NetOutput", {b.Out(iff)}, {});
    GraphId then_g = model.AddSubgraph(iff, p + "then");
    GraphId else_g = model.AddSubgraph(iff, p + "else");
    Builder e(model, else_g, model.engine_table);
    NodeId else_in = e.Add(p + "else_in", "Data", {}, shape);
    e.node(else_in).attrs["_parent_node_index"] = int64_t{1};
    e.Add(p + "else_out", "NetOutput", {e.Out(e.Add(p + "else_cast", "Cast", {e.Out(else_in)}, shape))}, {});
    g = then_g;
  }
  RenumberTopoIds(model);
  return model;
}

int64_t AddRefWrites(Model& model, double prob, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 11);
  std::uniform_real_distribution<double> coin(0, 1);
  int64_t marked = 0;
  for (size_t i = 0; i < model.num_nodes(); ++i) {
    Node& n = model.node(NodeId(static_cast<int32_t>(i)));
    if (n.inputs.empty() || n.outputs.empty() || !n.subgraphs.empty() || IsPassOnType(n.type))
      continue;
    if (coin(rng) >= prob) continue;
    n.attrs["_ref_input_index"] = AttrValue(int64_t{0});
    ++marked;
  }
  return marked;
}

int64_t AddOwnerControls(Model& model, double prob, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 23);
  std::uniform_real_distribution<double> coin(0, 1);
  int64_t added = 0;
  for (size_t gi = 0; gi < model.num_graphs(); ++gi) {
    const std::vector<NodeId> nodes = model.graph(GraphId(static_cast<int32_t>(gi))).nodes;
    for (size_t i = 1; i < nodes.size(); ++i) {
      Node& owner = model.node(nodes[i]);
      if (owner.subgraphs.empty() || coin(rng) >= prob) continue;
      std::vector<NodeId> before;
      for (size_t j = 0; j < i; ++j) {
        const Node& b = model.node(nodes[j]);
        const bool is_input =
            std::any_of(owner.inputs.begin(), owner.inputs.end(),
                        [&](const OutputRef& in) { return in.node == nodes[j]; }) ||
            std::find(owner.control_inputs.begin(), owner.control_inputs.end(), nodes[j]) !=
                owner.control_inputs.end();
        if (b.type != "NetOutput" && !is_input) before.push_back(nodes[j]);
      }
      if (before.empty()) continue;
      owner.control_inputs.push_back(
          before[std::uniform_int_distribution<size_t>(0, before.size() - 1)(rng)]);
      ++added;
    }
  }
  return added;
}

}  // namespace npuplan
