#include "npuplan/plan/plan_json_fields.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "npuplan/plan/plan_json.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// One node "d" in graph "g"; `top` is spliced into the top level.
std::string OneNodePlan(std::string_view top, std::string_view entry = R"("d": {"topo_id": 0})") {
  return StrCat(
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "name": "g", "nodes": [)",
      R"({"name": "d", "type": "Data"}]}, "nodes": {)", entry, "}", top, "}");
}

TEST(PlanJsonFieldsTest, AcceptsAWrittenPlan) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, ParsePlanJson(OneNodePlan(""), "p.json"));
  EXPECT_THAT(ParsePlanJson(WritePlanJson(plan), "again.json"), IsOk());
}

// nlohmann's DOM kept the last of two equal keys, so the plan reader could not
// see what the graph reader rejects.
TEST(PlanJsonFieldsTest, RejectsADuplicateFieldInsideTheEmbeddedGraph) {
  const std::string text =
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [)"
      R"({"name": "d", "type": "Data", "type": "Relu"}]}})";
  EXPECT_THAT(ParsePlanJson(text, "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "p.json: $.graph.nodes[0]: duplicate key 'type'"));
  EXPECT_THAT(ParsePlanJson(OneNodePlan(R"(, "stages": [], "stages": ["topo-sorted"])"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "$: duplicate key 'stages'"));
}

// From 1 MiB of text the strict checks run on a second thread beside the
// read; their error still wins over any the read finds, and the verdicts are
// those of the small text.
TEST(PlanJsonFieldsTest, StrictErrorsComeFirstWhenTheChecksRunBesideTheRead) {
  const std::string pad(std::size_t{1} << 20, ' ');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {OneNodePlan(""), ""},
      {OneNodePlan(R"(, "verified": true)"), "$.verified: unknown field"},
      // A duplicate key (strict) beside an unknown field (the read): strict first.
      {OneNodePlan(R"(, "verified": true)", R"("d": {"topo_id": 0, "topo_id": 0})"),
       "$.nodes.d: duplicate key 'topo_id'"},
      {OneNodePlan(R"(, "stages": ["nope"], "stages": [])"), "$: duplicate key 'stages'"},
      {OneNodePlan(R"(, "summary": {"nodes": 7}, "z": [1, 2)"), "not valid JSON"},
  };
  for (const auto& [text, want] : cases) {
    const std::string big = text + pad;  // trailing space: every error keeps its column
    ASSERT_GE(big.size(), pad.size());
    const absl::StatusOr<Plan> small_read = ParsePlanJson(text, "p.json");
    const absl::StatusOr<Plan> big_read = ParsePlanJson(big, "p.json");
    EXPECT_EQ(big_read.status(), small_read.status()) << text;
    if (want.empty()) {
      EXPECT_THAT(big_read, IsOk());
    } else {
      EXPECT_THAT(big_read, StatusIs(absl::StatusCode::kInvalidArgument, want)) << text;
    }
  }
}

TEST(PlanJsonFieldsTest, RejectsUnknownFields) {
  EXPECT_THAT(ParsePlanJson(OneNodePlan(R"(, "verified": true)"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "p.json: $.verified: unknown field"));
  EXPECT_THAT(ParsePlanJson(OneNodePlan("", R"("d": {"trusted": 1})"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "$.nodes.d.trusted: unknown field"));
  EXPECT_THAT(
      ParsePlanJson(OneNodePlan(R"(, "streams": {"logical": 0, "skip_checks": true})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.streams.skip_checks: unknown field"));
}

TEST(PlanJsonFieldsTest, DerivedNodeFieldsMustMatchTheGraphAndEvents) {
  EXPECT_THAT(ParsePlanJson(OneNodePlan("", R"("d": {"graph": "other"})"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.nodes.d.graph: is \"other\" but the node is in graph 'g'"));
  EXPECT_THAT(ParsePlanJson(OneNodePlan("", R"("d": {"topo_id": 3})"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.nodes.d.topo_id: is 3 but its position in its graph is 0"));
  EXPECT_THAT(ParsePlanJson(OneNodePlan("", R"("d": {"send_events": [4]})"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "$.nodes.d.send_events: is [4]"));
  EXPECT_THAT(
      ParsePlanJson(OneNodePlan("", R"("d": {"logical_stream": 0, "stream": 5})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument,  // the reader: one node, one stream slot
               "$.nodes.d.stream: stream id 5 is out of range"));
}

TEST(PlanJsonFieldsTest, EveryNodeHasAnEntryWhenNodesArePresent) {
  const std::string text =
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [)"
      R"({"name": "d", "type": "Data"}, {"name": "e", "type": "Data"}]}, "nodes": {"d": {}}})";
  EXPECT_THAT(ParsePlanJson(text, "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "node 'e' has no entry"));
}

TEST(PlanJsonFieldsTest, TheSummaryMustMatchThePlan) {
  EXPECT_THAT(ParsePlanJson(OneNodePlan(R"(, "summary": {"nodes": 1, "graphs": 1})"), "p.json"),
              IsOk());
  EXPECT_THAT(
      ParsePlanJson(OneNodePlan(R"(, "summary": {"nodes": 7})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.summary.nodes: is 7 but the plan has 1"));
  EXPECT_THAT(ParsePlanJson(OneNodePlan(R"(, "summary": {"memory_peak": 12})"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.summary.memory_peak: is 12 but memory.peak is 0"));
}

TEST(PlanJsonFieldsTest, AStageIsListedOnce) {
  EXPECT_THAT(ParsePlanJson(OneNodePlan(R"(, "stages": ["topo-sorted", "topo-sorted"])"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "stage 'topo-sorted' is listed twice"));
}

// 2^32 - 7 read into 32 bits used to become -7.
TEST(PlanJsonFieldsTest, NarrowIntegersAreNotTruncated) {
  const std::string text =
      StrCat(R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [)",
             R"({"name": "d", "type": "Data"}, {"name": "e", "type": "Data"}]},)",
             R"( "events": [{"id": 0, "send": "d", "recv": "e", "send_attached": 4294967289}]})");
  EXPECT_THAT(ParsePlanJson(text, "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.events[0].send_attached: 4294967289 is out of range"));
}

// Two nodes "a" and "b"; `nodes` is the plan's $.nodes.
std::string TwoNodePlan(std::string_view nodes) {
  return StrCat(R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [)",
                R"({"name": "a", "type": "Data"}, {"name": "b", "type": "Data"}]}, "nodes": )",
                nodes, "}");
}

// The reader parses each node entry once and range-checks the stream ids
// after the last (the slots bound them), and the field checks use facts
// gathered from the same parse: of two faulty entries, the first in the
// document is still the one reported, whichever check finds each.
TEST(PlanJsonFieldsTest, OfTwoFaultyEntriesTheFirstInTheDocumentIsReported) {
  EXPECT_THAT(
      ParsePlanJson(TwoNodePlan(R"({"a": {"stream": 7}, "b": {"logical_stream": "x"}})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "$.nodes.a.stream: stream id 7 is out of range"));
  EXPECT_THAT(
      ParsePlanJson(TwoNodePlan(R"({"a": {"logical_stream": "x"}, "b": {"stream": 7}})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "$.nodes.a.logical_stream: expected an integer"));
  // Two slots per node entry's attached streams: 0..3 here; [9, "x"] fails at 9.
  EXPECT_THAT(ParsePlanJson(TwoNodePlan(R"({"a": {"attached_streams": [9, "x"]}})"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.nodes.a.attached_streams[0]: stream id 9 is out of range"));
  EXPECT_THAT(ParsePlanJson(TwoNodePlan(R"({"a": {"attached_streams": [1, "x"]}})"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.nodes.a.attached_streams[1]: expected an integer, found a string"));
  // A non-object entry comes before any other entry's fault.
  EXPECT_THAT(
      ParsePlanJson(TwoNodePlan(R"({"a": {"tasks": -1}, "b": 5})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.nodes.b: expected an object, found 5"));
  EXPECT_THAT(
      ParsePlanJson(TwoNodePlan(R"({"a": {"tasks": -1}, "b": {"tasks": "x"}})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.nodes.a.tasks: a task count must be >= 0"));
  // Field checks: an event list (checked against $.events after the read)
  // before a later entry's unknown field, and the other way round.
  EXPECT_THAT(
      ParsePlanJson(TwoNodePlan(R"({"a": {"send_events": [4]}, "b": {"bogus": 1}})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.nodes.a.send_events: is [4] but"));
  EXPECT_THAT(
      ParsePlanJson(TwoNodePlan(R"({"a": {"bogus": 1}, "b": {"send_events": [4]}})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.nodes.a.bogus: unknown field"));
  EXPECT_THAT(ParsePlanJson(TwoNodePlan(R"({"a": {"recv_events": "x"}, "b": {}})"), "p.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "$.nodes.a.recv_events: expected an array, found string"));
  EXPECT_THAT(
      ParsePlanJson(TwoNodePlan(R"({"a": {"recv_events": [1, "x"]}, "b": {}})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, R"($.nodes.a.recv_events: is [1,"x"] but)"));
  // Without the physical split a node's stream is its logical stream.
  EXPECT_THAT(
      ParsePlanJson(TwoNodePlan(R"({"a": {"recv_events": [2]}, "b": {"stream": 1}})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.nodes.a.recv_events: is [2] but"));
  EXPECT_THAT(
      ParsePlanJson(TwoNodePlan(R"({"a": {"stream": 1}, "b": {"recv_events": [2]}})"), "p.json"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "$.nodes.a.stream: is 1 but without stage 'physical-streams' it is the logical "
               "stream, -1"));
}

// A graph whose name (or any nested string) says npuplan.plan/1 is no plan.
TEST(PlanJsonFieldsTest, OnlyTheTopLevelFormatMakesAPlan) {
  EXPECT_FALSE(
      LooksLikePlan(R"({"format": "npuplan.graph/1", "name": "npuplan.plan/1", "nodes": []})"));
  EXPECT_FALSE(
      LooksLikePlan(R"({"name": "x", "nodes": [{"name": "format", "type": "npuplan.plan/1"}]})"));
  EXPECT_TRUE(LooksLikePlan(R"({"events": [], "format": "npuplan.plan/1"})"));
}

}  // namespace
}  // namespace npuplan
