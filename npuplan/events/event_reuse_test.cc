#include "npuplan/events/event_reuse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "npuplan/events/events_test_util.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Op;
using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// A Case with `_batch_num` whose branches hold chains alternating between
// streams 1 and 2, with `events[i]` cross-stream edges in branch i.
Plan MultiGear(const std::vector<int>& events, bool batch_num = true) {
  Model m;
  m.set_name("g");
  Node c;
  c.name = "case";
  c.type = "Case";
  c.engine = "DNN_VM_GE_LOCAL";
  c.attrs["_test_stream"] = int64_t{0};
  if (batch_num) c.attrs["_batch_num"] = static_cast<int64_t>(events.size());
  NodeId case_id = m.AddNode(kRootGraph, std::move(c));
  for (size_t b = 0; b < events.size(); ++b) {
    GraphId g = m.AddSubgraph(case_id, StrCat("branch", b));
    NodeId prev;
    for (int i = 0; i <= events[b]; ++i) prev = m.AddNode(g, Op(StrCat("b", b, "_n", i), 1 + i % 2, prev));
  }
  RenumberTopoIds(m);
  return PlanFromModel(std::move(m));
}

TEST(EventReuseTest, GearsShareIdsSoTheCaseCostsItsWidestBranch) {
  Plan plan = MultiGear({4, 5, 3});
  RunResult r;
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse>(), {}, &r), IsOk());
  EXPECT_EQ(plan.events.events.size(), 12u);
  EXPECT_EQ(plan.events.event_count, 5);
  EXPECT_EQ(r.log.WithKeyword("EventIdsReused").size(), 3u);
  Plan plain = MultiGear({4, 5, 3}, /*batch_num=*/false);
  ASSERT_THAT(RunPasses(plain, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse>()), IsOk());
  EXPECT_EQ(plain.events.event_count, 12);
}

TEST(EventReuseTest, IdsFollowSenderNameOrder) {
  Model m;
  m.set_name("g");
  NodeId z = m.AddNode(kRootGraph, Op("z", 0));
  NodeId a = m.AddNode(kRootGraph, Op("a", 1));
  m.AddNode(kRootGraph, Op("zz", 1, z));
  m.AddNode(kRootGraph, Op("aa", 0, a));
  RenumberTopoIds(m);
  Plan plan = PlanFromModel(std::move(m));
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse>()), IsOk());
  ASSERT_EQ(plan.events.events.size(), 2u);
  EXPECT_EQ(plan.model.node(plan.events.events[0].send).name, "a");
  EXPECT_EQ(plan.model.node(plan.events.events[1].send).name, "z");
}

TEST(EventReuseTest, MultiplexingAboveTheThresholdMergesDeclaredPairs) {
  Model m;
  m.set_name("g");
  NodeId a = m.AddNode(kRootGraph, Op("a", 0));
  NodeId b = m.AddNode(kRootGraph, Op("b", 0));
  Node x = Op("x", 1, a);
  x.attrs["_event_multiplexing"] = AttrValue::StringList{"RecvFrom;a;7"};
  m.AddNode(kRootGraph, std::move(x));
  Node y = Op("y", 2, b);
  y.attrs["_event_multiplexing"] = AttrValue::StringList{"RecvFrom;b;7"};
  m.AddNode(kRootGraph, std::move(y));
  RenumberTopoIds(m);
  Plan plan = PlanFromModel(std::move(m));
  Plan copy = plan;
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse>(),
                        {{"npuplan.eventReuseThreshold", "1"}}),
              IsOk());
  EXPECT_EQ(plan.events.events.size(), 2u);
  EXPECT_EQ(plan.events.event_count, 1);
  ASSERT_THAT(RunPasses(copy, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse>()), IsOk());
  EXPECT_EQ(copy.events.event_count, 2);
}

TEST(EventReuseTest, MultiplexingMergesOnlyTheDeclaredPairsThatHaveEvents) {
  Model m;
  m.set_name("g");
  Node a = Op("a", 0);
  // a→x and a→w merge; a→b is on one stream (no event) and "ghost" names no node.
  a.attrs["_event_multiplexing"] = AttrValue::StringList{"SendTo;x;3", "SendTo;b;3", "SendTo;ghost;3", "SendTo;w;3"};
  NodeId ia = m.AddNode(kRootGraph, std::move(a));
  NodeId ib = m.AddNode(kRootGraph, Op("b", 0));
  m.AddNode(kRootGraph, Op("x", 1, ia));
  m.AddNode(kRootGraph, Op("y", 1, ib));
  m.AddNode(kRootGraph, Op("w", 2, ia));
  RenumberTopoIds(m);
  Plan plan = PlanFromModel(std::move(m));
  Plan copy = plan;
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse>(),
                        {{"npuplan.eventReuseThreshold", "1"}}),
              IsOk());
  ASSERT_EQ(plan.events.events.size(), 3u);
  EXPECT_EQ(plan.events.event_count, 2);
  std::map<std::string, int64_t> id_of;
  for (const SyncEvent& e : plan.events.events) {
    id_of[plan.model.node(e.send).name + ">" + plan.model.node(e.recv).name] = e.id;
  }
  ASSERT_EQ(id_of.size(), 3u);
  EXPECT_EQ(id_of["a>x"], id_of["a>w"]);
  EXPECT_NE(id_of["a>x"], id_of["b>y"]);
  ASSERT_THAT(RunPasses(copy, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse>()), IsOk());
  EXPECT_EQ(copy.events.event_count, 3);
}

TEST(EventReuseTest, MultiplexingIdBeyond32BitsIsAnError) {
  Model m;
  m.set_name("g");
  NodeId a = m.AddNode(kRootGraph, Op("a", 0));
  Node x = Op("x", 1, a);
  x.attrs["_event_multiplexing"] = AttrValue::StringList{"RecvFrom;a;4294967296"};
  m.AddNode(kRootGraph, std::move(x));
  RenumberTopoIds(m);
  Plan plan = PlanFromModel(std::move(m));
  EXPECT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse>(),
                        {{"npuplan.eventReuseThreshold", "0"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "node 'x': _event_multiplexing item 'RecvFrom;a;4294967296': id "
                                                           "4294967296 is out of range"));
}

TEST(EventReuseTest, MoreThan1024NotifiesIsAnError) {
  // 1100 independent cross-stream pairs.
  Model m;
  m.set_name("g");
  for (int i = 0; i < 1100; ++i) {
    NodeId a = m.AddNode(kRootGraph, Op(StrCat("a", i), 0));
    m.AddNode(kRootGraph, Op(StrCat("b", i), 1, a));
  }
  RenumberTopoIds(m);
  Plan plan = PlanFromModel(std::move(m));
  EXPECT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization, EventReuse>(), {{"ge.event", "notify"}}),
              StatusIs(absl::StatusCode::kResourceExhausted, "1100 notifies exceed the device limit of 1024"));
}

}  // namespace
}  // namespace npuplan
