#include "npuplan/verify/stream_aware_reuse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/events/events_test_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::memory {
namespace {

using ::npuplan::testing::ParseVerifiedGraph;

Plan ParsePlan(const std::string& json) {
  auto m = ParseVerifiedGraph(json);
  EXPECT_TRUE(m.ok()) << m.status();
  return events::testing::PlanFromModel(std::move(m).value());
}

int Buf(const Model& m, const TensorLifetimes& lt, std::string_view node) {
  auto it = lt.buffer_of.find(TensorRef{m.FindNode(node), 0});
  EXPECT_NE(it, lt.buffer_of.end()) << node;
  return it->second;
}

// a(s0) → c(s0);  q(s1) → r(s1) → e(s1) → f(s1), then `extra_nodes`; e also
// reads `e_inputs` and waits for `e_controls`. In BFS plan order (a, q, c, r,
// …, e, f) a:0 lives on [0, 3) and e:0 starts at 4 or later: disjoint in
// index, parallel in time unless something orders c before e.
std::string TwoStreams(const std::string& e_inputs, const std::string& e_controls = "",
                       const std::string& extra_nodes = "") {
  return R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "c", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "q", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "r", "type": "Add", "inputs": ["q:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},)json" +
         extra_nodes + R"json(
    {"name": "e", "type": "Add", "inputs": ["r:0")json" + e_inputs + R"json(], "control_inputs": [)json" + e_controls +
         R"json(], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "Add", "inputs": ["e:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]})json";
}

TEST(StreamAwareReuseTest, ParallelStreamsWithoutDependencyMayNotShare) {
  Plan plan = ParsePlan(TwoStreams(""));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  StreamAwareReuse reuse(plan.model, lt);
  const int a = Buf(plan.model, lt, "a"), e = Buf(plan.model, lt, "e");
  ASSERT_LE(lt.buffers[a].upper, lt.buffers[e].lower);  // disjoint in plan order…
  EXPECT_FALSE(reuse.MayShare(a, e));                    // …but not in time
  EXPECT_FALSE(reuse.happens_before().Before(plan.model.FindNode("c"), plan.model.FindNode("e")));
  std::vector<int> all = {a, e};
  EXPECT_THAT(reuse.ExtraConflicts(all), ::testing::ElementsAre(std::make_pair(0, 1)));
}

TEST(StreamAwareReuseTest, DataDependencyAcrossStreamsAllowsSharing) {
  // e reads c:0: c (and with it a's last use) happens before e.
  Plan plan = ParsePlan(TwoStreams(R"json(, "c:0")json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  StreamAwareReuse reuse(plan.model, lt);
  const int a = Buf(plan.model, lt, "a"), e = Buf(plan.model, lt, "e");
  EXPECT_TRUE(reuse.Ordered(a, e));
  EXPECT_FALSE(reuse.Ordered(e, a));
  EXPECT_TRUE(reuse.MayShare(a, e));
  EXPECT_FALSE(reuse.SameStream(a, e));
  // c:0 is read by e: its lifetime overlaps e's definition, never shared with e:0.
  EXPECT_FALSE(reuse.MayShare(Buf(plan.model, lt, "c"), e));
}

TEST(StreamAwareReuseTest, ControlDependencyAcrossStreamsAllowsSharing) {
  Plan plan = ParsePlan(TwoStreams("", R"json("c")json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  StreamAwareReuse reuse(plan.model, lt);
  EXPECT_TRUE(reuse.MayShare(Buf(plan.model, lt, "a"), Buf(plan.model, lt, "e")));
}

TEST(StreamAwareReuseTest, DependencyPathThroughAThirdStreamAllowsSharing) {
  Plan plan = ParsePlan(TwoStreams("", R"json("m")json",
                                   R"json({"name": "m", "type": "Add", "control_inputs": ["c"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},)json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  StreamAwareReuse reuse(plan.model, lt);
  EXPECT_TRUE(reuse.MayShare(Buf(plan.model, lt, "a"), Buf(plan.model, lt, "e")));
  EXPECT_TRUE(reuse.happens_before().Before(plan.model.FindNode("a"), plan.model.FindNode("f")));
}

TEST(StreamAwareReuseTest, EdgeOutOfStreamSwitchOrdersNothing) {
  Plan plan = ParsePlan(TwoStreams("", R"json("sw")json",
                                   R"json({"name": "sw", "type": "StreamSwitch", "control_inputs": ["c"], "attrs": {"_test_stream": 0}},)json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  StreamAwareReuse reuse(plan.model, lt);
  EXPECT_FALSE(reuse.MayShare(Buf(plan.model, lt, "a"), Buf(plan.model, lt, "e")));
}

TEST(StreamAwareReuseTest, SameStreamSharesByPlanOrder) {
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "c", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "q", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "r", "type": "Add", "inputs": ["q:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "e", "type": "Add", "inputs": ["r:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "Add", "inputs": ["e:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}]})json");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  StreamAwareReuse reuse(plan.model, lt);
  const int a = Buf(plan.model, lt, "a"), e = Buf(plan.model, lt, "e");
  EXPECT_TRUE(reuse.MayShare(a, e));
  EXPECT_TRUE(reuse.SameStream(a, e));
}

TEST(StreamAwareReuseTest, SubgraphEntryAndEndOrderAcrossStreams) {
  // x(s0) → f{ t_op (s1) } → o(s0): x's last use (f) happens before t_op via
  // subgraph entry; t_op:0 = f:0 ends at o; after o, p (s2) waits on o.
  Plan plan = ParsePlan(R"json({"nodes": [
    {"name": "x", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "y", "type": "Add", "inputs": ["x:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "PartitionedCall", "inputs": ["y:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "Add", "inputs": ["f:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "body", "parent": "f", "nodes": [
      {"name": "t_k", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_in", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_op", "type": "Add", "inputs": ["t_in:0", "t_k:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t_op:0"], "attrs": {"_test_stream": 1}}]}]})json");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  StreamAwareReuse reuse(plan.model, lt);
  // x:0 (used by x, y on s0) before t_k:0 (t_k on s1 has no inputs: subgraph entry from y).
  EXPECT_TRUE(reuse.MayShare(Buf(plan.model, lt, "x"), Buf(plan.model, lt, "t_k")));
}

}  // namespace
}  // namespace npuplan::memory
