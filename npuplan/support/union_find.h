// Union-find over dense indices 0..n-1, for grouping (aliased tensors, the
// coordinates of a product-shaped kernel graph). The smaller index of a class
// is its root, so the representative of a class does not depend on the order
// of the unions: callers get the same grouping, and the same output, for any
// order they join in.
#ifndef NPUPLAN_SUPPORT_UNION_FIND_H_
#define NPUPLAN_SUPPORT_UNION_FIND_H_

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "npuplan/support/big_vector.h"

namespace npuplan {

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];  // path halving
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  BigVector<int> parent_;
};

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_UNION_FIND_H_
