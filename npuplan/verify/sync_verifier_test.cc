#include "npuplan/verify/sync_verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/events/event_id_allocation.h"
#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/ge_order.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::verify {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

// A call whose inputs come from three streams, into a subgraph with a root
// on stream 1 and one on stream 2: every (input, root) pair across streams is
// a subgraph-entry dependency, each one its own event that nothing else
// implies.
TEST(SyncVerifierTest, EverySubgraphEntryPairAcrossStreamsIsChecked) {
  auto m = ParseVerifiedGraph(R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "c", "type": "Add", "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
    {"name": "f", "type": "PartitionedCall", "inputs": ["a:0", "b:0", "c:0"], "subgraphs": ["body"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "o", "type": "Add", "inputs": ["f:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
    "subgraphs": [{"name": "body", "parent": "f", "nodes": [
      {"name": "d0", "type": "Data", "attrs": {"_parent_node_index": 0, "_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "d1", "type": "Data", "attrs": {"_parent_node_index": 1, "_test_stream": 2}, "outputs": [{"shape": [1]}]},
      {"name": "t", "type": "Add", "inputs": ["d0:0", "d1:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "t_out", "type": "NetOutput", "inputs": ["t:0"], "attrs": {"_test_stream": 1}}]}]})json");
  ASSERT_TRUE(m.ok()) << m.status();
  Plan plan = PlanFromModel(std::move(m).value());
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk());
  ASSERT_THAT(VerifyHappensBefore(plan), IsOk());
  int entries = 0;
  for (size_t i = 0; i < plan.events.events.size(); ++i) {
    if (plan.events.events[i].reason != SyncReason::kSubgraphEntry) continue;
    ++entries;
    Plan cut = plan;
    cut.events.events.erase(cut.events.events.begin() + static_cast<std::ptrdiff_t>(i));
    events::RecountIds(cut.events);
    EXPECT_THAT(VerifyHappensBefore(cut),
                StatusIs(absl::StatusCode::kInternal, "subgraph-entry dependency"))
        << "without event " << i;
  }
  // a, c → d0 (stream 1); a, b → d1 (stream 2); b → d0 and c → d1 are same-stream.
  EXPECT_EQ(entries, 4);
}

// A hand-made event from the last node back to the first: the id-reuse
// check, run on its own, must not read the clock of a slot its sweep has not
// reached (it ignores the backward ordering); happens-before rejects the plan.
TEST(SyncVerifierTest, IdReuseAloneToleratesABackwardEvent) {
  auto m = ParseVerifiedGraph(R"json({"nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
    {"name": "c", "type": "Add", "inputs": ["b:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "d", "type": "Add", "inputs": ["c:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]})json");
  ASSERT_TRUE(m.ok()) << m.status();
  Plan plan = PlanFromModel(std::move(m).value());
  ASSERT_THAT(
      RunPasses(plan,
                Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse,
                       PhysicalStreamSplit, StreamActivation, EventIdAllocation>()),
      IsOk());
  ASSERT_THAT(VerifyEventIdReuse(plan), IsOk());
  SyncEvent back;
  back.send = plan.model.FindNode("d");
  back.recv = plan.model.FindNode("a");
  back.reason = SyncReason::kDataEdge;
  back.id = plan.events.event_count;
  plan.events.events.push_back(back);
  events::RecountIds(plan.events);
  EXPECT_THAT(VerifyEventIdReuse(plan), IsOk());
  EXPECT_FALSE(VerifyHappensBefore(plan).ok());
}

}  // namespace
}  // namespace npuplan::verify
