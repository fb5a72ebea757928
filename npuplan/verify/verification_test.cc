// What one verifier run shares between its checks (verification.h) is what
// each check would build alone: the same views, and Send/Recv nodes found as
// a map assigned in node order would find them.
#include "npuplan/verify/verification.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>

#include "npuplan/events/events_test_util.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/ir/attached_streams.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::verify {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::RandomPlan;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::testing::IsOk;

// Events inserted and materialised as Send/Recv nodes on a random DAG.
Plan MaterialisedPlan(uint32_t seed) {
  Plan plan = RandomPlan(seed, 60, 3);
  EXPECT_THAT(
      RunPasses(plan, Passes<TaskCountAssignment, SyncEventInsertion, SyncNodeGeneration>()),
      IsOk());
  return plan;
}

using Key = SyncNodeIndex::Key;
// The reference: maps assigned in node order, then control-input order.
std::pair<std::map<Key, NodeId>, std::map<Key, NodeId>> ReferenceSyncNodes(const Plan& plan) {
  std::map<Key, NodeId> send, recv;
  const Model& m = plan.model;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const Node& n = m.nodes()[i];
    const bool notify = n.type == "SendNotify" || n.type == "RecvNotify";
    if ((n.type == "Send" || n.type == "SendNotify") && n.control_inputs.size() == 1) {
      if (auto id = GetIntAttr(n.attrs, notify ? "notify_id" : "event_id"))
        send[{n.control_inputs[0].value, *id, notify}] = NodeId(static_cast<int32_t>(i));
    }
    for (NodeId c : n.control_inputs) {
      const Node& r = m.node(c);
      const bool rn = r.type == "RecvNotify";
      if (r.type != "Recv" && !rn) continue;
      if (auto id = GetIntAttr(r.attrs, rn ? "notify_id" : "event_id"))
        recv[{static_cast<int32_t>(i), *id, rn}] = c;
    }
  }
  return {send, recv};
}

void ExpectIndexMatchesReference(const Plan& plan) {
  const SyncNodeIndex index(plan, NodeTypes(plan.model));
  const auto [send, recv] = ReferenceSyncNodes(plan);
  EXPECT_EQ(index.num_sends(), send.size());
  EXPECT_EQ(index.num_recvs(), recv.size());
  for (const auto& [key, node] : send) EXPECT_EQ(index.Send(key), node);
  for (const auto& [key, node] : recv) EXPECT_EQ(index.Recv(key), node);
  // Keys nobody claims: another id, the other kind, a node without events.
  for (const auto& [key, node] : send) {
    const auto [owner, id, notify] = key;
    if (!send.count({owner, id + 1000, notify})) {
      EXPECT_FALSE(index.Send({owner, id + 1000, notify}).valid());
    }
    if (!send.count({owner, id, !notify})) {
      EXPECT_FALSE(index.Send({owner, id, !notify}).valid());
    }
  }
}

TEST(SyncNodeIndexTest, FindsWhatAMapAssignedInNodeOrderFinds) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    const Plan plan = MaterialisedPlan(seed);
    ASSERT_GT(SyncNodeIndex(plan, NodeTypes(plan.model)).num_sends(), 0u);
    ExpectIndexMatchesReference(plan);
  }
}

TEST(SyncNodeIndexTest, KeepsTheLastNodeThatClaimsAKey) {
  Plan plan = MaterialisedPlan(3);
  // Copy every Send and Recv node (same attributes, same control edges): each
  // key now has two claimants, and the copy comes later in node order.
  const size_t n = plan.model.num_nodes();
  std::map<NodeId, NodeId> copy_of;
  std::set<NodeId> twins;
  for (size_t i = 0; i < n; ++i) {
    Node twin = plan.model.nodes()[i];
    if (!IsSyncNode(twin)) continue;
    twin.name += "_twin";
    const NodeId id = plan.model.AddNode(kRootGraph, std::move(twin));
    copy_of[NodeId(static_cast<int32_t>(i))] = id;
    twins.insert(id);
  }
  // A Recv's consumer lists the twin after the original: the twin is the later claimant.
  for (size_t i = 0; i < n; ++i) {
    Node& v = plan.model.node(NodeId(static_cast<int32_t>(i)));
    const auto inputs = v.control_inputs;
    for (NodeId c : inputs) {
      if (plan.model.node(c).type == "Recv" || plan.model.node(c).type == "RecvNotify")
        v.control_inputs.push_back(copy_of.at(c));
    }
  }
  const SyncNodeIndex index(plan, NodeTypes(plan.model));
  const auto [send, recv] = ReferenceSyncNodes(plan);
  ASSERT_FALSE(send.empty());
  ASSERT_FALSE(recv.empty());
  for (const auto& [key, node] : send) EXPECT_TRUE(twins.count(index.Send(key)));
  for (const auto& [key, node] : recv) EXPECT_TRUE(twins.count(index.Recv(key)));
  ExpectIndexMatchesReference(plan);
}

TEST(SyncNodeIndexTest, IsEmptyUntilSyncNodesAreEstablished) {
  Plan plan = MaterialisedPlan(2);
  plan.established &= ~static_cast<IrProperties>(IrProperty::kSyncNodes);
  const SyncNodeIndex index(plan, NodeTypes(plan.model));
  EXPECT_EQ(index.num_sends(), 0u);
  EXPECT_EQ(index.num_recvs(), 0u);
}

TEST(NodeTypesTest, AnswersAsTheNodesTypesAndIdAttributesDo) {
  Plan plan = MaterialisedPlan(5);
  // Loop markers and activation (the bits CollectDeps tests on every
  // edge), a Send without its id and a RecvNotify with a notify id.
  plan.model.node(NodeId(3)).type = "NextIteration";
  plan.model.node(NodeId(4)).type = "Enter";
  plan.model.node(NodeId(5)).type = "RefEnter";
  plan.model.node(NodeId(6)).type = "StreamSwitch";
  plan.model.node(NodeId(7)).type = "StreamActive";
  plan.model.node(NodeId(8)).type = "LoopCond";
  Node* send = nullptr;
  for (size_t i = 0; i < plan.model.num_nodes() && send == nullptr; ++i) {
    Node& n = plan.model.node(NodeId(static_cast<int32_t>(i)));
    if (n.type == "Send") send = &n;
  }
  ASSERT_NE(send, nullptr);
  send->attrs.erase("event_id");
  Node notify = *send;
  notify.name = "recv_notify";
  notify.type = "RecvNotify";
  notify.attrs["notify_id"] = int64_t{7};
  plan.model.AddNode(kRootGraph, std::move(notify));
  const NodeTypes types(plan.model);
  EXPECT_TRUE(types.any(NodeTypes::kLoopMarker));
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    const NodeId id(static_cast<int32_t>(i));
    const Node& n = plan.model.node(id);
    SCOPED_TRACE(n.name);
    EXPECT_EQ(types.is(id, NodeTypes::kSend), n.type == "Send" || n.type == "SendNotify");
    EXPECT_EQ(types.is(id, NodeTypes::kRecv), n.type == "Recv" || n.type == "RecvNotify");
    EXPECT_EQ(types.sync(id), IsSyncNode(n));
    const bool enter = n.type == "Enter" || n.type == "RefEnter";
    EXPECT_EQ(types.is(id, NodeTypes::kEnter), enter);
    EXPECT_EQ(types.is(id, NodeTypes::kStreamSwitch), n.type == "StreamSwitch");
    EXPECT_EQ(types.is(id, NodeTypes::kStreamActive), n.type == "StreamActive");
    EXPECT_EQ(types.is(id, NodeTypes::kLoopMarker), enter || n.type == "StreamSwitch" ||
                                                        n.type == "NextIteration" ||
                                                        n.type == "LoopCond");
    const bool notifies = n.type == "SendNotify" || n.type == "RecvNotify";
    EXPECT_EQ(types.is(id, NodeTypes::kNotify), notifies);
    const std::optional<int64_t> want =
        IsSyncNode(n) ? GetIntAttr(n.attrs, notifies ? "notify_id" : "event_id") : std::nullopt;
    EXPECT_EQ(types.sync_id(id), want);
  }
  EXPECT_EQ(types.sync_id(plan.model.FindNode("recv_notify")), std::optional<int64_t>(7));
}

TEST(SyncViewFlagsTest, AnswerAsTheNodesTypesDo) {
  Plan plan = MaterialisedPlan(5);
  // Types of every length the kSync test tells apart first (4 and 10
  // bytes), beside the Send/Recv nodes the plan already has.
  const char* const kTypes[] = {"Send",  "Recv",        "SendNotify", "RecvNotify",
                                "Cast",  "Enter",       "RefEnter",   "StreamSwitch",
                                "Sendx", "RecvNotifyX", "Conv2DTran", "Add"};
  ASSERT_GE(plan.model.num_nodes(), std::size(kTypes) + 3);
  for (size_t i = 0; i < std::size(kTypes); ++i)
    plan.model.node(NodeId(static_cast<int32_t>(i + 3))).type = kTypes[i];
  for (const bool physical : {false, true}) {
    const SyncView view(plan, physical);
    for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
      const NodeId id(static_cast<int32_t>(i));
      const Node& n = plan.model.node(id);
      SCOPED_TRACE(n.type);
      EXPECT_EQ(view.has_flag(id, SyncView::kSync), IsSyncNode(n));
      EXPECT_EQ(view.has_flag(id, SyncView::kEnter), n.type == "Enter" || n.type == "RefEnter");
      EXPECT_EQ(view.has_flag(id, SyncView::kStreamSwitch), n.type == "StreamSwitch");
      EXPECT_EQ(view.has_flag(id, SyncView::kHasAttrs), !n.attrs.empty());
    }
  }
}

// The view's per-stream slot lists and positions against the order itself:
// a root order that is a random permutation of the nodes (the lists then
// come from a pass in node-id order), and one that leaves a node out.
TEST(SyncViewListsTest, FollowTheExecutionOrderWhateverTheNodeIds) {
  for (uint32_t seed = 0; seed < 6; ++seed) {
    Plan plan = MaterialisedPlan(seed);
    std::mt19937 rng(seed);
    std::vector<NodeId>& root = plan.model.graph(kRootGraph).nodes;
    std::shuffle(root.begin(), root.end(), rng);
    if (seed % 2 == 1) root.erase(root.begin() + static_cast<std::ptrdiff_t>(rng() % root.size()));
    for (const bool physical : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " physical " << physical);
      const SyncView view(plan, physical);
      std::map<int64_t, std::vector<int32_t>> want;  // stream → slots in execution order
      for (int32_t slot : view.slot_order()) {
        if (view.stream(slot) >= 0) want[view.stream(slot)].push_back(slot);
      }
      for (int64_t s = 0; s < view.num_streams(); ++s) {
        const auto got = view.stream_slots(s);
        const std::vector<int32_t>& w = want[s];
        ASSERT_EQ(std::vector<int32_t>(got.begin(), got.end()), w) << "stream " << s;
        for (size_t p = 0; p < w.size(); ++p) EXPECT_EQ(view.pos(w[p]), static_cast<int32_t>(p));
      }
      for (const auto& [s, slots] : want) EXPECT_LT(s, view.num_streams());
    }
  }
}

TEST(VerificationTest, BuildsEachViewOnceAsTheCheckAloneWould) {
  const Plan plan = MaterialisedPlan(4);
  Verification run(plan);
  const SyncView& logical = run.View(false);
  EXPECT_EQ(&run.View(false), &logical);
  const SyncView alone(plan, false);
  ASSERT_EQ(logical.num_slots(), alone.num_slots());
  ASSERT_EQ(logical.num_streams(), alone.num_streams());
  for (size_t s = 0; s < alone.num_slots(); ++s) {
    const int32_t slot = static_cast<int32_t>(s);
    EXPECT_EQ(logical.stream(slot), alone.stream(slot));
    EXPECT_EQ(logical.pos(slot), alone.pos(slot));
    EXPECT_EQ(logical.rank(slot), alone.rank(slot));
  }
  const ActivationInfo& act = run.Activation(false);
  EXPECT_EQ(&run.Activation(false), &act);
  EXPECT_EQ(act.activated, ComputeActivation(plan.model, alone).activated);
  EXPECT_EQ(&run.SyncNodes(), &run.SyncNodes());
  EXPECT_EQ(&run.Types(), &run.Types());
  EXPECT_EQ(run.DynamicGraphs(), DynamicPathGraphs(plan));
}

}  // namespace
}  // namespace npuplan::verify
