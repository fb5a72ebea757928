// The public API against the CLI's reference outputs (the golden plans) and
// its own contracts: accessors, errors, copies, memplan, kernel, version.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "npuplan/api/npuplan.h"
#include "npuplan/kernel/generator.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/kernel/planner.h"
#include "npuplan/kernel/solution.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::api {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

namespace fs = std::filesystem;

std::string Source(const std::string& rel) { return std::string(NPUPLAN_SOURCE_DIR) + "/" + rel; }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A golden case's `args` (the CLI flags it is compiled with) as CompileOptions.
CompileOptions OptionsFromArgs(const std::string& args) {
  CompileOptions o;
  std::istringstream in(args);
  std::string flag, value;
  while (in >> flag >> value) {
    if (flag == "--passes") o.passes = value;
    if (flag == "--option")
      o.options[value.substr(0, value.find('='))] = value.substr(value.find('=') + 1);
  }
  return o;
}

// Every golden plan is `npuplan compile`'s output: the API must write the
// same bytes for the same input and flags.
TEST(ApiCompileTest, WritesTheGoldenPlansByteForByte) {
  int cases = 0;
  for (const auto& dir : fs::directory_iterator(Source("testdata/plans"))) {
    if (!fs::exists(dir.path() / "expected.plan.json")) continue;
    SCOPED_TRACE(dir.path().filename().string());
    CompileOptions options = OptionsFromArgs(Slurp((dir.path() / "args").string()));
    options.read_environment =
        false;  // the goldens pass ENABLE_DYNAMIC_SHAPE_MULTI_STREAM as an option
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan,
                                 CompileFile((dir.path() / "input.json").string(), options));
    EXPECT_EQ(plan.ToJson(), Slurp((dir.path() / "expected.plan.json").string()));
    // A case that stops the pipeline is a partial plan, as tests/golden.sh verifies it.
    VerifyOptions verify;
    verify.partial = !options.passes.empty();
    EXPECT_THAT(plan.Verify(verify), IsOk());
    ++cases;
  }
  EXPECT_GE(cases, 10);
}

TEST(ApiCompileTest, ReadsStreamsEventsNodesAndMemoryWithoutJson) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileFile(Source("examples/transformer_block.json")));
  const PlanSummary s = plan.summary();
  EXPECT_EQ(s.name, "transformer_l3");
  EXPECT_EQ(s.nodes, static_cast<int64_t>(plan.num_nodes()));
  EXPECT_GT(s.logical_streams, 1);
  const std::vector<StreamInfo> streams = plan.streams();
  ASSERT_EQ(static_cast<int64_t>(streams.size()), s.logical_streams);
  int64_t on_streams = 0;
  for (const StreamInfo& st : streams) on_streams += st.num_nodes;
  EXPECT_GT(on_streams, 0);
  const std::vector<EventInfo> events = plan.events();
  ASSERT_EQ(static_cast<int64_t>(events.size()), s.sync_pairs);
  ASSERT_FALSE(events.empty());
  // Device ids (issue 23): what event-id-allocation recorded, never more than the sync edges.
  ASSERT_TRUE(s.event_counts.count("device_event_ids"));
  EXPECT_EQ(s.event_counts.at("device_event_ids"), s.events);
  EXPECT_LE(s.event_counts.at("device_event_ids_lower_bound"), s.events);
  EXPECT_LE(s.events, s.sync_pairs);
  // Every event's ends are nodes of the plan that list it, on different streams.
  for (const EventInfo& e : events) {
    std::optional<NodeInfo> send = plan.node(e.send), recv = plan.node(e.recv);
    ASSERT_TRUE(send.has_value() && recv.has_value()) << e.send << " -> " << e.recv;
    EXPECT_THAT(send->send_events, ::testing::Contains(e.id));
    EXPECT_THAT(recv->recv_events, ::testing::Contains(e.id));
    EXPECT_EQ(e.send_stream, send->stream);
    EXPECT_EQ(e.recv_stream, recv->stream);
    EXPECT_NE(e.send_stream, e.recv_stream);
  }
  EXPECT_FALSE(plan.node("no such node").has_value());
  EXPECT_EQ(plan.node_at(0).name, plan.node_names()[0]);
  const MemoryInfo mem = plan.memory();
  EXPECT_TRUE(mem.planned);
  EXPECT_EQ(mem.peak, s.memory_peak);
  EXPECT_GE(mem.peak, mem.lower_bound);
  EXPECT_THAT(mem.tensors, Not(IsEmpty()));
}

TEST(ApiCompileTest, ErrorsCarryTheCliMessages) {
  EXPECT_THAT(CompileFile("/nonexistent/g.json").status(),
              StatusIs(absl::StatusCode::kNotFound, "/nonexistent/g.json: cannot open file"));
  CompileOptions bad;
  bad.options["ge.enableSingleStream"] = "maybe";
  EXPECT_THAT(CompileFile(Source("examples/transformer_block.json"), bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "ge.enableSingleStream"));
  LoadOptions onnx_only;
  onnx_only.input_shapes.push_back(InputShape{"x", {1, 3}});
  EXPECT_THAT(
      Model::Load(Source("examples/transformer_block.json"), onnx_only).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "--input-shape applies to ONNX models only"));
  EXPECT_THAT(Model::FromJson("{", "inline.json").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "inline.json: not valid JSON"));
}

TEST(ApiCompileTest, CompilingACopyLeavesTheModelUsable) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model, Model::Load(Source("examples/transformer_block.json")));
  const size_t nodes = model.num_nodes();
  const std::string graph = model.ToJson();
  CompileOptions single;
  single.options["ge.enableSingleStream"] = "true";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan multi_plan, Compile(model));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan single_plan, Compile(model, single));
  EXPECT_EQ(single_plan.summary().logical_streams, 1);
  EXPECT_GT(multi_plan.summary().logical_streams, 1);
  EXPECT_GT(multi_plan.num_nodes(), nodes);  // the compile adds sync nodes to its copy only
  EXPECT_EQ(model.num_nodes(), nodes);
  EXPECT_EQ(model.ToJson(), graph);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan moved, Compile(std::move(model)));
  EXPECT_EQ(moved.ToJson(), multi_plan.ToJson());
}

NodeSpec MakeNode(std::string name, std::string type, std::vector<std::string> inputs,
                  std::vector<int64_t> shape, std::string label = "") {
  NodeSpec n;
  n.name = std::move(name);
  n.type = std::move(type);
  n.inputs = std::move(inputs);
  if (!shape.empty()) n.outputs.push_back(TensorSpec{shape, "float16"});
  if (!label.empty()) n.attrs["_stream_label"] = label;
  return n;
}

// x → a (label "left"), b (label "right") → sum → out.
absl::StatusOr<Model> TwoLabelledBranches(const std::string& name) {
  GraphBuilder b(name);
  b.AddNode(MakeNode("x", "Data", {}, {1, 64}));
  b.AddNode(MakeNode("a", "Relu", {"x"}, {1, 64}, "left"));
  b.AddNode(MakeNode("b", "Relu", {"x"}, {1, 64}, "right"));
  b.AddNode(MakeNode("sum", "Add", {"a", "b"}, {1, 64}));
  b.AddNode(MakeNode("out", "NetOutput", {"sum"}, {}));
  return b.Build();
}

TEST(ApiCompileTest, BuildsAModelInCode) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model, TwoLabelledBranches("built"));
  EXPECT_EQ(model.name(), "built");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Compile(model));
  EXPECT_NE(plan.node("a")->stream, plan.node("b")->stream);  // two user stream labels
  EXPECT_THAT(plan.Verify(), IsOk());
  // The builder's graph is checked as a file is.
  GraphBuilder dangling;
  dangling.AddNode(MakeNode("y", "Relu", {"missing"}, {1}));
  EXPECT_THAT(dangling.Build().status(), StatusIs(absl::StatusCode::kInvalidArgument, "missing"));
}

// Run counts memory races as `npuplan run` does: a and b run on two streams
// at once; placed on the same bytes, they race.
TEST(ApiPlanTest, RunCountsMemoryRaces) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model, TwoLabelledBranches("race"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Compile(model));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(RunResult clean, plan.Run({}));
  EXPECT_EQ(clean.violations, 0);
  EXPECT_EQ(clean.memory_races, 0);
  // Move b:0 onto a:0's offset (the placements list node, then offset).
  std::string json = plan.ToJson();
  auto offset_of = [&json](const std::string& node) -> std::pair<size_t, size_t> {
    const std::string name = "\"node\": \"" + node + "\",", key = "\"offset\": ";
    for (size_t at = json.find(name); at != std::string::npos; at = json.find(name, at + 1)) {
      const size_t next = json.find_first_not_of(" \n", at + name.size());
      if (next == std::string::npos || json.compare(next, key.size(), key) != 0) continue;
      const size_t begin = next + key.size();
      return {begin, json.find_first_not_of("0123456789", begin) - begin};
    }
    return {std::string::npos, 0};
  };
  const auto [a_at, a_len] = offset_of("a");
  const auto [b_at, b_len] = offset_of("b");
  ASSERT_NE(a_at, std::string::npos);
  ASSERT_NE(b_at, std::string::npos);
  json.replace(b_at, b_len, json.substr(a_at, a_len));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan racy, Plan::FromJson(json));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(RunResult r, racy.Run({}));
  EXPECT_GT(r.memory_races, 0);
  EXPECT_GE(r.violations, r.memory_races);
  EXPECT_EQ(r.runs_with_violations, 1);
  EXPECT_THAT(r.messages, ::testing::Contains(HasSubstr("memory race: ")));
}

TEST(ApiPlanTest, ReadsVerifiesSimulatesAndRunsAPlanFile) {
  const std::string path = Source("testdata/plans/transformer_full/expected.plan.json");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Plan::Read(path));
  EXPECT_THAT(plan.Verify(), IsOk());
  EXPECT_EQ(plan.ToJson(), Slurp(path));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(SimulationResult sim, plan.Simulate());
  EXPECT_GT(sim.makespan_us, 0);
  EXPECT_GE(sim.makespan_us + 1e-9, sim.lower_bound_us);
  EXPECT_THAT(sim.critical_path, Not(IsEmpty()));
  EXPECT_THAT(sim.report_json, HasSubstr("\"makespan_us\""));
  RunOptions run;
  run.jitter_seed = 1;
  run.repeat = 2;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(RunResult result, plan.Run(run));
  EXPECT_EQ(result.runs, 2);
  EXPECT_GT(result.tasks, 0);
  EXPECT_EQ(result.violations, 0) << (result.messages.empty() ? "" : result.messages[0]);
}

TEST(ApiPlanTest, VerifyNamesThePlanFileAsTheCliDoes) {
  // A plan whose events were dropped: the reader refuses it (its nodes still
  // name the events), naming the file as `npuplan verify` does.
  std::string text = Slurp(Source("testdata/plans/transformer_full/expected.plan.json"));
  const size_t at = text.find("\"events\": [");
  ASSERT_NE(at, std::string::npos);
  const size_t end = text.find("\n ],", at);
  ASSERT_NE(end, std::string::npos);
  const std::string dropped = text.substr(0, at) + "\"events\": [" + text.substr(end + 1);
  const absl::Status read = Plan::FromJson(dropped, "broken.plan.json").status();
  EXPECT_THAT(read, Not(IsOk()));
  EXPECT_THAT(std::string(read.message()), ::testing::StartsWith("broken.plan.json: "));
  // A partial pipeline's plan reads, but verify wants its sync-events stage.
  CompileOptions o;
  o.passes = "mark-unknown-shape-nodes,dynamic-shape-partition,logical-stream-assignment";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan compiled,
                               CompileFile(Source("examples/transformer_block.json"), o));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Plan::FromJson(compiled.ToJson(), "partial.plan.json"));
  const absl::Status s = plan.Verify();
  EXPECT_THAT(s, Not(IsOk()));
  EXPECT_THAT(std::string(s.message()), ::testing::StartsWith("partial.plan.json: "));
}

// Verify is `npuplan verify`: a partial pipeline's plan lacks sync-events and
// passes only as `verify --partial` does.
TEST(ApiPlanTest, VerifyRequiresTheStagesTheContentNeedsUnlessPartial) {
  CompileOptions o;
  o.passes = "mark-unknown-shape-nodes,dynamic-shape-partition,logical-stream-assignment";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan,
                               CompileFile(Source("examples/transformer_block.json"), o));
  EXPECT_THAT(plan.Verify(),
              StatusIs(absl::StatusCode::kInternal, "stage 'sync-events' is missing"));
  VerifyOptions partial;
  partial.partial = true;
  EXPECT_THAT(plan.Verify(partial), IsOk());
}

// A plan read from a file is checked as the CLI's summary/simulate/run check
// theirs: accessors never size a table by a count the file made up.
TEST(ApiPlanTest, ReadRefusesAPlanThatLiesAboutItsStreams) {
  std::string text = Slurp(Source("testdata/plans/transformer_full/expected.plan.json"));
  const std::string from = "\"logical\": ";
  const size_t at = text.find(from, text.find("\"streams\": {"));
  ASSERT_NE(at, std::string::npos);
  const size_t end = text.find_first_of(",\n}", at + from.size());
  // Within the stream slots (beyond them the reader refuses it first).
  text = text.substr(0, at + from.size()) + "50" + text.substr(end);
  // The summary repeats the count (the reader checks the two agree): the lie
  // is told twice, so only the claims check against the nodes can see it.
  const std::string summary = "\"logical_streams\": ";
  const size_t at2 = text.find(summary, text.find("\"summary\": {"));
  ASSERT_NE(at2, std::string::npos);
  const size_t end2 = text.find_first_of(",\n}", at2 + summary.size());
  text = text.substr(0, at2 + summary.size()) + "50" + text.substr(end2);
  EXPECT_THAT(Plan::FromJson(text, "lies.plan.json").status(),
              StatusIs(absl::StatusCode::kInternal,
                       "lies.plan.json: verifier[streams]: streams.logical is 50"));
}

TEST(ApiPlanTest, SimulateRefusesNaNAndInfinity) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      Plan plan, Plan::Read(Source("testdata/plans/transformer_full/expected.plan.json")));
  SimulateOptions o;
  o.launch_overhead_us = std::nan("");
  EXPECT_THAT(plan.Simulate(o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "must be finite and >= 0"));
  o.launch_overhead_us = 1;
  o.wait_latency_us = HUGE_VAL;
  EXPECT_THAT(plan.Simulate(o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "must be finite and >= 0"));
}

// Plan::Write is `compile -o`'s transaction: the file appears whole or not
// at all, a folder is refused and no temporary is left, a link is written
// through (the link stays).
TEST(ApiPlanTest, WriteIsAllOrNothingAndWritesThroughLinks) {
  const std::string path = Source("testdata/plans/transformer_full/expected.plan.json");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Plan::Read(path));
  const std::string dir = ::testing::TempDir() + "/api_plan_write";
  fs::remove_all(dir);
  fs::create_directories(dir + "/folder.plan.json");
  EXPECT_THAT(plan.Write(dir + "/folder.plan.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "folder.plan.json: is a directory"));
  EXPECT_THAT(plan.Write(dir + "/missing/x.plan.json"), Not(IsOk()));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  { std::ofstream(dir + "/real.plan.json") << "old"; }
  fs::create_symlink("real.plan.json", dir + "/link.plan.json");
  ASSERT_THAT(plan.Write(dir + "/link.plan.json"), IsOk());
  EXPECT_TRUE(fs::is_symlink(dir + "/link.plan.json"));
  EXPECT_EQ(Slurp(dir + "/real.plan.json"), Slurp(path));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 3);
}

// The API's readers are the CLI's: regular files only, at most
// max_file_bytes each (`--max-file-bytes`), a limit of that call only.
TEST(ApiPlanTest, ReadersAreBoundedAsTheClisAre) {
  const std::string plan = Source("testdata/plans/transformer_full/expected.plan.json");
  const std::string graph = Source("examples/transformer_block.json");
  const std::string too_big = "bytes, more than the limit of 100 (--max-file-bytes)";
  ReadLimits small;
  small.max_file_bytes = 100;
  EXPECT_THAT(Plan::Read(plan, small).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, too_big));
  LoadOptions load;
  load.limits.max_file_bytes = 100;
  EXPECT_THAT(Model::Load(graph, load).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, too_big));
  EXPECT_THAT(CompileFile(graph, {}, load).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, too_big));
  load.engines_file = graph;  // the --engines file is read with the same limit
  EXPECT_THAT(Model::FromJson(Slurp(graph), "g.json", load).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, too_big));
  MemplanOptions memplan;
  memplan.max_file_bytes = 100;
  EXPECT_THAT(MemplanCsvFile(Source("testdata/minimalloc/A.1048576.csv"), memplan).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, too_big));
  EXPECT_THAT(Plan::Read(plan), IsOk());  // the limit was the call's
  EXPECT_THAT(Plan::Read("/dev/zero").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "/dev/zero: is a character device, not a regular file"));
  EXPECT_THAT(Model::Load("/dev/null").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a regular file"));
}

// Issue #19: a plan file claiming 2^62 tasks per node is refused when read
// (its claims are checked against the task model), so no stream statistic
// sums such counts; the statistic itself saturates (SimulatorTest.StreamTaskCountsSaturate).
TEST(ApiPlanTest, TaskCountsAPlanFileInflatesAreRefused) {
  std::string text = Slurp(Source("testdata/plans/transformer_full/expected.plan.json"));
  const std::string one = "\"tasks\": 1", huge = "\"tasks\": 4611686018427387904";
  for (size_t at = text.find(one); at != std::string::npos; at = text.find(one, at + huge.size()))
    text.replace(at, one.size(), huge);
  EXPECT_THAT(Plan::FromJson(text, "huge.plan.json").status(),
              StatusIs(absl::StatusCode::kInternal,
                       "has 4611686018427387904 tasks but the task model gives"));
}

TEST(ApiMemplanTest, PacksIntervalsAndValidatesThePacking) {
  // a and b overlap in time, c reuses a's bytes.
  std::vector<Interval> intervals = {{"a", 0, 2, 4}, {"b", 1, 3, 8}, {"c", 2, 4, 4}};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(MemplanResult r, Memplan(intervals));
  EXPECT_EQ(r.peak, 12);
  EXPECT_EQ(r.lower_bound, 12);
  EXPECT_TRUE(r.optimal);
  ASSERT_EQ(r.offsets.size(), 3u);
  EXPECT_FALSE(r.offsets[0] < r.offsets[1] + 8 &&
               r.offsets[1] < r.offsets[0] + 4);  // a and b apart
  EXPECT_THAT(MemplanCsv(intervals, r.offsets), HasSubstr("id,lower,upper,size,offset\na,0,2,4,"));
  MemplanOptions tight;
  tight.capacity = 11;
  EXPECT_THAT(Memplan(intervals, tight).status(), Not(IsOk()));
  EXPECT_THAT(Memplan({{"x", 3, 3, 1}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "x"));
}

TEST(ApiKernelTest, PlansACaseAsThePlannerDoesAndFormatsTheOfficialFiles) {
  kernel::GeneratorOptions gen;  // a 2x2x2 tiled matmul in the contest's format
  gen.m = gen.n = gen.k = 2;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(kernel::KernelGraph g,
                               kernel::GenerateKernelGraph(gen, kernel::CacheConfig{}));
  const std::string json = kernel::KernelGraphToJson(g);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(KernelPlanResult r, PlanKernelJson(json, "mm"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(kernel::KernelGraph parsed,
                               kernel::ParseKernelGraph(json, kernel::CacheConfig{}, "mm"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(kernel::PlanResult direct,
                               kernel::PlanKernel(parsed, kernel::CacheConfig{}));
  EXPECT_EQ(r.name, "mm");
  EXPECT_EQ(r.candidate, direct.chosen);
  EXPECT_EQ(r.schedule_text(), kernel::FormatSchedule(direct.solution.schedule));
  EXPECT_EQ(r.memory_text(), kernel::FormatMemory(direct.solution.offsets));
  EXPECT_EQ(r.spill_text(), kernel::FormatSpills(direct.solution.spills));
  EXPECT_EQ(r.metrics.makespan, direct.metrics.makespan);
  const std::string dir = ::testing::TempDir() + "/api_kernel";
  fs::create_directories(dir);
  ASSERT_THAT(r.WriteFiles(dir), IsOk());
  EXPECT_EQ(Slurp(dir + "/mm_schedule.txt"), r.schedule_text());
  EXPECT_EQ(Slurp(dir + "/mm_q1_schedule.txt"), r.q1_schedule_text());
  // All four files or none: one blocked target (a folder) leaves the others untouched.
  const std::string blocked = ::testing::TempDir() + "/api_kernel_blocked";
  fs::remove_all(blocked);
  fs::create_directories(blocked + "/mm_spill.txt");
  EXPECT_THAT(r.WriteFiles(blocked),
              StatusIs(absl::StatusCode::kInvalidArgument, "mm_spill.txt: is a directory"));
  EXPECT_EQ(std::distance(fs::directory_iterator(blocked), fs::directory_iterator()), 1);
  { std::ofstream(dir + "/mm.json") << json; }
  KernelPlanOptions small;
  small.max_file_bytes = 10;
  EXPECT_THAT(
      PlanKernelFile(dir + "/mm.json", small).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "more than the limit of 10 (--max-file-bytes)"));
  EXPECT_THAT(PlanKernelFile(dir + "/mm.json"), IsOk());
  KernelPlanOptions wrong;
  wrong.strategy = "fastest";
  EXPECT_THAT(PlanKernelJson(json, "mm", wrong).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "fastest"));
  EXPECT_THAT(PlanKernelJson(R"({"Nodes": 1})", "bad").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ApiVersionTest, HeadersAndLibraryAgree) {
  EXPECT_EQ(std::string(Version()), NPUPLAN_VERSION_STRING);
  EXPECT_EQ(NPUPLAN_VERSION,
            NPUPLAN_VERSION_MAJOR * 10000 + NPUPLAN_VERSION_MINOR * 100 + NPUPLAN_VERSION_PATCH);
  EXPECT_EQ(std::string(NPUPLAN_VERSION_STRING), std::to_string(NPUPLAN_VERSION_MAJOR) + "." +
                                                     std::to_string(NPUPLAN_VERSION_MINOR) + "." +
                                                     std::to_string(NPUPLAN_VERSION_PATCH));
}

}  // namespace
}  // namespace npuplan::api
