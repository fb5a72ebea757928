#include "npuplan/stream/cv_parallel_marking.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/graph_testing.h"
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

// GE's IsAicNode: any string `_cube_vector_core_type` that is not a vector
// type is cube; without the attribute a node is neither, whatever its type.
TEST(CvParallelMarkingTest, ReadsCoreTypesAsGe) {
  Node n;
  n.engine = "AIcoreEngine";
  n.type = "MatMul";
  EXPECT_EQ(CvParallelMarking::CoreTypeOf(n), CoreType::kNone);
  n.attrs["_cube_vector_core_type"] = std::string("MIX_AIV");
  EXPECT_EQ(CvParallelMarking::CoreTypeOf(n), CoreType::kVector);
  n.attrs["_cube_vector_core_type"] = std::string("MIX");
  EXPECT_EQ(CvParallelMarking::CoreTypeOf(n), CoreType::kCube);
  n.attrs["_cube_vector_core_type"] = std::string("AI_CORE");
  EXPECT_EQ(CvParallelMarking::CoreTypeOf(n), CoreType::kCube);
  n.attrs["_cube_vector_core_type"] = int64_t{1};
  EXPECT_EQ(CvParallelMarking::CoreTypeOf(n), CoreType::kNone);
}

std::vector<std::string> Marked(const Model& m) {
  std::vector<std::string> names;
  for (NodeId id : CvParallelMarking::Mark(m, kRootGraph)) names.push_back(m.node(id).name);
  return names;
}

// GE's own "AI_CORE" core type is cube: v2, not linked to the cube nodes
// around it, moves; v1 between them stays.
TEST(CvParallelMarkingTest, AiCoreCountsAsCube) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "d", "type": "Data"},
    {"name": "c1", "type": "MatMul", "inputs": ["d"], "attrs": {"_cube_vector_core_type": "AI_CORE"}},
    {"name": "v1", "type": "Relu", "inputs": ["c1"], "attrs": {"_cube_vector_core_type": "AIV"}},
    {"name": "v2", "type": "Relu", "inputs": ["d"], "attrs": {"_cube_vector_core_type": "AIV"}},
    {"name": "c2", "type": "MatMul", "inputs": ["v1"], "attrs": {"_cube_vector_core_type": "AI_CORE"}},
    {"name": "out", "type": "NetOutput", "inputs": ["c2", "v2"]}]})json"));
  ASSERT_LT(::npuplan::testing::NodeNamed(m, "c1").topo_id, ::npuplan::testing::NodeNamed(m, "v2").topo_id);
  EXPECT_THAT(Marked(m), ::testing::ElementsAre("v2"));
}

// A vector node before the first cube node has no preceding cube to be linked
// to: GE moves it even though it feeds the cube node after it.
TEST(CvParallelMarkingTest, VectorNodeBeforeTheFirstCubeMoves) {
  DecisionLog log(true);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "d", "type": "Data"},
    {"name": "v0", "type": "Relu", "inputs": ["d"], "attrs": {"_cube_vector_core_type": "AIV"}},
    {"name": "c1", "type": "MatMul", "inputs": ["v0"], "attrs": {"_cube_vector_core_type": "AIC"}},
    {"name": "out", "type": "NetOutput", "inputs": ["c1"]}]})json", {{"ge.autoMultistreamParallelMode", "cv"}}, &log));
  EXPECT_NE(StreamOf(plan, "v0"), StreamOf(plan, "c1"));
  ASSERT_EQ(log.WithKeyword("CvParallelNode").size(), 1u);
  EXPECT_EQ(log.WithKeyword("CvParallelNode")[0]->ToLine(), "[cv-parallel-marking] CvParallelNode node=v0 reason=no-prev-cube");
}

// No early return without cube nodes: every vector node is marked.
TEST(CvParallelMarkingTest, GraphWithoutCubeNodesMarksEveryVectorNode) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "d", "type": "Data"},
    {"name": "v1", "type": "Relu", "inputs": ["d"], "attrs": {"_cube_vector_core_type": "AIV"}},
    {"name": "v2", "type": "Relu", "inputs": ["v1"], "attrs": {"_cube_vector_core_type": "MIX_AIV"}},
    {"name": "out", "type": "NetOutput", "inputs": ["v2"]}]})json"));
  EXPECT_THAT(Marked(m), ::testing::ElementsAre("v1", "v2"));
}

// A vector node linked to its preceding cube with no cube after it stays.
TEST(CvParallelMarkingTest, VectorNodeAfterTheLastLinkedCubeStays) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseStreamTestGraph(R"json({"nodes": [
    {"name": "d", "type": "Data"},
    {"name": "c1", "type": "MatMul", "inputs": ["d"], "attrs": {"_cube_vector_core_type": "AIC"}},
    {"name": "v1", "type": "Relu", "inputs": ["c1"], "attrs": {"_cube_vector_core_type": "AIV"}},
    {"name": "out", "type": "NetOutput", "inputs": ["v1"]}]})json"));
  EXPECT_THAT(Marked(m), ::testing::IsEmpty());
}

}  // namespace
}  // namespace npuplan::stream
