#include "npuplan/stream/stream_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::testing::StatusIs;

CompileOptions Options(std::map<std::string, std::string> values) {
  CompileOptions o;
  for (auto& [k, v] : values) o.Set(k, v);
  return o;
}

absl::StatusOr<StreamOptions> Read(std::map<std::string, std::string> values,
                                   const AttrMap& root_attrs = AttrMap()) {
  return ReadStreamOptions(Options(std::move(values)), root_attrs);
}

TEST(StreamOptionsTest, DefaultsAreGeBehaviour) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamOptions o, Read({}));
  EXPECT_FALSE(o.single_stream);
  EXPECT_FALSE(o.hcom_parallel);
  EXPECT_FALSE(o.memory_priority);
  EXPECT_TRUE(o.max_parallel.empty());
  EXPECT_EQ(o.auto_mode.algorithm, AutoAlgorithm::kOff);
  EXPECT_FALSE(o.auto_mode.set());
  EXPECT_FALSE(o.dynamic_multi_stream);
  EXPECT_FALSE(o.ac_parallel);
  EXPECT_FALSE(o.reorder);
  EXPECT_TRUE(o.never_worse);
  EXPECT_EQ(o.budget.max_streams, 2024);
  EXPECT_EQ(o.budget.max_tasks_per_stream, 1024);
  EXPECT_FALSE(o.budget.unlimited_stream_depth);
}

TEST(StreamOptionsTest, ReadsEveryOption) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamOptions o,
                               Read({{"ge.enableSingleStream", "false"},
                                     {"ge.hcomParallel", "1"},
                                     {"ge.exec.memoryOptimizationPolicy", "MemoryPriority"},
                                     {"ge.streamMaxParallelNum", "AIcoreEngine:3,VectorEngine:2"},
                                     {"ge.autoMultistreamParallelMode", "CriticalPath:4"},
                                     {"ENABLE_DYNAMIC_SHAPE_MULTI_STREAM", "1"},
                                     {"ac_parallel_enable", "1"},
                                     {"npuplan.stream.reorder", "true"},
                                     {"npuplan.autoStreams.neverWorse", "false"},
                                     {"npuplan.maxStreams", "16"},
                                     {"npuplan.device.maxTasksPerStream", "512"},
                                     {"npuplan.device.unlimitedStreamDepth", "true"}}));
  EXPECT_TRUE(o.hcom_parallel);
  EXPECT_TRUE(o.memory_priority);
  EXPECT_EQ(o.max_parallel,
            (std::map<std::string, int64_t>{{"AIcoreEngine", 3}, {"VectorEngine", 2}}));
  EXPECT_EQ(o.auto_mode.algorithm, AutoAlgorithm::kCriticalPath);
  EXPECT_EQ(o.auto_mode.streams, 4);
  EXPECT_TRUE(o.auto_mode.rewrites_streams());
  EXPECT_TRUE(o.dynamic_multi_stream);
  EXPECT_TRUE(o.ac_parallel);
  EXPECT_TRUE(o.reorder);
  EXPECT_FALSE(o.never_worse);
  EXPECT_EQ(o.budget.max_streams, 16);
  EXPECT_EQ(o.budget.max_tasks_per_stream, 512);
  EXPECT_TRUE(o.budget.unlimited_stream_depth);
}

TEST(StreamOptionsTest, BooleansKeepTheirOwnSpelling) {
  // ge.enableSingleStream is "true" only (its validator refuses "1");
  // ge.hcomParallel takes "1" or "true"; the policy compares exactly.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      StreamOptions t, Read({{"ge.enableSingleStream", "true"}, {"ge.hcomParallel", "true"}}));
  EXPECT_TRUE(t.single_stream);
  EXPECT_TRUE(t.hcom_parallel);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamOptions one,
                               Read({{"ge.enableSingleStream", "1"},
                                     {"ge.exec.memoryOptimizationPolicy", "BalanceMode"},
                                     {"ENABLE_DYNAMIC_SHAPE_MULTI_STREAM", "0"}}));
  EXPECT_FALSE(one.single_stream);
  EXPECT_FALSE(one.memory_priority);
  EXPECT_FALSE(one.dynamic_multi_stream);
  EXPECT_TRUE(SingleStreamOption(Options({{"ge.enableSingleStream", "true"}})));
  EXPECT_FALSE(SingleStreamOption(Options({{"ge.enableSingleStream", "1"}})));
}

TEST(StreamOptionsTest, AutoModeTextsRoundTrip) {
  for (const char* text :
       {"cv", "LoadBalance:2", "MainStream:8", "WeightedLoadBalance:64", "CriticalPath:1"}) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamOptions o, Read({{"ge.autoMultistreamParallelMode", text}}));
    EXPECT_EQ(AutoModeText(o.auto_mode), text);
    EXPECT_EQ(o.auto_mode.rewrites_streams(), std::string_view(text) != "cv") << text;
  }
  EXPECT_EQ(AutoModeText(AutoMode{}), "");
}

TEST(StreamOptionsTest, RootGraphAttributeWinsOverTheOption) {
  AttrMap attrs;
  attrs["ge.autoMultistreamParallelMode"] = "MainStream:2";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamOptions o,
                               Read({{"ge.autoMultistreamParallelMode", "LoadBalance:4"}}, attrs));
  EXPECT_EQ(o.auto_mode.algorithm, AutoAlgorithm::kMainStream);
  EXPECT_EQ(o.auto_mode.streams, 2);
  // "default" is a custom pass's graph attribute only.
  attrs["ge.autoMultistreamParallelMode"] = "default";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(StreamOptions d, Read({}, attrs));
  EXPECT_EQ(d.auto_mode.algorithm, AutoAlgorithm::kDefault);
  EXPECT_FALSE(d.auto_mode.rewrites_streams());
  EXPECT_THAT(
      Read({{"ge.autoMultistreamParallelMode", "default"}}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "option ge.autoMultistreamParallelMode"));
}

TEST(StreamOptionsTest, EachInvalidValueIsRefusedNamingItsOption) {
  EXPECT_THAT(Read({{"ge.streamMaxParallelNum", "AIcoreEngine:x"}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "option ge.streamMaxParallelNum: invalid value"));
  EXPECT_THAT(Read({{"ge.streamMaxParallelNum", "AIcoreEngine:0"}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "option ge.streamMaxParallelNum"));
  EXPECT_THAT(Read({{"ge.autoMultistreamParallelMode", "Fastest:2"}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "option ge.autoMultistreamParallelMode: invalid value"));
  EXPECT_THAT(
      Read({{"ge.autoMultistreamParallelMode", "LoadBalance:65"}}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "option ge.autoMultistreamParallelMode"));
  AttrMap attrs;
  attrs["ge.autoMultistreamParallelMode"] = "LoadBalance";
  EXPECT_THAT(
      Read({}, attrs).status(),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "[logical-stream-assignment] graph attribute option ge.autoMultistreamParallelMode"));
  EXPECT_THAT(
      Read({{"ac_parallel_enable", "2"}}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "[dynamic-stream-allocator] E10001: Value [2] for parameter [ac_parallel_enable]"));
  EXPECT_THAT(
      Read({{"npuplan.stream.reorder", "true"}}).status(),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "option npuplan.stream.reorder=true needs ge.autoMultistreamParallelMode=CriticalPath:N "
          "(not set)"));
  EXPECT_THAT(
      Read({{"npuplan.stream.reorder", "true"}, {"ge.autoMultistreamParallelMode", "MainStream:2"}})
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "(it is 'MainStream')"));
}

TEST(StreamOptionsTest, ErrorsUseTheCallersNames) {
  const std::string map =
      R"({"ac_parallel_enable": "--ac_parallel", "npuplan.stream.reorder": "--reorder"})";
  EXPECT_THAT(Read({{"ge.optionNameMap", map}, {"ac_parallel_enable", "x"}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "for parameter [--ac_parallel]"));
  EXPECT_THAT(Read({{"ge.optionNameMap", map}, {"npuplan.stream.reorder", "true"}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "option --reorder=true needs"));
}

TEST(StreamOptionsTest, BudgetFollowsTheDeviceLimitAndSimpleAtoi) {
  // The smaller of the budget and the device limit.
  EXPECT_EQ(ReadStreamBudgetOptions(Options({{"npuplan.device.maxStreams", "100"}})).max_streams,
            100);
  EXPECT_EQ(ReadStreamBudgetOptions(
                Options({{"npuplan.device.maxStreams", "100"}, {"npuplan.maxStreams", "300"}}))
                .max_streams,
            100);
  // Not a number: the split's default limit.
  EXPECT_EQ(ReadStreamBudgetOptions(Options({{"npuplan.device.maxTasksPerStream", "many"}}))
                .max_tasks_per_stream,
            1024);
}

}  // namespace
}  // namespace npuplan::stream
