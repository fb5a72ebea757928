// Small inline kernel graphs shared by the kernel tests.
#ifndef NPUPLAN_KERNEL_KERNEL_TEST_UTIL_H_
#define NPUPLAN_KERNEL_KERNEL_TEST_UTIL_H_

#include "npuplan/kernel/kernel_graph.h"

namespace npuplan::kernel::testing {

// The statement's Figure 1 Exp graph: COPY_IN -> EXP -> COPY_OUT, two UB
// buffers of size 5, 20 cycles per operation.
inline constexpr char kExpGraph[] = R"json({
  "Nodes": [
    {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 5, "Type": "UB"},
    {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 20, "Bufs": [0]},
    {"Id": 2, "Op": "ALLOC", "BufId": 1, "Size": 5, "Type": "UB"},
    {"Id": 3, "Op": "EXP", "Pipe": "VECTOR", "Cycles": 20, "Bufs": [1, 0]},
    {"Id": 4, "Op": "FREE", "BufId": 0, "Size": 5, "Type": "UB"},
    {"Id": 5, "Op": "COPY_OUT", "Pipe": "MTE3", "Cycles": 20, "Bufs": [1]},
    {"Id": 6, "Op": "FREE", "BufId": 1, "Size": 5, "Type": "UB"}
  ],
  "Edges": [[0, 1], [1, 3], [2, 3], [3, 4], [0, 4], [3, 5], [5, 6], [2, 6]]
})json";

// Three UB buffers of size 5 where only two fit (UB capacity 10): `a` is
// loaded first but used last, so it must be spilled when `c` is allocated.
inline constexpr char kSpillGraph[] = R"json({
  "Nodes": [
    {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 5, "Type": "UB"},
    {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
    {"Id": 2, "Op": "ALLOC", "BufId": 1, "Size": 5, "Type": "UB"},
    {"Id": 3, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [1]},
    {"Id": 4, "Op": "ALLOC", "BufId": 2, "Size": 5, "Type": "UB"},
    {"Id": 5, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [2, 1]},
    {"Id": 6, "Op": "FREE", "BufId": 1, "Size": 5, "Type": "UB"},
    {"Id": 7, "Op": "MUL", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [2, 0]},
    {"Id": 8, "Op": "FREE", "BufId": 0, "Size": 5, "Type": "UB"},
    {"Id": 9, "Op": "COPY_OUT", "Pipe": "MTE3", "Cycles": 10, "Bufs": [2]},
    {"Id": 10, "Op": "FREE", "BufId": 2, "Size": 5, "Type": "UB"}
  ],
  "Edges": [[0, 1], [1, 7], [0, 8], [7, 8], [2, 3], [3, 5], [2, 6], [5, 6],
            [4, 5], [5, 7], [7, 9], [9, 10], [4, 10]]
})json";

inline CacheConfig SmallUb(int64_t ub = 10) {
  CacheConfig c;
  for (CacheLevel& l : c.levels) {
    if (l.name == "UB") l.capacity = ub;
  }
  return c;
}

}  // namespace npuplan::kernel::testing

#endif  // NPUPLAN_KERNEL_KERNEL_TEST_UTIL_H_
