#include "npuplan/support/json_document.h"

#include <gtest/gtest.h>

#include <string>

#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

TEST(JsonDocumentTest, ReadsWhatNlohmannReads) {
  const std::string text =
      R"({"a": [1, -2, 3.5, "s", true, null, {"b": {}}], "c": 18446744073709551615})";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(nlohmann::json doc, ParseJsonDocument(text, "x.json"));
  EXPECT_EQ(doc, nlohmann::json::parse(text));
}

// nlohmann keeps the last of two equal keys: the first is never seen.
TEST(JsonDocumentTest, RejectsADuplicateKeyNamingItsPath) {
  EXPECT_THAT(ParseJsonDocument(R"({"a": 1, "a": 2})", "x.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "x.json: $: duplicate key 'a'"));
  EXPECT_THAT(
      ParseJsonDocument(
          R"({"graph": {"nodes": [{"name": "n"}, {"name": "m", "type": "A", "type": "B"}]}})",
          "x.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "$.graph.nodes[1]: duplicate key 'type'"));
}

TEST(JsonDocumentTest, BoundsStringsAndNesting) {
  EXPECT_THAT(ParseJsonDocument(R"({"k": "0123456789"})", "x.json", {.max_string_bytes = 5}),
              StatusIs(absl::StatusCode::kInvalidArgument, "--max-string-bytes"));
  EXPECT_THAT(ParseJsonDocument(std::string(1000, '[') + std::string(1000, ']'), "x.json",
                                {.max_depth = 100}),
              StatusIs(absl::StatusCode::kInvalidArgument, "nested deeper than 100 levels"));
  EXPECT_THAT(ParseJsonDocument("[[1]]", "x.json", {.max_depth = 2}), IsOk());
}

TEST(JsonDocumentTest, ReportsInvalidJsonWithNlohmannsMessage) {
  EXPECT_THAT(ParseJsonDocument("{\"a\": ", "x.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "x.json: not valid JSON: [json.exception.parse_error"));
  EXPECT_THAT(ParseJsonDocument("[1e999]", "x.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "number overflow"));
}

// The format key decides, nothing else: a graph named "npuplan.plan/1" or a
// node attribute called "format" is no plan.
TEST(JsonDocumentTest, TopLevelStringReadsOnlyTheTopLevelMember) {
  EXPECT_EQ(TopLevelString(R"({"events": [{"x": "}"}], "format": "npuplan.plan/1"})", "format"),
            "npuplan.plan/1");
  EXPECT_EQ(TopLevelString(R"({"format": "npuplan.graph/1", "name": "npuplan.plan/1"})", "format"),
            "npuplan.graph/1");
  EXPECT_EQ(TopLevelString(R"({"nodes": [{"format": "npuplan.plan/1"}], "name": "x"})", "format"),
            std::nullopt);
  EXPECT_EQ(TopLevelString(R"({"a": {"format": "p"}, "b": "\"format\"", "format": "g"})", "format"),
            "g");
  EXPECT_EQ(TopLevelString(R"({"form\u0061t": "npuplan.pl\u0061n/1"})", "format"),
            "npuplan.plan/1");
  EXPECT_EQ(TopLevelString(R"({"format": 1})", "format"), std::nullopt);
  EXPECT_EQ(TopLevelString("[\"format\", \"npuplan.plan/1\"]", "format"), std::nullopt);
  EXPECT_EQ(TopLevelString("{\"a\": 1", "format"), std::nullopt);
  EXPECT_EQ(TopLevelString("", "format"), std::nullopt);
}

}  // namespace
}  // namespace npuplan
