#include "npuplan/sim/cost_model.h"

#include <algorithm>

#include "npuplan/ir/attribute.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/sim/plan_program.h"

namespace npuplan::sim {
namespace {

double Elements(const TensorDesc& t) {
  auto e = t.NumElements();
  return e ? static_cast<double>(*e) : 0.0;
}

const TensorDesc* InputDesc(const Model& model, const Node& node, size_t i) {
  if (i >= node.inputs.size() || !node.inputs[i].node.valid()) return nullptr;
  const Node& p = model.node(node.inputs[i].node);
  size_t idx = static_cast<size_t>(node.inputs[i].index);
  return idx < p.outputs.size() ? &p.outputs[idx] : nullptr;
}

}  // namespace

std::map<std::string, EngineSpeed> CostModelOptions::DefaultEngines() {
  return {
      {"AIcoreEngine", {1e8, 1e6, 2.0}},
      {"VectorEngine", {1e7, 1e6, 2.0}},
      {"DNN_VM_AICPU", {1e5, 2e4, 10.0}},
      {"DNN_VM_AICPU_ASCEND", {1e5, 2e4, 10.0}},
      {"DNN_VM_AICPU_FFTS_PLUS", {1e5, 2e4, 10.0}},
      {"DNN_VM_AICPU_ASCEND_FFTS_PLUS", {1e5, 2e4, 10.0}},
      {"DNN_VM_HOST_CPU", {1e5, 2e4, 10.0}},
      {"DNN_HCCL", {1e12, 2.5e4, 20.0}},
      {"DSAEngine", {1e6, 1e5, 5.0}},
      {"DNN_VM_DVPP", {1e6, 1e5, 5.0}},
      // Runtime tasks (Send/Recv, StreamActive, labels, MemcpyAsync) run no
      // kernel: their time is their launches (and a copy's bytes).
      {"DNN_VM_RTS", {1e8, 1e6, 0.0}},
      {"DNN_VM_RTS_FFTS_PLUS", {1e8, 1e6, 0.0}},
  };
}

namespace {

double Dim(const TensorDesc* t, int i) {  // dim i (negative: from the end) or 0 when unknown
  if (t == nullptr || t->shape.empty() || t->shape[0] == kUnknownRank) return 0;
  const int r = static_cast<int>(t->shape.size());
  if (i < 0) i += r;
  return i >= 0 && i < r && t->shape[i] > 0 ? static_cast<double>(t->shape[i]) : 0;
}

// 2·|out|·K for a matmul whose reduced dim is K.
double MatMulFlops(double out, double k) { return k > 0 ? 2.0 * out * k : out; }

// MACs per output element of a convolution with weight [M, C/group, k...]
// = |W| / M; 2 FLOPs per MAC.
double ConvFlops(double out, const TensorDesc* w) {
  double m = Dim(w, 0);
  return m > 0 ? 2.0 * out * Elements(*w) / m : out;
}

bool AttrTrue(const Node& n, const char* a, const char* b = nullptr) {
  return GetBoolAttr(n.attrs, a).value_or(false) || GetIntAttr(n.attrs, a).value_or(0) != 0 ||
         (b != nullptr && (GetBoolAttr(n.attrs, b).value_or(false) || GetIntAttr(n.attrs, b).value_or(0) != 0));
}

}  // namespace

double NodeFlops(const Model& model, NodeId n) {
  const Node& node = model.node(n);
  double out = 0;
  for (const TensorDesc& t : node.outputs) out += Elements(t);
  const double y = node.outputs.empty() ? 0 : Elements(node.outputs[0]);
  auto in = [&](size_t i) { return InputDesc(model, node, i); };
  const std::string& t = node.type;
  // One row per formula; cost_model.h and docs/execution.md ("Cost model")
  // have the same table:
  //   MatMul, MatMulV2, BatchMatMul(V2), MatMulInteger, FusedMatMul,
  //   MatMulIntegerToFloat, DynamicQuantizeMatMul   2·|Y|·K, K = last dim of
  //         input 0 (second-to-last with transpose_x1 / adj_x1 / transA)
  //   QLinearMatMul                                  2·|Y|·K, K = last dim of a
  //   Gemm                          2·|Y|·K (+|Y| with C), K = A's dim 1 (0 with transA)
  //   Conv2D, Conv3D, Conv, ConvInteger, DeformConv  2·|Y|·|W|/W[0], W = input 1
  //   QLinearConv                                    the same, W = input 3
  //   ConvTranspose                                  2·|X|·|W|/W[0]
  //   LayerNorm(alization), (Skip)(Simplified)LayerNormalization,
  //   Group/Instance/BatchNormalization               8·|Y|
  //   Softmax, LogSoftmax                            5·|Y|
  //   Gelu, FastGelu, BiasGelu, QuickGelu            8·|Y|
  //   Attention (com.microsoft)  2·B·S·H·3H' + 4·B·S·T·H' + 5·B·heads·S·T, input
  //         [B, S, H], weights [H, 3H'], T = S + past length
  //   MultiHeadAttention         4·B·S·L·D + 5·B·heads·S·L, query [B, S, D], key [B, L, D]
  //   anything else              |out| (one op per output element)
  // |Y| = elements of output 0; an unknown dim makes a formula fall back to |out|.
  if (t == "MatMul" || t == "MatMulV2" || t == "BatchMatMul" || t == "BatchMatMulV2" || t == "MatMulInteger" ||
      t == "FusedMatMul" || t == "MatMulIntegerToFloat" || t == "DynamicQuantizeMatMul") {
    const bool ta = AttrTrue(node, "transpose_x1", "adj_x1") || AttrTrue(node, "transA");
    const TensorDesc* a = in(0);
    if (a != nullptr && !a->shape.empty() && a->shape[0] != kUnknownRank) {
      return MatMulFlops(y, Dim(a, ta && a->shape.size() >= 2 ? -2 : -1));
    }
  } else if (t == "QLinearMatMul") {  // a, a_scale, a_zero_point, b, …
    return MatMulFlops(y, Dim(in(0), -1));
  } else if (t == "Gemm") {  // Y = αA'B' + βC: 2·M·N·K, + M·N with C
    const double k = Dim(in(0), AttrTrue(node, "transA") ? 0 : 1);
    return MatMulFlops(y, k) + (in(2) != nullptr ? y : 0);
  } else if (t == "Conv2D" || t == "Conv3D" || t == "Conv" || t == "ConvInteger" || t == "DeformConv") {
    const TensorDesc* w = in(1);
    if (w != nullptr && Dim(w, 0) > 0) return ConvFlops(y, w);
  } else if (t == "QLinearConv") {  // x, x_scale, x_zero_point, w, …
    const TensorDesc* w = in(3);
    if (w != nullptr && Dim(w, 0) > 0) return ConvFlops(y, w);
  } else if (t == "ConvTranspose") {  // W [C, M/group, k...]: each input element feeds |W|/C outputs
    const TensorDesc *x = in(0), *w = in(1);
    if (x != nullptr && w != nullptr && Dim(w, 0) > 0 && x->NumElements()) {
      return 2.0 * Elements(*x) * Elements(*w) / Dim(w, 0);
    }
  } else if (t == "LayerNormalization" || t == "LayerNorm" || t == "SkipLayerNormalization" ||
             t == "SimplifiedLayerNormalization" || t == "SkipSimplifiedLayerNormalization" ||
             t == "GroupNormalization" || t == "InstanceNormalization" || t == "BatchNormalization") {
    return 8.0 * y;  // mean, variance, normalise, scale, shift
  } else if (t == "Softmax" || t == "LogSoftmax") {
    return 5.0 * y;  // max, subtract, exp, sum, divide
  } else if (t == "Gelu" || t == "FastGelu" || t == "BiasGelu" || t == "QuickGelu") {
    return 8.0 * y;  // tanh/erf polynomial
  } else if (t == "Attention") {  // input [B, S, H], weights [H, 3H']: projections + QKᵀ + PV + softmax
    const TensorDesc *x = in(0), *w = in(1);
    const double b = Dim(x, 0), s = Dim(x, 1), h = Dim(x, 2), n3 = Dim(w, 1);
    const double heads = static_cast<double>(GetIntAttr(node.attrs, "num_heads").value_or(1));
    if (b > 0 && s > 0 && h > 0 && n3 > 0) {
      const double hv = n3 / 3, kv = s + Dim(in(4), 3);  // past [2, B, heads, P, head]
      return 2 * b * s * h * n3 + 4 * b * s * kv * hv + 5 * b * heads * s * kv;
    }
  } else if (t == "MultiHeadAttention") {  // query [B, S, D], key [B, L, D]: QKᵀ + PV + softmax
    const TensorDesc *q = in(0), *k = in(1);
    const double b = Dim(q, 0), s = Dim(q, 1), d = Dim(q, 2);
    const double l = k != nullptr && k->shape.size() == 3 ? Dim(k, 1) : s;
    const double heads = static_cast<double>(GetIntAttr(node.attrs, "num_heads").value_or(1));
    if (b > 0 && s > 0 && d > 0 && l > 0) return 4 * b * s * l * d + 5 * b * heads * s * l;
  }
  return out;
}

double NodeBytes(const Model& model, NodeId n, const CostModelOptions& options) {
  const Node& node = model.node(n);
  auto bytes = [&](const TensorDesc& t) {
    auto b = t.ByteSize();
    return b ? static_cast<double>(*b) : options.dynamic_tensor_bytes;
  };
  double total = 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (const TensorDesc* d = InputDesc(model, node, i)) total += bytes(*d);
  }
  for (const TensorDesc& t : node.outputs) total += bytes(t);
  return total;
}

double NodeCost(const Model& m, NodeId id, const CostModelOptions& options) {
  const Node& node = m.node(id);
  if (options.use_cost_attr) {
    if (const AttrValue* v = FindAttr(node.attrs, "_cost")) {
      if (const auto* x = v->as<int64_t>()) return std::max<double>(0, static_cast<double>(*x));
      if (const auto* x = v->as<double>()) return std::max(0.0, *x);
    }
  }
  const EngineConfig* conf = m.engine_table.Find(node.engine);
  if (conf != nullptr && conf->skip_assign_stream) return 0.0;
  auto it = options.engines.find(node.engine);
  const EngineSpeed& sp = it != options.engines.end() ? it->second : options.default_engine;
  return sp.fixed_us + std::max(NodeFlops(m, id) / sp.flops_per_us, NodeBytes(m, id, options) / sp.bytes_per_us);
}

std::vector<double> NodeCosts(const Plan& plan, const CostModelOptions& options) {
  const Model& m = plan.model;
  std::vector<double> cost(m.num_nodes(), 0.0);
  for (size_t i = 0; i < cost.size(); ++i) {
    NodeId id(static_cast<int32_t>(i));
    if (MainStreamOf(plan, id) < 0) continue;
    cost[i] = NodeCost(m, id, options);
  }
  return cost;
}

std::vector<int64_t> NodeTaskCounts(const Plan& plan) {
  const Model& m = plan.model;
  const bool planned = Has(plan.established, IrProperty::kTasks) &&
                       plan.tasks.size() == m.num_nodes();
  std::vector<int64_t> tasks(m.num_nodes(), 0);
  for (size_t i = 0; i < tasks.size(); ++i) {
    NodeId id(static_cast<int32_t>(i));
    if (MainStreamOf(plan, id) < 0) continue;
    tasks[i] = planned ? std::max<int64_t>(0, plan.tasks[i]) : NodeTasks(m.node(id), m.engine_table);
  }
  return tasks;
}

}  // namespace npuplan::sim
