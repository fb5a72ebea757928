#include "npuplan/verify/bitset_tree.h"

#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <set>

namespace npuplan::memory {
namespace {

// std::set's answer to BitsetTree::Next / Prev.
size_t SetNext(const std::set<size_t>& s, size_t i) {
  auto it = s.lower_bound(i);
  return it == s.end() ? BitsetTree::kNone : *it;
}
size_t SetPrev(const std::set<size_t>& s, size_t i) {
  auto it = s.upper_bound(i);
  return it == s.begin() ? BitsetTree::kNone : *std::prev(it);
}

TEST(BitsetTreeTest, EmptyUniverseHasNoElements) {
  const BitsetTree t(0);
  EXPECT_EQ(t.Next(0), BitsetTree::kNone);
  EXPECT_EQ(t.Prev(5), BitsetTree::kNone);
}

TEST(BitsetTreeTest, AnswersLikeStdSetOverRandomInsertsAndErases) {
  std::mt19937 rng(7);
  for (size_t n : {1, 2, 63, 64, 65, 130, 4095, 4096, 4097, 262145}) {
    BitsetTree tree(n);
    std::set<size_t> ref;
    std::uniform_int_distribution<size_t> pick(0, n - 1);
    const int ops = n < 5000 ? 4000 : 20000;
    for (int op = 0; op < ops; ++op) {
      const size_t i = pick(rng);
      if (rng() % 3 == 0) {
        tree.Erase(i);
        ref.erase(i);
      } else {
        tree.Insert(i);
        ref.insert(i);
      }
      const size_t q = pick(rng);
      ASSERT_EQ(tree.Contains(q), ref.count(q) == 1) << "n " << n << " op " << op;
      ASSERT_EQ(tree.Next(q), SetNext(ref, q)) << "n " << n << " op " << op << " q " << q;
      ASSERT_EQ(tree.Prev(q), SetPrev(ref, q)) << "n " << n << " op " << op << " q " << q;
    }
    EXPECT_EQ(tree.Next(n), BitsetTree::kNone);
    EXPECT_EQ(tree.Prev(n + 100), SetPrev(ref, n));
  }
}

}  // namespace
}  // namespace npuplan::memory
