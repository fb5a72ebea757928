#include "npuplan/report/plan_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/sim/sim_testing.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::report {
namespace {

using ::npuplan::sim::testing::AddEvent;
using ::npuplan::sim::testing::PlanFromGraph;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

size_t Count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size()))
    ++n;
  return n;
}

// The <svg id="..."> element with the given id.
std::string SvgById(const std::string& html, std::string_view id) {
  const size_t begin = html.find(StrCat("<svg id=\"", id, "\""));
  if (begin == std::string::npos) return "";
  return html.substr(begin, html.find("</svg>", begin) - begin);
}

// a → b → d on s0, a → c → d on s1; events a→c (e0), c→d (e1).
constexpr char kDiamond[] = R"json({"name": "diamond", "nodes": [
  {"name": "a", "type": "Relu", "attrs": {"_cost": 2, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "b", "type": "Relu", "inputs": ["a"], "attrs": {"_cost": 5, "_test_stream": 0}, "outputs": [{"shape": [4]}]},
  {"name": "c<&\"'>", "type": "Relu", "inputs": ["a"], "attrs": {"_cost": 3.0, "_test_stream": 1}, "outputs": [{"shape": [4]}]},
  {"name": "d", "type": "Add", "inputs": ["b", "c<&\"'>"], "attrs": {"_cost": 1, "_test_stream": 0}, "outputs": [{"shape": [4]}]}
]})json";

absl::StatusOr<Plan> DiamondPlan() {
  NPUPLAN_ASSIGN_OR_RETURN(Plan plan, PlanFromGraph(kDiamond));
  AddEvent(plan, "a", "c<&\"'>", 0);
  AddEvent(plan, "c<&\"'>", "d", 1);
  return plan;
}

TensorPlacement Tensor(const Plan& plan, std::string_view node, int64_t offset, int64_t size,
                       int64_t lo, int64_t hi, std::string buffer = "") {
  TensorPlacement t;
  t.node = plan.model.FindNode(node);
  t.region = "activation";
  t.offset = offset;
  t.size = size;
  t.first_use = lo;
  t.last_use = hi;
  t.buffer = buffer.empty() ? StrCat(node, ":0") : buffer;
  return t;
}

TEST(PlanReportTest, DrawsOneLanePerStreamAndOneRectPerTask) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  const std::string timeline = SvgById(html, "timeline");
  ASSERT_FALSE(timeline.empty());
  EXPECT_EQ(Count(timeline, "class=\"lane\""), 2u);
  EXPECT_EQ(Count(timeline, "class=\"task\"") + Count(timeline, "class=\"task crit\""), 4u);
  EXPECT_THAT(timeline, HasSubstr("stream 0 ("));
  EXPECT_THAT(timeline, HasSubstr("stream 1 ("));
  // Hover text: node, engine, cost.
  EXPECT_THAT(timeline, HasSubstr("<title>b\nengine: "));
  EXPECT_THAT(timeline, HasSubstr("cost: 5 µs"));
}

TEST(PlanReportTest, DrawsAnArrowForEachEventThatReleasedAWait) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  const std::string timeline = SvgById(html, "timeline");
  EXPECT_EQ(Count(timeline, "class=\"event\""), 2u);
  EXPECT_THAT(timeline, HasSubstr("e0: a (stream 0) → c&lt;&amp;&quot;&#39;&gt; (stream 1)"));
  EXPECT_THAT(timeline, HasSubstr("e1: c&lt;&amp;&quot;&#39;&gt; (stream 1) → d (stream 0)"));
}

TEST(PlanReportTest, EscapesNodeNamesEverywhere) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  EXPECT_THAT(html, Not(HasSubstr("c<&")));
  EXPECT_THAT(html, HasSubstr("c&lt;&amp;&quot;&#39;&gt;"));
}

TEST(PlanReportTest, ShowsUtilisationPerStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  const std::string util = SvgById(html, "utilisation");
  EXPECT_EQ(Count(util, "class=\"util\""), 2u);
  EXPECT_THAT(html, HasSubstr("<table class=\"utilisation\">"));
}

TEST(PlanReportTest, IsByteIdenticalAcrossRuns) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string first, PlanReportHtml(plan));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string second, PlanReportHtml(plan));
  EXPECT_EQ(first, second);
}

TEST(PlanReportTest, SaysWhenPartitionAndMemoryDidNotRun) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  EXPECT_THAT(html, HasSubstr("id=\"partition-none\""));
  EXPECT_THAT(html, HasSubstr("id=\"memory-none\""));
  EXPECT_THAT(html, Not(HasSubstr("<svg id=\"memory\"")));
}

TEST(PlanReportTest, ListsDynamicSubgraphsWithTheirReasons) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.partition.ran = true;
  plan.partition.decision = "partitioned";
  plan.partition.reason = "mixed known and unknown shapes";
  const Model& m = plan.model;
  plan.partition.subgraphs.push_back(
      {"diamond_sub_0_know", "known", "call0", {m.FindNode("a"), m.FindNode("b")}, {}});
  plan.partition.subgraphs.push_back(
      {"diamond_sub_1_unknow", "unknown", "call1", {m.FindNode("d")}, {"d: output <dim -1>"}});
  plan.partition.unknown_nodes["d"] = "output shape [-1]";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  EXPECT_THAT(html, HasSubstr("Decision: <b>partitioned</b>"));
  EXPECT_THAT(
      html,
      HasSubstr("<td>diamond_sub_0_know</td><td>static (known)</td><td>call0</td><td>2</td>"));
  EXPECT_THAT(
      html,
      HasSubstr(
          "<td>dynamic (unknown)</td><td>call1</td><td>1</td><td>d: output &lt;dim -1&gt;</td>"));
  EXPECT_THAT(html, HasSubstr("1 node(s) with unknown shapes"));
}

TEST(PlanReportTest, CountsAliasedTensorsOnceInLiveBytes) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.memory.planned = true;
  plan.memory.tensors = {Tensor(plan, "a", 0, 512, 0, 2), Tensor(plan, "b", 512, 256, 1, 3),
                         Tensor(plan, "d", 512, 256, 2, 3, "b:0"),  // alias of b's buffer
                         Tensor(plan, "c<&\"'>", 0, 512, 2, 4)};
  plan.memory.tensors.push_back(Tensor(plan, "a", 0, 4096, 0, 4));
  plan.memory.tensors.back().region = "input";  // not in the pool
  EXPECT_THAT(LiveActivationBytes(plan.memory), ElementsAre(512, 768, 768, 512));
}

TEST(PlanReportTest, DrawsPoolBuffersPeakAndLowerBound) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.memory.planned = true;
  plan.memory.peak = 1024;
  plan.memory.lower_bound = 768;
  plan.memory.tensors = {Tensor(plan, "a", 0, 512, 0, 2), Tensor(plan, "b", 512, 256, 1, 3),
                         Tensor(plan, "d", 512, 256, 2, 3, "b:0"),
                         Tensor(plan, "c<&\"'>", 0, 512, 2, 4)};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  const std::string memory = SvgById(html, "memory");
  ASSERT_FALSE(memory.empty());
  EXPECT_EQ(Count(memory, "class=\"tensor\""), 3u);  // three buffers, the alias drawn once
  EXPECT_THAT(memory, HasSubstr("buffer b:0 [b:0, d:0]"));
  EXPECT_EQ(Count(memory, "class=\"peak\""), 1u);
  EXPECT_EQ(Count(memory, "class=\"bound\""), 1u);
  EXPECT_THAT(memory, HasSubstr("<title>peak 1 KiB (1024 B)</title>"));
  EXPECT_THAT(memory, HasSubstr("<title>lower bound 768 B</title>"));
  EXPECT_THAT(memory, HasSubstr("class=\"live\"><title>live bytes (max 768 B)</title>"));
  EXPECT_THAT(html, HasSubstr("<td>gap</td><td>33.3%</td>"));
}

TEST(PlanReportTest, AggregatesTheTimelineAboveTheItemLimit) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  PlanReportOptions options;
  options.sim.launch_overhead_us = 0;
  options.sim.record_us = 0;
  options.sim.wait_latency_us = 0;
  options.max_timeline_items = 3;  // 4 tasks + 2 records + c's blocking wait for e0
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan, options));
  const std::string timeline = SvgById(html, "timeline");
  EXPECT_EQ(Count(timeline, "class=\"task"), 0u);
  EXPECT_EQ(Count(timeline, "class=\"event\""), 0u);
  EXPECT_GT(Count(timeline, "class=\"bucket\""), 0u);
  EXPECT_THAT(
      html,
      HasSubstr("id=\"timeline-aggregated\">7 tasks, records and waits exceed the limit of 3"));
  // s0 runs a (0-2), b (2-7), d (7-8) back to back: every bucket of s0 is 100 % busy.
  EXPECT_THAT(timeline,
              HasSubstr("<title>stream 0, 0–0.01 µs: busy 100%, 1 task(s) started</title>"));
  // s1 runs c from 2 to 5: idle before 2 µs.
  EXPECT_THAT(timeline, Not(HasSubstr("<title>stream 1, 0–0.01 µs")));
  options.max_timeline_items = 7;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(html, PlanReportHtml(plan, options));
  EXPECT_THAT(html, Not(HasSubstr("timeline-aggregated")));
}

TEST(PlanReportTest, DrawsOnlyTheLiveCurveAboveTheBufferLimit) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.memory.planned = true;
  plan.memory.peak = 1024;
  plan.memory.lower_bound = 768;
  plan.memory.tensors = {Tensor(plan, "a", 0, 512, 0, 2), Tensor(plan, "b", 512, 256, 1, 3),
                         Tensor(plan, "c<&\"'>", 0, 512, 2, 4)};
  PlanReportOptions options;
  options.max_memory_buffers = 2;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan, options));
  const std::string memory = SvgById(html, "memory");
  EXPECT_EQ(Count(memory, "class=\"tensor\""), 0u);
  EXPECT_EQ(Count(memory, "class=\"live\""), 1u);
  EXPECT_THAT(html, HasSubstr("id=\"memory-aggregated\">3 pool buffers exceed the limit of 2"));
}

TEST(PlanReportTest, RejectsMemoryLifetimesOutOfRange) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.memory.planned = true;
  plan.memory.tensors = {Tensor(plan, "a", 0, 512, 0, 2),
                         Tensor(plan, "b", 0, 512, 1, int64_t{1} << 40)};
  EXPECT_THAT(PlanReportHtml(plan),
              StatusIs(absl::StatusCode::kInvalidArgument, "memory.tensors[1]: lifetime [1, "));
  plan.memory.tensors[1] = Tensor(plan, "b", 0, -4, 1, 3);
  EXPECT_THAT(PlanReportHtml(plan),
              StatusIs(absl::StatusCode::kInvalidArgument, "size -4 out of range"));
  plan.memory.tensors[1] = Tensor(plan, "b", 0, 512, 3, 1);
  EXPECT_THAT(PlanReportHtml(plan),
              StatusIs(absl::StatusCode::kInvalidArgument, "lifetime [3, 1)"));
}

TEST(PlanReportTest, FailsOnAnEventTheSimulatorCannotPlace) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  AddEvent(plan, "a", "b", 2, "event", /*send_attached=*/3);  // a has no attached stream 3
  EXPECT_THAT(PlanReportHtml(plan), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace npuplan::report
