#include "npuplan/memory/minimalloc_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/testing/status_matchers.h"

namespace npuplan::memory {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;

TEST(MinimallocCsvTest, ParsesMinimallocExample) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      MinimallocCsv csv,
      ParseMinimallocCsv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\r\n\n", "in.csv"));
  ASSERT_EQ(csv.problem.buffers.size(), 2u);
  EXPECT_EQ(csv.problem.buffers[1].id, "b2");
  EXPECT_EQ(csv.problem.buffers[1].lower, 3);
  EXPECT_EQ(csv.problem.buffers[1].upper, 9);
  EXPECT_EQ(csv.problem.buffers[1].size, 4);
  EXPECT_FALSE(csv.offsets.has_value());
}

TEST(MinimallocCsvTest, ParsesColumnsInAnyOrderWithOffsetsAndAlignment) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      MinimallocCsv csv,
      ParseMinimallocCsv("size,offset,id,upper,lower,alignment\n4,8,x,5,1,4\n", "in.csv"));
  ASSERT_EQ(csv.problem.buffers.size(), 1u);
  const IntervalBuffer& b = csv.problem.buffers[0];
  EXPECT_EQ(b.id, "x");
  EXPECT_EQ(b.lower, 1);
  EXPECT_EQ(b.upper, 5);
  EXPECT_EQ(b.alignment, 4);
  ASSERT_TRUE(csv.offsets.has_value());
  EXPECT_THAT(csv.offsets->offsets, ElementsAre(8));
}

TEST(MinimallocCsvTest, PrintsOffsetColumnInProblemOrder) {
  IntervalProblem p;
  p.buffers = {{"b1", 0, 3, 4}, {"b2", 3, 9, 4}};
  EXPECT_EQ(PrintMinimallocCsv(p, {{8, 0}}), "id,lower,upper,size,offset\nb1,0,3,4,8\nb2,3,9,4,0\n");
}

TEST(MinimallocCsvTest, RoundTripsAlignment) {
  IntervalProblem p;
  p.buffers = {{"b1", 0, 3, 4, 16}};
  const std::string text = PrintMinimallocCsv(p, {{32}});
  EXPECT_EQ(text, "id,lower,upper,size,alignment,offset\nb1,0,3,4,16,32\n");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MinimallocCsv csv, ParseMinimallocCsv(text, "t"));
  EXPECT_EQ(csv.problem.buffers[0].alignment, 16);
  EXPECT_THAT(csv.offsets->offsets, ElementsAre(32));
}

TEST(MinimallocCsvTest, RejectsNegativeSizeWithLineNumber) {
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size\na,0,1,4\nb,0,1,-4\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "in.csv:3: buffer 'b': size (-4)"));
}

TEST(MinimallocCsvTest, RejectsEmptyLifetime) {
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size\na,5,5,4\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "in.csv:2: buffer 'a': lower (5)"));
}

TEST(MinimallocCsvTest, RejectsDuplicateId) {
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size\na,0,1,4\na,1,2,4\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "in.csv:3: duplicate id 'a' (first on line 2)"));
}

TEST(MinimallocCsvTest, RejectsValueOutsideInt64) {
  EXPECT_THAT(
      ParseMinimallocCsv("id,lower,upper,size\na,0,1,99999999999999999999\n", "in.csv"),
      StatusIs(absl::StatusCode::kInvalidArgument, "in.csv:2: size '99999999999999999999'"));
}

TEST(MinimallocCsvTest, RejectsTotalSizeOverflow) {
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size\na,0,1,9000000000000000000\n"
                                 "b,0,1,9000000000000000000\n",
                                 "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "overflows"));
}

// Issue #19: the solvers form upper - lower; a lifetime longer than int64 is
// refused, naming the buffer.
TEST(MinimallocCsvTest, RejectsALifetimeLongerThanInt64) {
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size\na,-9223372036854775808,9223372036854775807,4\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "in.csv: buffer 'a': lifetime [-9223372036854775808, 9223372036854775807) is "
                       "longer than int64"));
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size\na,-4611686018427387904,4611686018427387903,4\n", "in.csv"),
              IsOk());
}

TEST(MinimallocCsvTest, NamesAByteOrderMark) {
  EXPECT_THAT(ParseMinimallocCsv("\xEF\xBB\xBFid,lower,upper,size\na,0,1,4\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "in.csv: starts with a UTF-8 byte order mark (BOM"));
}

TEST(MinimallocCsvTest, RejectsNonNumericField) {
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size\na,0,x,4\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "in.csv:2: upper 'x' is not a 64-bit integer"));
}

TEST(MinimallocCsvTest, RejectsWrongFieldCount) {
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size\na,0,1\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "in.csv:2: expected 4 fields, got 3"));
}

TEST(MinimallocCsvTest, RejectsMissingAndUnknownColumns) {
  EXPECT_THAT(ParseMinimallocCsv("id,lower,size\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "in.csv:1: header lacks column 'upper'"));
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size,colour\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "unknown column 'colour'"));
  EXPECT_THAT(ParseMinimallocCsv("id,lower,upper,size,size\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "duplicate column 'size'"));
}

TEST(MinimallocCsvTest, RejectsEmptyFile) {
  EXPECT_THAT(ParseMinimallocCsv("\n\n", "in.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, "in.csv: empty file"));
}

TEST(MinimallocCsvTest, AcceptsHeaderOnly) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MinimallocCsv csv,
                               ParseMinimallocCsv("id,lower,upper,size\n", "in.csv"));
  EXPECT_TRUE(csv.problem.buffers.empty());
}

}  // namespace
}  // namespace npuplan::memory
