#include "npuplan/memory/memory_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "npuplan/testing/status_matchers.h"

namespace npuplan::memory {
namespace {

using ::npuplan::testing::StatusIs;

TEST(MemoryOptionsTest, ReadsTheSpecDefaults) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryOptions o, ReadMemoryOptions(CompileOptions()));
  EXPECT_EQ(o.alignment, 512);
  EXPECT_EQ(o.time_limit_seconds, 0.0);
  EXPECT_EQ(o.search_steps, 2'000'000);
}

TEST(MemoryOptionsTest, ParsesSetValues) {
  CompileOptions c;
  c.Set("npuplan.memory.alignment", "32");
  c.Set("npuplan.memory.timeLimit", "2.5");
  c.Set("npuplan.memory.searchSteps", "0");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryOptions o, ReadMemoryOptions(c));
  EXPECT_EQ(o.alignment, 32);
  EXPECT_EQ(o.time_limit_seconds, 2.5);
  EXPECT_EQ(o.search_steps, 0);
}

// Each bad value is refused with the option's name, its value and the rule,
// in the words the pass has always used.
TEST(MemoryOptionsTest, RefusesEachBadValueNamingTheOption) {
  struct Case {
    std::string key, value, message;
  };
  const Case cases[] = {
      {"npuplan.memory.alignment", "0",
       "option npuplan.memory.alignment=\"0\": expected a positive integer"},
      {"npuplan.memory.alignment", "-512",
       "option npuplan.memory.alignment=\"-512\": expected a positive integer"},
      {"npuplan.memory.alignment", "4k",
       "option npuplan.memory.alignment=\"4k\": expected a positive integer"},
      {"npuplan.memory.timeLimit", "-1",
       "option npuplan.memory.timeLimit=\"-1\": expected a non-negative number of seconds"},
      {"npuplan.memory.timeLimit", "1s",
       "option npuplan.memory.timeLimit=\"1s\": expected a non-negative number of seconds"},
      {"npuplan.memory.timeLimit", "nan",
       "option npuplan.memory.timeLimit=\"nan\": expected a non-negative number of seconds"},
      {"npuplan.memory.searchSteps", "-5",
       "option npuplan.memory.searchSteps=\"-5\": expected a non-negative integer"},
      {"npuplan.memory.searchSteps", "many",
       "option npuplan.memory.searchSteps=\"many\": expected a non-negative integer"},
      {"npuplan.memory.searchSteps", "1.5",
       "option npuplan.memory.searchSteps=\"1.5\": expected a non-negative integer"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key + "=" + c.value);
    CompileOptions options;
    options.Set(c.key, c.value);
    absl::StatusOr<MemoryOptions> o = ReadMemoryOptions(options);
    EXPECT_THAT(o, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_EQ(o.status().message(), c.message);
  }
}

// An empty value is the option table's default, as CompileOptions::Validate
// accepts it and the event options read it.
TEST(MemoryOptionsTest, AnEmptyValueMeansTheDefault) {
  CompileOptions c;
  c.Set("npuplan.memory.alignment", "");
  c.Set("npuplan.memory.timeLimit", "");
  c.Set("npuplan.memory.searchSteps", "");
  ASSERT_THAT(c.Validate(), testing::IsOk());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryOptions o, ReadMemoryOptions(c));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemoryOptions defaults, ReadMemoryOptions(CompileOptions()));
  EXPECT_EQ(o.alignment, defaults.alignment);
  EXPECT_EQ(o.time_limit_seconds, defaults.time_limit_seconds);
  EXPECT_EQ(o.search_steps, defaults.search_steps);
  EXPECT_EQ(o.alignment, 512);
}

// The first bad option in reading order is the one reported.
TEST(MemoryOptionsTest, ReportsAlignmentBeforeTheSolverBudgets) {
  CompileOptions c;
  c.Set("npuplan.memory.searchSteps", "-1");
  c.Set("npuplan.memory.timeLimit", "-1");
  c.Set("npuplan.memory.alignment", "0");
  EXPECT_THAT(ReadMemoryOptions(c),
              StatusIs(absl::StatusCode::kInvalidArgument, "npuplan.memory.alignment"));
  c.Set("npuplan.memory.alignment", "64");
  EXPECT_THAT(ReadMemoryOptions(c),
              StatusIs(absl::StatusCode::kInvalidArgument, "npuplan.memory.timeLimit"));
}

}  // namespace
}  // namespace npuplan::memory
