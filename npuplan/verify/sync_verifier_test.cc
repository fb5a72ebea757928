#include "npuplan/verify/sync_verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "npuplan/events/event_id_allocation.h"
#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/ge_order.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/ir/attached_streams.h"
#include "npuplan/plan/execution_view.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/verification.h"

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

// A plan whose else branch waits for nothing before e1 reads x: the one
// execution holding every branch orders x before e1 through the then branch
// (x → t1 → to, then stream 2's queue), but a run takes one branch, and the
// verifier checks each: when else runs, only its own wait orders x.
TEST(SyncVerifierTest, AnOrderThroughABranchNotTakenDoesNotCount) {
  Plan plan = events::testing::BranchesSharingAStream();
  ASSERT_THAT(RunPasses(plan,
                        Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization,
                               EventReuse, PhysicalStreamSplit, StreamActivation>(),
                        {}),
              IsOk());
  ASSERT_TRUE(events::testing::HasEvent(plan, "x", "p_BranchEntry_2"));
  ASSERT_THAT(VerifyHappensBefore(plan), IsOk());
  Plan racy = plan;
  auto& evs = racy.events.events;
  evs.erase(std::remove_if(evs.begin(), evs.end(),
                           [&](const SyncEvent& e) {
                             return racy.model.node(e.recv).name == "p_BranchEntry_2";
                           }),
            evs.end());
  EXPECT_THAT(VerifyHappensBefore(racy),
              StatusIs(absl::StatusCode::kInternal,
                       "verifier[happens-before]: subgraph-input dependency 'x' on stream 0 -> "
                       "'e1' on stream 2 is not ordered by same-stream order, events or stream "
                       "activation"));
}

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

// The reference for [sync-nodes]' matching of Send/Recv nodes to events: the
// counts kept in std::maps incremented in claim order (the check's earlier
// form), read from the type strings and id attributes directly. A plan
// without a dynamic path only (the dynamic-path attributes are not modelled).
absl::Status ReferenceSyncNodes(const Plan& plan) {
  const Model& m = plan.model;
  const SyncView view(plan, false);
  using Key = std::tuple<int32_t, SyncKind, int64_t, int64_t>;
  std::map<Key, int64_t> sends, recvs;
  std::map<Key, NodeId> send_named, recv_named;
  auto sync_id = [](const Node& n) {
    const bool notify = n.type == "SendNotify" || n.type == "RecvNotify";
    return GetIntAttr(n.attrs, notify ? "notify_id" : "event_id");
  };
  auto kind_of = [](const Node& n) {
    return n.type == "SendNotify" || n.type == "RecvNotify" ? SyncKind::kNotify : SyncKind::kEvent;
  };
  std::vector<bool> awaited(m.num_nodes(), false);
  int64_t send_nodes = 0, recv_nodes = 0;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const Node& n = m.nodes()[i];
    const bool is_send = n.type == "Send" || n.type == "SendNotify";
    const bool is_recv = n.type == "Recv" || n.type == "RecvNotify";
    if (!is_send && !is_recv) continue;
    if (!sync_id(n)) return absl::InternalError("no id");
    if (is_send) {
      ++send_nodes;
      if (n.control_inputs.size() != 1) return absl::InternalError("control inputs");
      const Key key{n.control_inputs[0].value, kind_of(n), *sync_id(n),
                    view.stream(static_cast<int32_t>(i))};
      ++sends[key];
      send_named.emplace(key, NodeId(static_cast<int32_t>(i)));
    } else {
      ++recv_nodes;
    }
  }
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    for (NodeId c : m.nodes()[i].control_inputs) {
      const Node& r = m.node(c);
      if (r.type != "Recv" && r.type != "RecvNotify") continue;
      const Key key{static_cast<int32_t>(i), kind_of(r), sync_id(r).value_or(-1),
                    view.stream(c.value)};
      ++recvs[key];
      recv_named.emplace(key, c);
      awaited[c.index()] = true;
    }
  }
  SendSlots send_slot(m, view);
  for (const SyncEvent& e : plan.events.events) {
    const Key sk{e.send.value, e.kind, e.id, view.stream(send_slot.ForEvent(e))};
    const Key rk{e.recv.value, e.kind, e.id, view.stream(view.slot(e.recv, e.recv_attached))};
    if (--sends[sk] < 0) return absl::InternalError(StrCat("no Send for ", e.id));
    if (--recvs[rk] < 0) return absl::InternalError(StrCat("no Recv for ", e.id));
  }
  for (const auto* table : {&sends, &recvs}) {
    for (const auto& [key, left] : *table) {
      if (left > 0) {
        return absl::InternalError(StrCat(
            m.node((table == &sends ? send_named : recv_named).at(key)).name, " matches nothing"));
      }
    }
  }
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const Node& n = m.nodes()[i];
    if ((n.type == "Recv" || n.type == "RecvNotify") && !awaited[i])
      return absl::InternalError("not awaited");
  }
  if (send_nodes != recv_nodes || send_nodes != static_cast<int64_t>(plan.events.events.size()))
    return absl::InternalError("counts");
  return absl::OkStatus();
}

// Random materialised plans, each broken in one random way (an id changed, a
// Send or Recv node moved to another stream or duplicated, a control edge
// dropped, an event removed or duplicated): [sync-nodes] accepts exactly the
// plans the reference accepts.
TEST(SyncVerifierTest, SyncNodeMatchingAgreesWithMapCountsOnRandomPlans) {
  std::mt19937 rng(99);
  int rejected = 0;
  for (uint32_t seed = 0; seed < 150; ++seed) {
    Plan plan = events::testing::RandomPlan(seed, 50, 3);
    ASSERT_THAT(
        RunPasses(plan, Passes<TaskCountAssignment, SyncEventInsertion, SyncNodeGeneration>()),
        IsOk());
    Model& m = plan.model;
    std::vector<NodeId> sync;
    for (size_t i = 0; i < m.num_nodes(); ++i) {
      if (IsSyncNode(m.nodes()[i])) sync.push_back(NodeId(static_cast<int32_t>(i)));
    }
    if (sync.empty() || plan.events.events.empty()) continue;
    Node& n = m.node(sync[rng() % sync.size()]);
    switch (seed % 6) {
      case 0:
        n.attrs["event_id"] = int64_t{GetIntAttr(n.attrs, "event_id").value_or(0) + 1};
        break;
      case 1:
        n.stream_id = (n.stream_id + 1) % 3;
        break;
      case 2: {
        Node copy = n;
        copy.name += "_copy";
        m.AddNode(n.graph, std::move(copy));
        break;
      }
      case 3:
        for (size_t i = 0; i < m.num_nodes(); ++i) {
          auto& c = m.node(NodeId(static_cast<int32_t>(i))).control_inputs;
          if (!c.empty() && rng() % 4 == 0) {
            c.pop_back();
            break;
          }
        }
        break;
      case 4:
        plan.events.events.erase(plan.events.events.begin() + rng() % plan.events.events.size());
        break;
      case 5:
        plan.events.events.push_back(plan.events.events[rng() % plan.events.events.size()]);
        break;
    }
    const absl::Status want = ReferenceSyncNodes(plan);
    const absl::Status got = VerifySyncNodes(plan);
    EXPECT_EQ(got.ok(), want.ok()) << "seed " << seed << ": " << got << " vs " << want;
    if (!want.ok()) ++rejected;
  }
  EXPECT_GT(rejected, 50);
}

// Random plans with their events, then one event removed (or none):
// [happens-before] accepts exactly when every dependency CollectDeps lists is
// reachable over same-stream order, events and activation (a breadth-first
// search per dependency, no clocks).
TEST(SyncVerifierTest, HappensBeforeAgreesWithReachabilityWhenAnEventIsRemoved) {
  std::mt19937 rng(5);
  int rejected = 0, accepted = 0;
  for (uint32_t seed = 0; seed < 120; ++seed) {
    // Some plans with more streams than one clock chunk holds (ClockPool::kChunk).
    const int streams =
        seed % 3 == 0 ? 33 + static_cast<int>(seed % 20) : 2 + static_cast<int>(seed % 5);
    Plan plan = events::testing::RandomPlan(seed, 40 + static_cast<int>(seed % 160), streams);
    ASSERT_THAT(
        RunPasses(plan, Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization>()),
        IsOk());
    if (!plan.events.events.empty() && seed % 4 != 0) {
      plan.events.events.erase(plan.events.events.begin() +
                               static_cast<std::ptrdiff_t>(rng() % plan.events.events.size()));
      events::RecountIds(plan.events);
    }
    Verification run(plan);
    const SyncView& view = run.View(false);
    const size_t n = view.num_slots();
    std::vector<std::vector<int32_t>> succ(n);
    for (int64_t s = 0; s < view.num_streams(); ++s) {
      const auto slots = view.stream_slots(s);
      for (size_t i = 0; i + 1 < slots.size(); ++i) succ[slots[i]].push_back(slots[i + 1]);
    }
    for (const SyncEvent& e : plan.events.events) {
      succ[view.slot(e.send, e.send_attached)].push_back(view.slot(e.recv, e.recv_attached));
    }
    for (const auto& [a, streams] : run.Activation(false).activated) {
      const int32_t from = view.slot(NodeId(a), -1);
      if (view.stream(from) < 0) continue;
      for (int64_t s : streams) {
        const int32_t to = view.FirstSlotAfter(s, NodeId(a));
        if (to >= 0) succ[from].push_back(to);
      }
    }
    bool want = true;
    for (const Dep& d : CollectDeps(plan, view, nullptr, run.Types(), run.DynamicGraphs())) {
      std::vector<char> seen(n, 0);
      std::vector<int32_t> todo{d.from};
      seen[d.from] = 1;
      while (!todo.empty() && !seen[d.to]) {
        const int32_t x = todo.back();
        todo.pop_back();
        for (int32_t y : succ[x]) {
          if (!seen[y]) {
            seen[y] = 1;
            todo.push_back(y);
          }
        }
      }
      want = want && seen[d.to];
    }
    const absl::Status got = VerifyHappensBefore(plan);
    EXPECT_EQ(got.ok(), want) << "seed " << seed << ": " << got;
    if (!got.ok()) {
      EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal, "dependency")) << "seed " << seed;
    }
    ++(want ? accepted : rejected);
  }
  EXPECT_GT(rejected, 20);
  EXPECT_GT(accepted, 20);
}

}  // namespace
}  // namespace npuplan::verify
