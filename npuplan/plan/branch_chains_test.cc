#include "npuplan/plan/branch_chains.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "npuplan/testing/graph_testing.h"

namespace npuplan {
namespace {

// a (s0) → p: If(then: t (s1), u (s2); else: e (s1)) → y (s1), z (s2), w (s0).
// Stream 1 runs t or e; stream 2 runs u only when then is taken.
constexpr char kIf[] = R"json({"name": "g", "nodes": [
  {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "p", "type": "If", "inputs": ["a:0", "a:0"], "subgraphs": ["then", "else"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "y", "type": "Add", "inputs": ["p:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
  {"name": "z", "type": "Add", "inputs": ["p:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]},
  {"name": "w", "type": "Add", "inputs": ["p:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}],
  "subgraphs": [
    {"name": "then", "parent": "p", "nodes": [
      {"name": "t", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]},
      {"name": "u", "type": "Add", "inputs": ["t:0"], "attrs": {"_test_stream": 2}, "outputs": [{"shape": [1]}]}]},
    {"name": "else", "parent": "p", "nodes": [
      {"name": "e", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]}]})json";

// A sweep over the slots as the happens-before sweeps run it: each slot's
// clock is its stream's state joined with the clocks of `edges` into it.
class Sweep : public ChainClocks {
 public:
  // `expect`: the edges are announced (ExpectSender) before the sweep.
  Sweep(const Plan& plan, const SyncView& view, bool expect)
      : plan_(plan),
        view_(view),
        k_(static_cast<size_t>(view.num_streams())),
        expect_(expect),
        chains_(plan.model, view, k_) {}

  void Edge(const char* from, const char* to) { edges_[Slot(to)].push_back(Slot(from)); }

  void Run() {
    for (const auto& [to, froms] : edges_) {
      for (int32_t from : froms) {
        if (expect_) chains_.ExpectSender(from, to);
      }
    }
    for (int32_t v : view_.slot_order()) {
      const int64_t s = view_.stream(v);
      if (s < 0) continue;
      const BranchChains::Source chain = chains_.Before(v, *this);
      sources_[v] = Seen{chain.slot, chain.flat ? std::vector<int32_t>(chain.flat, chain.flat + k_)
                                                : std::vector<int32_t>()};
      std::vector<int32_t> c(k_, -1);
      if (chain.slot >= 0) {
        c = clocks_.at(chain.slot);
        ++releases_[chain.slot];  // v is the chain's reader of its predecessor
      }
      if (chain.flat != nullptr) c.assign(chain.flat, chain.flat + k_);
      for (int32_t u : edges_[v]) {
        const BranchChains::Source from = chains_.Sender(u, v);
        const int32_t* w = from.slot >= 0 ? clocks_.at(from.slot).data() : from.flat;
        for (size_t x = 0; w != nullptr && x < k_; ++x) c[x] = std::max(c[x], w[x]);
      }
      c[static_cast<size_t>(s)] = view_.pos(v);
      clocks_[v] = c;
      chains_.After(v);
    }
    chains_.Finish(*this);
  }

  void Read(int32_t slot, int32_t* out) override {
    std::copy(clocks_.at(slot).begin(), clocks_.at(slot).end(), out);
  }
  void Release(int32_t slot) override { ++releases_[slot]; }

  int32_t Slot(const char* name) const { return plan_.model.FindNode(name).value; }
  const std::vector<int32_t>& ClockOf(const char* name) const { return clocks_.at(Slot(name)); }
  // What a slot's chain was when it ran (a flat state copied: it lives until After).
  struct Seen {
    int32_t slot = -1;
    std::vector<int32_t> flat;
    bool none() const { return slot < 0 && flat.empty(); }
  };
  const Seen& ChainOf(const char* name) const { return sources_.at(Slot(name)); }
  int Releases(const char* name) const {
    auto it = releases_.find(Slot(name));
    return it == releases_.end() ? 0 : it->second;
  }
  const BranchChains& chains() const { return chains_; }

 private:
  const Plan& plan_;
  const SyncView& view_;
  size_t k_;
  bool expect_;
  BranchChains chains_;
  std::map<int32_t, std::vector<int32_t>> edges_;
  std::map<int32_t, std::vector<int32_t>> clocks_;
  std::map<int32_t, Seen> sources_;
  std::map<int32_t, int> releases_;
};

// A plan of the graph `json` with its `_test_stream`s as streams.
Plan PlanOf(const char* json) {
  absl::StatusOr<Model> m = testing::ParseVerifiedGraph(json);
  EXPECT_TRUE(m.ok()) << m.status();
  Plan plan;
  plan.model = *std::move(m);
  testing::ApplyTestStreams(plan.model);
  plan.EnsureNodeVectors();
  return plan;
}

class BranchChainsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = PlanOf(kIf);
    view_.emplace(plan_, /*physical=*/false);
  }
  int32_t Pos(const char* name) const { return view_->pos(plan_.model.FindNode(name).value); }

  Plan plan_;
  std::optional<SyncView> view_;
};

TEST_F(BranchChainsTest, ScopesAreTheBranchesOfIfAndCase) {
  const BranchScopes scopes(plan_.model);
  ASSERT_TRUE(scopes.any());
  const int32_t then = scopes.of(plan_.model.FindNode("t"));
  const int32_t other = scopes.of(plan_.model.FindNode("e"));
  EXPECT_EQ(scopes.of(plan_.model.FindNode("a")), 0);
  EXPECT_NE(then, 0);
  EXPECT_NE(other, 0);
  EXPECT_NE(then, other);
  EXPECT_EQ(scopes.of(plan_.model.FindNode("u")), then);
  EXPECT_EQ(scopes.owner(then), plan_.model.FindNode("p"));
  EXPECT_EQ(scopes.branches(then), 2);
  EXPECT_EQ(scopes.depth(then), 1);
}

// The else branch's e does not follow the then branch's t on stream 1 (t
// does not run with it): it starts from the stream's state before the If,
// which covers t's position (t never runs in e's run) but holds nothing t
// knew. Without branches its chain predecessor would be t.
TEST_F(BranchChainsTest, ASlotInTheElseBranchSkipsTheThenBranchOnItsStream) {
  Sweep sweep(plan_, *view_, false);
  sweep.Edge("a", "t");  // then: t waits for a; else: e does not
  sweep.Run();
  EXPECT_TRUE(sweep.ChainOf("t").none());
  EXPECT_EQ(sweep.ChainOf("e").slot, -1) << "e must not inherit t's clock";
  ASSERT_FALSE(sweep.ChainOf("e").flat.empty());
  EXPECT_EQ(sweep.ChainOf("e").flat[1], Pos("t"));
  EXPECT_EQ(sweep.ChainOf("e").flat[0], -1);
  EXPECT_EQ(sweep.ClockOf("t")[0], Pos("a"));
  EXPECT_EQ(sweep.ClockOf("e")[0], -1);
}

// After the If a stream's state is what every branch guarantees: y (s1)
// knows a only if both t and e did. Each branch's slots on a stream are
// covered for the runs that take another branch (they do not run there).
TEST_F(BranchChainsTest, AfterTheIfTheStateIsTheMeetOverTheBranches) {
  Sweep sweep(plan_, *view_, false);
  sweep.Edge("a", "t");
  sweep.Run();
  const std::vector<int32_t>& y = sweep.ClockOf("y");
  EXPECT_EQ(y[0], -1) << "e's run does not order a before y";
  EXPECT_EQ(y[1], Pos("y"));
  ASSERT_FALSE(sweep.ChainOf("y").flat.empty());
  EXPECT_EQ(sweep.ChainOf("y").flat[1], Pos("e")) << "t and e are both covered";
  // Stream 2 runs u only in then: after the If its state covers u (when else
  // runs, u never does), so z knows u's position.
  EXPECT_EQ(sweep.ClockOf("z")[2], Pos("z"));
  ASSERT_FALSE(sweep.ChainOf("z").flat.empty());
  EXPECT_EQ(sweep.ChainOf("z").flat[2], Pos("u"));
  EXPECT_EQ(sweep.ChainOf("z").flat[0], -1) << "u knew a through t, but else knows nothing";
}

TEST_F(BranchChainsTest, EverySlotIsReadOnceByTheChain) {
  Sweep sweep(plan_, *view_, false);
  sweep.Run();
  for (const char* n : {"a", "p", "t", "u", "e", "y", "z", "w"})
    EXPECT_EQ(sweep.Releases(n), 1) << n;
  EXPECT_EQ(sweep.chains().ChainRead(view_->stream_slots(1)).size(), view_->stream_slots(1).size());
}

TEST_F(BranchChainsTest, RelationsOfTwoSlots) {
  Sweep sweep(plan_, *view_, false);
  const BranchChains& chains = sweep.chains();
  using R = BranchChains::Relation;
  EXPECT_EQ(chains.Relate(sweep.Slot("a"), sweep.Slot("t")), R::kRunsWith);
  EXPECT_EQ(chains.Relate(sweep.Slot("t"), sweep.Slot("u")), R::kRunsWith);
  EXPECT_EQ(chains.Relate(sweep.Slot("t"), sweep.Slot("e")), R::kSibling);
  EXPECT_EQ(chains.Relate(sweep.Slot("t"), sweep.Slot("y")), R::kOutOfBranch);
  EXPECT_EQ(chains.Relate(sweep.Slot("y"), sweep.Slot("t")), R::kRunsWith);
}

// An edge out of a branch gives the state of its stream after the If (a
// dynamic-path owner records after its subgraphs), standing for the If's last
// slot there; an edge between sibling branches gives nothing. An edge out of
// a branch that was not expected gives nothing either.
TEST_F(BranchChainsTest, AnEdgeOutOfABranchGivesTheStateAfterTheIf) {
  for (bool expected : {true, false}) {
    SCOPED_TRACE(expected);
    Sweep sweep(plan_, *view_, expected);
    sweep.Edge("a", "t");
    sweep.Edge("t", "w");
    sweep.Edge("t", "e");
    sweep.Run();
    EXPECT_EQ(sweep.ClockOf("e")[1], Pos("e"));
    EXPECT_EQ(sweep.ClockOf("e")[0], -1) << "the sibling edge orders nothing";
    // w (s0) after the If: t's stream 1 after the If covers t and e, but knows
    // a only in the then run.
    EXPECT_EQ(sweep.ClockOf("w")[1], expected ? Pos("e") : -1);
    EXPECT_EQ(sweep.ClockOf("w")[0], Pos("w"));
  }
}

// a (s0) → p: If(then: q: If(then: qt (s1); else: qe (s1)); else: pe (s1)) → y (s1).
constexpr char kNested[] = R"json({"name": "g", "nodes": [
  {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "p", "type": "If", "inputs": ["a:0", "a:0"], "subgraphs": ["pt", "pe_g"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
  {"name": "y", "type": "Add", "inputs": ["p:0"], "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}],
  "subgraphs": [
    {"name": "pt", "parent": "p", "nodes": [
      {"name": "q", "type": "Case", "subgraphs": ["qt_g", "qe_g"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}]},
    {"name": "qt_g", "parent": "q", "nodes": [
      {"name": "qt", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]},
    {"name": "qe_g", "parent": "q", "nodes": [
      {"name": "qe", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]},
    {"name": "pe_g", "parent": "p", "nodes": [
      {"name": "pe", "type": "Add", "attrs": {"_test_stream": 1}, "outputs": [{"shape": [1]}]}]}]})json";

// Nested branches: relations go through the lowest common scope, and a
// stream's state after the outer If is the meet over every way through.
TEST(BranchChainsNestedTest, RelationsAndStatesThroughNestedBranches) {
  const Plan plan = PlanOf(kNested);
  const SyncView view(plan, false);
  Sweep sweep(plan, view, false);
  using R = BranchChains::Relation;
  const BranchChains& chains = sweep.chains();
  EXPECT_EQ(chains.Relate(sweep.Slot("qt"), sweep.Slot("qe")), R::kSibling);
  EXPECT_EQ(chains.Relate(sweep.Slot("qt"), sweep.Slot("pe")), R::kSibling);
  EXPECT_EQ(chains.Relate(sweep.Slot("pe"), sweep.Slot("qe")), R::kSibling);
  EXPECT_EQ(chains.Relate(sweep.Slot("qt"), sweep.Slot("y")), R::kOutOfBranch);
  EXPECT_EQ(chains.Relate(sweep.Slot("q"), sweep.Slot("qt")), R::kRunsWith);
  EXPECT_EQ(chains.Relate(sweep.Slot("a"), sweep.Slot("qe")), R::kRunsWith);
  EXPECT_EQ(chains.Relate(sweep.Slot("qe"), sweep.Slot("q")), R::kOutOfBranch);
  sweep.Edge("a", "qt");
  sweep.Edge("a", "qe");
  sweep.Run();
  const int32_t pos_pe = view.pos(sweep.Slot("pe"));
  // pe follows neither qt nor qe (p's other branch), though both know a.
  EXPECT_EQ(sweep.ClockOf("pe")[0], -1);
  EXPECT_EQ(sweep.ChainOf("pe").flat.at(1), pos_pe - 1) << "qt and qe are covered";
  // After p: q's branches both knew a, pe did not.
  EXPECT_EQ(sweep.ClockOf("y")[0], -1);
  EXPECT_EQ(sweep.ChainOf("y").flat.at(1), pos_pe);
  for (const char* n : {"a", "p", "q", "qt", "qe", "pe", "y"}) EXPECT_EQ(sweep.Releases(n), 1) << n;
}

TEST(BranchChainsNoBranchTest, WithoutBranchesTheChainIsThePreviousSlot) {
  const Plan plan = PlanOf(R"json({"name": "g", "nodes": [
    {"name": "a", "type": "Add", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "inputs": ["a:0"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [1]}]}]})json");
  const SyncView view(plan, false);
  Sweep sweep(plan, view, true);
  EXPECT_FALSE(sweep.chains().active());
  ASSERT_EQ(view.stream_slots(0).size(), 2u);
  EXPECT_EQ(sweep.chains().ChainRead(view.stream_slots(0)).size(), 1u)
      << "the last slot has no reader";
  sweep.Run();
  EXPECT_EQ(sweep.ChainOf("b").slot, sweep.Slot("a"));
  EXPECT_EQ(sweep.ClockOf("b")[0], 1);
}

}  // namespace
}  // namespace npuplan
