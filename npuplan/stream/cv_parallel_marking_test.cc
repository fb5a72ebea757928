#include "npuplan/stream/cv_parallel_marking.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::ParseStreamTestGraph;
using ::npuplan::stream::testing::StreamOf;

// GE system test cv_parallel_assign_diff_stream.
constexpr char kDiff[] = R"json({"nodes": [
  {"name": "data1", "type": "Data"},
  {"name": "data2", "type": "Data"},
  {"name": "aic1", "type": "MatMul", "inputs": ["data1"], "attrs": {"_cube_vector_core_type": "AIC"}},
  {"name": "reshape", "type": "Reshape", "inputs": ["aic1"]},
  {"name": "aiv1", "type": "Relu", "inputs": ["reshape"], "attrs": {"_cube_vector_core_type": "AIV"}},
  {"name": "aic2", "type": "MatMul", "inputs": ["aiv1"], "attrs": {"_cube_vector_core_type": "AIC"}},
  {"name": "aiv2", "type": "Relu", "inputs": ["data2"], "attrs": {"_cube_vector_core_type": "AIV"}},
  {"name": "aiv3", "type": "Relu", "inputs": ["aiv2"], "attrs": {"_cube_vector_core_type": "MIX", "_mix_is_aiv": true}},
  {"name": "out", "type": "NetOutput", "inputs": ["aic2", "aiv3"]}]})json";

TEST(CvParallelMarkingTest, MarksVectorNodesNotConnectedToNeighbouringCubes) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(kDiff));
  std::vector<std::string> names;
  for (NodeId id : CvParallelMarking::Mark(m, kRootGraph)) names.push_back(m.node(id).name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("aiv2", "aiv3"));
}

TEST(CvParallelMarkingTest, PutsParallelVectorNodesOnTheirOwnStream) {
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kDiff, {{"ge.autoMultistreamParallelMode", "cv"}}, &log));
  EXPECT_EQ(StreamOf(plan, "aiv1"), 0);
  EXPECT_EQ(StreamOf(plan, "aic1"), 0);
  EXPECT_EQ(StreamOf(plan, "aiv2"), 1);
  EXPECT_EQ(StreamOf(plan, "aiv3"), 1);
  EXPECT_EQ(log.WithKeyword("CvParallelNode").size(), 2u);
  // The engines are restored after the assignment.
  EXPECT_EQ(plan.model.node(plan.model.FindNode("aiv2")).engine, "AIcoreEngine");
}

TEST(CvParallelMarkingTest, KeepsSerialVectorNodesOnTheCubeStream) {
  // GE system test cv_serial_assign_same_stream.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "data", "type": "Data"},
    {"name": "aic1", "type": "MatMul", "inputs": ["data"], "attrs": {"_cube_vector_core_type": "AIC"}},
    {"name": "aiv1", "type": "Relu", "inputs": ["aic1"], "attrs": {"_cube_vector_core_type": "AIV"}},
    {"name": "aic2", "type": "MatMul", "inputs": ["aiv1"], "attrs": {"_cube_vector_core_type": "AIC"}},
    {"name": "aiv2", "type": "Relu", "inputs": ["aic2"], "attrs": {"_cube_vector_core_type": "AIV"}},
    {"name": "out", "type": "NetOutput", "inputs": ["aiv2"]}]})json",
                                                         {{"ge.autoMultistreamParallelMode", "cv"}}));
  EXPECT_EQ(StreamOf(plan, "aiv1"), 0);
  EXPECT_EQ(StreamOf(plan, "aiv2"), 0);
  EXPECT_EQ(plan.streams.logical, 1);
}

TEST(CvParallelMarkingTest, ReadsCoreTypes) {
  Node n;
  n.engine = "AIcoreEngine";
  n.type = "MatMul";
  EXPECT_EQ(CvParallelMarking::CoreTypeOf(n), CoreType::kCube);
  n.type = "Relu";
  EXPECT_EQ(CvParallelMarking::CoreTypeOf(n), CoreType::kNone);
  n.attrs["_cube_vector_core_type"] = std::string("MIX_AIV");
  EXPECT_EQ(CvParallelMarking::CoreTypeOf(n), CoreType::kVector);
  n.attrs["_cube_vector_core_type"] = std::string("MIX");
  EXPECT_EQ(CvParallelMarking::CoreTypeOf(n), CoreType::kCube);
}

}  // namespace
}  // namespace npuplan::stream
