#include "npuplan/compiler/pass_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "npuplan/compiler/compiler.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/pass/pass.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/stream/logical_stream_pass.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/plan_complete.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// "MarkUnknownShapeNodes" → "mark<sep>unknown<sep>shape<sep>nodes".
std::string Split(std::string_view cls, char sep) {
  std::string out;
  for (char c : cls) {
    if (std::isupper(static_cast<unsigned char>(c)) && !out.empty()) out += sep;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Leaf pass names of a pipeline, nested ones included, in run order.
void Leaves(const PassPipeline& p, std::vector<std::string>& out) {
  for (const auto& pass : p.passes()) {
    if (const PassPipeline* nested = pass->nested()) {
      if (nested != pass.get()) out.emplace_back(pass->name());  // a pass with a chain runs too
      Leaves(*nested, out);
    } else {
      out.emplace_back(pass->name());
    }
  }
}

CompileOptions Options(std::map<std::string, std::string> overrides = {}) {
  Model m;
  return CompileOptions::FromModel(m, overrides, /*read_environment=*/false);
}

TEST(PassRegistryTest, EveryPassReportsItsRegistryName) {
  for (const PassRegistryEntry& e : PassRegistry()) {
    std::unique_ptr<Pass> pass = e.make(nullptr);
    ASSERT_NE(pass, nullptr) << e.name;
    EXPECT_EQ(pass->name(), e.name);
  }
}

TEST(PassRegistryTest, EveryNameIsItsClassInKebabCaseWithHeaderSourceAndTest) {
  const std::filesystem::path root = std::filesystem::path(NPUPLAN_SOURCE_DIR) / "npuplan";
  for (const PassRegistryEntry& e : PassRegistry()) {
    EXPECT_EQ(Split(e.cls, '-'), e.name) << e.cls;
    const std::string file = Split(e.cls, '_');
    int found = 0;
    for (const auto& dir : std::filesystem::directory_iterator(root)) {
      if (!std::filesystem::exists(dir.path() / (file + ".h"))) continue;
      ++found;
      EXPECT_TRUE(std::filesystem::exists(dir.path() / (file + ".cc"))) << file;
      EXPECT_TRUE(std::filesystem::exists(dir.path() / (file + "_test.cc"))) << file;
    }
    EXPECT_EQ(found, 1) << file << ".h";
  }
}

TEST(PassRegistryTest, NamesAreUniqueAndANestedPipelineIsOneRun) {
  std::set<std::string_view> names, closed;
  std::string_view open;
  for (const PassRegistryEntry& e : PassRegistry()) {
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_EQ(e.stream_sub_pass, e.pipeline == "logical-stream-assignment") << e.name;
    if (e.pipeline != open) {
      if (!open.empty()) closed.insert(open);
      EXPECT_FALSE(closed.count(e.pipeline)) << e.name << ": " << e.pipeline << " is split";
      open = e.pipeline;
    }
  }
  EXPECT_EQ(RegisteredPassNames().size(), PassRegistry().size());
  EXPECT_EQ(stream::ChainPassNames().size(), 10u);
}

TEST(PassRegistryTest, TheDefaultPipelineIsTheRegistryInOrder) {
  const std::set<std::string_view> single_chain = {"single-stream-pass", "node-stream-update-pass",
                                                   "update-for-skipped-engine-pass"};
  for (const bool single : {false, true}) {
    std::vector<std::string> want;
    for (const PassRegistryEntry& e : PassRegistry()) {
      if (e.stream_sub_pass &&
          (single ? !single_chain.count(e.name) : e.name == "single-stream-pass"))
        continue;
      want.emplace_back(e.name);
    }
    NPUPLAN_ASSERT_OK_AND_ASSIGN(
        auto pipeline,
        BuildDefaultPipeline(Options({{"ge.enableSingleStream", single ? "true" : "false"}})));
    std::vector<std::string> got;
    Leaves(*pipeline, got);
    EXPECT_THAT(got, ElementsAreArray(want)) << (single ? "single" : "multi");
  }
}

// What may run beside memory-planning in the default pipeline (pass.h,
// "Passes alongside"), pass by pass: from its start; once it has released the
// model (the passes that add nodes); only after it (the limit check reads
// plan.memory). The pipeline joins it before the first "join".
TEST(PassRegistryTest, MemoryPlanningRunsBesideTheEventsPasses) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pipeline, BuildDefaultPipeline(Options()));
  const Pass* memory = nullptr;
  std::vector<std::string> after;
  for (const auto& pass : pipeline->passes()) {
    if (pass->runs_alongside()) {
      ASSERT_EQ(memory, nullptr) << "a second alongside pass: " << pass->name();
      memory = pass.get();
      EXPECT_EQ(pass->name(), "memory-planning");
    } else if (memory != nullptr) {
      const char* when = MayRunAlongside(*memory, *pass, /*released=*/false)  ? "start"
                         : MayRunAlongside(*memory, *pass, /*released=*/true) ? "released"
                                                                              : "join";
      after.push_back(StrCat(pass->name(), ":", when));
    }
  }
  EXPECT_THAT(after,
              ElementsAreArray({"task-count-assignment:start", "sync-event-insertion:start",
                                "sync-event-optimization:start", "event-reuse:start",
                                "physical-stream-split:start", "stream-activation:released",
                                "event-minimization:start", "event-id-allocation:start",
                                "sync-node-generation:released", "device-limit-check:start"}));
}

TEST(PassRegistryTest, ThePrintedPipelineShowsTheChainAndParsesBack) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto pipeline, BuildDefaultPipeline(Options()));
  const std::string text = pipeline->Describe();
  EXPECT_EQ(text,
            "partition(mark-unknown-shape-nodes,dynamic-shape-partition),in-place-write-ordering,"
            "logical-stream-assignment("
            "update-for-mde-group-pass,assign-by-label-pass,independent-stream-pass,assign-by-"
            "dependency-pass,"
            "node-stream-update-pass,update-for-parallel-group-pass,all-reduce-parallel-pass,"
            "update-for-skipped-engine-pass,optimize-ineffective-multi-stream-pass),assign-"
            "attached-stream-pass,stream-budget,"
            "memory-planning,task-count-assignment,sync-event-insertion,sync-event-optimization,"
            "event-reuse,"
            "physical-stream-split,stream-activation,event-minimization,event-id-allocation,"
            "sync-node-generation,"
            "device-limit-check");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto parsed, BuildPipelineFromNames(text, Options()));
  EXPECT_EQ(parsed->Describe(), text);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto single,
                               BuildDefaultPipeline(Options({{"ge.enableSingleStream", "true"}})));
  EXPECT_THAT(single->Describe(),
              HasSubstr("logical-stream-assignment(single-stream-pass,node-stream-update-pass,"
                        "update-for-skipped-engine-pass),"));
}

TEST(PassRegistryTest, NamesAloneAndNestedListsBuildPipelines) {
  const CompileOptions o = Options();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      auto flat, BuildPipelineFromNames("mark-unknown-shape-nodes,dynamic-shape-partition,,"
                                        "logical-stream-assignment, assign-attached-stream-pass",
                                        o));
  EXPECT_THAT(flat->Describe(), StartsWith("mark-unknown-shape-nodes,dynamic-shape-partition,"
                                           "logical-stream-assignment(update-for-mde-group-pass,"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto stage, BuildPipelineFromNames("partition", o));
  EXPECT_EQ(stage->Describe(), "partition(mark-unknown-shape-nodes,dynamic-shape-partition)");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      auto chain,
      BuildPipelineFromNames("partition(mark-unknown-shape-nodes),logical-stream-assignment("
                             "single-stream-pass,node-stream-update-pass)",
                             o));
  EXPECT_EQ(chain->Describe(),
            "partition(mark-unknown-shape-nodes),logical-stream-assignment(single-stream-pass,"
            "node-stream-update-pass)");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(auto empty,
                               BuildPipelineFromNames("logical-stream-assignment()", o));
  EXPECT_EQ(empty->Describe(), "logical-stream-assignment()");
}

TEST(PassRegistryTest, BadPassListsAreUsageErrorsNamingTheProblem) {
  const CompileOptions o = Options();
  const std::pair<const char*, const char*> cases[] = {
      {"no-such-pass", "--passes: unknown pass 'no-such-pass' (known: "},
      {"assign-by-label-pass", "'assign-by-label-pass' is a logical-stream sub-pass"},
      {"partition(assign-by-label-pass)", "'assign-by-label-pass' is a logical-stream sub-pass"},
      {"logical-stream-assignment(memory-planning)",
       "'memory-planning' inside logical-stream-assignment(...) is not"},
      {"logical-stream-assignment(assign-by-label-pass(x))", "'assign-by-label-pass(...)' inside"},
      {"memory-planning(event-reuse)", "pass 'memory-planning' takes no pass list"},
      {"partition(mark-unknown-shape-nodes", "'partition(' is not closed"},
      {"memory-planning)", "a ')' without its '('"},
      {"partition(mark-unknown-shape-nodes)x", "expected ',' after 'partition(...)'"},
      {"(memory-planning)", "a '(' without a pass name"},
      {"partition(partition(partition(partition(partition(partition(partition(partition(partition("
       "x)))))))))",
       "nested deeper than 8"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_THAT(BuildPipelineFromNames(text, o),
                StatusIs(absl::StatusCode::kInvalidArgument, message))
        << text;
  }
}

TEST(PassRegistryTest, DumpAfterNamesTheSubPassesOnEveryGraph) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model, ReadGraphFile(std::string(NPUPLAN_SOURCE_DIR) +
                                                          "/examples/transformer_block.json"));
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "pass_registry_dump";
  std::filesystem::remove_all(dir);
  CompileConfig config;
  config.read_environment = false;
  config.verify_each = true;
  config.dump_after = "^(assign-by-label-pass|logical-stream-assignment)$";
  config.dump_dir = dir.string();
  DecisionLog log;
  Statistics stats;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Compile(std::move(model), config, log, stats));
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    files.push_back(f.path().filename().string());
  std::sort(files.begin(), files.end());
  // One dump per known-shape graph the chain ran on (the example's 5), then
  // the driver's own, numbered in run order: 2 partition passes, then per
  // graph the 9 multi-stream sub-passes (assign-by-label-pass second), after
  // in-place-write-ordering.
  EXPECT_THAT(
      files,
      ElementsAreArray({"005.assign-by-label-pass.plan.json", "014.assign-by-label-pass.plan.json",
                        "023.assign-by-label-pass.plan.json", "032.assign-by-label-pass.plan.json",
                        "041.assign-by-label-pass.plan.json",
                        "049.logical-stream-assignment.plan.json"}));
  // What --dump-after writes, verify accepts: a dump between sub-passes is a
  // snapshot inside logical-streams (verify --partial), never a complete plan.
  for (const std::string& f : files) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan dump, ReadPlanFile((dir / f).string()));
    EXPECT_THAT(verify::VerifyPlan(dump), IsOk()) << f;
    const bool inside = f.find("assign-by-label-pass") != std::string::npos;
    EXPECT_EQ(dump.in_progress != 0, inside) << f;
    if (inside) {
      EXPECT_THAT(
          verify::VerifyPlanComplete(dump),
          StatusIs(absl::StatusCode::kInternal, "a snapshot taken inside stage 'logical-streams'"))
          << f;
    }
  }
  std::filesystem::remove_all(dir);
}

// --stats: the sub-passes' times are parts of logical-stream-assignment's
// step (printed indented after it, not added to the total a second time).
TEST(PassRegistryTest, SubPassTimesArePartsOfTheirPassesStep) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model, ReadGraphFile(std::string(NPUPLAN_SOURCE_DIR) +
                                                          "/examples/transformer_block.json"));
  CompileConfig config;
  config.read_environment = false;
  config.verify_each = true;
  DecisionLog log;
  Statistics stats;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, Compile(std::move(model), config, log, stats));
  std::map<std::string, bool> part;
  for (const Statistics::StepTime& t : stats.times()) part[t.step] = t.part;
  ASSERT_TRUE(part.count("assign-by-label-pass"));
  EXPECT_TRUE(part["assign-by-label-pass"]);
  EXPECT_TRUE(part["node-stream-update-pass"]);
  ASSERT_TRUE(part.count("logical-stream-assignment"));
  EXPECT_FALSE(part["logical-stream-assignment"]);
  EXPECT_FALSE(part["stream-budget"]);
  EXPECT_THAT(stats.ToText(), HasSubstr("logical-stream-assignment\ntime"));
}

}  // namespace
}  // namespace npuplan
