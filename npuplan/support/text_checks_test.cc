#include "npuplan/support/text_checks.h"

#include <gtest/gtest.h>

#include <string>

#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

TEST(TextChecksTest, NamesEachByteOrderMark) {
  EXPECT_THAT(CheckNoByteOrderMark("{}", "a.json"), IsOk());
  EXPECT_THAT(CheckNoByteOrderMark("", "a.json"), IsOk());
  EXPECT_THAT(CheckNoByteOrderMark("\xEF\xBB\xBF{}", "a.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "a.json: starts with a UTF-8 byte order mark (BOM"));
  EXPECT_THAT(CheckNoByteOrderMark("\xFF\xFE{\0", "a.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "a.csv: starts with a UTF-16 byte order mark"));
  EXPECT_THAT(CheckNoByteOrderMark("\xFE\xFF\0{", "a.csv"), StatusIs(absl::StatusCode::kInvalidArgument, "UTF-16"));
  EXPECT_THAT(CheckNoByteOrderMark(std::string("\xFF\xFE\0\0", 4), "a.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "UTF-32"));
  // Only at the start: an EF BB BF inside a string is text.
  EXPECT_THAT(CheckNoByteOrderMark("{\"\xEF\xBB\xBF\"}", "a.json"), IsOk());
}

}  // namespace
}  // namespace npuplan
