// Generators of kernel graphs in the official schema, so that tests and
// benchmarks do not depend on the contest files:
//   matmul          C[m x n] += A[m x k] * B[k x n] by tiles: COPY_IN to L1,
//                   MOVE to L0A/L0B, MATMUL chain into L0C, COPY_OUT by FIXP.
//   flash-attention seq x seq blocks: S = Q K^T (CUBE), online softmax in UB
//                   (VECTOR), P to L1 (MTE3), O += P V (CUBE), running O/m/l
//                   kept in UB across a row, COPY_OUT per row.
//   conv            `layers` layers of `width` feature tiles; output tile t of
//                   a layer reads input tiles t-1..t+1 and the layer's weights;
//                   intermediate tiles live in L1 (written by FIXP, so a spill
//                   costs 2*Size).
// Node Ids follow the natural tile order; the graph passes FinalizeKernelGraph.
#ifndef NPUPLAN_KERNEL_GENERATOR_H_
#define NPUPLAN_KERNEL_GENERATOR_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "npuplan/kernel/kernel_graph.h"

namespace npuplan::kernel {

enum class GraphKind { kMatmul, kFlashAttention, kConv };
absl::StatusOr<GraphKind> ParseGraphKind(std::string_view s);

struct GeneratorOptions {
  GraphKind kind = GraphKind::kMatmul;
  int m = 4, n = 4, k = 4;  // matmul tiles
  int seq = 4;              // flash-attention blocks per side
  int layers = 3;           // conv layers
  int width = 8;            // conv tiles per layer
  int64_t tile = 128;       // L1 tile size (matmul/conv); FA uses 2*tile for Q/K/V
};

absl::StatusOr<KernelGraph> GenerateKernelGraph(const GeneratorOptions& o, const CacheConfig& config);

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_GENERATOR_H_
