// Cost model of the simulator and of the CPU back end's task durations.
// Times are in microseconds.
//
//   cost(n) = _cost attribute (int or float, µs), when present;
//           = 0 for nodes without a task and for skipped engines
//             (EngineConfig::skip_assign_stream: GE_LOCAL, RTS, ...);
//           = fixed_us + max(flops / flops_per_us, bytes / bytes_per_us)
//             of the node's engine otherwise, where
//     bytes = Σ input bytes + Σ output bytes (TensorDesc::ByteSize; a tensor
//             with a dynamic dim counts dynamic_tensor_bytes),
//     flops = MatMul/BatchMatMul/MatMulV2/BatchMatMulV2: 2·|out|·K, K = the
//             last dim of input 0 (the second-to-last with transpose_x1);
//             Conv2D/Conv3D: 2·|out|·|weight|/out_channels, weight = input 1;
//             anything else: |out| (one op per output element).
// Engine speeds (EngineSpeed, overridable per engine id in CostModelOptions):
//   AIcoreEngine 100 TFLOP/s, 1 TB/s, 2 µs; VectorEngine 10 TFLOP/s, 1 TB/s,
//   2 µs; DNN_VM_AICPU* and DNN_VM_HOST_CPU 0.1 TFLOP/s, 20 GB/s, 10 µs;
//   DNN_HCCL (collectives) bytes at 25 GB/s, 20 µs; DSAEngine and DNN_VM_DVPP
//   1 TFLOP/s, 100 GB/s, 5 µs; DNN_VM_RTS / DNN_VM_RTS_FFTS_PLUS (Send,
//   Recv, StreamActive, labels, MemcpyAsync: no kernel) 0 µs fixed, 1 TB/s;
//   any other engine: AIcoreEngine's.
//
// Device tasks (what the launch overhead is charged for, per task): the
// plan's task counts (Plan::tasks, SPEC T1) once task-count-assignment has
// run (IrProperty::kTasks), else the same model computed here
// (npuplan/plan/task_model.h: 0 for a skipped engine — GE_LOCAL: Data, Const,
// NetOutput, Reshape, If/While owners, ...; HOST_CPU; ffts_plus — 2 for a
// Recv, else 1, with the `_node_sqe_num` / `_hccl_task_num` overrides). An
// attached stream runs `_hccl_attached_task_num` tasks (default 1).
// A node with 0 tasks launches nothing: it takes no stream time, whatever
// its cost (GE runs nothing for it on the device).
#ifndef NPUPLAN_SIM_COST_MODEL_H_
#define NPUPLAN_SIM_COST_MODEL_H_

#include <map>
#include <string>
#include <vector>

#include "npuplan/plan/plan.h"

namespace npuplan::sim {

struct EngineSpeed {
  double flops_per_us = 1e8;  // 100 TFLOP/s
  double bytes_per_us = 1e6;  // 1 TB/s
  double fixed_us = 2.0;      // per-node fixed time on the engine
};

struct CostModelOptions {
  // Engine id → speed; engines not listed use `default_engine`.
  std::map<std::string, EngineSpeed> engines = DefaultEngines();
  EngineSpeed default_engine;
  // Bytes counted for a tensor whose size is unknown (dynamic dims, unknown dtype).
  double dynamic_tensor_bytes = 64 * 1024;
  // Use the `_cost` attribute when a node has one.
  bool use_cost_attr = true;

  static std::map<std::string, EngineSpeed> DefaultEngines();
};

// Estimated FLOPs and bytes of one node (the formulas above).
double NodeFlops(const Model& model, NodeId n);
double NodeBytes(const Model& model, NodeId n, const CostModelOptions& options);

// Cost of one node as if it has a task (the formulas above; 0 for skipped
// engines). The auto multi-stream allocator (npuplan/stream) prices nodes
// with it, so its estimates and the simulator agree.
double NodeCost(const Model& model, NodeId n, const CostModelOptions& options);

// Cost of every node, indexed by NodeId (0 for nodes without a task).
std::vector<double> NodeCosts(const Plan& plan, const CostModelOptions& options);

// Main-stream tasks of every node, indexed by NodeId: Plan::tasks when the
// plan has them (IrProperty::kTasks), else NodeTasks (task_model.h); 0 for nodes
// without a main stream.
std::vector<int64_t> NodeTaskCounts(const Plan& plan);

}  // namespace npuplan::sim

#endif  // NPUPLAN_SIM_COST_MODEL_H_
