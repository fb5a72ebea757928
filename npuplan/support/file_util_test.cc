#include "npuplan/support/file_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

TEST(FileUtilTest, WritesAndReadsBack) {
  std::string path = ::testing::TempDir() + "/npuplan_file_util_test.txt";
  ASSERT_THAT(WriteFileAtomically(path, "hello"), IsOk());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string text, ReadFile(path));
  EXPECT_EQ(text, "hello");
  std::remove(path.c_str());
}

TEST(FileUtilTest, MissingFileNamesPath) {
  EXPECT_THAT(ReadFile("/nonexistent/x.json"),
              StatusIs(absl::StatusCode::kNotFound, "/nonexistent/x.json"));
}

TEST(FileUtilTest, UnwritableDirectoryLeavesNothing) {
  EXPECT_FALSE(WriteFileAtomically("/nonexistent/dir/out.json", "x").ok());
  EXPECT_FALSE(std::filesystem::exists("/nonexistent/dir/out.json"));
}
}  // namespace
}  // namespace npuplan
