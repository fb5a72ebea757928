#include "npuplan/support/json_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using json = nlohmann::json;

TEST(JsonFieldsTest, ReadsExactIntegersAndNamesThePathOtherwise) {
  const JsonFields f("f.json");
  EXPECT_EQ(*f.Int(json(9223372036854775807LL), "$.a"), INT64_MAX);
  EXPECT_EQ(*f.Int(json(-5), "$.a"), -5);
  EXPECT_THAT(f.Int(json("3"), "$.a"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                 "f.json: $.a: expected an integer, found a string"));
  EXPECT_THAT(f.Int(json(3.0), "$.a"), StatusIs(absl::StatusCode::kInvalidArgument, "expected an integer, found 3.0"));
  EXPECT_THAT(f.Int(json(9223372036854775808ULL), "$.a"),
              StatusIs(absl::StatusCode::kInvalidArgument, "found 9223372036854775808 (beyond int64)"));
  EXPECT_THAT(f.Int(json(nullptr), "$.a"), StatusIs(absl::StatusCode::kInvalidArgument, "found null"));
}

TEST(JsonFieldsTest, RangesAreReadable) {
  const JsonFields f("f.json");
  EXPECT_THAT(f.Int(json(4294967296LL), "$.a", -1, INT32_MAX),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.a: expected an integer in [-1, 2147483647], found 4294967296"));
  EXPECT_THAT(f.Int(json(-1), "$.a", 0), StatusIs(absl::StatusCode::kInvalidArgument, "expected an integer >= 0, found -1"));
  EXPECT_THAT(f.Int(json(9), "$.a", JsonFields::kMin, 8),
              StatusIs(absl::StatusCode::kInvalidArgument, "expected an integer <= 8, found 9"));
}

TEST(JsonFieldsTest, ReadsOptionalAndRequiredMembers) {
  const JsonFields f("f.json");
  const json obj = json::parse(R"({"n": 3, "s": "x", "b": true, "l": [1, 2], "m": {"k": 4}, "bad": [1, "2"]})");
  EXPECT_EQ(*f.IntOr(obj, "$", "n", 7), 3);
  EXPECT_EQ(*f.IntOr(obj, "$", "absent", 7), 7);
  EXPECT_EQ(*f.StringOr(obj, "$", "s"), "x");
  EXPECT_EQ(*f.BoolOr(obj, "$", "b", false), true);
  EXPECT_EQ(*f.IntListOr(obj, "$", "l"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(f.IntMap(obj["m"], "$.m")->at("k"), 4);
  EXPECT_THAT(f.IntListOr(obj, "$", "bad"),
              StatusIs(absl::StatusCode::kInvalidArgument, "$.bad[1]: expected an integer, found a string"));
  EXPECT_THAT(f.RequiredString(obj, "$.x", "missing"),
              StatusIs(absl::StatusCode::kInvalidArgument, "f.json: $.x: missing field 'missing'"));
  EXPECT_THAT(f.Object(json::array(), "$.o"), StatusIs(absl::StatusCode::kInvalidArgument, "expected an object, found an array"));
  EXPECT_THAT(f.Array(obj, "$"), StatusIs(absl::StatusCode::kInvalidArgument, "$: expected an array, found an object"));
  EXPECT_THAT(f.Array(obj["l"], "$.l"), IsOk());
}

}  // namespace
}  // namespace npuplan
