// Kernel graph: the official JSON schema of the intra-core scheduling problem
// (docs/kernel.md). Nodes are ALLOC/FREE cache-management nodes and operation
// nodes that run on one pipe (MTE1/MTE2/MTE3/FIXP/CUBE/VECTOR). Node Ids are
// dense 0..N-1 (spill nodes get Ids N, N+1, ... by the official rule).
//
// ParseKernelGraph() validates on load: dense unique Ids, known ops, one ALLOC
// and one FREE per buffer with matching Size/Type, every buffer used by an
// operation is declared, cache types are known, edges name existing nodes, the
// graph is a DAG whose roots are ALLOCs and whose leaves are FREEs.
#ifndef NPUPLAN_KERNEL_KERNEL_GRAPH_H_
#define NPUPLAN_KERNEL_KERNEL_GRAPH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace npuplan::kernel {

// Reader limits (docs/kernel.md): node count, and Size / Cycles, so that the
// derived values (2*Size + spill cycles, a node's end time) stay far from
// int64's end; the sums over a schedule are checked on top. BufIds and edge
// ends must be below the node count, node Ids are 0..N-1.
inline constexpr int64_t kMaxKernelNodes = int64_t{1} << 20;
inline constexpr int64_t kMaxKernelValue = int64_t{1} << 40;

// One cache level and its capacity (abstract units).
struct CacheLevel {
  std::string name;  // "L1", "UB", "L0A", ...
  int64_t capacity = 0;
  bool is_l0 = false;  // at most one live buffer in Q1; never spilled by our planners
};

// The hardware model. Defaults are the statement's Table 1.
struct CacheConfig {
  std::vector<CacheLevel> levels = {{"L1", 4096, false},
                                    {"UB", 1024, false},
                                    {"L0A", 256, true},
                                    {"L0B", 256, true},
                                    {"L0C", 512, true}};
  int64_t spill_fixed_cycles = 150;  // SPILL cycles = 2*Size + this
  // Levels whose bytes count in Q1's max V_stay.
  std::vector<std::string> vstay_levels = {"L1", "UB"};

  // Index of `name` in `levels`, or -1.
  int Find(std::string_view name) const;
};

enum class NodeKind { kAlloc, kFree, kOp };

struct KernelNode {
  int id = 0;
  NodeKind kind = NodeKind::kOp;
  std::string op;     // "ALLOC", "FREE", "COPY_IN", ...
  std::string pipe;   // operations only
  int64_t cycles = 0; // operations only
  std::vector<int> bufs;  // operations: BufIds used
  int buf_id = -1;        // ALLOC/FREE
  int64_t size = 0;       // ALLOC/FREE
  std::string type;       // ALLOC/FREE
};

struct KernelBuffer {
  int buf_id = 0;
  int level = 0;  // index into CacheConfig::levels
  int64_t size = 0;
  int alloc_node = -1;
  int free_node = -1;
  bool copy_in_backed = false;  // in the Bufs of some COPY_IN node
  std::vector<int> users;       // operation node ids, ascending
};

struct KernelGraph {
  std::string name;  // case name (file stem)
  std::vector<KernelNode> nodes;          // nodes[i].id == i
  std::vector<std::pair<int, int>> edges; // as given
  std::vector<std::vector<int>> succ, pred;
  std::vector<KernelBuffer> buffers;      // sorted by buf_id
  std::vector<int> buf_index;             // buf_id -> index into buffers, -1 if none

  int num_nodes() const { return static_cast<int>(nodes.size()); }
  const KernelBuffer& buffer(int buf_id) const { return buffers[buf_index[buf_id]]; }
  bool HasBuffer(int buf_id) const {
    return buf_id >= 0 && buf_id < static_cast<int>(buf_index.size()) && buf_index[buf_id] >= 0;
  }
  // Extra data movement of one SPILL of `buf_id` (Size, or 2*Size).
  int64_t SpillTraffic(int buf_id) const;
  // Cycles of SPILL_OUT / SPILL_IN for `buf_id`.
  int64_t SpillOutCycles(int buf_id, const CacheConfig& config) const;
  int64_t SpillInCycles(int buf_id, const CacheConfig& config) const;
};

// Parses and validates the official JSON. `source` names the input in messages.
absl::StatusOr<KernelGraph> ParseKernelGraph(std::string_view json_text,
                                             const CacheConfig& config,
                                             std::string_view source = "<input>");
absl::StatusOr<KernelGraph> LoadKernelGraph(const std::string& path,
                                            const CacheConfig& config);

// Serializes a graph in the official schema (one node per line, stable).
std::string KernelGraphToJson(const KernelGraph& graph);

// Builds succ/pred/buffers/buf_index from nodes+edges and validates. Used by the
// parser and by the generator.
absl::Status FinalizeKernelGraph(KernelGraph& graph, const CacheConfig& config,
                                 std::string_view source);

}  // namespace npuplan::kernel

#endif  // NPUPLAN_KERNEL_KERNEL_GRAPH_H_
