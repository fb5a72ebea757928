#include "npuplan/pass/options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/ir/graph.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

absl::Status ValidateOne(const std::string& key, const std::string& value) {
  CompileOptions o;
  o.Set(key, value);
  return o.Validate();
}

TEST(OptionsTest, CommandLineOverridesGraphOptions) {
  Model m;
  m.options["ge.enableSingleStream"] = "false";
  m.options["ge.topoSortingMode"] = "1";
  CompileOptions o = CompileOptions::FromModel(m, {{"ge.enableSingleStream", "true"}}, false);
  EXPECT_TRUE(o.GetBool("ge.enableSingleStream"));
  EXPECT_EQ(o.Get("ge.topoSortingMode"), "1");
  EXPECT_EQ(o.Get("ge.exec.static_model_ops_lower_limit"), "4");  // default
}

// GE ignores options it does not read: an unknown GE-style key far from
// every known one is accepted without a word.
TEST(OptionsTest, UnknownGeOptionsAreAcceptedSilently) {
  CompileOptions o;
  o.Set("ge.somethingNew", "x");
  std::vector<std::string> warnings;
  EXPECT_THAT(o.Validate(&warnings), IsOk());
  EXPECT_THAT(warnings, ::testing::IsEmpty());
}

// A key a small edit distance from a known GE option (here one letter's case)
// does nothing: a warning names the intended key (issue 20, item 10).
TEST(OptionsTest, NearMissOfAGeOptionWarnsNamingTheIntendedKey) {
  CompileOptions o;
  o.Set("ge.autoMultiStreamParallelMode", "LoadBalance:4");
  o.Set("ge.enableSingleStram", "true");
  std::vector<std::string> warnings;
  EXPECT_THAT(o.Validate(&warnings), IsOk());
  EXPECT_THAT(warnings, ::testing::ElementsAre(
                            ::testing::HasSubstr("option ge.autoMultiStreamParallelMode is not an option npuplan reads "
                                                 "and does nothing; did you mean 'ge.autoMultistreamParallelMode'?"),
                            ::testing::HasSubstr("did you mean 'ge.enableSingleStream'?")));
}

// npuplan's own namespace is closed: an unknown npuplan.* key is an error
// suggesting the closest npuplan option.
TEST(OptionsTest, UnknownNpuplanOptionIsAnErrorNamingTheClosestKey) {
  EXPECT_THAT(ValidateOne("npuplan.stream.reoder", "true"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "option npuplan.stream.reoder: unknown npuplan option; did you mean 'npuplan.stream.reorder'?"));
  EXPECT_THAT(ValidateOne("npuplan.eventOptimisation", "ge"),
              StatusIs(absl::StatusCode::kInvalidArgument, "did you mean 'npuplan.eventOptimization'?"));
}

// GE's ge.optionNameMap: option errors use the caller's names (item 9).
TEST(OptionsTest, OptionNameMapGivesTheCallersNameInErrors) {
  CompileOptions o;
  o.Set("ge.optionNameMap", R"({"ge.event": "--event_mode"})");
  o.Set("ge.event", "signal");
  EXPECT_EQ(o.ReadableName("ge.event"), "--event_mode");
  EXPECT_EQ(o.ReadableName("ge.enableSingleStream"), "ge.enableSingleStream");
  EXPECT_THAT(o.Validate(), StatusIs(absl::StatusCode::kInvalidArgument, "option --event_mode: invalid value 'signal'"));
}

// GE ignores a malformed map (SetOptionNameMap fails, the caller goes on):
// npuplan warns and uses the internal names.
TEST(OptionsTest, MalformedOptionNameMapIsIgnoredWithAWarning) {
  for (const char* bad : {"not json", "[1, 2]", R"({"ge.event": ""})", R"({"ge.event": 3})"}) {
    CompileOptions o;
    o.Set("ge.optionNameMap", bad);
    std::vector<std::string> warnings;
    EXPECT_THAT(o.Validate(&warnings), IsOk()) << bad;
    EXPECT_THAT(warnings, ::testing::ElementsAre(::testing::HasSubstr("option ge.optionNameMap"))) << bad;
    EXPECT_EQ(o.ReadableName("ge.event"), "ge.event") << bad;
  }
}

TEST(OptionsTest, AutoMultistreamAcceptsGeForms) {
  for (const char* v : {"cv", "LoadBalance:1", "LoadBalance:64", "MainStream:8", "WeightedLoadBalance:4"}) {
    EXPECT_THAT(ValidateOne("ge.autoMultistreamParallelMode", v), IsOk()) << v;
  }
  auto m = ParseAutoMultistreamMode("MainStream:8", false);
  ASSERT_THAT(m, IsOk());
  EXPECT_EQ(m->algorithm, "MainStream");
  EXPECT_EQ(m->streams, 8);
}

TEST(OptionsTest, AutoMultistreamRejectsGeInvalidForms) {
  for (const char* v : {"LoadBalance", "LoadBalance:0", "LoadBalance:65", "LoadBalance:-1", "LoadBalance:",
                        "LoadBalance:1:2", "Balance:4", "LoadBalance:4x", "default"}) {
    EXPECT_THAT(ValidateOne("ge.autoMultistreamParallelMode", v),
                StatusIs(absl::StatusCode::kInvalidArgument, "ge.autoMultistreamParallelMode"))
        << v;
  }
  EXPECT_THAT(ParseAutoMultistreamMode("default", /*from_graph_attr=*/true), IsOk());
}

TEST(OptionsTest, StreamMaxParallelNumFollowsGeFormat) {
  auto m = ParseStreamMaxParallelNum("AIcoreEngine:4,VectorEngine:2");
  ASSERT_THAT(m, IsOk());
  EXPECT_EQ(m->at("AIcoreEngine"), 4);
  for (const char* v : {"AIcoreEngine", "AIcoreEngine:x", "AIcoreEngine:4,AIcoreEngine:2", ":3", "A:-1"}) {
    EXPECT_THAT(ValidateOne("ge.streamMaxParallelNum", v), StatusIs(absl::StatusCode::kInvalidArgument)) << v;
  }
}

TEST(OptionsTest, StaticOpsLowerLimitIsAnIntegerAtLeastMinusOne) {
  EXPECT_THAT(ValidateOne("ge.exec.static_model_ops_lower_limit", "-1"), IsOk());
  EXPECT_THAT(ValidateOne("ge.exec.static_model_ops_lower_limit", "10"), IsOk());
  for (const char* v : {"", "-2", "abc", "1.5"}) {
    EXPECT_THAT(ValidateOne("ge.exec.static_model_ops_lower_limit", v),
                StatusIs(absl::StatusCode::kInvalidArgument, "ge.exec.static_model_ops_lower_limit"))
        << v;
  }
}

TEST(OptionsTest, EnumeratedOptionsRejectOtherValues) {
  EXPECT_THAT(ValidateOne("ge.enableSingleStream", "yes"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateOne("ge.event", "signal"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateOne("ac_parallel_enable", "2"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateOne("ge.topoSortingMode", "9"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateOne("npuplan.eventOptimization", "fast"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(OptionsTest, ParsesAssignments) {
  auto kv = ParseOptionAssignment("ge.event=notify");
  ASSERT_THAT(kv, IsOk());
  EXPECT_EQ(kv->first, "ge.event");
  EXPECT_EQ(kv->second, "notify");
  EXPECT_THAT(ParseOptionAssignment("novalue"), StatusIs(absl::StatusCode::kInvalidArgument, "KEY=VALUE"));
  EXPECT_THAT(ParseOptionAssignment("=x"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace npuplan
