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

double NodeFlops(const Model& model, NodeId n) {
  const Node& node = model.node(n);
  double out = 0;
  for (const TensorDesc& t : node.outputs) out += Elements(t);
  const std::string& t = node.type;
  if (t == "MatMul" || t == "MatMulV2" || t == "BatchMatMul" || t == "BatchMatMulV2") {
    const TensorDesc* a = InputDesc(model, node, 0);
    if (a != nullptr && !a->shape.empty()) {
      bool transpose = GetBoolAttr(node.attrs, "transpose_x1").value_or(false) ||
                       GetBoolAttr(node.attrs, "adj_x1").value_or(false);
      size_t r = a->shape.size();
      int64_t k = transpose && r >= 2 ? a->shape[r - 2] : a->shape[r - 1];
      if (k > 0) return 2.0 * out * static_cast<double>(k);
    }
  } else if (t == "Conv2D" || t == "Conv3D") {
    const TensorDesc* w = InputDesc(model, node, 1);
    if (w != nullptr && !w->shape.empty() && w->shape[0] > 0) {
      return 2.0 * out * Elements(*w) / static_cast<double>(w->shape[0]);
    }
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
