// The compile driver's final step: the plan is verified, and the work the
// caller asks to overlap with that verification (the CLI writes the plan)
// runs once, on the final plan, and its error is Compile's.
#include "npuplan/compiler/compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "npuplan/gen/graph_generator.h"
#include "npuplan/ir/control_flow_types.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/topo_sort.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

Model Transformer(int64_t layers, double dynamic_prob = 0, int64_t if_every = 0) {
  GeneratorOptions o;
  o.layers = layers;
  o.dynamic_prob = dynamic_prob;
  o.if_every = if_every;
  absl::StatusOr<Model> m = GenerateTransformer(o);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

// `gen --nodes N --while-every K`: a While every K layers.
Model LoopTransformer(int64_t target_nodes, int64_t while_every) {
  GeneratorOptions o;
  o.target_nodes = target_nodes;
  o.while_every = while_every;
  absl::StatusOr<Model> m = GenerateTransformer(o);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

bool HasStep(const Statistics& stats, std::string_view step, bool part) {
  for (const Statistics::StepTime& t : stats.times()) {
    if (t.step == step && t.part == part) return true;
  }
  return false;
}

// A loop body reads the loop's input in every iteration. ONNX's Loop was not
// a loop to the tensor lifetimes (the simulator's list had it, theirs did
// not), so the planner gave 'pre:0' (b_in's memory) to b_tanh's output, which
// the next iteration's b_relu and b_sig then read as their input, and the
// memory verifier, reading the same lifetimes, agreed.
std::string LoopMemoryGraph(std::string_view owner_type) {
  std::string text = R"({"format": "npuplan.graph/1", "name": "loopmem", "nodes": [
    {"name": "x", "type": "Data", "outputs": [T]},
    {"name": "pre", "type": "Relu", "inputs": ["x:0"], "outputs": [T]},
    {"name": "loop", "type": "OWNER", "inputs": ["pre:0"], "subgraphs": ["body"], "outputs": [T]},
    {"name": "post", "type": "Relu", "inputs": ["loop:0"], "outputs": [T]},
    {"name": "out", "type": "NetOutput", "inputs": ["post:0"]}],
    "subgraphs": [{"name": "body", "parent": "loop", "nodes": [
      {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [T]},
      {"name": "b_relu", "type": "Relu", "inputs": ["b_in:0"], "outputs": [T]},
      {"name": "b_sig", "type": "Sigmoid", "inputs": ["b_in:0"], "outputs": [T]},
      {"name": "b_tanh", "type": "Tanh", "inputs": ["b_relu:0"], "outputs": [T]},
      {"name": "b_add", "type": "Add", "inputs": ["b_tanh:0", "b_sig:0"], "outputs": [T]},
      {"name": "b_out", "type": "NetOutput", "inputs": ["b_add:0"]}]}]})";
  text.replace(text.find("OWNER"), 5, owner_type);
  for (size_t at; (at = text.find("[T]")) != std::string::npos;)
    text.replace(at, 3, R"([{"shape": [256, 256], "dtype": "float32"}])");
  return text;
}

TEST(CompileTest, AnOnnxLoopIsPlannedAndVerifiedAsAWhile) {
  std::vector<Plan> plans;
  for (std::string_view type : {"While", "Loop"}) {
    absl::StatusOr<Model> m = ParseGraphJson(LoopMemoryGraph(type), "loopmem.json");
    ASSERT_THAT(m.status(), IsOk());
    DecisionLog log(false);
    Statistics stats;
    absl::StatusOr<Plan> plan = Compile(*std::move(m), CompileConfig{}, log, stats);
    ASSERT_THAT(plan.status(), IsOk()) << type;
    plans.push_back(*std::move(plan));
  }
  const BigVector<TensorPlacement>& w = plans[0].memory.tensors;
  const BigVector<TensorPlacement>& l = plans[1].memory.tensors;
  ASSERT_EQ(w.size(), l.size());
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(w[i].buffer, l[i].buffer);
    EXPECT_EQ(w[i].offset, l[i].offset) << w[i].buffer;
    EXPECT_EQ(w[i].first_use, l[i].first_use) << w[i].buffer;
    EXPECT_EQ(w[i].last_use, l[i].last_use) << w[i].buffer;
  }
  // The sharing the planner used to make: b_tanh:0 at pre:0's offset.
  Plan& loop = plans[1];
  int64_t pre_offset = -1;
  for (const TensorPlacement& p : loop.memory.tensors)
    if (p.buffer == "pre:0") pre_offset = p.offset;
  ASSERT_GE(pre_offset, 0);
  for (TensorPlacement& p : loop.memory.tensors)
    if (p.buffer == "b_tanh:0") p.offset = pre_offset;
  const absl::Status rejected = verify::VerifyPlan(loop);
  EXPECT_FALSE(rejected.ok());
  EXPECT_THAT(
      std::string(rejected.message()),
      ::testing::AllOf(::testing::HasSubstr("memory-overlap"), ::testing::HasSubstr("'pre:0'"),
                       ::testing::HasSubstr("'b_tanh:0'")));
}

TEST(CompileTest, AlongsideWorkSeesTheFinalPlanOnce) {
  CompileConfig config;
  std::atomic<int> calls = 0;
  std::string written;
  config.alongside_name = "write plan";
  config.alongside_final_verification = [&](const Plan& p, const FinalPlanGate& gate) {
    ++calls;
    if (!gate.AwaitFinal()) return absl::CancelledError("compile failed");
    written = WritePlanJson(p);
    return absl::OkStatus();
  };
  DecisionLog log(false);
  Statistics stats;
  absl::StatusOr<Plan> plan = Compile(Transformer(3), config, log, stats);
  ASSERT_THAT(plan.status(), IsOk());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(written, WritePlanJson(*plan));
  // Timed as a part of the final verification, as are its checks.
  EXPECT_TRUE(HasStep(stats, "verify (final plan)", false));
  EXPECT_TRUE(HasStep(stats, "write plan", true));
  EXPECT_TRUE(HasStep(stats, "verify: memory", true));

  // The same plan as a compile without it.
  DecisionLog log2(false);
  Statistics stats2;
  absl::StatusOr<Plan> alone = Compile(Transformer(3), CompileConfig{}, log2, stats2);
  ASSERT_THAT(alone.status(), IsOk());
  EXPECT_EQ(WritePlanJson(*alone), written);
  EXPECT_FALSE(HasStep(stats2, "write plan", true));
}

// Two threads (the default): everything but the memory check runs while
// memory-planning still runs, at the pipeline's last join, and the alongside
// work starts then: before memory-planning is joined (its progress call waits
// for that start; a minute means it never came). One thread: the
// verification in one piece, then the work. The same plan, the same text.
TEST(CompileTest, TheFinalVerificationBeginsBesideMemoryPlanning) {
  for (const char* threads : {"2", "1"}) {
    SCOPED_TRACE(std::string("npuplan.passThreads=") + threads);
    const bool two = std::string_view(threads) == "2";
    CompileConfig config;
    config.option_overrides = {{"npuplan.passThreads", threads}};
    std::mutex mu;
    std::condition_variable cv;
    bool work_started = false, started_before_join = false;
    config.on_pass = [&](int, std::string_view pass) {
      if (pass != "memory-planning" || !two) return;
      std::unique_lock<std::mutex> lock(mu);
      started_before_join =
          cv.wait_for(lock, std::chrono::minutes(1), [&] { return work_started; });
    };
    std::string written;
    config.alongside_name = "write plan";
    config.alongside_final_verification = [&](const Plan& p, const FinalPlanGate& gate) {
      {
        std::lock_guard<std::mutex> lock(mu);
        work_started = true;
      }
      cv.notify_all();
      std::string text;
      absl::Status s = WritePlanJson(
          p,
          [&](std::string_view chunk) {
            text.append(chunk);
            return absl::OkStatus();
          },
          [&] { return gate.AwaitFinal(); });
      written = text;
      return s;
    };
    DecisionLog log(false);
    Statistics stats;
    absl::StatusOr<Plan> plan = Compile(Transformer(3), config, log, stats);
    ASSERT_THAT(plan.status(), IsOk());
    EXPECT_EQ(written, WritePlanJson(*plan));
    EXPECT_EQ(started_before_join, two);
    EXPECT_TRUE(HasStep(stats, "verify: claims", true));
    EXPECT_TRUE(HasStep(stats, "verify: memory", true));
    EXPECT_TRUE(HasStep(stats, "verify: happens-before", true));
  }
}

// memory-planning fails after the early part has started the alongside
// work: that work hears the compile failed, and the error is the pass's.
TEST(CompileTest, AMemoryPlanningErrorStopsTheAlongsideWorkAtTheGate) {
  absl::StatusOr<Model> m = ParseGraphJson(R"json({"format": "npuplan.graph/1", "nodes": [
    {"name": "w1", "type": "Const", "outputs": [{"shape": [1152921504606846976], "dtype": "int32"}]},
    {"name": "w2", "type": "Const", "outputs": [{"shape": [1152921504606846976], "dtype": "int32"}]},
    {"name": "x", "type": "Add", "inputs": ["w1:0", "w2:0"], "outputs": [{"shape": [8]}]},
    {"name": "out", "type": "NetOutput", "inputs": ["x:0"]}]})json",
                                           "huge.json");
  ASSERT_THAT(m.status(), IsOk());
  CompileConfig config;
  std::atomic<int> calls = 0, final = -1;
  config.alongside_final_verification = [&](const Plan&, const FinalPlanGate& gate) {
    ++calls;
    final = gate.AwaitFinal() ? 1 : 0;
    return absl::CancelledError("stopped");
  };
  DecisionLog log(false);
  Statistics stats;
  EXPECT_THAT(Compile(*std::move(m), config, log, stats).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "larger than int64"));
  EXPECT_EQ(calls, 1)
      << "the early part no longer starts the alongside work: this test checks nothing";
  EXPECT_EQ(final, 0);
}

TEST(CompileTest, AnAlongsideErrorIsTheCompilesError) {
  CompileConfig config;
  config.alongside_final_verification = [](const Plan&, const FinalPlanGate&) {
    return absl::DataLossError("-o /full/disk: no space left");
  };
  DecisionLog log(false);
  Statistics stats;
  EXPECT_THAT(Compile(Transformer(2), config, log, stats).status(),
              StatusIs(absl::StatusCode::kDataLoss, "no space left"));
}

// Out of memory on the second thread reaches the caller as it would have on
// one thread (the CLI: "error: out of memory", exit 1), not as a crash.
TEST(CompileTest, AnAlongsideExceptionIsRethrownOnTheCallersThread) {
  CompileConfig config;
  config.alongside_final_verification = [](const Plan&, const FinalPlanGate&) -> absl::Status {
    throw std::bad_alloc();
  };
  DecisionLog log(false);
  Statistics stats;
  EXPECT_THROW(Compile(Transformer(2), config, log, stats).IgnoreError(), std::bad_alloc);
}

// An id budget compiles several times (issue 23's bisection over
// npuplan.maxStreams); only the compile that returns does the alongside work.
TEST(CompileTest, IdBudgetAttemptsDoNoAlongsideWork) {
  CompileConfig config;
  config.option_overrides = {{"ENABLE_DYNAMIC_SHAPE_MULTI_STREAM", "1"},
                             {"ge.autoMultistreamParallelMode", "LoadBalance:4"},
                             {"npuplan.maxEventIds", "15"}};
  std::atomic<int> calls = 0;
  std::string written;
  config.alongside_final_verification = [&](const Plan& p, const FinalPlanGate& gate) {
    ++calls;
    if (!gate.AwaitFinal()) return absl::CancelledError("compile failed");
    written = WritePlanJson(p);
    return absl::OkStatus();
  };
  DecisionLog log(true);
  Statistics stats;
  absl::StatusOr<Plan> plan =
      Compile(Transformer(6, /*dynamic_prob=*/0.5, /*if_every=*/2), config, log, stats);
  ASSERT_THAT(plan.status(), IsOk());
  ASSERT_NE(log.ToJsonLines().find("IdBudgetStreams"), std::string::npos)
      << "the budget did not make Compile bisect: the test no longer covers the attempts";
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(written, WritePlanJson(*plan));
}

// npuplan.passThreads=2 (memory-planning beside the events passes) and =1
// (one thread) give the same plan, decision log, counters, timed steps and
// warnings: the compile of `model` under both, compared.
void ExpectSameWithAndWithoutPassThreads(const Model& model, CompileConfig config) {
  struct Run {
    absl::StatusOr<Plan> plan = absl::UnknownError("not run");
    std::string log, plan_json;
    std::map<std::string, std::map<std::string, int64_t>> counters;
    std::vector<std::string> steps, warnings;
  };
  auto compile = [&](std::string threads) {
    Run r;
    CompileConfig c = config;
    c.option_overrides["npuplan.passThreads"] = threads;
    c.warnings = &r.warnings;
    DecisionLog log(true);
    Statistics stats;
    r.plan = Compile(Model(model), c, log, stats);
    r.log = log.ToJsonLines();
    if (r.plan.ok()) r.plan_json = WritePlanJson(*r.plan);
    r.counters = stats.counters();
    for (const Statistics::StepTime& t : stats.times())
      r.steps.push_back((t.part ? "  " : "") + t.step);
    return r;
  };
  const Run one = compile("1"), two = compile("2");
  ASSERT_THAT(one.plan.status(), IsOk());
  EXPECT_EQ(two.plan.status(), one.plan.status());
  EXPECT_EQ(two.plan_json, one.plan_json);
  EXPECT_EQ(two.log, one.log);
  EXPECT_EQ(two.counters, one.counters);
  EXPECT_EQ(two.steps, one.steps);
  EXPECT_EQ(two.warnings, one.warnings);
}

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CompilePassThreadsTest, GoldenCasesCompileTheSameOnOneOrTwoThreads) {
  namespace fs = std::filesystem;
  int cases = 0, full = 0;
  for (const auto& dir : fs::directory_iterator(fs::path(NPUPLAN_SOURCE_DIR) / "testdata/plans")) {
    if (!fs::exists(dir.path() / "input.json")) continue;
    SCOPED_TRACE(dir.path().filename().string());
    CompileConfig config;
    config.read_environment =
        false;  // the cases pass ENABLE_DYNAMIC_SHAPE_MULTI_STREAM as an option
    std::istringstream args(fs::exists(dir.path() / "args") ? Slurp(dir.path() / "args") : "");
    std::string flag, value;
    while (args >> flag >> value) {
      if (flag == "--passes") config.passes = value;
      if (flag == "--option")
        config.option_overrides[value.substr(0, value.find('='))] =
            value.substr(value.find('=') + 1);
    }
    absl::StatusOr<Model> model = ReadGraphFile((dir.path() / "input.json").string());
    ASSERT_THAT(model.status(), IsOk());
    ExpectSameWithAndWithoutPassThreads(*model, config);
    ++cases;
    full += config.passes.empty();
  }
  EXPECT_GE(cases, 10);
  EXPECT_GE(full, 5);  // cases that run memory-planning beside the events passes
}

TEST(CompilePassThreadsTest, LargeGraphsCompileTheSameOnOneOrTwoThreads) {
  GeneratorOptions o;
  o.target_nodes = 100000;
  o.if_every = 7;
  o.while_every = 11;
  absl::StatusOr<Model> transformer = GenerateTransformer(o);
  ASSERT_THAT(transformer.status(), IsOk());
  {
    SCOPED_TRACE("transformer");
    ExpectSameWithAndWithoutPassThreads(*transformer, CompileConfig{});
  }
  SCOPED_TRACE("random DAG");
  ExpectSameWithAndWithoutPassThreads(GenerateRandomDag(100000, 3, /*seed=*/7, /*hccl_every=*/97),
                                      CompileConfig{});
}

// The auto-stream modes give every subgraph streams of its own (GE's MiniDAG
// runs per graph). Memory planning chains them into lanes and sees through
// the subgraphs' Data nodes: each loop is ordered after the one before, so
// the loops' activations reuse each other's bytes as on one stream.
// Ifs as GE's label maker lowers them: a StreamActive first in each branch,
// `subgraph_first_active` and `_rts_label_node`; so that each branch has a
// stream of its own to activate, an all-reduce of the branch's input beside
// its compute (HCCL streams are independent).
Model LoweredIfs() {
  Model model = Transformer(3, 0, 1);
  for (size_t g = 1; g < model.num_graphs(); ++g) {
    const GraphId gid(static_cast<int32_t>(g));
    if (!IsBranchNode(model.node(model.graph(gid).parent_node))) continue;
    const NodeId data = model.graph(gid).nodes.front();
    Node all_reduce;
    all_reduce.name = model.graph(gid).name + "_ar";
    all_reduce.type = "HcomAllReduce";
    all_reduce.engine = model.engine_table.EngineForOp(all_reduce.type);
    all_reduce.inputs.push_back({data, 0});
    all_reduce.outputs.push_back(model.node(data).outputs[0]);
    model.AddNode(gid, std::move(all_reduce));
    npuplan::testing::AddFirstActiveStreamActive(model, gid);
  }
  RenumberTopoIds(model);
  return model;
}

// In GE's default assignment the StreamActive runs on its If's stream, which
// the branch shares with the root, and activates the branch's other streams;
// the auto modes give every branch streams of its own, the StreamActive on
// the branch's home stream. The plans verify in every static mode.
TEST(CompileTest, BranchesLoweredAsGeDoesCompileInEveryStaticMode) {
  const Model model = LoweredIfs();
  for (const char* mode : {"", "LoadBalance:4", "CriticalPath:4", "cv"}) {
    SCOPED_TRACE(mode);
    CompileConfig config;
    if (*mode != '\0') config.option_overrides = {{"ge.autoMultistreamParallelMode", mode}};
    DecisionLog log(false);
    Statistics stats;
    absl::StatusOr<Plan> plan = Compile(model, config, log, stats);
    ASSERT_THAT(plan.status(), IsOk());
    int64_t activating = 0;
    for (size_t i = 0; i < plan->model.num_nodes(); ++i) {
      const Node& n = plan->model.node(NodeId(static_cast<int32_t>(i)));
      if (n.type != "StreamActive" || !HasAttr(n.attrs, "subgraph_first_active")) continue;
      const NodeId owner = plan->model.graph(n.graph).parent_node;
      if (*mode == '\0') {
        EXPECT_EQ(plan->physical_stream[i], plan->physical_stream[owner.index()]) << n.name;
      }
      const AttrValue* list = FindAttr(n.attrs, "active_stream_list");
      activating += list != nullptr && list->is<AttrValue::IntList>() &&
                    !list->as<AttrValue::IntList>()->empty();
    }
    EXPECT_GT(activating, 0);
    EXPECT_THAT(verify::VerifyPlan(*plan), IsOk());
  }
}

// Without `_rts_label_node` the StreamActive gets a stream of its own, and
// the branch's stream it activates is its If's, which the root also runs:
// refused, saying what GE does instead.
TEST(CompileTest, AFirstActiveStreamActiveOffItsOwnersStreamIsRefusedWithGesWay) {
  Model model = LoweredIfs();
  for (size_t i = 0; i < model.num_nodes(); ++i)
    model.node(NodeId(static_cast<int32_t>(i))).attrs.erase("_rts_label_node");
  DecisionLog log(false);
  Statistics stats;
  const absl::Status s = Compile(model, CompileConfig{}, log, stats).status();
  EXPECT_THAT(
      s, StatusIs(absl::StatusCode::kInvalidArgument, "(subgraph_first_active) activates stream"));
  EXPECT_THAT(
      std::string(s.message()),
      ::testing::HasSubstr("GE marks the StreamActive it puts first in a branch _rts_label_node"));
}

TEST(AutoStreamLoopsTest, LoopsOnStreamsOfTheirOwnReuseMemoryAsTheDefaultDoes) {
  const Model model = LoopTransformer(3000, 2);
  DecisionLog log(false);
  Statistics stats;
  absl::StatusOr<Plan> plain = Compile(model, CompileConfig{}, log, stats);
  ASSERT_THAT(plain.status(), IsOk());
  CompileConfig config;
  config.option_overrides = {{"ge.autoMultistreamParallelMode", "LoadBalance:4"}};
  absl::StatusOr<Plan> plan = Compile(model, config, log, stats);
  ASSERT_THAT(plan.status(), IsOk());
  EXPECT_GT(plan->streams.logical, 100);  // a loop's worth each
  EXPECT_LE(plan->memory.peak, plain->memory.peak + plain->memory.peak / 100);
  EXPECT_THAT(verify::VerifyPlan(*plan), IsOk());
}

// With those streams merged by stream-budget, one logical stream holds loop
// after loop: the physical split opens between two loops (the split event
// leaves one loop and enters the next through loop gates) instead of
// overflowing the task limit, which the final verification refused.
TEST(AutoStreamLoopsTest, StreamsOfMergedLoopsSplitBetweenLoops) {
  CompileConfig config;
  config.option_overrides = {{"ge.autoMultistreamParallelMode", "LoadBalance:4"},
                             {"npuplan.maxStreams", "64"}};
  DecisionLog log(true);
  Statistics stats;
  absl::StatusOr<Plan> plan = Compile(LoopTransformer(8000, 1), config, log, stats);
  ASSERT_THAT(plan.status(), IsOk());
  EXPECT_LE(plan->streams.physical, 64);
  int64_t at_loop_entry = 0;  // splits that opened at a loop's first node
  for (const Remark* r : log.WithKeyword("StreamSplit")) {
    const std::string line = r->ToLine();
    const size_t at = line.find(" at=") + 4;
    const NodeId n = plan->model.FindNode(line.substr(at, line.find(' ', at) - at));
    ASSERT_TRUE(n.valid()) << line;
    at_loop_entry += plan->model.node(n).graph != kRootGraph;
  }
  EXPECT_GT(at_loop_entry, 0);
  EXPECT_THAT(verify::VerifyPlan(*plan), IsOk());
}

// An MC2 node in an ONNX Loop's only run: its attached stream holds no
// loop gate, so the next iteration there waits behind a forward event from
// the run's first main slot (whose stream's queue runs it after the tail
// gate); the one here is implied by b_ar's event into the attached slot. No
// event is waited before it is recorded, so verify accepts the plan and
// nothing warns (a backward loop-next event, refused now, used to).
TEST(AutoStreamLoopsTest, AnAttachedStreamInALoopWaitsOnlyForwardEvents) {
  auto model = ParseGraphJson(R"json({"format": "npuplan.graph/1", "name": "g", "nodes": [
    {"name": "x", "type": "Data", "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "c0", "type": "Data", "outputs": [{"shape": [1], "dtype": "bool"}]},
    {"name": "l", "type": "Loop", "inputs": ["c0:0", "x:0"], "subgraphs": ["body"],
     "attrs": {"_onnx_absent_inputs": [0]}, "outputs": [{"shape": [64], "dtype": "float32"}]},
    {"name": "out", "type": "NetOutput", "inputs": ["l:0"]}],
    "subgraphs": [{"name": "body", "parent": "l", "nodes": [
      {"name": "b_iter", "type": "Data", "attrs": {"_onnx_absent_parent_input": true}, "outputs": [{"shape": [1], "dtype": "int64"}]},
      {"name": "b_cond", "type": "Data", "attrs": {"_parent_node_index": 0}, "outputs": [{"shape": [1], "dtype": "bool"}]},
      {"name": "b_in", "type": "Data", "attrs": {"_parent_node_index": 1}, "outputs": [{"shape": [64], "dtype": "float32"}]},
      {"name": "b_relu", "type": "Relu", "inputs": ["b_in:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
      {"name": "b_ar", "type": "HcomAllReduce", "inputs": ["b_relu:0"], "outputs": [{"shape": [64], "dtype": "float32"}]},
      {"name": "b_mc2", "type": "MatmulAllReduce", "inputs": ["b_relu:0", "b_ar:0"],
       "attrs": {"_attached_stream_info_list": [{"_attached_resource_name": "s", "_attached_resource_reuse_key": "k",
                 "_attached_resource_required_flag": true, "_attached_resource_depend_value_list_int": [0, 1]}]},
       "outputs": [{"shape": [64], "dtype": "float32"}]},
      {"name": "b_less", "type": "Less", "inputs": ["b_mc2:0"], "outputs": [{"shape": [1], "dtype": "bool"}]},
      {"name": "b_out", "type": "NetOutput", "inputs": ["b_less:0", "b_mc2:0"], "attrs": {"_parent_output_index": [-1, 0]}}]}]})json",
                              "g.json");
  ASSERT_THAT(model.status(), IsOk());
  std::vector<std::string> warnings;
  CompileConfig config;
  config.warnings = &warnings;
  DecisionLog log(false);
  Statistics stats;
  auto plan = Compile(*std::move(model), config, log, stats);
  ASSERT_THAT(plan.status(), IsOk());
  EXPECT_THAT(warnings, ::testing::IsEmpty());
  EXPECT_THAT(verify::VerifyPlan(*plan), IsOk());
  for (const SyncEvent& e : plan->events.events) {
    EXPECT_FALSE(OrdersNextIteration(e)) << plan->model.node(e.send).name;
  }
}

TEST(CompilePassThreadsTest, PassThreadsIsValidated) {
  CompileConfig config;
  config.option_overrides["npuplan.passThreads"] = "3";
  DecisionLog log(false);
  Statistics stats;
  EXPECT_THAT(Compile(Transformer(1), config, log, stats).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "npuplan.passThreads"));
}

}  // namespace
}  // namespace npuplan
