#include "npuplan/ir/attribute.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

std::vector<std::string> Keys(const AttrMap& m) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  return keys;
}

TEST(AttrMapTest, IteratesInKeyOrderWhateverTheInsertionOrder) {
  AttrMap m;
  m["_stream_label"] = "a";
  m["_is_unknown_shape"] = true;
  m["z"] = 1;
  m["_parent_node_index"] = int64_t{3};
  m["a"] = 2.5;
  EXPECT_THAT(Keys(m), ::testing::ElementsAre("_is_unknown_shape", "_parent_node_index", "_stream_label", "a", "z"));
  EXPECT_EQ(m.size(), 5u);
  EXPECT_EQ(GetIntAttr(m, "_parent_node_index"), 3);
  EXPECT_EQ(GetBoolAttr(m, "_is_unknown_shape"), true);
  EXPECT_EQ(GetStringAttr(m, "_stream_label"), "a");
  EXPECT_FALSE(HasAttr(m, "_missing"));
}

TEST(AttrMapTest, EmplaceKeepsTheOldValueAndInsertOrAssignReplacesIt) {
  AttrMap m;
  EXPECT_TRUE(m.emplace("k", 1).second);
  EXPECT_FALSE(m.emplace("k", 2).second);
  EXPECT_EQ(GetIntAttr(m, "k"), 1);
  EXPECT_FALSE(m.insert_or_assign("k", 3).second);
  EXPECT_EQ(GetIntAttr(m, "k"), 3);
  m["k"] = 4;  // operator[] finds the existing entry
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(GetIntAttr(m, "k"), 4);
}

TEST(AttrMapTest, EraseRemovesOnlyTheNamedKey) {
  AttrMap m;
  for (const char* k : {"b", "a", "c"}) m[k] = 1;
  EXPECT_EQ(m.erase("b"), 1u);
  EXPECT_EQ(m.erase("b"), 0u);
  EXPECT_THAT(Keys(m), ::testing::ElementsAre("a", "c"));
  EXPECT_EQ(m.count("a"), 1u);
  EXPECT_EQ(m.count("b"), 0u);
}

TEST(AttrMapTest, InternsKeysOncePerProcess) {
  const std::string key = "_an_attribute_name_longer_than_sso";
  EXPECT_EQ(InternAttrKey(key), InternAttrKey(std::string_view(key)));
  EXPECT_EQ(*InternAttrKey(key), key);
  EXPECT_NE(InternAttrKey("x1"), InternAttrKey("x2"));
  AttrMap a, b;
  a[key] = 1;
  b[std::string(key)] = 1;
  EXPECT_EQ(&a.begin()->first.str(), &b.begin()->first.str());
}

TEST(AttrMapTest, ComparesByKeysAndValues) {
  AttrMap a, b;
  a["x"] = 1;
  a["y"] = AttrValue::IntList{1, 2};
  b["y"] = AttrValue::IntList{1, 2};
  b["x"] = 1;
  EXPECT_EQ(a, b);
  b["x"] = 2;
  EXPECT_FALSE(a == b);
  b["x"] = 1;
  b["w"] = 1;
  EXPECT_FALSE(a == b);
}

TEST(AttrMapTest, NestsMapsAsValues) {
  AttrMap inner;
  inner["_attached_stream_key"] = "k";
  AttrMap outer;
  outer["_attached_stream_info"] = inner;
  outer["_attached_stream_info_list"] = AttrValue::MapList{inner, inner};
  const AttrValue* v = FindAttr(outer, "_attached_stream_info");
  ASSERT_NE(v, nullptr);
  ASSERT_NE(v->as<AttrMap>(), nullptr);
  EXPECT_EQ(GetStringAttr(*v->as<AttrMap>(), "_attached_stream_key"), "k");
  EXPECT_EQ(FindAttr(outer, "_attached_stream_info_list")->as<AttrValue::MapList>()->size(), 2u);
  AttrMap copy = outer;
  EXPECT_EQ(copy, outer);
}

TEST(AttrMapTest, FromUnsortedSortsOnce) {
  std::vector<std::pair<std::string, AttrValue>> entries;
  for (int i = 99; i >= 0; --i) entries.emplace_back(StrCat("k", 1000 + i), i);
  AttrMap m = AttrMap::FromUnsorted(std::move(entries));
  ASSERT_EQ(m.size(), 100u);
  EXPECT_EQ(std::string(m.begin()->first), "k1000");
  EXPECT_EQ(GetIntAttr(m, "k1042"), 42);
  std::vector<std::string> keys = Keys(m);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

// Where a map's first value lives (const access: does not copy a shared block).
const AttrValue* FirstValue(const AttrMap& m) { return &m.begin()->second; }

TEST(AttrMapTest, SharedMapsReadLikeOwnMapsAndCopyOnTheFirstWrite) {
  const AttrMap flag = AttrMap::Shared("_is_unknown_shape", true);
  ASSERT_TRUE(flag.shared());
  EXPECT_EQ(flag.size(), 1u);
  EXPECT_EQ(GetBoolAttr(flag, "_is_unknown_shape"), true);
  // One block per (key, value): the same value shares it, another does not.
  const AttrMap again = AttrMap::Shared("_is_unknown_shape", true);
  EXPECT_EQ(FirstValue(flag), FirstValue(again));
  EXPECT_NE(FirstValue(flag), FirstValue(AttrMap::Shared("_is_unknown_shape", false)));
  EXPECT_EQ(GetBoolAttr(AttrMap::Shared("_is_unknown_shape", false), "_is_unknown_shape"), false);
  AttrMap own;
  own["_is_unknown_shape"] = true;
  EXPECT_FALSE(own.shared());
  EXPECT_EQ(own, flag);  // compares entries, not storage

  AttrMap a = flag;  // a copy shares the block
  AttrMap b = flag;
  EXPECT_TRUE(a.shared());
  a["z"] = 1;  // a write copies: b and the block are untouched
  EXPECT_FALSE(a.shared());
  EXPECT_THAT(Keys(a), ::testing::ElementsAre("_is_unknown_shape", "z"));
  EXPECT_THAT(Keys(b), ::testing::ElementsAre("_is_unknown_shape"));
  b.insert_or_assign("_is_unknown_shape", false);
  EXPECT_EQ(GetBoolAttr(b, "_is_unknown_shape"), false);
  EXPECT_EQ(GetBoolAttr(flag, "_is_unknown_shape"), true);
  EXPECT_EQ(GetBoolAttr(AttrMap::Shared("_is_unknown_shape", true), "_is_unknown_shape"), true);

  AttrMap c = flag;
  EXPECT_EQ(c.erase("missing"), 0u);
  EXPECT_TRUE(c.shared());  // nothing written
  EXPECT_EQ(c.erase("_is_unknown_shape"), 1u);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(GetBoolAttr(flag, "_is_unknown_shape"), true);

  AttrMap d = flag;
  d.erase(static_cast<const AttrMap&>(d).begin());  // an iterator into the block
  EXPECT_TRUE(d.empty());
  AttrMap e = flag;
  e.begin()->second = false;  // mutable iteration copies first
  EXPECT_EQ(GetBoolAttr(e, "_is_unknown_shape"), false);
  EXPECT_EQ(GetBoolAttr(flag, "_is_unknown_shape"), true);

  AttrMap f = flag;
  AttrMap g = std::move(f);
  EXPECT_TRUE(g.shared());
  EXPECT_TRUE(f.empty());  // NOLINT(bugprone-use-after-move): a moved-from map is empty
  g.clear();
  EXPECT_TRUE(g.empty());
  EXPECT_FALSE(g.shared());
}

TEST(AttrMapTest, SharedMapsAreInternedPerValue) {
  for (int64_t i = 0; i < 3; ++i) {
    AttrMap m = AttrMap::Shared("_parent_node_index", i);
    EXPECT_EQ(GetIntAttr(m, "_parent_node_index"), i);
  }
  EXPECT_EQ(FirstValue(AttrMap::Shared("_parent_node_index", int64_t{2})),
            FirstValue(AttrMap::Shared("_parent_node_index", int64_t{2})));
  EXPECT_NE(FirstValue(AttrMap::Shared("_parent_node_index", int64_t{2})),
            FirstValue(AttrMap::Shared("_parent_node_index", int64_t{1})));
}

// The indexed lookup (int and bool values) against the scan it replaced: for
// each request, the block a scan of the blocks made so far would return
// (equal value, same type), or a fresh one.
TEST(AttrMapTest, SharedBlocksMatchAScanOverEarlierBlocks) {
  std::vector<std::pair<AttrValue, const AttrValue*>> made;  // value, its block's value
  auto request = [&](const AttrValue& v) {
    const AttrValue* got = FirstValue(AttrMap::Shared("_shared_scan_test", v));
    EXPECT_EQ(*got, v);
    const AttrValue* scanned = nullptr;
    for (const auto& [value, block] : made) {
      if (value == v) scanned = block;
    }
    if (scanned != nullptr) {
      EXPECT_EQ(got, scanned) << "a repeated value gets the first block";
    } else {
      for (const auto& [value, block] : made)
        EXPECT_NE(got, block) << "a new value gets a new block";
      made.emplace_back(v, got);
    }
  };
  uint64_t x = 12345;
  for (int step = 0; step < 2000; ++step) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t small = static_cast<int64_t>(x >> 60) - 4;  // -4 .. 11: repeats
    const uint64_t kind = (x >> 32) % 4;
    if (kind == 0) {
      request(AttrValue(small));
    } else if (kind == 1) {
      request(AttrValue(small != 0));  // bool true/false next to int 1/0
    } else if (kind == 2) {
      request(AttrValue(static_cast<int64_t>(x >> 20)));  // mostly new values
    } else {
      request(AttrValue(std::to_string(small)));
    }
  }
  EXPECT_NE(FirstValue(AttrMap::Shared("_shared_scan_test", int64_t{1})),
            FirstValue(AttrMap::Shared("_shared_scan_test", true)));
}

}  // namespace
}  // namespace npuplan
