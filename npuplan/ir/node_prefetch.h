// Prefetching for sequential walks over the node table.
#ifndef NPUPLAN_IR_NODE_PREFETCH_H_
#define NPUPLAN_IR_NODE_PREFETCH_H_

#include <cstddef>

#include "npuplan/ir/graph.h"

namespace npuplan {

// Sequential passes over the ~250-byte Nodes are latency-bound (one line
// or two per node, 1M nodes): prefetch this many nodes ahead.
inline constexpr size_t kNodePrefetch = 16;
inline void PrefetchNode(const Model& m, size_t i) {
  if (i < m.num_nodes()) __builtin_prefetch(&m.nodes()[i]);
}
// Every cache line of one Node record: for walks that read fields spread
// over the whole struct (its arrays' headers, name, engine, attributes).
inline void PrefetchNodeRecord(const Node& n) {
  const char* p = reinterpret_cast<const char*>(&n);
  for (size_t off = 0; off < sizeof(Node); off += 64) __builtin_prefetch(p + off);
}

}  // namespace npuplan

#endif  // NPUPLAN_IR_NODE_PREFETCH_H_
