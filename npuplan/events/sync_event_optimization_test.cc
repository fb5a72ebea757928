#include "npuplan/events/sync_event_optimization.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/events/events_test_util.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/sync_verifier.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RandomPlan;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

Plan ParsePlan(const char* json) {
  auto m = ParseVerifiedGraph(json);
  EXPECT_TRUE(m.ok()) << m.status();
  return PlanFromModel(std::move(m).value());
}

std::vector<std::pair<std::string, std::string>> Pairs(const Plan& plan) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const SyncEvent& e : plan.events.events) {
    out.emplace_back(plan.model.node(e.send).name, plan.model.node(e.recv).name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

using P = std::pair<std::string, std::string>;

// GE UT: N0 sends e1→N1 and e2→N2, N1 before N2 on stream 1 → e2 removed.
constexpr char kOneSenderTwoWaiters[] = R"json({"nodes": [
  {"name": "n0", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "n1", "type": "Add", "inputs": ["n0:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
  {"name": "n2", "type": "Add", "inputs": ["n0:0", "n1:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]})json";

// GE UT: N0 e1→N2, N1 e2→N2 with N0, N1 on one stream → e1 removed (the later sender stays).
constexpr char kTwoSendersOneWaiter[] = R"json({"nodes": [
  {"name": "n0", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "n1", "type": "Add", "inputs": ["n0:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "n2", "type": "Add", "inputs": ["n0:0", "n1:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]})json";

// Three streams: a(s0) → b(s1) → c(s2) and a → c. The edge a→c is implied by
// a→b→c; GE's pairwise rules look at one (sender, receiver-stream) pair at a
// time and keep it.
constexpr char kThreeStreams[] = R"json({"nodes": [
  {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "Add", "inputs": ["a:0", "b:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]}]})json";

TEST(SyncEventOptimizationTest, GeModeKeepsFirstWaiterPerSenderAndStream) {
  Plan plan = ParsePlan(kOneSenderTwoWaiters);
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization>(),
                        {{"npuplan.eventOptimization", "ge"}}),
              IsOk());
  EXPECT_THAT(Pairs(plan), ::testing::ElementsAre(P("n0", "n1")));
  EXPECT_EQ(plan.events.counts["naive"], 2);
  EXPECT_EQ(plan.events.counts["ge"], 1);
}

TEST(SyncEventOptimizationTest, GeModeKeepsLastSenderPerStreamAndWaiter) {
  Plan plan = ParsePlan(kTwoSendersOneWaiter);
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization>(),
                        {{"npuplan.eventOptimization", "ge"}}),
              IsOk());
  EXPECT_THAT(Pairs(plan), ::testing::ElementsAre(P("n1", "n2")));
}

TEST(SyncEventOptimizationTest, ExactRemovesEventThatGeKeepsAcrossThreeStreams) {
  Plan ge = ParsePlan(kThreeStreams);
  ASSERT_THAT(RunPasses(ge, Passes<SyncEventInsertion, SyncEventOptimization>(),
                        {{"npuplan.eventOptimization", "ge"}}),
              IsOk());
  EXPECT_THAT(Pairs(ge), ::testing::ElementsAre(P("a", "b"), P("a", "c"), P("b", "c")));
  Plan exact = ParsePlan(kThreeStreams);
  RunResult r;
  ASSERT_THAT(RunPasses(exact, Passes<SyncEventInsertion, SyncEventOptimization>(), {}, &r), IsOk());
  EXPECT_THAT(Pairs(exact), ::testing::ElementsAre(P("a", "b"), P("b", "c")));
  EXPECT_EQ(exact.events.counts["exact"], 2);
  EXPECT_EQ(exact.events.counts["ge"], 3);
  EXPECT_EQ(exact.events.counts["naive"], 3);
  auto removed = r.log.WithKeyword("EventRemoved");
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0]->ToLine(), "[sync-event-optimization] EventRemoved event=1 from=a to=c reason=transitive");
}

TEST(SyncEventOptimizationTest, NoneModeKeepsEveryEvent) {
  Plan plan = ParsePlan(kThreeStreams);
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization>(),
                        {{"npuplan.eventOptimization", "none"}}),
              IsOk());
  EXPECT_EQ(plan.events.events.size(), 3u);
}

TEST(SyncEventOptimizationTest, VerifierRejectsMissingEvent) {
  Plan plan = ParsePlan(kThreeStreams);
  ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization>()), IsOk());
  plan.events.events.erase(plan.events.events.begin());
  events::RecountIds(plan.events);
  EXPECT_THAT(verify::VerifyHappensBefore(plan),
              StatusIs(absl::StatusCode::kInternal, "verifier[happens-before]"));
}

// Chains a0→…→a(m-1) on stream 1 and b0→…→b(m-1) on stream 2, every node
// read by v on stream 0: 2m candidate events into v.
Plan TwoChainsIntoOneWaiter(int m) {
  Model model;
  std::vector<NodeId> a, b;
  for (int i = 0; i < m; ++i) {
    a.push_back(model.AddNode(kRootGraph, events::testing::Op(StrCat("a", i), 1, i > 0 ? a.back() : NodeId())));
    b.push_back(model.AddNode(kRootGraph, events::testing::Op(StrCat("b", i), 2, i > 0 ? b.back() : NodeId())));
  }
  Node v = events::testing::Op("v", 0);
  for (int i = 0; i < m; ++i) {
    v.inputs.push_back({a[i], 0});
    v.inputs.push_back({b[i], 0});
  }
  model.AddNode(kRootGraph, std::move(v));
  RenumberTopoIds(model);
  return PlanFromModel(std::move(model));
}

// Two chains a0→…→a(m-1) on stream 1 and b0→…→b(m-1) on stream 2, every
// node of both feeding v on stream 0: only the last of each chain needs an
// event. v has 2m predecessors: m = 3 takes the pairwise coverage test, m = 12
// the per-stream best / second-best one (more than 16 predecessors).
TEST(SyncEventOptimizationTest, ExactKeepsOnlyTheLastSenderOfEachChainIntoOneWaiter) {
  for (int m : {3, 12}) {
    Plan plan = TwoChainsIntoOneWaiter(m);
    ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion, SyncEventOptimization>()), IsOk()) << "m=" << m;
    EXPECT_EQ(plan.events.counts["naive"], 2 * m) << "m=" << m;
    EXPECT_THAT(Pairs(plan), ::testing::ElementsAre(P(StrCat("a", m - 1), "v"), P(StrCat("b", m - 1), "v")))
        << "m=" << m;
  }
}

// Two identical events (same sender, same waiter) must not cover each other:
// exact keeps one. m = 3 takes the pairwise covered test, m = 12 the
// best / second-best one.
TEST(SyncEventOptimizationTest, ExactKeepsOneOfTwoIdenticalEvents) {
  for (int m : {3, 12}) {
    Plan plan = TwoChainsIntoOneWaiter(m);
    ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk()) << "m=" << m;
    auto& evs = plan.events.events;
    const auto last_a = std::find_if(evs.begin(), evs.end(), [&](const SyncEvent& e) {
      return plan.model.node(e.send).name == StrCat("a", m - 1);
    });
    ASSERT_NE(last_a, evs.end()) << "m=" << m;
    SyncEvent copy = *last_a;
    copy.id = static_cast<int32_t>(evs.size());
    evs.push_back(copy);
    plan.events.event_count = static_cast<int64_t>(evs.size());
    ASSERT_THAT(RunPasses(plan, Passes<SyncEventOptimization>()), IsOk()) << "m=" << m;
    EXPECT_THAT(Pairs(plan), ::testing::ElementsAre(P(StrCat("a", m - 1), "v"), P(StrCat("b", m - 1), "v")))
        << "m=" << m;
  }
}

// RenumberGeOrder skips GE's sender sort when the table is already in that
// order (after insertion, and after removing events from such a table); the
// result must be what the full renumbering gives from a scrambled table.
// A run takes one branch: x → e1 (else) is not implied by x → t1 → to and
// stream 2's queue, which pass through the then branch (property seed
// 17113: the else branch's first task raced its producer). Each branch's
// ends are kept; the two events out of the branches into y are one ordering
// after the If (the later is dropped; stream-activation gates the other).
TEST(SyncEventOptimizationTest, ExactDoesNotImplyThroughABranchNotTaken) {
  Plan plan = events::testing::BranchesSharingAStream();
  RunResult r;
  ASSERT_THAT(
      RunPasses(plan, Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization>(), {},
                &r),
      IsOk());
  EXPECT_THAT(Pairs(plan),
              ::testing::ElementsAre(P("eo", "y"), P("t1", "to"), P("x", "e1"), P("x", "t1")));
  EXPECT_LE(plan.events.counts["exact"], plan.events.counts["ge"]);
}

TEST(SyncEventOptimizationTest, RenumberingATableInGeOrderMatchesTheFullRenumbering) {
  for (const char* event_mode : {"event", "notify"}) {
    Plan plan = RandomPlan(5, 400, 4, 3, 16);  // names n0…n399: name order is not execution order
    ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>(), {{"ge.event", event_mode}}), IsOk());
    ASSERT_GT(plan.events.events.size(), 100u);
    std::erase_if(plan.events.events, [](const SyncEvent& e) { return e.id % 3 == 1; });  // gaps in the ids
    Plan scrambled = plan;
    std::reverse(scrambled.events.events.begin(), scrambled.events.events.end());
    events::RenumberGeOrder(plan);       // fast path
    events::RenumberGeOrder(scrambled);  // full renumbering
    ASSERT_EQ(plan.events.events.size(), scrambled.events.events.size());
    for (size_t i = 0; i < plan.events.events.size(); ++i) {
      const SyncEvent& a = plan.events.events[i];
      const SyncEvent& b = scrambled.events.events[i];
      EXPECT_EQ(std::tie(a.id, a.kind, a.send, a.recv), std::tie(b.id, b.kind, b.send, b.recv)) << event_mode << " " << i;
    }
    EXPECT_EQ(plan.events.event_count, scrambled.events.event_count);
    EXPECT_EQ(plan.events.notify_count, scrambled.events.notify_count);
    EXPECT_EQ(plan.events.event_count + plan.events.notify_count, static_cast<int64_t>(plan.events.events.size()));
  }
}

// The ge rules walk the exact sweep's receiver lists when every main-stream
// event is in them and the table is in id order (ReceiverIndex::ge_ready),
// else they build their own CSRs: both must remove the same events for the
// same reasons. Random plans with duplicate events, receivers with more than
// 16 senders (the sorted case of the receive rule), activation lists, and —
// for the own-CSR path — StreamSwitch senders, backward events and tables
// out of id order.
TEST(SyncEventOptimizationTest, GeRulesOnTheSharedReceiverIndexMatchTheirOwnCsrs) {
  int shared = 0;
  int own = 0;
  for (uint32_t seed = 1; seed <= 48; ++seed) {
    const int n = 30 + static_cast<int>(seed * 53 % 400);
    const int k = 2 + static_cast<int>(seed % 6);
    Plan plan = RandomPlan(seed, n, k, 1 + static_cast<int>(seed % 4), 4 + static_cast<int>(seed % 40));
    std::mt19937 rng(seed * 131);
    for (size_t i = 1; i < plan.model.num_nodes(); ++i) {
      Node& node = plan.model.node(NodeId(static_cast<int32_t>(i)));
      const uint32_t r = rng() % 100;
      if (r < 3 && seed % 4 == 0) {
        node.type = "StreamSwitch";
      } else if (r < 6) {
        node.attrs["active_stream_list"] = AttrValue::IntList{static_cast<int64_t>(rng() % k)};
      }
    }
    ASSERT_THAT(RunPasses(plan, Passes<SyncEventInsertion>()), IsOk()) << "seed " << seed;
    auto& evs = plan.events.events;
    ASSERT_FALSE(evs.empty()) << "seed " << seed;
    // Extra events per sender: duplicates, a receiver with 24 senders, a
    // sender with 20 receivers (more than the rules compare pairwise).
    const int32_t num = static_cast<int32_t>(plan.model.num_nodes());
    std::map<NodeId, std::vector<NodeId>> extra;
    for (int d = 0; d < 5; ++d) {
      const SyncEvent& e = evs[rng() % evs.size()];
      extra[e.send].push_back(e.recv);
    }
    const NodeId last(num - 1);
    for (int d = 0; d < 24; ++d) extra[NodeId(static_cast<int32_t>(rng() % (num - 1)))].push_back(last);
    const NodeId wide(static_cast<int32_t>(rng() % (num / 2)));
    for (int d = 0; d < 20; ++d) extra[wide].push_back(NodeId(wide.value + 1 + static_cast<int32_t>(rng() % (num - 1 - wide.value))));
    auto event = [](NodeId send, NodeId recv) {
      SyncEvent e;
      e.send = send;
      e.recv = recv;
      e.reason = SyncReason::kDataEdge;
      return e;
    };
    decltype(plan.events.events) table;
    if (seed % 2 == 1) {
      // Inside each sender's run (the order insertion gives): the shared path.
      for (size_t i = 0; i < evs.size(); ++i) {
        table.push_back(evs[i]);
        if (i + 1 < evs.size() && evs[i + 1].send == evs[i].send) continue;
        for (NodeId r : extra[evs[i].send]) table.push_back(event(evs[i].send, r));
        extra.erase(evs[i].send);
      }
      for (const auto& [send, recvs] : extra) {
        for (NodeId r : recvs) table.push_back(event(send, r));
      }
    } else {
      // After the runs (a sender's events in two places), and some backward
      // or out of id order: the own-CSR path.
      table = evs;
      for (const auto& [send, recvs] : extra) {
        for (NodeId r : recvs) table.push_back(seed % 3 == 0 ? event(r, send) : event(send, r));
      }
    }
    for (size_t i = 0; i < table.size(); ++i) table[i].id = static_cast<int32_t>(i);
    if (seed % 5 == 0) std::swap(table[0], table[table.size() / 2]);
    evs = std::move(table);
    plan.events.event_count = static_cast<int64_t>(evs.size());
    events::SyncView view(plan, false);
    events::ActivationInfo act = events::ComputeActivation(plan.model, view);
    events::ReceiverIndex index = events::BuildReceiverIndex(plan, view, act);
    ++(index.ge_ready ? shared : own);
    const BigVector<events::Removal> with_index = events::GeReduction(plan, view, act, &index);
    const BigVector<events::Removal> without = events::GeReduction(plan, view, act);
    ASSERT_EQ(with_index.size(), without.size());
    for (size_t i = 0; i < without.size(); ++i) {
      EXPECT_EQ(events::RemovalName(with_index[i]), events::RemovalName(without[i])) << "seed " << seed << " event " << i;
    }
  }
  EXPECT_GT(shared, 10);  // both paths are exercised
  EXPECT_GT(own, 10);
}

// Property: on random DAGs with random stream assignments exact ≤ ge ≤ naive,
// the verifier accepts both, and every event of exact is necessary.
class RandomDagTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(RandomDagTest, ExactIsMinimalAndNeverAboveGe) {
  auto [seed, k] = GetParam();
  Plan exact = RandomPlan(static_cast<uint32_t>(seed), 120, k, 3, 16);
  Plan ge = exact;
  ASSERT_THAT(RunPasses(exact, Passes<SyncEventInsertion, SyncEventOptimization>()), IsOk());
  ASSERT_THAT(RunPasses(ge, Passes<SyncEventInsertion, SyncEventOptimization>(),
                        {{"npuplan.eventOptimization", "ge"}}),
              IsOk());
  const auto& c = exact.events.counts;
  EXPECT_LE(c.at("exact"), c.at("ge"));
  EXPECT_LE(c.at("ge"), c.at("naive"));
  EXPECT_EQ(static_cast<int64_t>(exact.events.events.size()), c.at("exact"));
  EXPECT_EQ(static_cast<int64_t>(ge.events.events.size()), ge.events.counts.at("ge"));
  EXPECT_THAT(verify::VerifyPlan(exact), IsOk());
  EXPECT_THAT(verify::VerifyPlan(ge), IsOk());
  for (size_t i = 0; i < exact.events.events.size(); ++i) {
    Plan cut = exact;
    cut.events.events.erase(cut.events.events.begin() + static_cast<std::ptrdiff_t>(i));
    EXPECT_THAT(verify::VerifyHappensBefore(cut), StatusIs(absl::StatusCode::kInternal))
        << "event " << i << " of exact was not needed";
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomDagTest,
                         ::testing::Combine(::testing::Range(1, 9), ::testing::Values(2, 3, 5, 8)));

}  // namespace
}  // namespace npuplan
