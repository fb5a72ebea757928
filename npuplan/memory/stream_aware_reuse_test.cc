#include "npuplan/verify/stream_aware_reuse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

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

// StreamAwareReuse::Conflicts recomputed from its definition by brute force:
// every count from the buffer pairs, every round from scratch.
class ReferenceConflicts {
 public:
  ReferenceConflicts(const TensorLifetimes& lt, const StreamAwareReuse& reuse,
                     const std::vector<int>& pool)
      : lt_(lt),
        hb_(reuse.happens_before()),
        pool_(pool),
        n_(pool.size()),
        k_(static_cast<size_t>(hb_.num_lanes())),
        nodes_(k_),
        release_(reuse.SweepInput(pool, 512)) {
    for (NodeId v : lt.order) {
      if (hb_.lane(v) >= 0 && hb_.lane_pos(v) >= 0) nodes_[hb_.lane(v)].push_back(v);
    }
    last_.assign(n_, std::vector<int32_t>(k_, -1));
    meet_.assign(n_, std::vector<int32_t>(k_, std::numeric_limits<int32_t>::max()));
    first_.assign(n_, std::vector<int64_t>(k_, -1));
    for (size_t i = 0; i < n_; ++i) {
      for (NodeId u : B(i).uses) {
        const size_t s = static_cast<size_t>(hb_.lane(u));
        last_[i][s] = std::max(last_[i][s], hb_.lane_pos(u));
        for (size_t t = 0; t < k_; ++t) meet_[i][t] = std::min(meet_[i][t], hb_.clock(u)[t]);
        const int64_t p = lt.position[u.index()];
        if (p >= 0 && (first_[i][s] < 0 || p < first_[i][s])) first_[i][s] = p;
      }
    }
  }

  StreamAwareReuse::PlanningConflicts Run(int64_t limit) {
    out_ = {};
    up_.assign(n_, 0);
    low_.assign(n_, 0);
    for (size_t i = 0; i < n_; ++i) {
      out_.lower.push_back(B(i).lower);
      out_.upper.push_back(B(i).upper);
      if (B(i).size == 0) continue;
      if (!B(i).pinned.empty() || B(i).uses.empty()) out_.lower[i] = 0;
      if (!CanPrecede(i)) out_.upper[i] = std::max(out_.upper[i], lt_.num_steps);
    }
    for (int round = 0; round < 24; ++round) {
      std::vector<int64_t> fwd(n_, 0), back(n_, 0), release(n_, 0);
      int64_t most = 0;
      for (size_t i = 0; i < n_; ++i) {
        if (CanPrecede(i) && !up_[i]) release[i] = Forward(i, fwd[i]);
        if (CanFollow(i) && !low_[i]) back[i] = Backward(i);
        most = std::max({most, fwd[i], back[i]});
      }
      if (most <= limit) break;
      const int64_t threshold = std::max(limit + 1, most / 2);
      for (size_t i = 0; i < n_; ++i) {
        if (fwd[i] >= threshold && fwd[i] >= back[i]) {
          if (release[i] > out_.upper[i]) out_.upper[i] = release[i], up_[i] = 1;
        } else if (back[i] >= threshold && Acquire(i) < out_.lower[i]) {
          out_.lower[i] = Acquire(i), low_[i] = 1;
        }
      }
    }
    for (size_t i = 0; i < n_; ++i) {
      int64_t count = 0;
      if (!CanPrecede(i) || up_[i]) continue;
      const int64_t e = Forward(i, count);
      if (count > limit && e > out_.upper[i]) out_.upper[i] = e, up_[i] = 1;
      if (count == 0 || count > limit) continue;
      for (size_t j = 0; j < n_; ++j) {
        if (j == i || !Follows(j) || B(j).lower < out_.upper[i]) continue;
        for (size_t t = 0; t < k_; ++t) {
          if (first_[j][t] >= out_.upper[i] && first_[j][t] < Release(i, t)) {
            out_.pairs.emplace_back(std::min(i, j), std::max(i, j));
            break;
          }
        }
      }
    }
    for (size_t i = 0; i < n_; ++i) out_.extended += up_[i] || low_[i] ? 1 : 0;
    std::sort(out_.pairs.begin(), out_.pairs.end());
    out_.pairs.erase(std::unique(out_.pairs.begin(), out_.pairs.end()), out_.pairs.end());
    return out_;
  }

 private:
  const LogicalBuffer& B(size_t i) const { return lt_.buffers[pool_[i]]; }
  bool CanFollow(size_t i) const {
    return B(i).size > 0 && B(i).pinned.empty() && !B(i).uses.empty();
  }
  bool CanPrecede(size_t i) const { return CanFollow(i) && !B(i).live_to_end; }
  bool Follows(size_t j) const { return CanFollow(j) && !low_[j]; }
  int64_t Release(size_t i, size_t t) const { return release_[i].release[t]; }
  // Later buffers whose first use on some stream comes before a's release there.
  int64_t Forward(size_t i, int64_t& count) const {
    count = 0;
    int64_t e = out_.upper[i];
    for (size_t t = 0; t < k_; ++t) {
      int64_t last_first = -1;
      for (size_t j = 0; j < n_; ++j) {
        if (!Follows(j) || first_[j][t] < 0) continue;
        last_first = std::max(last_first, first_[j][t]);
        count += first_[j][t] >= out_.upper[i] && first_[j][t] < Release(i, t) ? 1 : 0;
      }
      if (last_first >= 0) e = std::max(e, std::min(Release(i, t), last_first + 1));
    }
    return e;
  }
  // Earlier buffers with a last use on some stream that b's uses have not all seen.
  int64_t Backward(size_t b) const {
    int64_t count = 0;
    for (size_t a = 0; a < n_; ++a) {
      if (!CanPrecede(a) || up_[a] || out_.upper[a] > B(b).lower) continue;
      for (size_t t = 0; t < k_; ++t)
        count += last_[a][t] >= 0 && last_[a][t] > meet_[b][t] ? 1 : 0;
    }
    return count;
  }
  int64_t Acquire(size_t b) const {
    int64_t at = B(b).lower;
    for (size_t t = 0; t < k_; ++t) {
      const int64_t next = static_cast<int64_t>(meet_[b][t]) + 1;
      if (next >= 0 && next < static_cast<int64_t>(nodes_[t].size()))
        at = std::min(at, lt_.position[nodes_[t][static_cast<size_t>(next)].index()]);
    }
    return at;
  }

  const TensorLifetimes& lt_;
  const HappensBefore& hb_;
  const std::vector<int>& pool_;
  const size_t n_, k_;
  std::vector<std::vector<NodeId>> nodes_;
  const std::vector<SweepBuffer> release_;
  std::vector<std::vector<int32_t>> last_, meet_;
  std::vector<std::vector<int64_t>> first_;
  std::vector<char> up_, low_;
  StreamAwareReuse::PlanningConflicts out_;
};

class ConflictsReferenceTest : public ::testing::TestWithParam<int> {};

// The rounds recount only the buffers above the limit, from counts kept
// between rounds: the same widened lifetimes and pairs as recounting all.
TEST_P(ConflictsReferenceTest, MatchesBruteForceRounds) {
  const uint32_t seed = static_cast<uint32_t>(GetParam());
  Plan plan = events::testing::RandomPlan(seed, 60 + GetParam() % 90, 2 + GetParam() % 4,
                                          1 + GetParam() % 3, 8 + GetParam() % 40);
  std::mt19937 rng(seed);
  for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
    for (TensorDesc& t : plan.model.node(NodeId(static_cast<int32_t>(i))).outputs)
      t.shape = {static_cast<int64_t>(rng() % 5 == 0 ? 0 : 1 + rng() % 4096)};
  }
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  StreamAwareReuse reuse(plan.model, lt);
  std::vector<int> pool;
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    if (lt.buffers[b].planned_in_pool()) pool.push_back(static_cast<int>(b));
  }
  ReferenceConflicts reference(lt, reuse, pool);
  int64_t widened = 0;
  for (int64_t limit : {0, 1, 2, 3, 5, 8, 13, 1 << 30}) {
    const StreamAwareReuse::PlanningConflicts got = reuse.Conflicts(pool, limit);
    const StreamAwareReuse::PlanningConflicts want = reference.Run(limit);
    EXPECT_EQ(got.lower, want.lower) << "limit " << limit;
    EXPECT_EQ(got.upper, want.upper) << "limit " << limit;
    EXPECT_EQ(got.pairs, want.pairs) << "limit " << limit;
    EXPECT_EQ(got.extended, want.extended) << "limit " << limit;
    widened += want.extended;
  }
  EXPECT_GT(widened, 0) << "no round widened anything";
}

INSTANTIATE_TEST_SUITE_P(RandomDags, ConflictsReferenceTest, ::testing::Range(0, 40));

class ModelReadTest : public ::testing::TestWithParam<int> {};

// Memory planning releases the model (later passes then change it) from
// StreamAwareReuse's `model_read` callback: called once, and nothing the
// analysis answers afterwards reads the model. The callback here wipes the
// nodes' streams and edges; every answer must match an analysis of the
// intact model.
TEST_P(ModelReadTest, NothingReadsTheModelAfterTheCallback) {
  const uint32_t seed = static_cast<uint32_t>(GetParam());
  auto random_plan = [&] {
    return events::testing::RandomPlan(seed, 40 + GetParam() % 60, 2 + GetParam() % 4,
                                       1 + GetParam() % 3, 8 + GetParam() % 40);
  };
  Plan plan = random_plan(), copy = random_plan();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt_copy, ComputeTensorLifetimes(copy.model, 512));
  const StreamAwareReuse want(copy.model, lt_copy);
  int calls = 0;
  const StreamAwareReuse got(plan.model, lt, [&] {
    ++calls;
    for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
      Node& node = plan.model.node(NodeId(static_cast<int32_t>(i)));
      node.stream_id = -1;
      node.inputs.clear();
      node.control_inputs.clear();
      node.subgraphs.clear();
    }
  });
  EXPECT_EQ(calls, 1);
  std::vector<int> pool;
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    if (lt.buffers[b].planned_in_pool()) pool.push_back(static_cast<int>(b));
    for (size_t c = 0; c < lt.buffers.size(); ++c) {
      ASSERT_EQ(got.Ordered(static_cast<int>(b), static_cast<int>(c)),
                want.Ordered(static_cast<int>(b), static_cast<int>(c)));
    }
  }
  for (int64_t limit : {0, 2, 1 << 30}) {
    const StreamAwareReuse::PlanningConflicts g = got.Conflicts(pool, limit);
    const StreamAwareReuse::PlanningConflicts w = want.Conflicts(pool, limit);
    EXPECT_EQ(g.lower, w.lower);
    EXPECT_EQ(g.upper, w.upper);
    EXPECT_EQ(g.pairs, w.pairs);
  }
  const SweepBuffers gs = got.SweepInputTable(pool, 512), ws = want.SweepInputTable(pool, 512);
  EXPECT_EQ(gs.release, ws.release);
  EXPECT_EQ(gs.streams, ws.streams);
  EXPECT_EQ(gs.first_use, ws.first_use);
}

INSTANTIATE_TEST_SUITE_P(RandomDags, ModelReadTest, ::testing::Range(0, 20));

class ReleaseReferenceTest : public ::testing::TestWithParam<int> {};

// SweepInput's release times F_t(a) (searched from hints kept between
// buffers) against a scan of every stream: the plan position of the first
// node of t that is after all of a's uses in H (or a's own later node on
// t), kNever when none.
TEST_P(ReleaseReferenceTest, MatchesScanOfEveryStream) {
  const uint32_t seed = static_cast<uint32_t>(GetParam());
  Plan plan = events::testing::RandomPlan(seed, 60 + GetParam() % 140, 2 + GetParam() % 5,
                                          1 + GetParam() % 3, 8 + GetParam() % 40);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
  StreamAwareReuse reuse(plan.model, lt);
  const HappensBefore& hb = reuse.happens_before();
  std::vector<int> pool;
  for (size_t b = 0; b < lt.buffers.size(); ++b) {
    if (lt.buffers[b].planned_in_pool()) pool.push_back(static_cast<int>(b));
  }
  // Out of order too: the hints must not depend on it.
  std::vector<int> shuffled = pool;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(seed));
  const size_t k = static_cast<size_t>(hb.num_lanes());
  int64_t released = 0;
  for (const std::vector<int>* buffers : {&pool, &shuffled}) {
    const std::vector<SweepBuffer> got = reuse.SweepInput(*buffers, 512);
    for (size_t i = 0; i < buffers->size(); ++i) {
      const LogicalBuffer& x = lt.buffers[(*buffers)[i]];
      ASSERT_EQ(got[i].release.size(), k);
      if (!x.pinned.empty() || x.uses.empty() || x.live_to_end || lt.flat_loops ||
          x.iteration_loop >= 0)
        continue;
      for (size_t t = 0; t < k; ++t) {
        int64_t want = SweepBuffer::kNever;
        for (NodeId v : lt.order) {
          if (hb.lane(v) != static_cast<int64_t>(t) || hb.lane_pos(v) < 0) continue;
          bool after_all = true;
          for (NodeId u : x.uses) after_all = after_all && (u != v && hb.Before(u, v));
          if (after_all) {
            want = lt.position[v.index()];
            break;
          }
        }
        EXPECT_EQ(got[i].release[t], want)
            << "seed " << seed << " buffer " << x.name << " stream " << t;
        released += want != SweepBuffer::kNever ? 1 : 0;
      }
    }
  }
  EXPECT_GT(released, 0);
}

INSTANTIATE_TEST_SUITE_P(RandomDags, ReleaseReferenceTest, ::testing::Range(0, 30));

// PositionRanks against std::lower_bound on random ascending position lists,
// queried inside and outside [0, steps].
TEST(PositionRanksTest, MatchesLowerBound) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t steps = std::uniform_int_distribution<int64_t>(0, 60)(rng);
    std::vector<int64_t> positions;
    const int percent = std::uniform_int_distribution<int>(0, 100)(rng);
    for (int64_t p = 0; p < steps; ++p) {
      if (std::uniform_int_distribution<int>(0, 99)(rng) < percent) positions.push_back(p);
    }
    PositionRanks ranks;
    ranks.Build(positions, steps);
    for (int64_t x = -3; x <= steps + 3; ++x) {
      const auto want = std::lower_bound(positions.begin(), positions.end(), x) - positions.begin();
      EXPECT_EQ(ranks.Below(x), want) << "trial " << trial << " x " << x;
    }
    for (int64_t x : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
      const auto want = std::lower_bound(positions.begin(), positions.end(), x) - positions.begin();
      EXPECT_EQ(ranks.Below(x), want) << "trial " << trial << " x " << x;
    }
  }
  EXPECT_EQ(PositionRanks().Below(5), 0);  // never built: empty
}

// The release times of a whole pool (per-stream-pair cover tables) against
// those of one buffer at a time (too few buffers for the tables: binary
// searches from hints) on random DAGs of a few thousand nodes.
TEST(ReleaseSearchTest, TablesMatchSearches) {
  for (uint32_t seed = 0; seed < 6; ++seed) {
    Plan plan = events::testing::RandomPlan(seed, 1500 + 300 * seed, 3 + seed % 3, 1 + seed % 3,
                                            8 + seed % 20);
    NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
    StreamAwareReuse reuse(plan.model, lt);
    std::vector<int> pool;
    for (size_t b = 0; b < lt.buffers.size(); ++b) {
      if (lt.buffers[b].planned_in_pool()) pool.push_back(static_cast<int>(b));
    }
    const std::vector<SweepBuffer> all = reuse.SweepInput(pool, 512);
    int64_t released = 0;
    for (size_t i = 0; i < pool.size(); ++i) {
      const std::vector<SweepBuffer> one = reuse.SweepInput({pool[i]}, 512);
      ASSERT_EQ(one.size(), 1u);
      EXPECT_EQ(one[0].release, all[i].release) << "seed " << seed << " buffer " << i;
      for (int64_t r : all[i].release) released += r != SweepBuffer::kNever ? 1 : 0;
    }
    EXPECT_GT(released, 0) << "seed " << seed;
  }
}

// A few hundred buffers of a graph with thousands of plan steps: too few for
// ConflictRounds' rank tables (binary searches instead), against the brute
// force.
TEST(ConflictsSubsetTest, SearchesMatchBruteForce) {
  for (uint32_t seed = 0; seed < 4; ++seed) {
    Plan plan = events::testing::RandomPlan(seed, 3000, 2 + seed % 3, 1 + seed % 3, 8 + seed % 20);
    std::mt19937 rng(seed);
    for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
      for (TensorDesc& t : plan.model.node(NodeId(static_cast<int32_t>(i))).outputs)
        t.shape = {static_cast<int64_t>(rng() % 5 == 0 ? 0 : 1 + rng() % 4096)};
    }
    NPUPLAN_ASSERT_OK_AND_ASSIGN(TensorLifetimes lt, ComputeTensorLifetimes(plan.model, 512));
    StreamAwareReuse reuse(plan.model, lt);
    std::vector<int> pool;
    for (size_t b = 0; b < lt.buffers.size(); ++b) {
      if (lt.buffers[b].planned_in_pool() && rng() % 12 == 0) pool.push_back(static_cast<int>(b));
    }
    ASSERT_LT(2 * pool.size() + 1024, static_cast<size_t>(lt.num_steps) + 1) << "seed " << seed;
    ReferenceConflicts reference(lt, reuse, pool);
    for (int64_t limit : {0, 1, 3, 1 << 30}) {
      const StreamAwareReuse::PlanningConflicts got = reuse.Conflicts(pool, limit);
      const StreamAwareReuse::PlanningConflicts want = reference.Run(limit);
      EXPECT_EQ(got.lower, want.lower) << "seed " << seed << " limit " << limit;
      EXPECT_EQ(got.upper, want.upper) << "seed " << seed << " limit " << limit;
      EXPECT_EQ(got.pairs, want.pairs) << "seed " << seed << " limit " << limit;
      EXPECT_EQ(got.extended, want.extended) << "seed " << seed << " limit " << limit;
    }
  }
}

}  // namespace
}  // namespace npuplan::memory
