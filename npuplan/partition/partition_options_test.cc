#include "npuplan/partition/partition_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/testing/status_matchers.h"

namespace npuplan::partition {
namespace {

CompileOptions Options(std::map<std::string, std::string> values) {
  CompileOptions o;
  for (auto& [k, v] : values) o.Set(k, v);
  return o;
}

TEST(PartitionOptionsTest, TilingSinkNeedsTheOptionAndTheDevice) {
  auto sink = [](std::map<std::string, std::string> values) {
    auto o = ReadPartitionOptions(Options(std::move(values)));
    EXPECT_TRUE(o.ok()) << o.status();
    return o.ok() && o->tiling_sink;
  };
  EXPECT_FALSE(sink({}));
  EXPECT_FALSE(sink({{"ge.tiling_schedule_optimize", "1"}}));
  EXPECT_FALSE(sink({{"npuplan.device.tilingSink", "true"}}));
  EXPECT_FALSE(sink({{"ge.tiling_schedule_optimize", "0"}, {"npuplan.device.tilingSink", "true"}}));
  EXPECT_TRUE(sink({{"ge.tiling_schedule_optimize", "1"}, {"npuplan.device.tilingSink", "true"}}));
  EXPECT_TRUE(sink({{"ge.tiling_schedule_optimize", "1"}, {"npuplan.device.tilingSink", "1"}}));
}

}  // namespace
}  // namespace npuplan::partition
