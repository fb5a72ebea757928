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

// ---- Issue #19: no 32-bit truncation, no array sized by an id.

// A two-node case whose buffer id, size and an edge come from the caller.
std::string TwoNodes(const std::string& buf_id, const std::string& size = "1",
                     const std::string& edge = "[0, 1]") {
  return R"({"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": )" + buf_id + R"(, "Size": )" + size +
         R"(, "Type": "UB"}, {"Id": 1, "Op": "FREE", "BufId": )" + buf_id + R"(, "Size": )" + size +
         R"(, "Type": "UB"}], "Edges": [)" + edge + "]}";
}

TEST(KernelGraphTest, RejectsBufIdsBeyondTheNodeCountNamingTheValue) {
  // 2000000000 used to size an 8 GB array; 2^32 + 0 was read as 0.
  for (const char* id : {"2", "2000000000", "2147483647", "4294967296", "9223372036854775807", "-1"}) {
    SCOPED_TRACE(id);
    EXPECT_THAT(ParseKernelGraph(TwoNodes(id), CacheConfig{}, "t.json"),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         std::string("t.json: Nodes[0].BufId: BufId ") + id + " is out of range: BufIds are 0..1"));
  }
  EXPECT_THAT(ParseKernelGraph(TwoNodes("0", "1", "[0, 1]"), CacheConfig{}, "t.json"), IsOk());
}

TEST(KernelGraphTest, RejectsOperationBufsBeyondTheNodeCount) {
  const char* text = R"({"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "UB"},
      {"Id": 1, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 1, "Bufs": [4294967296]},
      {"Id": 2, "Op": "FREE", "BufId": 0, "Size": 1, "Type": "UB"}], "Edges": [[0, 1], [1, 2]]})";
  EXPECT_THAT(ParseKernelGraph(text, CacheConfig{}, "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "Nodes[1].Bufs[0]: BufId 4294967296 is out of range"));
}

TEST(KernelGraphTest, RejectsIdsAndEdgesThatOnlyMatchAfterTruncation) {
  // Id 2^32 + 1 at position 1, edge end 2^32 + 1: both were read as 1.
  EXPECT_THAT(ParseKernelGraph(R"({"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "UB"},
      {"Id": 4294967297, "Op": "FREE", "BufId": 0, "Size": 1, "Type": "UB"}], "Edges": [[0, 1]]})",
                               CacheConfig{}, "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "Nodes[1]: node Ids must be 0..N-1 in order "
                                                           "(rule=dense-ids); found Id 4294967297"));
  EXPECT_THAT(ParseKernelGraph(TwoNodes("0", "1", "[0, 4294967297]"), CacheConfig{}, "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "Edges[0]: names a missing node [0, 4294967297]"));
  EXPECT_THAT(ParseKernelGraph(TwoNodes("0", "1", "[0, 18446744073709551615]"), CacheConfig{}, "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "Edges[0][1]: expected an integer, found"));
}

TEST(KernelGraphTest, RejectsSizesAndCyclesBeyondTheLimit) {
  EXPECT_THAT(ParseKernelGraph(TwoNodes("0", "9223372036854775807"), CacheConfig{}, "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Nodes[0].Size: expected an integer <= 1099511627776, found 9223372036854775807"));
  EXPECT_THAT(ParseKernelGraph(R"({"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "UB"},
      {"Id": 1, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 4611686018427387904, "Bufs": [0]},
      {"Id": 2, "Op": "FREE", "BufId": 0, "Size": 1, "Type": "UB"}], "Edges": [[0, 1], [1, 2]]})",
                               CacheConfig{}, "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Nodes[1].Cycles: expected an integer in [0, 1099511627776]"));
  EXPECT_THAT(ParseKernelGraph(R"({"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": "1", "Type": "UB"}],
      "Edges": []})", CacheConfig{}, "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Nodes[0].Size: expected an integer <= 1099511627776, found a string"));
}

// Spill costs are 2 * Size (+ the fixed cycles): the reader bounds Size, but
// a graph built in code is not read, so they saturate at int64's end and the
// evaluator's checked sums report the overflow instead of a wrapped cost.
TEST(KernelGraphTest, SpillCostsOfHugeBuffersSaturate) {
  CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelGraph g, ParseKernelGraph(testing::kExpGraph, config, "exp"));
  // Buffer 1 is written by EXP (a spill moves 2 * Size), buffer 0 by COPY_IN.
  g.buffers[g.buf_index[1]].size = int64_t{1} << 62;
  EXPECT_EQ(g.SpillTraffic(1), INT64_MAX);
  EXPECT_EQ(g.SpillOutCycles(1, config), INT64_MAX);
  EXPECT_EQ(g.SpillInCycles(1, config), INT64_MAX);
  // 2 * (2^62 - 1) = 2^63 - 2 fits; with the fixed cycles it does not.
  g.buffers[g.buf_index[1]].size = (int64_t{1} << 62) - 1;
  EXPECT_EQ(g.SpillTraffic(1), INT64_MAX - 1);
  ASSERT_GT(config.spill_fixed_cycles, 1);
  EXPECT_EQ(g.SpillInCycles(1, config), INT64_MAX);
  g.buffers[g.buf_index[1]].size = 5;
  EXPECT_EQ(g.SpillInCycles(1, config), 10 + config.spill_fixed_cycles);
}

TEST(KernelGraphTest, NamesAByteOrderMark) {
  EXPECT_THAT(ParseKernelGraph("\xEF\xBB\xBF" + TwoNodes("0"), CacheConfig{}, "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "t.json: starts with a UTF-8 byte order mark"));
}

TEST(SolutionTest, RejectsIdsBeyondIntNamingTheValue) {
  // 2^32 + 3 was read as node 3 / buffer 3.
  EXPECT_THAT(ParseScheduleText("0\n4294967299\n", "s.txt"),
              StatusIs(absl::StatusCode::kInvalidArgument, "s.txt:2: node Id 4294967299 is out of range"));
  EXPECT_THAT(ParseMemoryText("0:0\n4294967299:0\n", "m.txt"),
              StatusIs(absl::StatusCode::kInvalidArgument, "m.txt:2: BufId 4294967299 is out of range"));
  EXPECT_THAT(ParseSpillText("-1:0\n", "p.txt"),
              StatusIs(absl::StatusCode::kInvalidArgument, "p.txt:1: BufId -1 is out of range"));
  EXPECT_THAT(ParseMemoryText("0:0\n0:5\n", "m.txt"),
              StatusIs(absl::StatusCode::kInvalidArgument, "m.txt:2: buffer 0 has two offsets"));
  EXPECT_THAT(ParseScheduleText("\xEF\xBB\xBF" "0\n", "s.txt"),
              StatusIs(absl::StatusCode::kInvalidArgument, "s.txt: starts with a UTF-8 byte order mark"));
  // Offsets are int64 as written (the evaluator checks them).
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto mem, ParseMemoryText("2147483647:9223372036854775807\n", "m.txt"));
  EXPECT_EQ(mem.at(2147483647), INT64_MAX);
}

}  // namespace
}  // namespace npuplan::kernel
