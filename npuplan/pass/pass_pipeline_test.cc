#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "npuplan/ir/topo_sort.h"
#include "npuplan/pass/pass.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;
using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;

constexpr char kChain[] = R"json({"nodes": [
  {"name": "a", "type": "Data", "outputs": [{"shape": [1]}]},
  {"name": "b", "type": "Relu", "inputs": ["a:0"], "outputs": [{"shape": [1]}]},
  {"name": "c", "type": "NetOutput", "inputs": ["b:0"]}]})json";

// Puts every node on stream `stream_` and logs one decision per node.
class AssignAll : public Pass {
 public:
  explicit AssignAll(int64_t stream) : stream_(stream) {}
  std::string_view name() const override { return "assign-all"; }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kLogicalStreams); }
  bool preserves_structure() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override {
    for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
      Node& n = plan.model.node(NodeId(static_cast<int32_t>(i)));
      n.stream_id = stream_;
      ctx.log.Record(name(), "StreamAssigned", "", Field("node", n.name), Field("stream", stream_));
      ctx.stats.Add(name(), "nodes");
    }
    plan.streams.logical = stream_ + 1;  // what a logical-streams pass records
    return true;
  }

 private:
  int64_t stream_;
};

// Adds a control edge although it claims to preserve structure.
class SneakyRewire : public Pass {
 public:
  std::string_view name() const override { return "sneaky-rewire"; }
  bool preserves_structure() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext&) override {
    plan.model.node(plan.model.FindNode("c")).control_inputs.push_back(plan.model.FindNode("a"));
    return true;
  }
};

// Swaps two independent nodes of the root's order (still topological).
class Reorder : public Pass {
 public:
  explicit Reorder(bool declared) : declared_(declared) {}
  std::string_view name() const override { return "reorder"; }
  bool preserves_structure() const override { return true; }
  bool may_reorder() const override { return declared_; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext&) override {
    Graph& root = plan.model.root();
    for (size_t i = 0; i + 1 < root.nodes.size(); ++i) {
      const Node& next = plan.model.node(root.nodes[i + 1]);
      bool depends = false;
      for (const OutputRef& in : next.inputs) depends = depends || in.node == root.nodes[i];
      for (NodeId c : next.control_inputs) depends = depends || c == root.nodes[i];
      if (depends) continue;
      std::swap(root.nodes[i], root.nodes[i + 1]);
      RenumberTopoIds(plan.model);
      return true;
    }
    return false;
  }

 private:
  bool declared_;
};

class NeedsEvents : public Pass {
 public:
  std::string_view name() const override { return "needs-events"; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kSyncEvents); }
  absl::StatusOr<bool> Run(Plan&, PassContext&) override { return false; }
};

class Fails : public Pass {
 public:
  std::string_view name() const override { return "fails"; }
  absl::StatusOr<bool> Run(Plan&, PassContext&) override {
    return absl::InvalidArgumentError("node 'b': rule X violated");
  }
};

class PassPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = ParseVerifiedGraph(kChain);
    ASSERT_TRUE(m.ok());
    plan_.model = std::move(m).value();
    plan_.established = static_cast<IrProperties>(IrProperty::kTopoSorted);  // as Compile starts
    plan_.EnsureNodeVectors();
  }
  Plan plan_;
  CompileOptions options_;
  DecisionLog log_{/*keep=*/true};
  Statistics stats_;
};

TEST_F(PassPipelineTest, RunsNestedPipelinesAndRecordsProperties) {
  PassPipeline outer("outer");
  auto& inner = outer.AddPass<PassPipeline>("inner");
  inner.AddPass<AssignAll>(0);
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.verify_each = true;
  auto changed = outer.Run(plan_, ctx);
  ASSERT_THAT(changed, IsOk());
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(Has(plan_.established, IrProperty::kLogicalStreams));
  EXPECT_EQ(log_.WithKeyword("StreamAssigned").size(), 3u);
  EXPECT_EQ(log_.remarks()[0].ToLine(), "[assign-all] StreamAssigned node=a stream=0");
  EXPECT_EQ(stats_.Get("assign-all", "nodes"), 3);
  EXPECT_EQ(outer.Describe(), "inner(assign-all)");
}

TEST_F(PassPipelineTest, VerifyEachCatchesABrokenStageFact) {
  PassPipeline p("p");
  p.AddPass<AssignAll>(2);  // streams 0 and 1 unused: a hole
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.verify_each = true;
  EXPECT_THAT(p.Run(plan_, ctx), StatusIs(absl::StatusCode::kInternal, "(after pass 'assign-all')"));
}

TEST_F(PassPipelineTest, FrozenGraphViolationIsReported) {
  PassPipeline p("p");
  p.AddPass<SneakyRewire>();
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.verify_each = true;
  EXPECT_THAT(p.Run(plan_, ctx), StatusIs(absl::StatusCode::kInternal, "verifier[frozen-graph]"));
}

TEST_F(PassPipelineTest, ReorderingIsAllowedOnlyWhereDeclared) {
  auto m = ParseVerifiedGraph(R"json({"nodes": [
    {"name": "a", "type": "Data", "outputs": [{"shape": [1]}]},
    {"name": "d", "type": "Data", "outputs": [{"shape": [1]}]},
    {"name": "b", "type": "Add", "inputs": ["a:0", "d:0"], "outputs": [{"shape": [1]}]}]})json");
  ASSERT_TRUE(m.ok());
  plan_.model = std::move(m).value();
  plan_.EnsureNodeVectors();
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.verify_each = true;
  {
    PassPipeline p("p");
    p.AddPass<Reorder>(/*declared=*/false);
    EXPECT_THAT(p.Run(plan_, ctx), StatusIs(absl::StatusCode::kInternal, "verifier[frozen-order]: pass 'reorder'"));
  }
  const uint64_t structure = StructuralFingerprint(plan_.model), order = OrderFingerprint(plan_.model);
  PassPipeline p("p");
  p.AddPass<Reorder>(/*declared=*/true);
  EXPECT_THAT(p.Run(plan_, ctx), IsOk());
  EXPECT_EQ(StructuralFingerprint(plan_.model), structure);  // the structure fingerprint ignores the order
  EXPECT_NE(OrderFingerprint(plan_.model), order);
}

TEST_F(PassPipelineTest, MissingRequiredStageIsAFailedPrecondition) {
  PassPipeline p("p");
  p.AddPass<NeedsEvents>();
  PassContext ctx{options_, log_, stats_};
  EXPECT_THAT(p.Run(plan_, ctx), StatusIs(absl::StatusCode::kFailedPrecondition, "sync-events"));
}

TEST_F(PassPipelineTest, ErrorsNameThePass) {
  PassPipeline p("p");
  p.AddPass<Fails>();
  PassContext ctx{options_, log_, stats_};
  EXPECT_THAT(p.Run(plan_, ctx),
              StatusIs(absl::StatusCode::kInvalidArgument, "node 'b': rule X violated (after pass 'fails')"));
}

TEST_F(PassPipelineTest, AfterPassHookSeesEveryLeafPass) {
  PassPipeline p("p");
  p.AddPass<AssignAll>(0);
  p.AddPass<AssignAll>(0);
  std::vector<std::string> seen;
  PassContext ctx{options_, log_, stats_};
  ctx.instrumentation.after_pass = [&](int seq, std::string_view name, const Plan&) {
    seen.push_back(std::to_string(seq) + ":" + std::string(name));
    return absl::OkStatus();
  };
  ASSERT_THAT(p.Run(plan_, ctx), IsOk());
  EXPECT_THAT(seen, ::testing::ElementsAre("1:assign-all", "2:assign-all"));
}

// Passes alongside (pass.h). What the fake alongside pass and the passes
// after it share: the follower that releases it, and what each follower saw.
struct Overlap {
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  std::atomic<bool> alongside_done{false};
  std::atomic<bool> alongside_waited{false};  // it waited and was released
  std::thread::id alongside_thread;
  std::vector<std::string> seen;  // "<follower>:during|after", written on the calling thread
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      released = true;
    }
    cv.notify_all();
  }
  // False when nobody released it within a minute: no pass ran beside it.
  bool AwaitRelease() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::minutes(1), [&] { return released; });
  }
};

enum class Outcome { kOk, kError, kThrow };
// The fake alongside pass's partial join (PlanAccess::released): none; it
// declares the model released and calls PassContext::ReleaseParts once it
// has read it; it declares it but ends without the call (then fails, with
// kError: a pass waiting for the release must see that error first).
enum class FakeRelease { kNone, kCalls, kDeclaredOnly };

// A memory planner stand-in: reads the model, writes plan.memory, logs one
// remark per node, sets counters (one also touched by the followers), a
// stage time and a warning. With `wait`, it finishes only after a follower
// released it, which proves the follower ran meanwhile.
class FakeAlongside : public Pass {
 public:
  FakeAlongside(Overlap& o, Outcome outcome, bool wait, FakeRelease release)
      : o_(o), outcome_(outcome), wait_(wait), release_(release) {}
  std::string_view name() const override { return "fake-memory"; }
  IrProperties provided() const override {
    return static_cast<IrProperties>(IrProperty::kMemoryPlanned);
  }
  bool preserves_structure() const override { return true; }
  PlanAccess access() const override {
    return {PlanPart::kModel, PlanPart::kMemory,
            release_ == FakeRelease::kNone ? PlanParts{0} : PlanParts{PlanPart::kModel}};
  }
  bool runs_alongside() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override {
    o_.alongside_thread = std::this_thread::get_id();
    StepTimer lap;
    for (size_t i = 0; i < plan.model.num_nodes(); ++i) {
      ctx.log.Record(name(), "Placed", "", Field("node", plan.model.nodes()[i].name));
    }
    lap.Lap(ctx.stats, "fake-memory: stage");
    ctx.stats.Set(name(), "buffers", static_cast<int64_t>(plan.model.num_nodes()));
    if (release_ == FakeRelease::kDeclaredOnly && outcome_ == Outcome::kError)
      return absl::ResourceExhaustedError("no memory plan fits");
    if (release_ == FakeRelease::kCalls) ctx.ReleaseParts();  // the model is not read below
    ctx.stats.Set("shared", "counter", 10);
    if (ctx.warnings != nullptr) ctx.warnings->push_back("fake-memory: a warning");
    if (wait_) o_.alongside_waited = o_.AwaitRelease();
    plan.memory.planned = true;
    plan.memory.peak = 42;
    o_.alongside_done = true;
    if (outcome_ == Outcome::kThrow) throw std::bad_alloc();
    if (outcome_ == Outcome::kError) return absl::ResourceExhaustedError("no memory plan fits");
    return true;
  }

 private:
  Overlap& o_;
  Outcome outcome_;
  bool wait_;
  FakeRelease release_;
};

struct FollowerSpec {
  std::string name;
  PlanAccess access{kAllPlanParts & ~PlanPart::kMemory, PlanPart::kEvents};  // an events pass
  IrProperties required = 0;
  IrProperties provided = 0;
  bool preserves_structure = true;
  bool release = false;  // releases the waiting alongside pass
  bool adds_node = false;  // adds a node to the model (and the per-node vectors)
  Outcome outcome = Outcome::kOk;
};

class Follower : public Pass {
 public:
  Follower(Overlap& o, FollowerSpec spec) : o_(o), spec_(std::move(spec)) {}
  std::string_view name() const override { return spec_.name; }
  IrProperties required() const override { return spec_.required; }
  IrProperties provided() const override { return spec_.provided; }
  bool preserves_structure() const override { return spec_.preserves_structure; }
  PlanAccess access() const override { return spec_.access; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override {
    o_.seen.push_back(spec_.name + (o_.alongside_done ? ":after" : ":during"));
    if (spec_.adds_node) {
      Node n;
      n.name = spec_.name;
      n.type = "StreamActive";
      plan.model.AddNode(GraphId(0), std::move(n));
      plan.EnsureNodeVectors();
    }
    if (spec_.release) o_.Release();
    ctx.log.Record(name(), "Ran", "", Field("seq", ctx.sequence));
    ctx.stats.Add("shared", "counter", 1);
    ctx.stats.Set(name(), "runs", 1);
    if (ctx.warnings != nullptr) ctx.warnings->push_back(spec_.name + ": a warning");
    if (spec_.outcome == Outcome::kThrow) throw std::bad_alloc();
    if (spec_.outcome == Outcome::kError) return absl::InvalidArgumentError(spec_.name + " failed");
    return false;
  }

 private:
  Overlap& o_;
  FollowerSpec spec_;
};

// One run of [fake-memory, followers...]: what a caller can observe.
struct AlongsideRunResult {
  bool threw = false;
  absl::Status status;
  IrProperties established = 0;
  std::vector<std::string> lines;  // the decision log
  std::map<std::string, std::map<std::string, int64_t>> counters;
  std::vector<std::string> steps;  // timed steps in order ("part:" prefix for parts)
  std::vector<std::string> warnings;
  std::vector<std::string> seen;
  bool same_thread = false;  // fake-memory ran on the calling thread
  bool waited = false;
};

// kChain with its streams assigned: what memory-planning and the events
// passes start from.
Plan ChainWithStreams() {
  Plan plan;
  auto m = ParseVerifiedGraph(kChain);
  EXPECT_TRUE(m.ok());
  plan.model = std::move(m).value();
  plan.established = IrProperty::kTopoSorted | IrProperty::kLogicalStreams;
  plan.EnsureNodeVectors();
  return plan;
}

AlongsideRunResult RunAlongsidePipeline(Outcome alongside,
                                        const std::vector<FollowerSpec>& followers, bool threads,
                                        bool wait,
                                        std::function<void(PassContext&)> instrument = nullptr,
                                        FakeRelease release = FakeRelease::kNone) {
  AlongsideRunResult r;
  Overlap o;
  Plan plan = ChainWithStreams();
  CompileOptions options;
  if (!threads) options.Set("npuplan.passThreads", "1");
  DecisionLog log(true);
  Statistics stats;
  PassPipeline p("p");
  p.AddPass<FakeAlongside>(o, alongside, wait, release);
  for (const FollowerSpec& f : followers) p.AddPass<Follower>(o, f);
  PassContext ctx{options, log, stats};
  ctx.warnings = &r.warnings;
  if (instrument) instrument(ctx);
  try {
    r.status = p.Run(plan, ctx).status();
  } catch (const std::bad_alloc&) {
    r.threw = true;
  }
  r.established = plan.established;
  for (const Remark& rm : log.remarks()) r.lines.push_back(rm.ToLine());
  r.counters = stats.counters();
  for (const Statistics::StepTime& t : stats.times())
    r.steps.push_back((t.part ? "part:" : "") + t.step);
  r.seen = o.seen;
  r.same_thread = o.alongside_thread == std::this_thread::get_id();
  r.waited = o.alongside_waited;
  return r;
}

FollowerSpec Releasing(std::string name, Outcome outcome = Outcome::kOk) {
  FollowerSpec f;
  f.name = std::move(name);
  f.release = true;
  f.outcome = outcome;
  return f;
}
FollowerSpec Plain(std::string name, Outcome outcome = Outcome::kOk) {
  FollowerSpec f;
  f.name = std::move(name);
  f.outcome = outcome;
  return f;
}

TEST(PassAlongsideTest, RunsBesideThePassesThatKeepOffItsData) {
  AlongsideRunResult r =
      RunAlongsidePipeline(Outcome::kOk, {Releasing("f1"), Plain("f2")}, true, true);
  ASSERT_THAT(r.status, IsOk());
  EXPECT_TRUE(r.waited);
  EXPECT_FALSE(r.same_thread);
  EXPECT_EQ(r.seen.front(), "f1:during");
  EXPECT_TRUE(Has(r.established, IrProperty::kMemoryPlanned));
  // The log in pipeline order, sequence numbers as on one thread.
  EXPECT_THAT(r.lines, ::testing::ElementsAre(
                           "[fake-memory] Placed node=a", "[fake-memory] Placed node=b",
                           "[fake-memory] Placed node=c", "[f1] Ran seq=1", "[f2] Ran seq=2"));
  EXPECT_EQ(r.counters["shared"]["counter"], 12);  // Set(10) first, then two Add(1)
  EXPECT_THAT(r.steps,
              ::testing::ElementsAre("part:fake-memory: stage", "fake-memory", "f1", "f2"));
  EXPECT_THAT(r.warnings,
              ::testing::ElementsAre("fake-memory: a warning", "f1: a warning", "f2: a warning"));
}

// Each rule of pass.h that makes the pipeline wait for the alongside pass.
TEST(PassAlongsideTest, JoinsBeforeAPassThatNeedsItsResultOrChangesWhatItReads) {
  FollowerSpec requires_memory = Plain("needs-memory");
  requires_memory.required = static_cast<IrProperties>(IrProperty::kMemoryPlanned);
  FollowerSpec rewires = Plain("rewires");
  rewires.preserves_structure = false;
  FollowerSpec writes_model = Plain("writes-model");
  writes_model.access.writes = PlanPart::kModel;
  FollowerSpec reads_memory = Plain("reads-memory");
  reads_memory.access.reads = kAllPlanParts;
  FollowerSpec writes_memory = Plain("writes-memory");
  writes_memory.access = {PlanPart::kEvents, PlanPart::kMemory};
  FollowerSpec undeclared = Plain("undeclared");
  undeclared.access = PlanAccess{};
  for (const FollowerSpec& joiner :
       {requires_memory, rewires, writes_model, reads_memory, writes_memory, undeclared}) {
    SCOPED_TRACE(joiner.name);
    AlongsideRunResult r =
        RunAlongsidePipeline(Outcome::kOk, {Releasing("f1"), joiner, Plain("f3")}, true, true);
    ASSERT_THAT(r.status, IsOk());
    EXPECT_TRUE(r.waited);
    EXPECT_THAT(r.seen, ::testing::ElementsAre("f1:during", joiner.name + ":after", "f3:after"));
  }
}

// The partial join: once the alongside pass has released the model, a pass
// that adds nodes runs beside the rest of it (and only then: it is the one
// that lets the alongside pass finish); one that reads or writes what the
// alongside pass still writes joins it.
TEST(PassAlongsideTest, PassesThatNeedWhatItReleasesWaitOnlyForTheRelease) {
  FollowerSpec adds_node = Releasing("adds-node");
  adds_node.preserves_structure = false;
  adds_node.adds_node = true;
  adds_node.access.writes = PlanPart::kModel | PlanPart::kTasks | PlanPart::kPhysicalStream;
  FollowerSpec needs_memory = Plain("needs-memory");
  needs_memory.required = static_cast<IrProperties>(IrProperty::kMemoryPlanned);
  const std::vector<FollowerSpec> followers = {adds_node, Plain("f2"), needs_memory, Plain("f4")};
  AlongsideRunResult par =
      RunAlongsidePipeline(Outcome::kOk, followers, true, true, nullptr, FakeRelease::kCalls);
  ASSERT_THAT(par.status, IsOk());
  EXPECT_TRUE(par.waited);
  EXPECT_FALSE(par.same_thread);
  ASSERT_EQ(par.seen.size(), 4u);
  EXPECT_EQ(par.seen[0], "adds-node:during");
  EXPECT_EQ(par.seen[2], "needs-memory:after");
  AlongsideRunResult seq =
      RunAlongsidePipeline(Outcome::kOk, followers, false, false, nullptr, FakeRelease::kCalls);
  EXPECT_EQ(par.lines, seq.lines);
  EXPECT_EQ(par.counters, seq.counters);
  EXPECT_EQ(par.steps, seq.steps);
  EXPECT_EQ(par.warnings, seq.warnings);

  FollowerSpec reads_memory = Plain("reads-memory");
  reads_memory.access.reads = kAllPlanParts;
  FollowerSpec writes_memory = Plain("writes-memory");
  writes_memory.access = {PlanPart::kEvents, PlanPart::kMemory};
  FollowerSpec undeclared = Plain("undeclared");
  undeclared.access = PlanAccess{};
  for (const FollowerSpec& joiner : {needs_memory, reads_memory, writes_memory, undeclared}) {
    SCOPED_TRACE(joiner.name);
    AlongsideRunResult r =
        RunAlongsidePipeline(Outcome::kOk, {Releasing("f1"), joiner, Plain("f3")}, true, true,
                             nullptr, FakeRelease::kCalls);
    ASSERT_THAT(r.status, IsOk());
    EXPECT_THAT(r.seen, ::testing::ElementsAre("f1:during", joiner.name + ":after", "f3:after"));
  }
}

// A pass waiting for a release that never comes joins the alongside pass:
// after its end, and after its error, which wins as on one thread.
TEST(PassAlongsideTest, APassWaitingForTheReleaseJoinsWhenTheAlongsidePassEndsWithoutIt) {
  FollowerSpec adds_node = Plain("adds-node");
  adds_node.preserves_structure = false;
  adds_node.adds_node = true;
  adds_node.access.writes = PlanPart::kModel | PlanPart::kTasks | PlanPart::kPhysicalStream;
  AlongsideRunResult ok = RunAlongsidePipeline(Outcome::kOk, {adds_node, Plain("f2")}, true, false,
                                               nullptr, FakeRelease::kDeclaredOnly);
  ASSERT_THAT(ok.status, IsOk());
  EXPECT_THAT(ok.seen, ::testing::ElementsAre("adds-node:after", "f2:after"));
  for (const FakeRelease release : {FakeRelease::kDeclaredOnly, FakeRelease::kCalls}) {
    for (const Outcome outcome : {Outcome::kError, Outcome::kThrow}) {
      const std::vector<FollowerSpec> followers = {adds_node, Plain("f2", Outcome::kError)};
      AlongsideRunResult par =
          RunAlongsidePipeline(outcome, followers, true, false, nullptr, release);
      AlongsideRunResult seq =
          RunAlongsidePipeline(outcome, followers, false, false, nullptr, release);
      EXPECT_EQ(par.threw, seq.threw);
      EXPECT_EQ(par.threw, outcome == Outcome::kThrow);
      EXPECT_EQ(par.status, seq.status);
      EXPECT_EQ(par.lines, seq.lines);
      EXPECT_EQ(par.counters, seq.counters);
      EXPECT_EQ(par.steps, seq.steps);
      EXPECT_EQ(par.warnings, seq.warnings);
      if (release == FakeRelease::kDeclaredOnly) {
        EXPECT_TRUE(par.seen.empty());
      }
    }
  }
}

TEST(PassAlongsideTest, JoinsAtTheEndOfThePipeline) {
  AlongsideRunResult r = RunAlongsidePipeline(Outcome::kOk, {Releasing("f1")}, true, true);
  ASSERT_THAT(r.status, IsOk());
  EXPECT_THAT(r.seen, ::testing::ElementsAre("f1:during"));
  EXPECT_EQ(r.lines.size(), 4u);  // its log is in before Run returns
  EXPECT_EQ(r.counters["fake-memory"]["buffers"], 3);
}

// PassInstrumentation::before_join: before each blocking join, on the
// calling thread, what the alongside pass and the passes still to run may
// write and the stages they still add (the compile driver starts the final
// verification when that is plan.memory alone).
struct BeforeJoinCall {
  PlanParts may_still_write;
  IrProperties stages_to_come;
  bool calling_thread;
  bool memory_claimed;
  bool operator==(const BeforeJoinCall&) const = default;
};

std::vector<BeforeJoinCall> BeforeJoinCalls(const std::vector<FollowerSpec>& followers,
                                            bool threads,
                                            FakeRelease release = FakeRelease::kCalls) {
  std::vector<BeforeJoinCall> calls;
  const std::thread::id caller = std::this_thread::get_id();
  AlongsideRunResult r = RunAlongsidePipeline(
      Outcome::kOk, followers, threads, /*wait=*/false,
      [&](PassContext& ctx) {
        ctx.instrumentation.before_join = [&](const Plan& p, PlanParts writes,
                                              IrProperties stages) {
          calls.push_back({writes, stages, std::this_thread::get_id() == caller,
                           Has(p.established, IrProperty::kMemoryPlanned)});
        };
      },
      release);
  EXPECT_THAT(r.status, IsOk());
  return calls;
}

TEST(PassAlongsideTest, BeforeAJoinTheHookHearsWhatMayStillChange) {
  // At the end: the alongside pass's writes alone (it has released the model).
  EXPECT_THAT(BeforeJoinCalls({Releasing("f1"), Plain("f2")}, true),
              ::testing::ElementsAre(BeforeJoinCall{PlanPart::kMemory, 0, true, true}));
  // Before a pass that reads plan.memory: that pass's and the later passes'
  // writes too, and the stages they add.
  FollowerSpec reads_memory = Plain("reads-memory");
  reads_memory.access = {kAllPlanParts, PlanPart::kTasks};
  reads_memory.provided = static_cast<IrProperties>(IrProperty::kTasks);
  FollowerSpec last = Plain("last");
  last.access = {PlanPart::kEvents, 0};
  EXPECT_THAT(BeforeJoinCalls({Releasing("f1"), reads_memory, last}, true),
              ::testing::ElementsAre(BeforeJoinCall{PlanPart::kMemory | PlanPart::kTasks,
                                                    static_cast<IrProperties>(IrProperty::kTasks),
                                                    true, true}));
  // No alongside pass to wait for (one thread): no call.
  EXPECT_TRUE(BeforeJoinCalls({Releasing("f1")}, false).empty());
}

// A nested pipeline does not know the passes after it: it runs without the
// hook, and the outer one has no alongside pass of its own to join.
TEST(PassAlongsideTest, ANestedPipelineRunsWithoutTheHook) {
  Overlap o;
  Plan plan = ChainWithStreams();
  CompileOptions options;
  DecisionLog log(false);
  Statistics stats;
  PassPipeline outer("outer");
  PassPipeline& inner = outer.AddPass<PassPipeline>("inner");
  inner.AddPass<FakeAlongside>(o, Outcome::kOk, /*wait=*/false, FakeRelease::kNone);
  inner.AddPass<Follower>(o, Plain("f1"));
  FollowerSpec writes_model = Plain("writes-model");
  writes_model.access.writes = PlanPart::kModel;
  outer.AddPass<Follower>(o, writes_model);
  PassContext ctx{options, log, stats};
  int calls = 0;
  ctx.instrumentation.before_join = [&](const Plan&, PlanParts, IrProperties) { ++calls; };
  ASSERT_THAT(outer.Run(plan, ctx).status(), IsOk());
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(ctx.instrumentation.before_join) << "the outer context keeps its hook";
}

TEST(PassAlongsideTest, RunsOnTheCallingThreadUnderInstrumentationOrPassThreads1) {
  AlongsideRunResult one = RunAlongsidePipeline(Outcome::kOk, {Plain("f1")}, false, false);
  EXPECT_TRUE(one.same_thread);
  EXPECT_THAT(one.seen, ::testing::ElementsAre("f1:after"));
  AlongsideRunResult hooked =
      RunAlongsidePipeline(Outcome::kOk, {Plain("f1")}, true, false, [](PassContext& ctx) {
        ctx.instrumentation.after_pass = [](int, std::string_view, const Plan&) {
          return absl::OkStatus();
        };
      });
  EXPECT_TRUE(hooked.same_thread);
  EXPECT_THAT(hooked.seen, ::testing::ElementsAre("f1:after"));
}

// Whatever fails where, on two threads the caller sees what one thread
// gives: the first error in pipeline order (the alongside pass's before that
// of a pass overlapping it), the same log, counters, steps and warnings.
TEST(PassAlongsideTest, ErrorsLogsAndStatisticsAreThoseOfASequentialRun) {
  FollowerSpec needs_events = Plain("needs-events");  // may overlap, but its stage is missing
  needs_events.required = static_cast<IrProperties>(IrProperty::kSyncEvents);
  FollowerSpec needs_memory = Plain("needs-memory");
  needs_memory.required = static_cast<IrProperties>(IrProperty::kMemoryPlanned);
  FollowerSpec after_join = needs_memory;
  after_join.outcome = Outcome::kError;
  struct Case {
    std::string name;
    Outcome alongside;
    std::vector<FollowerSpec> followers;
  };
  const std::vector<Case> cases = {
      {"all-ok", Outcome::kOk, {Releasing("f1"), Plain("f2"), needs_memory, Plain("f4")}},
      {"alongside-fails", Outcome::kError, {Releasing("f1"), Plain("f2")}},
      {"both-fail", Outcome::kError, {Releasing("f1", Outcome::kError), Plain("f2")}},
      {"overlapping-fails",
       Outcome::kOk,
       {Releasing("f1"), Plain("f2", Outcome::kError), Plain("f3")}},
      {"fails-after-join", Outcome::kOk, {Releasing("f1"), after_join, Plain("f3")}},
      {"precondition", Outcome::kOk, {Releasing("f1"), needs_events, Plain("f3")}},
      {"precondition-and-alongside", Outcome::kError, {Releasing("f1"), needs_events, Plain("f3")}},
      {"overlapping-throws", Outcome::kOk, {Releasing("f1", Outcome::kThrow), Plain("f2")}},
      {"alongside-fails-overlapping-throws", Outcome::kError, {Releasing("f1", Outcome::kThrow)}},
      {"alongside-throws", Outcome::kThrow, {Releasing("f1"), Plain("f2")}},
      {"alongside-throws-overlapping-fails", Outcome::kThrow, {Releasing("f1", Outcome::kError)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    AlongsideRunResult seq = RunAlongsidePipeline(c.alongside, c.followers, false, false);
    AlongsideRunResult par = RunAlongsidePipeline(c.alongside, c.followers, true, true);
    EXPECT_TRUE(par.waited) << "the first follower did not run beside the alongside pass";
    EXPECT_EQ(par.threw, seq.threw);
    EXPECT_EQ(par.status, seq.status);
    EXPECT_EQ(par.lines, seq.lines);
    EXPECT_EQ(par.counters, seq.counters);
    EXPECT_EQ(par.steps, seq.steps);
    EXPECT_EQ(par.warnings, seq.warnings);
  }
  // The precedence itself, spelled out.
  EXPECT_THAT(
      RunAlongsidePipeline(Outcome::kError, {Releasing("f1", Outcome::kError)}, true, true).status,
      StatusIs(absl::StatusCode::kResourceExhausted,
               "no memory plan fits (after pass 'fake-memory')"));
  EXPECT_THAT(
      RunAlongsidePipeline(Outcome::kOk, {Releasing("f1", Outcome::kError)}, true, true).status,
      StatusIs(absl::StatusCode::kInvalidArgument, "f1 failed (after pass 'f1')"));
  EXPECT_TRUE(RunAlongsidePipeline(Outcome::kThrow, {Releasing("f1")}, true, true).threw);
}

TEST(StatisticsTest, ABufferAppendedGivesWhatRecordingDirectlyGives) {
  Statistics direct, merged;
  for (Statistics* s : {&direct, &merged}) {
    s->Set("a", "x", 5);
    s->AddSeconds("a", 1, 1);
  }
  Statistics buffer = merged.Buffer();
  EXPECT_EQ(buffer.Get("a", "x"), 5);  // what the buffered pass may read
  for (Statistics* s : {&direct, &buffer}) {
    s->Add("a", "x", 2);
    s->Set("b", "y", 7);
    s->Add("b", "y");
    s->AddSeconds("b: part", 0.5, 0.5, /*part=*/true);
    s->AddSeconds("b", 2, 2);
    s->AddSeconds("a", 1, 1);  // a repeated step adds up
  }
  merged.AppendFrom(buffer);
  EXPECT_EQ(merged.ToText(), direct.ToText());
}

TEST(DecisionLogTest, JsonLinesCarryKeywordAndFields) {
  DecisionLog log(true);
  log.Record("dynamic-shape-partition", "MarkNode", "Mark node[a,Relu] attr[_is_unknown_shape] to 1.",
             Field("reason", std::string("dynamic shape")));
  EXPECT_EQ(log.remarks()[0].ToLine(),
            "[dynamic-shape-partition] MarkNode Mark node[a,Relu] attr[_is_unknown_shape] to 1. "
            "reason=\"dynamic shape\"");
  EXPECT_EQ(log.ToJsonLines(),
            "{\"pass\":\"dynamic-shape-partition\",\"keyword\":\"MarkNode\",\"text\":\"Mark "
            "node[a,Relu] attr[_is_unknown_shape] to 1.\",\"fields\":{\"reason\":\"dynamic shape\"}}\n");
}

TEST(DecisionLogTest, ABufferAppendedEchoesAndKeepsInOrder) {
  DecisionLog log(true);
  log.Record("p", "First", "");
  DecisionLog buffer = log.Buffer();
  buffer.Record("q", "Second", "", Field("x", 1));
  EXPECT_EQ(log.remarks().size(), 1u);
  log.AppendFrom(std::move(buffer));
  ASSERT_EQ(log.remarks().size(), 2u);
  EXPECT_EQ(log.remarks()[1].ToLine(), "[q] Second x=1");
  EXPECT_FALSE(DecisionLog().Buffer().enabled());  // a disabled log's buffer spares the work
}

TEST(DecisionLogTest, DisabledLogRecordsNothing) {
  DecisionLog log;
  log.Record("p", "K", "", Field("x", 1));
  EXPECT_TRUE(log.remarks().empty());
}

}  // namespace
}  // namespace npuplan
