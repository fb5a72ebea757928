#include "npuplan/ir/graph.h"

#include <string>

#include <gtest/gtest.h>

#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

Node Named(std::string name) {
  Node n;
  n.name = std::move(name);
  n.type = "Add";
  return n;
}

TEST(ModelTest, DeferredNodesAreFoundOnlyAfterIndexing) {
  Model m;
  NodeId a = m.AddNode(kRootGraph, Named("a"));
  NodeId b = m.AddNodeDeferred(kRootGraph, Named("b"));
  EXPECT_EQ(m.node(b).name, "b");
  EXPECT_EQ(m.node(b).graph, kRootGraph);
  EXPECT_EQ(m.root().nodes.back(), b);
  EXPECT_FALSE(m.FindNode("b").valid());
  m.IndexDeferredNodes();
  EXPECT_EQ(m.FindNode("a"), a);
  EXPECT_EQ(m.FindNode("b"), b);
  EXPECT_FALSE(m.FindNode("c").valid());
}

TEST(ModelTest, BulkIndexingFindsEveryNameAcrossTableGrowth) {
  // Enough deferred names to grow the index several times in one batch,
  // mixed with nodes added one by one before and after.
  Model m;
  for (int i = 0; i < 1000; ++i) m.AddNode(kRootGraph, Named(StrCat("x", i)));
  for (int i = 0; i < 20000; ++i) m.AddNodeDeferred(kRootGraph, Named(StrCat("deferred_name_", i)));
  m.IndexDeferredNodes();
  m.IndexDeferredNodes();  // nothing pending: no change
  for (int i = 0; i < 100; ++i) m.AddNode(kRootGraph, Named(StrCat("y", i)));
  ASSERT_EQ(m.num_nodes(), 21100u);
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const NodeId id(static_cast<int32_t>(i));
    EXPECT_EQ(m.FindNode(m.node(id).name), id) << m.node(id).name;
  }
  EXPECT_FALSE(m.FindNode("deferred_name_20000").valid());
  // A copy carries the index.
  Model copy = m;
  EXPECT_EQ(copy.FindNode("deferred_name_19999"), m.FindNode("deferred_name_19999"));
  // Renaming a bulk-indexed node keeps the index current.
  NodeId r = m.FindNode("deferred_name_7");
  m.RenameNode(r, "renamed");
  EXPECT_EQ(m.FindNode("renamed"), r);
  EXPECT_FALSE(m.FindNode("deferred_name_7").valid());
}

TEST(ModelDeathTest, DuplicateDeferredNameIsRejectedWhenIndexed) {
  Model m;
  m.AddNode(kRootGraph, Named("a"));
  m.AddNodeDeferred(kRootGraph, Named("a"));
  EXPECT_DEATH(m.IndexDeferredNodes(), "CHECK failed");
  Model m2;
  m2.AddNodeDeferred(kRootGraph, Named("b"));
  m2.AddNodeDeferred(kRootGraph, Named("b"));
  EXPECT_DEATH(m2.IndexDeferredNodes(), "CHECK failed");
}

}  // namespace
}  // namespace npuplan
