#include "npuplan/kernel/kernel_graph.h"

#include <gtest/gtest.h>

#include "npuplan/kernel/kernel_test_util.h"
#include "npuplan/kernel/solution.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::kernel {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

TEST(KernelGraphTest, ParsesExpGraph) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kExpGraph, CacheConfig{}, "exp"));
  EXPECT_EQ(g.num_nodes(), 7);
  ASSERT_EQ(g.buffers.size(), 2u);
  EXPECT_TRUE(g.buffer(0).copy_in_backed);
  EXPECT_FALSE(g.buffer(1).copy_in_backed);
  EXPECT_EQ(g.buffer(1).users, (std::vector<int>{3, 5}));
}

TEST(KernelGraphTest, RoundTripsThroughJson) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kSpillGraph, CacheConfig{}, "spill"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph h, ParseKernelGraph(KernelGraphToJson(g), CacheConfig{}, "again"));
  EXPECT_EQ(KernelGraphToJson(g), KernelGraphToJson(h));
}

TEST(KernelGraphTest, RejectsMalformedJson) {
  EXPECT_THAT(ParseKernelGraph("{\"Nodes\": [", CacheConfig{}, "bad.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "bad.json: malformed JSON"));
}

TEST(KernelGraphTest, RejectsUnknownCacheType) {
  EXPECT_THAT(ParseKernelGraph(R"({"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "L2"},
      {"Id": 1, "Op": "FREE", "BufId": 0, "Size": 1, "Type": "L2"}], "Edges": [[0, 1]]})",
                               CacheConfig{}, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument, "unknown cache type"));
}

TEST(KernelGraphTest, RejectsMissingFree) {
  EXPECT_THAT(ParseKernelGraph(R"({"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "UB"},
      {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 1, "Bufs": [0]}], "Edges": [[0, 1]]})",
                               CacheConfig{}, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument, "rule=alloc-free-pairing"));
}

TEST(KernelGraphTest, RejectsCycle) {
  EXPECT_THAT(ParseKernelGraph(R"({"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "UB"},
      {"Id": 1, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 1, "Bufs": [0]},
      {"Id": 2, "Op": "MUL", "Pipe": "VECTOR", "Cycles": 1, "Bufs": [0]},
      {"Id": 3, "Op": "FREE", "BufId": 0, "Size": 1, "Type": "UB"}],
      "Edges": [[0, 1], [1, 2], [2, 1], [2, 3]]})",
                               CacheConfig{}, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument, "rule=dag"));
}

TEST(KernelGraphTest, RejectsSparseIds) {
  EXPECT_THAT(ParseKernelGraph(R"({"Nodes": [{"Id": 1, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "UB"}], "Edges": []})",
                               CacheConfig{}, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument, "rule=dense-ids"));
}

TEST(SolutionTest, ParsesOfficialFilesWithLineNumbersInErrors) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto sched, ParseScheduleText("0\n2\r\n\n1\n", "s.txt"));
  EXPECT_EQ(sched, (std::vector<int>{0, 2, 1}));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto mem, ParseMemoryText("0:0\n1:5\n", "m.txt"));
  EXPECT_EQ(mem.at(1), 5);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto sp, ParseSpillText("", "p.txt"));
  EXPECT_TRUE(sp.empty());
  EXPECT_THAT(ParseMemoryText("0:0\nx\n", "m.txt"), StatusIs(absl::StatusCode::kInvalidArgument, "m.txt:2"));
  EXPECT_EQ(FormatSpills({{5, 400}, {9, 20}}), "5:400\n9:20\n");
}

}  // namespace
}  // namespace npuplan::kernel
