#include "npuplan/events/event_id_allocation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "npuplan/events/event_minimization.h"
#include "npuplan/events/event_reuse.h"
#include "npuplan/events/events_test_util.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/reuse_order.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/sync_verifier.h"

namespace npuplan {
namespace {

using ::npuplan::events::testing::Passes;
using ::npuplan::events::testing::PlanFromModel;
using ::npuplan::events::testing::RandomPlan;
using ::npuplan::events::testing::RunPasses;
using ::npuplan::events::testing::RunResult;
using ::npuplan::events::testing::SplitImpliedByEvents;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

Plan ParsePlan(const char* json) {
  auto m = ParseVerifiedGraph(json);
  EXPECT_TRUE(m.ok()) << m.status();
  return PlanFromModel(std::move(m).value());
}

absl::Status Allocate(Plan& plan, std::map<std::string, std::string> options = {},
                      RunResult* result = nullptr) {
  return RunPasses(plan,
                   Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization,
                          EventReuse, PhysicalStreamSplit, StreamActivation, EventIdAllocation>(),
                   options, result);
}

// Id of the edge send → recv.
int32_t IdOf(const Plan& plan, std::string_view send, std::string_view recv) {
  for (const SyncEvent& e : plan.events.events) {
    if (plan.model.node(e.send).name == send && plan.model.node(e.recv).name == recv) return e.id;
  }
  ADD_FAILURE() << "no edge " << send << " -> " << recv;
  return -1;
}

void SetId(Plan& plan, std::string_view send, std::string_view recv, int32_t id) {
  for (SyncEvent& e : plan.events.events) {
    if (plan.model.node(e.send).name == send && plan.model.node(e.recv).name == recv) e.id = id;
  }
}

// Ping-pong a(s0) → b(s1) → c(s0) → d(s1): a→b's wait (before b) precedes
// c→d's record (after c, through b→c) and the start of its wait (after b).
constexpr char kPingPong[] = R"json({"nodes": [
  {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "Add", "inputs": ["b:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "d", "type": "Add", "inputs": ["c:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]})json";

// Two independent crossings a(s0) → b(s1) and c(s0) → d(s1): c may record
// before b has waited.
constexpr char kTwoCrossings[] = R"json({"nodes": [
  {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "d", "type": "Add", "inputs": ["c:0", "b:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]})json";

// As kPingPong, but d opens stream 2: its wait is pending from the start, so
// it could take a→b's record although c records after b.
constexpr char kWaitFromTheStart[] = R"json({"nodes": [
  {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "Add", "inputs": ["b:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "d", "type": "Add", "inputs": ["c:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]}]})json";

TEST(EventIdAllocationTest, EdgesOrderedWaitBeforeRecordShareAnId) {
  Plan plan = ParsePlan(kPingPong);
  RunResult r;
  ASSERT_THAT(Allocate(plan, {}, &r), IsOk());
  ASSERT_EQ(plan.events.events.size(), 3u);
  EXPECT_EQ(IdOf(plan, "a", "b"), IdOf(plan, "c", "d"));
  EXPECT_NE(IdOf(plan, "a", "b"), IdOf(plan, "b", "c"));
  EXPECT_EQ(plan.events.event_count, 2);
  EXPECT_EQ(plan.events.counts.at("device_event_ids"), 2);
  EXPECT_EQ(plan.events.counts.at("device_event_ids_exact"), 1);
  EXPECT_EQ(r.log.WithKeyword("EventIdsAllocated").size(), 1u);
}

TEST(EventIdAllocationTest, OverlappingEdgesNeverShare) {
  Plan plan = ParsePlan(kTwoCrossings);
  ASSERT_THAT(Allocate(plan), IsOk());
  ASSERT_EQ(plan.events.events.size(), 2u);
  EXPECT_NE(IdOf(plan, "a", "b"), IdOf(plan, "c", "d"));
  // The overlap bound sees one execution order, where b's wait comes before
  // c's record: it proves only 1 here; the matching proves 2.
  EXPECT_EQ(plan.events.counts.at("device_event_ids_lower_bound"), 1);
  EXPECT_EQ(plan.events.counts.at("device_event_ids_exact"), 1);
}

TEST(EventIdAllocationTest, AWaitPendingFromItsStreamsStartNeverReusesAnId) {
  Plan plan = ParsePlan(kWaitFromTheStart);
  ASSERT_THAT(Allocate(plan), IsOk());
  ASSERT_EQ(plan.events.events.size(), 3u);
  EXPECT_EQ(plan.events.event_count, 3);
}

TEST(EventIdAllocationTest, NoneModeGivesEveryEdgeItsOwnIdAndReportsTheBound) {
  Plan plan = ParsePlan(kPingPong);
  ASSERT_THAT(Allocate(plan, {{"npuplan.eventIdReuse", "none"}}), IsOk());
  EXPECT_EQ(plan.events.event_count, 3);
  EXPECT_EQ(plan.events.counts.at("device_event_ids"), 3);
  EXPECT_EQ(plan.events.counts.at("device_event_ids_lower_bound"), 2);
}

TEST(EventIdAllocationTest, GeModesKeepGesIdsAndWriteNothing) {
  for (auto opts : std::vector<std::map<std::string, std::string>>{
           {{"npuplan.eventIdReuse", "ge"}}, {{"npuplan.eventOptimization", "ge"}}}) {
    Plan plan = ParsePlan(kPingPong);
    ASSERT_THAT(Allocate(plan, opts), IsOk());
    EXPECT_EQ(plan.events.event_count, 3);
    EXPECT_EQ(plan.events.counts.count("device_event_ids"), 0u);
  }
}

TEST(EventIdAllocationTest, MoreIdsThanTheBudgetIsResourceExhausted) {
  Plan plan = ParsePlan(kTwoCrossings);
  EXPECT_THAT(Allocate(plan, {{"npuplan.maxEventIds", "1"}}),
              StatusIs(absl::StatusCode::kResourceExhausted, "budget is 1 (npuplan.maxEventIds"));
}

TEST(EventIdAllocationTest, VerifierRejectsAHandMadeReuseOfOverlappingEdges) {
  Plan plan = ParsePlan(kTwoCrossings);
  ASSERT_THAT(Allocate(plan), IsOk());
  SetId(plan, "c", "d", IdOf(plan, "a", "b"));
  EXPECT_THAT(verify::VerifyEventIdReuse(plan),
              StatusIs(absl::StatusCode::kInternal,
                       "verifier[event-id-reuse]: event id 0 is shared by 'a' -> 'b'"));
}

TEST(EventIdAllocationTest, VerifierRejectsReuseByAWaitPendingFromItsStreamsStart) {
  Plan plan = ParsePlan(kWaitFromTheStart);
  ASSERT_THAT(Allocate(plan), IsOk());
  SetId(plan, "c", "d", IdOf(plan, "a", "b"));
  EXPECT_THAT(verify::VerifyEventIdReuse(plan),
              StatusIs(absl::StatusCode::kInternal, "is the first on its stream"));
}

TEST(EventIdAllocationTest, SendAndRecvNodesCarryTheSharedId) {
  Plan plan = ParsePlan(kPingPong);
  ASSERT_THAT(
      RunPasses(
          plan,
          Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse,
                 PhysicalStreamSplit, StreamActivation, EventIdAllocation, SyncNodeGeneration>()),
      IsOk());
  std::multiset<int64_t> send_ids;
  for (const Node& n : plan.model.nodes()) {
    if (n.type == "Send") send_ids.insert(*GetIntAttr(n.attrs, "event_id"));
  }
  EXPECT_EQ(send_ids.size(), 3u);
  EXPECT_EQ(send_ids.count(IdOf(plan, "a", "b")), 2u);
  EXPECT_THAT(verify::VerifyEventIdReuse(plan), IsOk());
}

// Contexts: root a(s0) b(s1) f(If) c(s0) d(s1); then-branch t(s3) t2(s4),
// else-branch u(s3) u2(s4); a While whose body holds w1(s3) → w2(s4) → w3(s3).
// Event table by hand: the only path from b to c runs through the then branch.
constexpr char kContexts[] = R"json({"nodes": [
  {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
  {"name": "f", "type": "If", "subgraphs": ["then", "else"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
  {"name": "loop", "type": "While", "subgraphs": ["body"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "d", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}],
 "subgraphs": [
  {"name": "then", "parent": "f", "nodes": [
    {"name": "t", "type": "Add", "attrs": {"_test_stream": 3}, "outputs": [{"shape": [1]}]},
    {"name": "t2", "type": "Add", "attrs": {"_test_stream": 4}, "outputs": [{"shape": [1]}]}]},
  {"name": "else", "parent": "f", "nodes": [
    {"name": "u", "type": "Add", "attrs": {"_test_stream": 3}, "outputs": [{"shape": [1]}]},
    {"name": "u2", "type": "Add", "attrs": {"_test_stream": 4}, "outputs": [{"shape": [1]}]}]},
  {"name": "body", "parent": "loop", "nodes": [
    {"name": "w1", "type": "Add", "attrs": {"_test_stream": 3}, "outputs": [{"shape": [1]}]},
    {"name": "w2", "type": "Add", "attrs": {"_test_stream": 4}, "outputs": [{"shape": [1]}]},
    {"name": "w3", "type": "Add", "attrs": {"_test_stream": 3}, "outputs": [{"shape": [1]}]}]}]})json";

Plan ContextPlan() {
  Plan plan = ParsePlan(kContexts);
  int32_t id = 0;
  for (auto [s, r] : std::vector<std::pair<const char*, const char*>>{{"a", "b"},
                                                                      {"b", "t"},
                                                                      {"t", "c"},
                                                                      {"c", "d"},
                                                                      {"t", "t2"},
                                                                      {"u", "u2"},
                                                                      {"w1", "w2"},
                                                                      {"w2", "w3"}}) {
    SyncEvent e;
    e.id = id++;
    e.send = plan.model.FindNode(s);
    e.recv = plan.model.FindNode(r);
    e.reason = SyncReason::kDataEdge;
    plan.events.events.push_back(e);
  }
  events::RecountIds(plan.events);
  plan.established = plan.established | IrProperty::kSyncEvents;
  return plan;
}

absl::Status RunAllocation(Plan& plan) {
  CompileOptions opts;
  DecisionLog log;
  Statistics stats;
  PassContext ctx{opts, log, stats};
  return EventIdAllocation().Run(plan, ctx).status();
}

TEST(EventIdAllocationTest, OrderThroughABranchThatMayNotRunDoesNotCount) {
  Plan plan = ContextPlan();
  ASSERT_THAT(RunAllocation(plan), IsOk());
  // b → t → c exists only when the then branch runs: a->b and c->d stay apart.
  EXPECT_NE(IdOf(plan, "a", "b"), IdOf(plan, "c", "d"));
  EXPECT_THAT(verify::VerifyEventIdReuse(plan), IsOk());
  Plan wrong = plan;
  SetId(wrong, "c", "d", IdOf(wrong, "a", "b"));
  EXPECT_THAT(verify::VerifyEventIdReuse(wrong),
              StatusIs(absl::StatusCode::kInternal, "by the slots that run whenever both run"));
}

TEST(EventIdAllocationTest, SiblingBranchesShareIdsAndLoopBodiesShareNone) {
  Plan plan = ContextPlan();
  ASSERT_THAT(RunAllocation(plan), IsOk());
  EXPECT_EQ(IdOf(plan, "t", "t2"), IdOf(plan, "u", "u2"));  // only one branch runs
  // w1→w2 and w2→w3 are ordered, but the body repeats: no sharing.
  EXPECT_NE(IdOf(plan, "w1", "w2"), IdOf(plan, "w2", "w3"));
  EXPECT_EQ(plan.events.event_count, 7);
  EXPECT_THAT(verify::VerifyEventIdReuse(plan), IsOk());
  Plan root_and_branch = plan;
  SetId(root_and_branch, "t", "t2", IdOf(root_and_branch, "a", "b"));
  EXPECT_THAT(
      verify::VerifyEventIdReuse(root_and_branch),
      StatusIs(absl::StatusCode::kInternal, "which lie in different subgraphs that can both run"));
  Plan in_loop = plan;
  SetId(in_loop, "w2", "w3", IdOf(in_loop, "w1", "w2"));
  EXPECT_THAT(verify::VerifyEventIdReuse(in_loop),
              StatusIs(absl::StatusCode::kInternal, "may run more than once"));
}

// --- Property test on random plans -----------------------------------------

// Minimum number of groups of pairwise compatible edges (brute force over
// subsets), compatibility asked of the verifier one pair at a time.
int64_t BruteForceMinimum(const Plan& base) {
  const size_t n = base.events.events.size();
  std::vector<std::vector<bool>> ok(n, std::vector<bool>(n, false));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      Plan p = base;
      for (size_t x = 0; x < n; ++x) p.events.events[x].id = static_cast<int32_t>(x);
      p.events.events[j].id = static_cast<int32_t>(i);
      ok[i][j] = ok[j][i] = verify::VerifyEventIdReuse(p).ok();
    }
  }
  const size_t full = (size_t{1} << n) - 1;
  std::vector<bool> clique(full + 1, true);
  for (size_t mask = 1; mask <= full; ++mask) {
    for (size_t i = 0; i < n && clique[mask]; ++i) {
      if (!(mask >> i & 1)) continue;
      for (size_t j = i + 1; j < n && clique[mask]; ++j) {
        if ((mask >> j & 1) && !ok[i][j]) clique[mask] = false;
      }
    }
  }
  std::vector<int64_t> best(full + 1, INT64_MAX / 2);
  best[0] = 0;
  for (size_t mask = 1; mask <= full; ++mask) {
    const size_t low = mask & (~mask + 1);
    for (size_t sub = mask; sub > 0; sub = (sub - 1) & mask) {
      if ((sub & low) && clique[sub]) best[mask] = std::min(best[mask], best[mask ^ sub] + 1);
    }
  }
  return best[full];
}

// Every events pass up to the ids, with the split events other events imply
// dropped by event-minimization first (compile's order).
absl::Status AllocateAfterMinimization(Plan& plan, std::map<std::string, std::string> options) {
  return RunPasses(
      plan,
      Passes<TaskCountAssignment, SyncEventInsertion, SyncEventOptimization, EventReuse,
             PhysicalStreamSplit, StreamActivation, EventMinimization, EventIdAllocation>(),
      options);
}

// Split events in the table, and physical-stream boundaries along the
// logical streams (each needs a split event unless others order it).
std::pair<int64_t, int64_t> SplitEventsAndBoundaries(const Plan& plan) {
  int64_t events = 0, boundaries = 0;
  for (const SyncEvent& e : plan.events.events) events += e.reason == SyncReason::kSplit;
  std::map<int64_t, int64_t> last;  // logical stream → physical stream of its last node
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    const int64_t logical = plan.model.node(NodeId(i)).stream_id;
    if (logical < 0 || i >= plan.physical_stream.size()) continue;
    auto [it, first] = last.try_emplace(logical, plan.physical_stream[i]);
    if (!first && it->second != plan.physical_stream[i]) ++boundaries;
    it->second = plan.physical_stream[i];
  }
  return {events, boundaries};
}

// A plan of one context whose split event other events imply: the reuse
// order keeps its clocks over the logical streams (the boundary is ordered
// inside the context), not one dimension per physical stream.
TEST(EventIdAllocationTest, ADroppedSplitEventKeepsTheClocksLogicalInAPlanOfOneContext) {
  Plan plan = SplitImpliedByEvents();
  ASSERT_THAT(AllocateAfterMinimization(plan, {{"npuplan.device.maxTasksPerStream", "40"}}),
              IsOk());
  ASSERT_EQ(plan.streams.split_to_logical, (std::map<int64_t, int64_t>{{2, 0}}));
  EXPECT_EQ(SplitEventsAndBoundaries(plan), std::make_pair(int64_t{0}, int64_t{1}));
  const events::SyncView view(plan, /*physical=*/false);
  const events::RunContexts contexts = events::ComputeRunContexts(plan);
  ASSERT_EQ(contexts.size(), 1u);
  const events::EdgeFacts facts = events::CollectFacts(plan, view, contexts);
  events::ReuseOrder order(plan, view, contexts, facts);
  EXPECT_EQ(order.Prepare(0), static_cast<size_t>(view.num_streams()));
  EXPECT_THAT(verify::VerifyEventIdReuse(plan), IsOk());
}

// A minimum cover: merging any two of its ids of `kind` must break it.
void ExpectEveryMergeOfTwoIdsBreaks(const Plan& min, SyncKind kind, uint32_t seed) {
  const int64_t ids = kind == SyncKind::kEvent ? min.events.event_count : min.events.notify_count;
  for (int32_t a = 0; a < ids; ++a) {
    for (int32_t b = a + 1; b < ids; ++b) {
      Plan p = min;
      for (SyncEvent& e : p.events.events) {
        if (e.kind == kind && e.id == b) e.id = a;
      }
      EXPECT_FALSE(verify::VerifyEventIdReuse(p).ok())
          << "seed " << seed << ": " << (kind == SyncKind::kEvent ? "ids " : "notify ids ") << a
          << " and " << b;
    }
  }
}

// Random plans: the min allocation is valid (verify-each), never above
// none, at most the greedy allocator's, equal to the brute-force minimum on
// small plans (including ones where the greedy allocator alone is not
// minimal), and merging any two of its ids breaks it.
TEST(EventIdAllocationPropertyTest, MinIsValidMinimalAndNeverAboveNone) {
  int brute_checked = 0, greedy_beaten = 0, shared = 0;
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    const int nodes = 6 + static_cast<int>(seed % 30);
    const int streams = 2 + static_cast<int>(seed % 5);
    std::map<std::string, std::string> opts;
    if (seed % 3 == 0) opts["npuplan.device.maxTasksPerStream"] = "40";  // splits
    Plan none = RandomPlan(seed, nodes, streams);
    Plan min = RandomPlan(seed, nodes, streams);
    Plan greedy = RandomPlan(seed, nodes, streams);
    auto none_opts = opts, greedy_opts = opts;
    none_opts["npuplan.eventIdReuse"] = "none";
    greedy_opts["npuplan.eventIdExactLimit"] = "0";
    ASSERT_THAT(Allocate(none, none_opts), IsOk()) << "seed " << seed;
    ASSERT_THAT(Allocate(min, opts), IsOk()) << "seed " << seed;
    ASSERT_THAT(Allocate(greedy, greedy_opts), IsOk()) << "seed " << seed;
    ASSERT_EQ(none.events.events.size(), min.events.events.size());
    EXPECT_EQ(none.events.event_count, static_cast<int64_t>(none.events.events.size()));
    EXPECT_LE(min.events.event_count, none.events.event_count) << "seed " << seed;
    EXPECT_LE(min.events.event_count, greedy.events.event_count) << "seed " << seed;
    EXPECT_LE(min.events.counts.at("device_event_ids_lower_bound"), min.events.event_count)
        << "seed " << seed;
    EXPECT_EQ(greedy.events.counts.at("device_event_ids_exact"),
              none.events.events.empty() ? 1 : 0);
    ASSERT_EQ(min.events.counts.at("device_event_ids_exact"), 1);
    EXPECT_THAT(verify::VerifyEventIdReuse(min), IsOk()) << "seed " << seed;
    shared += static_cast<int>(none.events.event_count - min.events.event_count);
    if (min.events.events.size() <= 13) {
      EXPECT_EQ(min.events.event_count, BruteForceMinimum(none)) << "seed " << seed;
      ++brute_checked;
      greedy_beaten += greedy.events.event_count > min.events.event_count;
    }
    ExpectEveryMergeOfTwoIdsBreaks(min, SyncKind::kEvent, seed);
  }
  EXPECT_GT(brute_checked, 150);
  EXPECT_GE(greedy_beaten, 2);  // seeds 42, 136: the augmenting phases are exercised
  EXPECT_GT(shared, 300);
}

// npuplan.eventIdExactEntries bounds the exact step's lists: a context whose
// lists would pass it keeps the greedy cover (and says it is not exact);
// under it the cover is the minimum. Either way the plan verifies.
TEST(EventIdAllocationPropertyTest, ContextsOverTheEntryLimitKeepTheGreedyCover) {
  int capped = 0, exact = 0, capped_above_min = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    const int nodes = 10 + static_cast<int>(seed % 30);
    const int streams = 2 + static_cast<int>(seed % 5);
    Plan min = RandomPlan(seed, nodes, streams);
    Plan greedy = RandomPlan(seed, nodes, streams);
    Plan limited = RandomPlan(seed, nodes, streams);
    ASSERT_THAT(Allocate(min, {}), IsOk()) << "seed " << seed;
    ASSERT_THAT(Allocate(greedy, {{"npuplan.eventIdExactLimit", "0"}}), IsOk()) << "seed " << seed;
    ASSERT_THAT(Allocate(limited, {{"npuplan.eventIdExactEntries", std::to_string(seed % 40)}}),
                IsOk())
        << "seed " << seed;
    if (min.events.events.empty()) continue;
    EXPECT_THAT(verify::VerifyEventIdReuse(limited), IsOk()) << "seed " << seed;
    if (limited.events.counts.at("device_event_ids_exact") == 1) {
      EXPECT_EQ(limited.events.event_count, min.events.event_count) << "seed " << seed;
      ++exact;
    } else {
      EXPECT_EQ(limited.events.event_count, greedy.events.event_count) << "seed " << seed;
      ++capped;
      capped_above_min += limited.events.event_count > min.events.event_count;
    }
  }
  EXPECT_GT(capped, 20);
  EXPECT_GT(exact, 20);
  EXPECT_GE(capped_above_min, 1);  // the limit did cost an id somewhere: the cover was greedy
}

// The same on plans split into many physical streams after event-minimization
// dropped the split events others imply (the clocks stay logical there): the
// allocation is accepted by the verifier, equals the brute-force minimum on
// small plans, and merging any two of its ids breaks it.
TEST(EventIdAllocationPropertyTest, MinIsValidAndMinimalAfterDroppedSplitEvents) {
  int brute_checked = 0, dropped_plans = 0;
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    const int nodes = 12 + static_cast<int>(seed % 24);
    const int streams = 2 + static_cast<int>(seed % 3);
    const std::map<std::string, std::string> opts = {
        {"npuplan.device.maxTasksPerStream", std::to_string(36 + seed % 12)}};
    Plan none = RandomPlan(seed, nodes, streams, 3, 3 + static_cast<int>(seed % 6));
    Plan min = none;
    auto none_opts = opts;
    none_opts["npuplan.eventIdReuse"] = "none";
    ASSERT_THAT(AllocateAfterMinimization(none, none_opts), IsOk()) << "seed " << seed;
    ASSERT_THAT(AllocateAfterMinimization(min, opts), IsOk()) << "seed " << seed;
    const auto [split_events, boundaries] = SplitEventsAndBoundaries(min);
    if (split_events == boundaries) continue;
    ++dropped_plans;
    EXPECT_LE(min.events.event_count, none.events.event_count) << "seed " << seed;
    ASSERT_EQ(min.events.counts.at("device_event_ids_exact"), 1) << "seed " << seed;
    EXPECT_THAT(verify::VerifyEventIdReuse(min), IsOk()) << "seed " << seed;
    if (min.events.events.size() <= 13) {
      EXPECT_EQ(min.events.event_count, BruteForceMinimum(none)) << "seed " << seed;
      ++brute_checked;
    }
    ExpectEveryMergeOfTwoIdsBreaks(min, SyncKind::kEvent, seed);
  }
  EXPECT_GT(dropped_plans, 20);
  EXPECT_GT(brute_checked, 10);
}

// The same for notify ids (ge.event=notify): min never above none, accepted by
// the verifier, and merging any two of its notify ids breaks it.
TEST(EventIdAllocationPropertyTest, MinNotifyIdsAreValidMinimalAndNeverAboveNone) {
  int shared = 0;
  for (uint32_t seed = 1; seed <= 120; ++seed) {
    const int nodes = 6 + static_cast<int>(seed % 30);
    const int streams = 2 + static_cast<int>(seed % 5);
    std::map<std::string, std::string> opts = {{"ge.event", "notify"}};
    Plan none = RandomPlan(seed, nodes, streams);
    Plan min = RandomPlan(seed, nodes, streams);
    auto none_opts = opts;
    none_opts["npuplan.eventIdReuse"] = "none";
    ASSERT_THAT(Allocate(none, none_opts), IsOk()) << "seed " << seed;
    ASSERT_THAT(Allocate(min, opts), IsOk()) << "seed " << seed;
    ASSERT_EQ(min.events.event_count, 0) << "seed " << seed;
    EXPECT_EQ(none.events.notify_count, static_cast<int64_t>(none.events.events.size()));
    EXPECT_LE(min.events.notify_count, none.events.notify_count) << "seed " << seed;
    EXPECT_THAT(verify::VerifyEventIdReuse(min), IsOk()) << "seed " << seed;
    if (min.events.events.empty()) continue;
    EXPECT_EQ(min.events.counts.at("device_notify_ids"), min.events.notify_count);
    EXPECT_LE(min.events.counts.at("device_notify_ids_lower_bound"), min.events.notify_count);
    ASSERT_EQ(min.events.counts.at("device_notify_ids_exact"), 1);
    shared += static_cast<int>(none.events.notify_count - min.events.notify_count);
    ExpectEveryMergeOfTwoIdsBreaks(min, SyncKind::kNotify, seed);
  }
  EXPECT_GT(shared, 50);
}

}  // namespace
}  // namespace npuplan
