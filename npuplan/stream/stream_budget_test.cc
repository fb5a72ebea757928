#include "npuplan/stream/stream_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "npuplan/plan/task_model.h"
#include "npuplan/stream/stream_testing.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::StreamOf;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// in → a heavy chain h1-h2 and two light chains a1-a2, b1-b2 → j.
// LoadBalance:3 gives the three chains three streams; the NetOutput shares
// the first one (its home stream, issue 22).
constexpr char kFan[] = R"json({"name": "fan", "nodes": [
  {"name": "in", "type": "Data"},
  {"name": "h1", "type": "Relu", "inputs": ["in:0"], "attrs": {"_cost": 100}},
  {"name": "h2", "type": "Relu", "inputs": ["h1:0"], "attrs": {"_cost": 100}},
  {"name": "a1", "type": "Relu", "inputs": ["in:0"], "attrs": {"_cost": 10}},
  {"name": "a2", "type": "Relu", "inputs": ["a1:0"], "attrs": {"_cost": 10}},
  {"name": "b1", "type": "Relu", "inputs": ["in:0"], "attrs": {"_cost": 10}},
  {"name": "b2", "type": "Relu", "inputs": ["b1:0"], "attrs": {"_cost": 10}},
  {"name": "j", "type": "AddN", "inputs": ["h2:0", "a2:0", "b2:0"]},
  {"name": "out", "type": "NetOutput", "inputs": ["j:0"]}]})json";

absl::Status RunBudget(Plan& plan, std::map<std::string, std::string> opts,
                       DecisionLog* log = nullptr) {
  CompileOptions options;
  for (const auto& [k, v] : opts) options.Set(k, v);
  NPUPLAN_RETURN_IF_ERROR(options.Validate());
  DecisionLog local{true};
  Statistics stats;
  PassContext ctx{options, log ? *log : local, stats};
  ctx.instrumentation.verify_each = true;
  PassPipeline p("test");
  p.AddPass<StreamBudget>();
  return p.Run(plan, ctx).status();
}

std::set<int64_t> Streams(const Plan& plan) {
  std::set<int64_t> s;
  for (const Node& n : plan.model.nodes()) {
    if (n.stream_id >= 0) s.insert(n.stream_id);
  }
  return s;
}

const std::map<std::string, std::string> kLoadBalance3 = {
    {"ge.autoMultistreamParallelMode", "LoadBalance:3"}};

TEST(StreamBudgetTest, APlanWithinTheBudgetIsUnchanged) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kFan, kLoadBalance3));
  ASSERT_EQ(plan.streams.logical, 3);
  const Plan before = plan;
  DecisionLog log{true};
  ASSERT_THAT(RunBudget(plan, {{"npuplan.maxStreams", "3"}}, &log), IsOk());
  EXPECT_EQ(plan.streams.logical, 3);
  for (const char* n : {"h1", "a1", "b1", "j"}) EXPECT_EQ(StreamOf(plan, n), StreamOf(before, n));
  EXPECT_EQ(log.WithKeyword("StreamsMerged").size(), 0u);
  EXPECT_EQ(log.WithKeyword("StreamBudget").size(), 1u);
}

TEST(StreamBudgetTest, MergesTheStreamsWhoseMergeCostsLeastUntilThePlanFits) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kFan, kLoadBalance3));
  DecisionLog log{true};
  ASSERT_THAT(RunBudget(plan, {{"npuplan.maxStreams", "2"}}, &log), IsOk());
  EXPECT_EQ(plan.streams.logical, 2);
  EXPECT_EQ(Streams(plan), (std::set<int64_t>{0, 1}));
  EXPECT_EQ(plan.streams.streams.size(), 2u);
  // The two light chains share a stream; the heavy one keeps its own.
  EXPECT_EQ(StreamOf(plan, "a1"), StreamOf(plan, "b1"));
  EXPECT_NE(StreamOf(plan, "a1"), StreamOf(plan, "h1"));
  EXPECT_EQ(log.WithKeyword("StreamsMerged").size(), 1u);
  // The auto mode's figures are recomputed for the merged streams, in one model.
  EXPECT_GT(plan.streams.makespan_lower_bound, 0);
  EXPECT_LE(plan.streams.makespan_lower_bound, plan.streams.estimated_makespan);
}

TEST(StreamBudgetTest, UserLabelledStreamsNeverMergeAndTheErrorSaysWhatForcesTheCount) {
  constexpr char kLabels[] = R"json({"name": "labels", "nodes": [
    {"name": "in", "type": "Data"},
    {"name": "x", "type": "Relu", "inputs": ["in:0"], "attrs": {"_user_stream_label": "X"}},
    {"name": "y", "type": "Relu", "inputs": ["in:0"], "attrs": {"_user_stream_label": "Y"}},
    {"name": "z", "type": "Relu", "inputs": ["in:0"], "attrs": {"_user_stream_label": "Z"}},
    {"name": "j", "type": "AddN", "inputs": ["x:0", "y:0", "z:0"]},
    {"name": "out", "type": "NetOutput", "inputs": ["j:0"]}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kLabels));
  ASSERT_EQ(plan.streams.logical, 4);
  EXPECT_THAT(RunBudget(plan, {{"npuplan.maxStreams", "2"}}),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "the plan needs at least 4 device streams but the budget is 2"));
  Plan again = plan;
  EXPECT_THAT(RunBudget(again, {{"npuplan.maxStreams", "2"}}),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "4 main streams that may not merge further (one per class: compute; 3 fixed "
                       "by a user stream label)"));
  // Three labelled streams + one that takes the unlabelled nodes: 4 fits.
  EXPECT_THAT(RunBudget(plan, {{"npuplan.maxStreams", "4"}}), IsOk());
}

TEST(StreamBudgetTest, AttachedStreamsAreRenumberedAfterTheMergedMainStreams) {
  constexpr char kAttached[] = R"json({"name": "att", "nodes": [
    {"name": "in", "type": "Data"},
    {"name": "h1", "type": "Relu", "inputs": ["in:0"], "attrs": {"_cost": 100}},
    {"name": "a1", "type": "Relu", "inputs": ["in:0"], "attrs": {"_cost": 10}},
    {"name": "b1", "type": "Relu", "inputs": ["in:0"], "attrs": {"_cost": 10,
      "_attached_stream_info_list": [{"name": "mc2", "reuse_key": "k"}]}},
    {"name": "j", "type": "AddN", "inputs": ["h1:0", "a1:0", "b1:0"]},
    {"name": "out", "type": "NetOutput", "inputs": ["j:0"]}]})json";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(kAttached, kLoadBalance3));
  ASSERT_EQ(plan.streams.attached.size(), 1u);
  const int64_t main = plan.streams.logical;
  ASSERT_GE(main, 3);
  ASSERT_THAT(RunBudget(plan, {{"npuplan.maxStreams", "3"}}),
              IsOk());  // verify-each checks the attached ids
  EXPECT_EQ(plan.streams.logical, 2);
  EXPECT_EQ(plan.streams.attached, (std::vector<int64_t>{2}));
  EXPECT_EQ(plan.model.node(plan.model.FindNode("b1")).attached_stream_ids,
            (std::vector<int64_t>{2}));
}

// EstimateStreamNeed as first written: the streams in a map, every
// producer's stream read from its node.
int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

stream::StreamNeed ReferenceStreamNeed(const Plan& plan, int64_t task_limit) {
  const Model& m = plan.model;
  stream::StreamNeed need;
  std::map<int64_t, size_t> index;
  for (const Node& n : m.nodes()) {
    if (n.stream_id >= 0) index.emplace(n.stream_id, 0);
  }
  size_t next = 0;
  for (auto& [id, i] : index) i = next++;
  need.main = index.empty() ? plan.streams.logical : static_cast<int64_t>(index.size());
  need.attached = static_cast<int64_t>(plan.streams.attached.size());
  if (task_limit <= 0 || index.empty()) return need;
  std::vector<int64_t> tasks(index.size(), 0);
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const Node& n = m.nodes()[i];
    if (n.stream_id < 0) continue;
    const size_t own = index.at(n.stream_id);
    tasks[own] = SatAdd(tasks[own], NodeTasks(n, m.engine_table));
    std::set<int32_t> producers;
    for (const OutputRef& in : n.inputs) producers.insert(in.node.value);
    for (NodeId c : n.control_inputs) producers.insert(c.value);
    for (int32_t p : producers) {
      const int64_t ps = m.node(NodeId(p)).stream_id;
      if (ps < 0 || ps == n.stream_id) continue;
      tasks[index.at(ps)] = SatAdd(tasks[index.at(ps)], 1);
      tasks[own] = SatAdd(tasks[own], 2);
    }
  }
  const int64_t cap = std::max<int64_t>(task_limit - 27, 1);
  for (int64_t t : tasks) {
    if (t == INT64_MAX) continue;
    need.split_extra = SatAdd(need.split_extra, std::max<int64_t>(0, t / cap + (t % cap != 0) - 1));
  }
  return need;
}

// Random graphs with random stream ids (holes, sparse huge ids, nodes
// without a stream, several engines, task attributes): the compact-array
// estimate equals the reference.
TEST(StreamBudgetTest, EstimateStreamNeedMatchesTheReferenceOnRandomPlans) {
  std::mt19937 rng(7);
  for (int round = 0; round < 60; ++round) {
    Plan plan;
    Model& m = plan.model;
    const int n = 1 + static_cast<int>(rng() % 200);
    const int streams = 1 + static_cast<int>(rng() % 12);
    const bool sparse = round % 5 == 4;
    for (int i = 0; i < n; ++i) {
      Node node;
      node.name = StrCat("n", i);
      const int kind = static_cast<int>(rng() % 6);
      node.type = kind == 0 ? "Recv" : kind == 1 ? "HcomAllReduce" : "Relu";
      node.engine = kind == 1 ? "DNN_HCCL" : kind == 2 ? "DNN_VM_GE_LOCAL" : "AIcoreEngine";
      if (kind == 1 && rng() % 2 == 0) node.attrs["_hccl_task_num"] = int64_t{3};
      if (rng() % 10 == 0) node.attrs["_node_sqe_num"] = static_cast<int64_t>(rng() % 5);
      for (int e = 0; i > 0 && e < static_cast<int>(rng() % 4); ++e)
        node.inputs.push_back(OutputRef{NodeId(static_cast<int32_t>(rng() % i)), 0});
      if (i > 0 && rng() % 4 == 0)
        node.control_inputs.push_back(NodeId(static_cast<int32_t>(rng() % i)));
      const int64_t s = static_cast<int64_t>(rng() % (streams + 1)) - 1;  // -1: none
      node.stream_id = s < 0 ? -1 : (sparse ? s * 1'000'000'007LL : 3 * s);
      m.AddNode(kRootGraph, std::move(node));
    }
    plan.streams.logical = streams;
    for (int64_t limit : {0, 28, 30, 40, 100000}) {
      const stream::StreamNeed got = stream::EstimateStreamNeed(plan, limit);
      const stream::StreamNeed want = ReferenceStreamNeed(plan, limit);
      EXPECT_EQ(got.main, want.main) << "round " << round << " limit " << limit;
      EXPECT_EQ(got.attached, want.attached) << "round " << round << " limit " << limit;
      EXPECT_EQ(got.split_extra, want.split_extra) << "round " << round << " limit " << limit;
    }
  }
}

// The tracker through random merges equals a fresh estimate of the plan with
// the same merges applied to its nodes.
TEST(StreamBudgetTest, StreamNeedTrackerMatchesTheEstimateThroughMerges) {
  std::mt19937 rng(11);
  int compared = 0, changed_split = 0;
  for (int round = 0; round < 60; ++round) {
    Plan plan;
    Model& m = plan.model;
    const int n = 1 + static_cast<int>(rng() % 300);
    const int streams = 2 + static_cast<int>(rng() % 14);
    for (int i = 0; i < n; ++i) {
      Node node;
      node.name = StrCat("n", i);
      const int kind = static_cast<int>(rng() % 6);
      node.type = kind == 1 ? "HcomAllReduce" : "Relu";
      node.engine = kind == 1 ? "DNN_HCCL" : "AIcoreEngine";
      if (rng() % 10 == 0) node.attrs["_node_sqe_num"] = static_cast<int64_t>(rng() % 5);
      for (int e = 0; i > 0 && e < static_cast<int>(rng() % 4); ++e)
        node.inputs.push_back(OutputRef{NodeId(static_cast<int32_t>(rng() % i)), 0});
      if (i > 0 && rng() % 4 == 0)
        node.control_inputs.push_back(NodeId(static_cast<int32_t>(rng() % i)));
      node.stream_id = static_cast<int64_t>(rng() % (streams + 1)) - 1;  // -1: none
      m.AddNode(kRootGraph, std::move(node));
    }
    plan.streams.logical = streams;
    const int64_t limit = round % 4 == 0 ? 0 : 28 + static_cast<int64_t>(rng() % 20);
    stream::StreamNeedTracker tracker(plan, limit);
    if (!tracker.exact()) continue;  // no node has a stream
    std::vector<int32_t> alive(streams);
    for (int s = 0; s < streams; ++s) alive[s] = s;
    while (alive.size() > 1) {
      const size_t i = rng() % alive.size();
      size_t j = rng() % (alive.size() - 1);
      j += j >= i;
      const int32_t into = alive[i], from = alive[j];
      const int64_t split_before = tracker.need().split_extra;
      tracker.Merge(into, from);
      alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(j));
      for (size_t v = 0; v < m.num_nodes(); ++v) {
        Node& node = m.node(NodeId(static_cast<int32_t>(v)));
        if (node.stream_id == from) node.stream_id = into;
      }
      ASSERT_TRUE(tracker.exact()) << "round " << round;
      const stream::StreamNeed want = stream::EstimateStreamNeed(plan, limit);
      EXPECT_EQ(tracker.need().main, want.main) << "round " << round;
      EXPECT_EQ(tracker.need().split_extra, want.split_extra) << "round " << round;
      EXPECT_EQ(tracker.need().total(), want.total()) << "round " << round;
      changed_split += tracker.need().split_extra != split_before;
      ++compared;
    }
  }
  EXPECT_GT(compared, 300);
  EXPECT_GT(changed_split, 50);  // merges move the split pieces, not only the main count
}

TEST(StreamBudgetTest, CountsThePiecesThePhysicalSplitWillOpen) {
  std::string nodes = R"json({"name": "n0", "type": "Data"})json";
  for (int i = 1; i <= 100; ++i) {
    nodes += StrCat(R"json(, {"name": "n)json", i, R"json(", "type": "Relu", "inputs": ["n)json",
                    i - 1, R"json(:0"]})json");
  }
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      Plan plan, CompileStreams(StrCat(R"json({"name": "chain", "nodes": [)json", nodes, "]}")));
  ASSERT_EQ(plan.streams.logical, 1);
  EXPECT_EQ(stream::EstimateStreamNeed(plan, 0).total(), 1);
  // 100 tasks, 40 - 27 = 13 per piece: 8 pieces.
  EXPECT_EQ(stream::EstimateStreamNeed(plan, 40).split_extra, 7);
  EXPECT_THAT(
      RunBudget(plan, {{"npuplan.maxStreams", "4"}, {"npuplan.device.maxTasksPerStream", "40"}}),
      StatusIs(absl::StatusCode::kResourceExhausted,
               "7 more pieces of streams the physical split divides"));
}

}  // namespace
}  // namespace npuplan

namespace npuplan {
namespace {

// LightestPairs against the search of every pair it replaces (the first pair
// in (a, b) order with the least work together, of streams of one class),
// on random works with many ties, through random merges.
TEST(LightestPairsTest, MatchesTheSearchOfEveryPairThroughMerges) {
  std::mt19937 rng(11);
  int64_t ties = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 40);
    std::vector<int64_t> work(n);
    std::vector<std::string> cls(n);
    std::vector<uint8_t> alive(n, 1);
    stream::LightestPairs light;
    for (int a = 0; a < n; ++a) {
      work[a] = static_cast<int64_t>(rng() % 6);  // few values: many ties
      cls[a] = rng() % 3 == 0 ? "engine DNN_HCCL" : "compute";
      light.Add(cls[a], a, work[a]);
    }
    while (true) {
      std::optional<std::pair<int32_t, int32_t>> want;
      int64_t least = INT64_MAX, pairs = 0, at_least = 0;
      for (int a = 0; a < n; ++a) {
        for (int b = a + 1; b < n; ++b) {
          if (!alive[a] || !alive[b] || cls[a] != cls[b]) continue;
          ++pairs;
          const int64_t w = work[a] + work[b];
          at_least += w == least ? 1 : 0;
          if (w < least) least = w, want = std::make_pair(a, b), at_least = 1;
        }
      }
      ASSERT_EQ(light.pairs(), pairs);
      ASSERT_EQ(light.Best(), want) << "trial " << trial;
      if (!want) break;
      ties += at_least > 1 ? 1 : 0;
      const auto [a, b] = *want;
      light.Remove(cls[a], a, work[a]);
      light.Remove(cls[b], b, work[b]);
      work[a] += work[b];
      light.Add(cls[a], a, work[a]);
      alive[b] = 0;
    }
  }
  EXPECT_GT(ties, 1000);  // the tie-break was exercised
}

}  // namespace
}  // namespace npuplan
