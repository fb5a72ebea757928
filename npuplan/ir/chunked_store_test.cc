#include "npuplan/ir/chunked_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

// Counts live instances, to check that every constructed element is destroyed once.
struct Counted {
  static inline int live = 0;
  int value;
  explicit Counted(int v) : value(v) { ++live; }
  Counted(const Counted& o) : value(o.value) { ++live; }
  Counted(Counted&& o) noexcept : value(o.value) { ++live; }
  ~Counted() { --live; }
};

TEST(ChunkedStoreTest, IndexesAcrossChunkBoundaries) {
  ChunkedStore<int> s;
  // 16, 32, 64, … elements per chunk: cover the first boundaries and beyond.
  for (int i = 0; i < 5000; ++i) s.push_back(i * 3);
  ASSERT_EQ(s.size(), 5000u);
  for (int i : {0, 15, 16, 47, 48, 111, 112, 239, 240, 4999}) EXPECT_EQ(s[i], i * 3) << i;
  EXPECT_EQ(s.back(), 4999 * 3);
}

TEST(ChunkedStoreTest, KeepsElementAddressesWhileGrowing) {
  ChunkedStore<std::string> s;
  s.push_back("first");
  std::string* first = &s[0];
  std::vector<std::string*> addresses;
  for (int i = 1; i < 3000; ++i) addresses.push_back(&s.emplace_back(std::to_string(i)));
  EXPECT_EQ(first, &s[0]);
  EXPECT_EQ(*first, "first");
  for (int i = 1; i < 3000; ++i) ASSERT_EQ(addresses[i - 1], &s[i]);
}

TEST(ChunkedStoreTest, IteratesInIndexOrder) {
  ChunkedStore<int> s;
  for (int i = 0; i < 700; ++i) s.push_back(i);
  std::vector<int> seen(s.begin(), s.end());
  ASSERT_EQ(seen.size(), 700u);
  for (int i = 0; i < 700; ++i) ASSERT_EQ(seen[i], i);
  const ChunkedStore<int>& cs = s;
  EXPECT_EQ(cs.end() - cs.begin(), 700);
  EXPECT_EQ(*(cs.begin() + 100), 100);
  EXPECT_TRUE(std::is_sorted(cs.begin(), cs.end()));
}

TEST(ChunkedStoreTest, CopiesAndMovesIndependently) {
  ChunkedStore<std::string> a;
  for (int i = 0; i < 100; ++i) a.push_back(std::to_string(i));
  ChunkedStore<std::string> b = a;
  b[5] = "changed";
  b.push_back("extra");
  EXPECT_EQ(a[5], "5");
  EXPECT_EQ(a.size(), 100u);
  EXPECT_EQ(b.size(), 101u);
  ChunkedStore<std::string> c = std::move(b);
  EXPECT_EQ(c[5], "changed");
  EXPECT_EQ(c.back(), "extra");
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  a = c;
  EXPECT_EQ(a.size(), 101u);
  EXPECT_EQ(a[5], "changed");
  c = ChunkedStore<std::string>();
  EXPECT_TRUE(c.empty());
}

TEST(ChunkedStoreTest, DestroysEveryElementOnce) {
  Counted::live = 0;
  {
    ChunkedStore<Counted> s;
    s.reserve(50);
    for (int i = 0; i < 1000; ++i) s.emplace_back(i);
    EXPECT_EQ(Counted::live, 1000);
    ChunkedStore<Counted> copy = s;
    EXPECT_EQ(Counted::live, 2000);
    copy.clear();
    EXPECT_EQ(Counted::live, 1000);
    copy.emplace_back(7);
    EXPECT_EQ(copy[0].value, 7);
  }
  EXPECT_EQ(Counted::live, 0);
}

Node Named(std::string name) {
  Node n;
  n.name = std::move(name);
  n.type = "Add";
  return n;
}

TEST(ChunkedStoreTest, ModelNodeReferencesSurviveAddNode) {
  Model m;
  NodeId a = m.AddNode(kRootGraph, Named("a"));
  Node& ref = m.node(a);
  for (int i = 0; i < 2000; ++i) m.AddNode(kRootGraph, Named(StrCat("n", i)));
  EXPECT_EQ(&ref, &m.node(a));
  EXPECT_EQ(ref.name, "a");
  EXPECT_EQ(m.FindNode("n1999").index(), 2000u);
  Model copy = m;
  EXPECT_EQ(copy.node(NodeId(2000)).name, "n1999");
  EXPECT_NE(&copy.node(a), &m.node(a));
}

}  // namespace
}  // namespace npuplan
