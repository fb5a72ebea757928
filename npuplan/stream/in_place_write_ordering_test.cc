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

// The verifier's row on `graph` as it is, no pass run.
absl::Status VerifyAsItIs(const std::string& graph) {
  Plan plan;
  NPUPLAN_ASSIGN_OR_RETURN(plan.model, ParseVerifiedGraph(graph));
  return verify::VerifyInPlaceWrites(plan);
}

// The pass's decision lines of one keyword.
std::vector<std::string> Lines(const Ran& ran, std::string_view keyword) {
  std::vector<std::string> lines;
  for (const auto* d : ran.log.WithKeyword(keyword)) lines.push_back(d->ToLine());
  return lines;
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
  EXPECT_THAT(Lines(ran, "InPlaceOrder"),
              ElementsAre("[in-place-write-ordering] InPlaceOrder from=r to=w"));
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
  EXPECT_THAT(VerifyAsItIs(Graph("")),
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

// A While body whose unread all-reduce writes in place the value the body
// returns, listed after the NetOutput (stable RDFS keeps the file's order).
constexpr char kUnreadWriteInABody[] =
    R"json({"name": "g", "options": {"ge.topoSortingMode": "3"}, "nodes": [
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
      {"name": "ar", "type": "HcomAllReduce", "inputs": ["src"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]}]}]})json";

// What follows a loop waits for its body's NetOutput, not for every node of
// the body: an all-reduce nobody reads that writes in place the value the
// body returns goes before the NetOutput, though the topological order
// (stable RDFS keeps the file's) lists it after; the body is sorted again
// (found by the property test: the loop's consumer read the value while the
// all-reduce wrote it).
TEST(InPlaceWriteOrderingTest, AnInPlaceWriteOfAReturnedValueGoesBeforeTheSubgraphsEnd) {
  Ran ran;
  ASSERT_THAT(RunOrdering(kUnreadWriteInABody, ran), ::npuplan::testing::IsOk());
  const Model& m = ran.plan.model;
  EXPECT_THAT(ControlInputs(m, "b_out"), ElementsAre("ar"));
  EXPECT_THAT(NodeOrder(m, m.FindGraph("body")), ElementsAre("b_in", "src", "ar", "b_out"));
  EXPECT_THAT(Lines(ran, "InPlaceReordered"),
              ElementsAre("[in-place-write-ordering] InPlaceReordered graph=body nodes_moved=2"));
  EXPECT_THAT(verify::VerifyInPlaceWrites(ran.plan), ::npuplan::testing::IsOk());
}

// The same with a `_subgraph_end_node`, which the static path waits for
// instead of the NetOutput: the write goes before both; the end node has a
// successor (the NetOutput), so it cannot simply go last — the sort keeps the
// rest of the order.
TEST(InPlaceWriteOrderingTest, AMarkedSubgraphEndFollowsTheWritesToo) {
  Ran ran;
  ASSERT_THAT(RunOrdering(R"json({"name": "g", "options": {"ge.topoSortingMode": "3"}, "nodes": [
    {"name": "x", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "p", "type": "PartitionedCall", "inputs": ["x"], "subgraphs": ["sub"], "outputs": [{"shape": [4]}]},
    {"name": "after", "type": "Relu", "inputs": ["p"], "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["after"]}],
  "subgraphs": [
    {"name": "sub", "parent": "p", "nodes": [
      {"name": "s_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "src", "type": "Relu", "inputs": ["s_in"], "outputs": [{"shape": [4]}]},
      {"name": "fin", "type": "Relu", "inputs": ["src"], "attrs": {"_subgraph_end_node": true}, "outputs": [{"shape": [4]}]},
      {"name": "s_out", "type": "NetOutput", "inputs": ["src"], "control_inputs": ["fin"]},
      {"name": "ar", "type": "HcomAllReduce", "inputs": ["src"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]}]}]})json",
                          ran),
              ::npuplan::testing::IsOk());
  const Model& m = ran.plan.model;
  EXPECT_THAT(ControlInputs(m, "fin"), ElementsAre("ar"));
  EXPECT_THAT(ControlInputs(m, "s_out"),
              ElementsAre("fin"));  // fin → s_out already orders ar first
  EXPECT_THAT(NodeOrder(m, m.FindGraph("sub")), ElementsAre("s_in", "src", "ar", "fin", "s_out"));
  EXPECT_THAT(verify::VerifyInPlaceWrites(ran.plan), ::npuplan::testing::IsOk());
}

// A NetOutput the graph orders before the write that must precede it: no
// order can hold both, and the pass says so.
TEST(InPlaceWriteOrderingTest, AWriteTheGraphOrdersAfterTheNetOutputIsAnError) {
  Ran ran;
  const absl::Status s =
      RunOrdering(R"json({"name": "g", "options": {"ge.topoSortingMode": "3"}, "nodes": [
    {"name": "x", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["x"]},
    {"name": "w", "type": "AssignAdd", "inputs": ["x"], "control_inputs": ["out"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]}]})json",
                  ran);
  EXPECT_THAT(s, ::npuplan::testing::StatusIs(
                     absl::StatusCode::kInvalidArgument,
                     "'w' writes in place memory that 'out' (NetOutput) passes on"));
}

// Two partition calls (as dynamic-shape-partition writes them): p4 writes x
// in place inside, p5 reads x (a) and p4's result (b) inside. p5 must follow
// p4, but its node reading Data 0 waits only for x's producer and p5's
// control inputs: the data edge p4 → p5 orders b, not a. The pass adds the
// control edge p4 → p5, which orders every node of s5 (ir/owner_control_inputs.h).
// Without it the verifier refuses the plan.
std::string TwoPartitions(const char* p5_inputs) {
  return StrCat(R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "p4", "type": "PartitionedCall", "inputs": ["x"], "subgraphs": ["s4"], "outputs": [{"shape": [4]}]},
    {"name": "p5", "type": "PartitionedCall", "inputs": [)json",
                p5_inputs, R"json(], "subgraphs": ["s5"], "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["p5"]}],
  "subgraphs": [
    {"name": "s4", "parent": "p4", "nodes": [
      {"name": "d40", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "w", "type": "AssignAdd", "inputs": ["d40"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "o4", "type": "NetOutput", "inputs": ["w"]}]},
    {"name": "s5", "parent": "p5", "nodes": [
      {"name": "d50", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "d51", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [4]}]},
      {"name": "a", "type": "Relu", "inputs": ["d50"], "outputs": [{"shape": [4]}]},
      {"name": "b", "type": "Relu", "inputs": ["d51"], "outputs": [{"shape": [4]}]},
      {"name": "o5", "type": "Add", "inputs": ["a", "b"], "outputs": [{"shape": [4]}]},
      {"name": "n5", "type": "NetOutput", "inputs": ["o5"]}]}]})json");
}

TEST(InPlaceWriteOrderingTest, AnOwnerReadingWhatAnEarlierOwnerWritesGetsAControlEdge) {
  Ran ran;
  ASSERT_THAT(RunOrdering(TwoPartitions(R"("x", "p4")"), ran), ::npuplan::testing::IsOk());
  const Model& m = ran.plan.model;
  const Node& p5 = NodeNamed(m, "p5");
  EXPECT_EQ(m.node(p5.inputs[0].node).name, "x");  // the inputs stay as they were
  ASSERT_EQ(p5.control_inputs.size(), 1u);
  EXPECT_EQ(m.node(p5.control_inputs[0]).name, "p4");
  EXPECT_THAT(Lines(ran, "InPlaceOrder"),
              ElementsAre("[in-place-write-ordering] InPlaceOrder from=p4 to=p5"));
  EXPECT_THAT(verify::VerifyInPlaceWrites(ran.plan), ::npuplan::testing::IsOk());

  EXPECT_THAT(
      VerifyAsItIs(TwoPartitions(R"("x", "p4")")),
      ::npuplan::testing::StatusIs(absl::StatusCode::kInternal,
                                   "verifier[in-place-writes]: 'p4' must come before what 'p5' "
                                   "touches in its subgraphs, which wait only for 'x' (the "
                                   "producer of what they read) and the owner's control inputs"));
}

// A reader of x before a loop that writes x in place: the body's write
// waits for x's producer and the loop's control inputs. With the control
// edge r → loop the graph orders the pair as it is; without it the pass adds
// that edge.
constexpr const char* kReaderBeforeALoopThatWrites = R"json({"name": "g", "nodes": [
    {"name": "x", "type": "Relu", "outputs": [{"shape": [4]}]},
    {"name": "r", "type": "Relu", "inputs": ["x"], "outputs": [{"shape": [4]}]},
    {"name": "loop", "type": "While", "inputs": ["x"], CONTROL "subgraphs": ["cond", "body"], "outputs": [{"shape": [4]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["r", "loop"]}],
  "subgraphs": [
    {"name": "cond", "parent": "loop", "nodes": [
      {"name": "c_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "c", "type": "Less", "inputs": ["c_in"], "outputs": [{"shape": [], "dtype": "bool"}]},
      {"name": "c_out", "type": "NetOutput", "inputs": ["c"]}]},
    {"name": "body", "parent": "loop", "nodes": [
      {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "inc", "type": "AssignAdd", "inputs": ["b_in"], "attrs": {"_ref_input_index": 0}, "outputs": [{"shape": [4]}]},
      {"name": "b_out", "type": "NetOutput", "inputs": ["inc"]}]}]})json";

TEST(InPlaceWriteOrderingTest, AReaderBeforeAnOwnerThatWritesInPlaceIsOrderedByAControlEdge) {
  std::string with = kReaderBeforeALoopThatWrites, without = with;
  with.replace(with.find("CONTROL"), 7, R"("control_inputs": ["r"],)");
  without.replace(without.find("CONTROL"), 7, "");
  Ran as_is;
  ASSERT_THAT(RunOrdering(with, as_is), ::npuplan::testing::IsOk());
  EXPECT_FALSE(as_is.changed);
  EXPECT_THAT(verify::VerifyInPlaceWrites(as_is.plan), ::npuplan::testing::IsOk());

  Ran ran;
  ASSERT_THAT(RunOrdering(without, ran), ::npuplan::testing::IsOk());
  EXPECT_TRUE(ran.changed);
  EXPECT_THAT(Lines(ran, "InPlaceOrder"),
              ElementsAre("[in-place-write-ordering] InPlaceOrder from=r to=loop"));
  EXPECT_THAT(verify::VerifyInPlaceWrites(ran.plan), ::npuplan::testing::IsOk());
  EXPECT_THAT(VerifyAsItIs(without),
              ::npuplan::testing::StatusIs(absl::StatusCode::kInternal,
                                           "verifier[in-place-writes]: 'r' and 'loop' touch "
                                           "memory written in place"));
}

// The same calls when p5 reads only p4's result: its nodes wait for p4.
TEST(InPlaceWriteOrderingTest, APartitionCallReadingTheWrittenValueIsOrdered) {
  Ran ran;
  ASSERT_THAT(RunOrdering(TwoPartitions(R"("p4", "p4")"), ran), ::npuplan::testing::IsOk());
  EXPECT_FALSE(ran.changed);
  EXPECT_THAT(verify::VerifyInPlaceWrites(ran.plan), ::npuplan::testing::IsOk());
}

// Without the pass, the verifier refuses that body: nothing orders the
// write before the NetOutput the loop's consumer waits for.
TEST(InPlaceWriteOrderingTest, TheVerifierRefusesAWriteAfterTheSubgraphsEnd) {
  EXPECT_THAT(VerifyAsItIs(kUnreadWriteInABody),
              ::npuplan::testing::StatusIs(absl::StatusCode::kInternal,
                                           "verifier[in-place-writes]: 'ar' and 'b_out'"));
}

}  // namespace
}  // namespace npuplan
