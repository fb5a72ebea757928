#include "npuplan/report/plan_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
  t.region = MemoryRegion::kActivation;
  t.offset = offset;
  t.size = size;
  t.first_use = lo;
  t.last_use = hi;
  t.buffer = buffer.empty() ? StrCat(node, ":0") : buffer;
  return t;
}

// The page's data object (<script type="application/json" id="report-data">).
nlohmann::json Data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const size_t begin = html.find(open);
  if (begin == std::string::npos) return nullptr;
  const size_t from = begin + open.size();
  return nlohmann::json::parse(html.substr(from, html.find("</script>", from) - from));
}

// Decoded node names of the data ([shared prefix, shared suffix, middle] per
// name; the test names are ASCII, so code units are bytes).
std::vector<std::string> DataNames(const nlohmann::json& d) {
  std::vector<std::string> out;
  std::string prev;
  for (size_t i = 0; i + 2 < d["names"].size(); i += 3) {
    const size_t p = d["names"][i].get<size_t>(), q = d["names"][i + 1].get<size_t>();
    prev = prev.substr(0, p) + d["names"][i + 2].get<std::string>() + prev.substr(prev.size() - q);
    out.push_back(prev);
  }
  return out;
}

TEST(PlanReportTest, CodesNamesAgainstThePreviousOne) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, PlanFromGraph(R"json({"name": "g", "nodes": [
    {"name": "l11_ffn_up", "type": "Relu", "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "l12_ffn_up", "type": "Relu", "inputs": ["l11_ffn_up"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "l12_ffn_up_x", "type": "Relu", "inputs": ["l12_ffn_up"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "é𝄞é", "type": "Relu", "inputs": ["l12_ffn_up_x"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]},
    {"name": "é𝄞ü", "type": "Relu", "inputs": ["é𝄞é"], "attrs": {"_test_stream": 0}, "outputs": [{"shape": [4]}]}
  ]})json"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  const nlohmann::json d = Data(html);
  EXPECT_EQ(d["names"], nlohmann::json::parse(
      R"([0, 0, "l11_ffn_up", 2, 7, "2", 10, 0, "_x", 0, 0, "é𝄞é", 3, 0, "ü"])"));
  //                                     é = 1 code unit, 𝄞 = 2 (a surrogate pair) ^
}

TEST(PlanReportTest, CarriesOneTaskEntryPerTaskOfEachStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  EXPECT_THAT(html, HasSubstr("<div id=\"timeline\""));
  EXPECT_THAT(html, HasSubstr("<canvas id=\"tl-main\""));
  const nlohmann::json d = Data(html);
  ASSERT_TRUE(d.is_object());
  ASSERT_EQ(d["streams"].size(), 2u);
  EXPECT_EQ(d["streams"][0]["name"], "stream 0");
  EXPECT_EQ(d["streams"][1]["name"], "stream 1");
  EXPECT_EQ(d["tasks"][0].size(), 6u);  // a, b, d: [gap, dur] each
  EXPECT_EQ(d["tasks"][1].size(), 2u);  // c
  // Nodes numbered as the plain tasks come, stream after stream: a, b, d, then c.
  EXPECT_THAT(DataNames(d), ElementsAre("a", "b", "d", "c<&\"'>"));
  EXPECT_EQ(d["ext"].size(), 0u);
  // Default overheads: a 0-3 (2 + launch), then a record; b starts after it.
  EXPECT_EQ(d["tasks"][0][0], 0);     // a starts at 0
  EXPECT_EQ(d["tasks"][0][1], 3000);  // 3 µs in ns
  EXPECT_EQ(d["tasks"][0][2], 500);   // b starts 0.5 µs (the record) after a ends
  ASSERT_EQ(d["kind"].size(), 4u);
  EXPECT_EQ(d["kinds"][d["kind"][2].get<size_t>()][2], 0);  // d: type Add (types sorted: Add, Relu)
  EXPECT_EQ(d["types"], nlohmann::json({"Add", "Relu"}));
}

TEST(PlanReportTest, CarriesAnArrowForEachEventThatReleasedAWait) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  const nlohmann::json d = Data(html);
  ASSERT_EQ(d["arrows"].size(), 12u);  // two arrows of six numbers
  // e0: a's record on s0 ends at 3.5 µs; c's wait on s1 is released at 4.5 µs.
  EXPECT_EQ(d["arrows"][0], 0);
  EXPECT_EQ(d["arrows"][1], 3500);
  EXPECT_EQ(d["arrows"][2], 1);
  EXPECT_EQ(d["arrows"][3], 1000);
  EXPECT_EQ(d["arrows"][4], 0);  // an event
  EXPECT_EQ(d["arrows"][5], 0);  // id 0
  // e1: from s1 to s0, recorded after c.
  EXPECT_EQ(d["arrows"][6], 1);
  EXPECT_EQ(d["arrows"][8], 0);
  EXPECT_EQ(d["arrows"][11], 1);
  // The critical path a, b, d: tasks 0, 1, 2 of stream 0 (delta-coded), none on stream 1.
  EXPECT_EQ(d["crit"], nlohmann::json::parse("[[0, 1, 1], []]"));
}

TEST(PlanReportTest, EscapesNodeNamesEverywhere) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  EXPECT_THAT(html, Not(HasSubstr("c<&")));
  // Inside the data, < > & are JSON escapes, so no "</script>" can end it early.
  EXPECT_THAT(html, HasSubstr("c\\u003c\\u0026\\\"'\\u003e"));
  EXPECT_EQ(Count(html, "</script>"), 2u);
}

TEST(PlanReportTest, AllowsOnlyInlineScriptAndStyle) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  EXPECT_THAT(html, HasSubstr("content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\""));
  EXPECT_THAT(html, Not(HasSubstr(" src=")));
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
}

TEST(PlanReportTest, NamesSplitPiecesAfterTheirLogicalStream) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  // The split moved d onto physical stream 2, a piece of logical stream 0.
  plan.physical_stream[plan.model.FindNode("d").index()] = 2;
  plan.streams.split_to_logical[2] = 0;
  plan.streams.physical = 3;
  plan.streams.streams.resize(2);
  plan.streams.streams[0].user_label = "main";
  plan.streams.streams[1].id = 1;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  const nlohmann::json d = Data(html);
  ASSERT_EQ(d["streams"].size(), 3u);
  EXPECT_EQ(d["streams"][0]["name"], "stream 0 (logical 0, piece 1 of 2)");
  EXPECT_EQ(d["streams"][2]["name"], "stream 2 (logical 0, piece 2 of 2)");
  EXPECT_EQ(d["streams"][2]["logical"], 0);
  EXPECT_EQ(d["streams"][2]["label"], "main");
  EXPECT_EQ(d["streams"][1]["name"], "stream 1");
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
  EXPECT_THAT(html, Not(HasSubstr("<div id=\"memory\"")));
  EXPECT_FALSE(Data(html).contains("pool"));
}

TEST(PlanReportTest, ListsDynamicSubgraphsWithTheirReasons) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.partition.ran = true;
  plan.partition.decision = PartitionDecision::kPartitioned;
  plan.partition.reason = "mixed known and unknown shapes";
  const Model& m = plan.model;
  plan.partition.subgraphs.push_back({"diamond_sub_0_know",
                                      SubgraphKind::kKnown,
                                      "call0",
                                      {m.FindNode("a"), m.FindNode("b")},
                                      {}});
  plan.partition.subgraphs.push_back({"diamond_sub_1_unknow",
                                      SubgraphKind::kUnknown,
                                      "call1",
                                      {m.FindNode("d")},
                                      {"d: output <dim -1>"}});
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
  plan.memory.tensors.back().region = MemoryRegion::kInput;  // not in the pool
  EXPECT_THAT(LiveActivationBytes(plan.memory), ElementsAre(512, 768, 768, 512));
}

TEST(PlanReportTest, CarriesPoolBuffersWhereMemoryIsLiveAndConstantsApart) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.memory.planned = true;
  plan.memory.peak = 1024;
  plan.memory.lower_bound = 768;
  plan.memory.tensors = {Tensor(plan, "a", 0, 512, 3, 5), Tensor(plan, "b", 512, 256, 4, 6),
                         Tensor(plan, "d", 512, 256, 5, 6, "b:0"),
                         Tensor(plan, "c<&\"'>", 0, 512, 5, 7)};
  plan.memory.region_bytes = {{"activation", 1024}, {"constant", 4096}, {"input", 512}};
  plan.memory.alignment = 256;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan));
  EXPECT_THAT(html, HasSubstr("<div id=\"memory\""));
  const nlohmann::json d = Data(html);
  const nlohmann::json& pool = d["pool"];
  EXPECT_EQ(pool["buffers"], 3);  // the alias d:0 shares b's buffer
  EXPECT_EQ(pool["unit"], 256);   // every offset and size is a multiple of 256
  // x runs over the positions where pool memory is live only (3..7), not from 0.
  EXPECT_EQ(pool["x0"], 3);
  EXPECT_EQ(pool["x1"], 7);
  // [lower gap, length, offset, size, node] in 256-byte units, by lower.
  ASSERT_EQ(pool["b"].size(), 15u);
  EXPECT_EQ(pool["b"][0], 3);  // a: lower 3
  EXPECT_EQ(pool["b"][1], 2);
  EXPECT_EQ(pool["b"][3], 2);  // 512 bytes
  EXPECT_EQ(DataNames(d)[pool["b"][4].get<size_t>()], "a");
  EXPECT_EQ(pool["b"][5], 1);  // b: lower 4 (gap 1)
  EXPECT_EQ(pool["b"][6], 2);  // lives [4, 6): with its alias d
  EXPECT_EQ(pool["bx"], nlohmann::json::parse("[[1, 0, 2]]"));  // buffer 1 (b:0) has two members
  EXPECT_EQ(pool["constant"], 4096);
  EXPECT_EQ(pool["input"], 512);
  EXPECT_EQ(pool["peak"], 1024);
  EXPECT_EQ(pool["lower"], 768);
  EXPECT_THAT(html, HasSubstr("<td>gap</td><td>33.3%</td>"));
  // Memory in use over simulated time: a:0 from a's start (0) until its last
  // reader b ends (9.5 µs), b:0 from 3.5 until d (the alias) ends at 12, c:0
  // from 4.5 until d ends: 512 + 256 + 512 bytes at once between 4.5 and 9.5.
  ASSERT_TRUE(d.contains("memt"));
  EXPECT_EQ(d["memt"]["max"], 1280);
}

TEST(PlanReportTest, AggregatesTheTimelineAboveTheItemLimit) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  PlanReportOptions options;
  options.sim.launch_overhead_us = 0;
  options.sim.record_us = 0;
  options.sim.wait_latency_us = 0;
  options.max_timeline_items = 3;  // 4 tasks + 2 records + c's blocking wait for e0
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan, options));
  nlohmann::json d = Data(html);
  EXPECT_FALSE(d.contains("tasks"));
  EXPECT_FALSE(d.contains("arrows"));
  ASSERT_TRUE(d.contains("buckets"));
  EXPECT_THAT(html,
              HasSubstr("id=\"timeline-aggregated\">7 tasks, records and waits exceed the limit of 3"));
  // s0 runs a (0-2), b (2-7), d (7-8) back to back: every bucket of s0 is 100 % busy.
  ASSERT_EQ(d["buckets"][0].size(), 2000u);
  for (const auto& b : d["buckets"][0]) EXPECT_EQ(b, 100);
  // s1 runs c from 2 to 5 of 8 µs: idle in the first bucket, busy in the middle.
  EXPECT_EQ(d["buckets"][1][0], 0);
  EXPECT_EQ(d["buckets"][1][1000], 100);
  options.max_timeline_items = 7;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(html, PlanReportHtml(plan, options));
  EXPECT_THAT(html, Not(HasSubstr("timeline-aggregated")));
  EXPECT_TRUE(Data(html).contains("tasks"));
}

TEST(PlanReportTest, CarriesOnlyTheLiveCurveAboveTheBufferLimit) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, DiamondPlan());
  plan.memory.planned = true;
  plan.memory.peak = 1024;
  plan.memory.lower_bound = 768;
  plan.memory.tensors = {Tensor(plan, "a", 0, 512, 0, 2), Tensor(plan, "b", 512, 256, 1, 3),
                         Tensor(plan, "c<&\"'>", 0, 512, 2, 4)};
  plan.memory.alignment = 256;
  PlanReportOptions options;
  options.max_memory_buffers = 2;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, PlanReportHtml(plan, options));
  const nlohmann::json pool = Data(html)["pool"];
  EXPECT_FALSE(pool.contains("b"));
  // Live bytes at the change points 0, 1, 2, 3, 4: 512, 768, 768, 512, 0 (in 256-byte units).
  EXPECT_EQ(pool["live"], nlohmann::json({0, 2, 1, 3, 1, 3, 1, 2, 1, 0}));
  EXPECT_THAT(html, HasSubstr("id=\"memory-aggregated\">3 pool buffers exceed the limit"));
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
