#include "npuplan/stream/in_place_write_ordering.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/stage_checks.h"

namespace npuplan {
namespace {

using ::npuplan::testing::NodeNamed;
using ::npuplan::testing::NodeOrder;
using ::npuplan::testing::ParseVerifiedGraph;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// x is read by r and written in place by w (AssignAdd, `_ref_input_index`);
// `w_control` is w's control input list, `r_after_w` lists r after w.
std::string Graph(const char* w_control, bool r_after_w = false) {
  const std::string r =
      R"({"name": "r", "type": "Relu", "inputs": ["x"], "outputs": [{"shape": [4]}]},)";
  const std::string w =
      StrCat(R"({"name": "w", "type": "AssignAdd", "inputs": ["x", "in"], "control_inputs": [)",
             w_control, R"(], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]},)");
  return StrCat(R"json({"name": "g", "nodes": [
    {"name": "in", "type": "Data", "outputs": [{"shape": [4]}]},
    {"name": "x", "type": "Relu", "inputs": ["in"], "outputs": [{"shape": [4]}]},)json",
                r_after_w ? w + r : r + w, R"json(
    {"name": "out", "type": "NetOutput", "inputs": ["r", "w"]}]})json");
}

struct Ran {
  Plan plan;
  DecisionLog log{true};
  bool changed = false;
};

absl::Status RunOrdering(const std::string& graph, Ran& ran) {
  NPUPLAN_ASSIGN_OR_RETURN(ran.plan.model, ParseVerifiedGraph(graph));
  ran.plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  ran.plan.EnsureNodeVectors();
  CompileOptions options;
  Statistics stats;
  PassContext ctx{options, ran.log, stats};
  InPlaceWriteOrdering pass;
  NPUPLAN_ASSIGN_OR_RETURN(ran.changed, pass.Run(ran.plan, ctx));
  return absl::OkStatus();
}

std::vector<std::string> ControlInputs(const Model& m, std::string_view node) {
  std::vector<std::string> names;
  for (NodeId c : NodeNamed(m, node).control_inputs) names.push_back(m.node(c).name);
  return names;
}

TEST(InPlaceWriteOrderingTest, AReaderWithoutAPathGoesBeforeTheWriteInTopologicalOrder) {
  Ran ran;
  ASSERT_THAT(RunOrdering(Graph(""), ran), ::npuplan::testing::IsOk());
  EXPECT_TRUE(ran.changed);
  EXPECT_THAT(ControlInputs(ran.plan.model, "w"), ElementsAre("r"));
  EXPECT_THAT(ControlInputs(ran.plan.model, "r"), IsEmpty());
  ASSERT_EQ(ran.log.WithKeyword("InPlaceOrder").size(), 1u);
  EXPECT_EQ(ran.log.WithKeyword("InPlaceOrder")[0]->ToLine(),
            "[in-place-write-ordering] InPlaceOrder from=r to=w");
  EXPECT_THAT(verify::VerifyInPlaceWrites(ran.plan), ::npuplan::testing::IsOk());
}

TEST(InPlaceWriteOrderingTest, AReaderListedAfterTheWriteReadsTheWrittenValue) {
  Ran ran;
  ASSERT_THAT(RunOrdering(Graph("", /*r_after_w=*/true), ran), ::npuplan::testing::IsOk());
  EXPECT_THAT(ControlInputs(ran.plan.model, "r"), ElementsAre("w"));
  EXPECT_THAT(ControlInputs(ran.plan.model, "w"), IsEmpty());
}

TEST(InPlaceWriteOrderingTest, AGraphThatOrdersThemIsLeftAsItIs) {
  Ran ran;
  ASSERT_THAT(RunOrdering(Graph(R"("r")"), ran), ::npuplan::testing::IsOk());
  EXPECT_FALSE(ran.changed);
  EXPECT_THAT(ControlInputs(ran.plan.model, "w"), ElementsAre("r"));
  EXPECT_THAT(ran.log.WithKeyword("InPlaceOrder"), IsEmpty());
}

TEST(InPlaceWriteOrderingTest, TheVerifierRejectsTheUnorderedGraph) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model m, ParseVerifiedGraph(Graph("")));
  Plan plan;
  plan.model = std::move(m);
  EXPECT_THAT(verify::VerifyInPlaceWrites(plan),
              ::npuplan::testing::StatusIs(
                  absl::StatusCode::kInternal,
                  "verifier[in-place-writes]: 'r' and 'w' touch memory written in place"));
}

// Two writes of one variable and two readers, none ordered: the writes chain
// in topological order (here v, r1, r2, w2, w1: GE's default sort takes w1
// after its input r1's other consumers) and each reader sits between two
// writes, with one edge per pair the chain needs.
TEST(InPlaceWriteOrderingTest, WritesChainAndReadersSitBetweenThem) {
  Ran ran;
  ASSERT_THAT(RunOrdering(R"json({"name": "g", "nodes": [
    {"name": "v", "type": "Variable", "outputs": [{"shape": [4]}]},
    {"name": "r1", "type": "Relu", "inputs": ["v"], "outputs": [{"shape": [4]}]},
    {"name": "w1", "type": "Assign", "inputs": ["v", "r1"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]},
    {"name": "r2", "type": "Relu", "inputs": ["v"], "outputs": [{"shape": [4]}]},
    {"name": "w2", "type": "AssignAdd", "inputs": ["v"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["w1", "r2", "w2"]}]})json",
                          ran),
              ::npuplan::testing::IsOk());
  const Model& m = ran.plan.model;
  ASSERT_THAT(NodeOrder(m), ElementsAre("v", "r1", "r2", "w2", "w1", "out"));
  EXPECT_THAT(ControlInputs(m, "w2"), ElementsAre("r1", "r2"));
  EXPECT_THAT(ControlInputs(m, "w1"), ElementsAre("w2"));  // r1 → w1 is a data edge
  EXPECT_THAT(ControlInputs(m, "r2"), IsEmpty());
  EXPECT_EQ(ran.log.WithKeyword("InPlaceOrder").size(), 3u);
  EXPECT_THAT(verify::VerifyInPlaceWrites(ran.plan), ::npuplan::testing::IsOk());
}

// What follows a loop waits for its body's NetOutput, not for every node of
// the body: an all-reduce nobody reads that writes in place the value the
// body returns goes before the NetOutput, though the topological order
// (stable RDFS keeps the file's) lists it after; the NetOutput moves to the
// end of the body (found by the property test: the loop's consumer read the
// value while the all-reduce wrote it).
TEST(InPlaceWriteOrderingTest, AnInPlaceWriteOfAReturnedValueGoesBeforeTheSubgraphsEnd) {
  Ran ran;
  ASSERT_THAT(RunOrdering(R"json({"name": "g", "options": {"ge.topoSortingMode": "3"}, "nodes": [
    {"name": "x", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "loop", "type": "While", "inputs": ["x"], "subgraphs": ["cond", "body"], "outputs": [{"shape": [4]}]},
    {"name": "after", "type": "Relu", "inputs": ["loop"], "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["after"]}],
  "subgraphs": [
    {"name": "cond", "parent": "loop", "nodes": [
      {"name": "c_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "c", "type": "Less", "inputs": ["c_in"], "outputs": [{"shape": [], "dtype": "bool"}]},
      {"name": "c_out", "type": "NetOutput", "inputs": ["c"]}]},
    {"name": "body", "parent": "loop", "nodes": [
      {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "src", "type": "Relu", "inputs": ["b_in"], "outputs": [{"shape": [4]}]},
      {"name": "b_out", "type": "NetOutput", "inputs": ["src"]},
      {"name": "ar", "type": "HcomAllReduce", "inputs": ["src"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]}]}]})json",
                          ran),
              ::npuplan::testing::IsOk());
  const Model& m = ran.plan.model;
  EXPECT_THAT(ControlInputs(m, "b_out"), ElementsAre("ar"));
  EXPECT_THAT(NodeOrder(m, m.FindGraph("body")), ElementsAre("b_in", "src", "ar", "b_out"));
  ASSERT_EQ(ran.log.WithKeyword("InPlaceEndMoved").size(), 1u);
  EXPECT_EQ(ran.log.WithKeyword("InPlaceEndMoved")[0]->ToLine(),
            "[in-place-write-ordering] InPlaceEndMoved node=b_out from=2 to=3");
  EXPECT_THAT(verify::VerifyInPlaceWrites(ran.plan), ::npuplan::testing::IsOk());
}

// A NetOutput with a successor in its graph cannot move to the end: the pass
// says so rather than write an order that is not topological.
TEST(InPlaceWriteOrderingTest, ANetOutputWithASuccessorCannotMoveLast) {
  Ran ran;
  const absl::Status s =
      RunOrdering(R"json({"name": "g", "options": {"ge.topoSortingMode": "3"}, "nodes": [
    {"name": "x", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["x"]},
    {"name": "late", "type": "Relu", "control_inputs": ["out"], "outputs": [{"shape": [4]}]},
    {"name": "w", "type": "AssignAdd", "inputs": ["x"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]}]})json",
                  ran);
  EXPECT_THAT(s,
              ::npuplan::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                           "NetOutput 'out' has a successor 'late' in its graph"));
}

}  // namespace
}  // namespace npuplan
