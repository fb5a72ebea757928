#include "npuplan/support/json_document.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npuplan/support/str_util.h"
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

// CheckJsonDocument is ParseJsonDocument without the DOM: the same verdict
// and the same message, path included, on every input.
TEST(JsonDocumentTest, CheckGivesParsesVerdictAndMessage) {
  const JsonDocumentLimits tight{.max_string_bytes = 8, .max_depth = 4};
  const std::vector<std::string> inputs = {
      R"({"a": 1, "b": [1, 2, {"c": "x"}]})",
      R"({"a": 1, "a": 2})",                                          // duplicate at the top level
      R"({"nodes": {"x": {"tasks": 1, "tasks": 2}}})",                // inside a section's entry
      R"({"events": [{"id": 1}, {"id": 2, "kind": "a", "id": 3}]})",  // inside an array's entry
      R"({"a": {"b": 1}, "c": {"b": 1}})",                            // equal keys of two objects
      R"({"a": [1, 2)",                                               // truncated
      R"({"a": "\"}{][" })",  // brackets and quotes in a string
      R"([[[[[1]]]]])",       // deeper than 4
      R"({"a": [1, [2, [3]]]})",
      R"({"k": "0123456789"})",        // a string over 8 bytes
      R"({"a": 1, "0123456789": 2})",  // a key over 8 bytes
      R"([1, 2, "0123456789"])",
      "  {\n\t\"a\" :\r\n [ 1 ,2 ] }  ",
      "",
      "[1e999]",
  };
  for (const std::string& text : inputs) {
    const absl::StatusOr<nlohmann::json> parsed = ParseJsonDocument(text, "x.json", tight);
    const absl::Status checked = CheckJsonDocument(text, "x.json", tight);
    EXPECT_EQ(checked, parsed.status()) << text;
  }
  EXPECT_THAT(
      CheckJsonDocument(R"({"nodes": {"x": {"tasks": 1, "tasks": 2}}})", "x.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "x.json: $.nodes.x: duplicate key 'tasks'"));
  EXPECT_THAT(
      CheckJsonDocument(R"({"events": [{"id": 1}, {"id": 2, "kind": "a", "id": 3}]})", "x.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, "x.json: $.events[1]: duplicate key 'id'"));
}

// The check keeps a small object's keys in one string and a large one's in
// a hash set, and reuses its levels from one object to the next: on objects
// of up to 100 keys (names that are prefixes of each other), with and
// without a repeated key at any position, side by side and nested, its
// verdict and message are those of the DOM parse (a map per object).
TEST(JsonDocumentTest, CheckMatchesTheParseOnObjectsOfManyKeys) {
  auto object = [](int n, int dup_at, int dup_of) {
    std::string o = "{";
    for (int i = 0; i < n; ++i) {
      if (i > 0) o += ", ";
      o += StrCat("\"k", i == dup_at ? dup_of : i, "\": ", i);
    }
    return o + "}";
  };
  int checked = 0;
  for (int n : {1, 2, 31, 32, 33, 40, 100}) {
    std::vector<std::string> texts = {object(n, -1, 0)};
    for (int at : {1, n / 2, 31, 32, 33, n - 1}) {
      if (at <= 0 || at >= n) continue;
      for (int of : {0, at - 1, at / 3}) texts.push_back(object(n, at, of));
    }
    for (const std::string& o : std::vector<std::string>(texts)) {
      texts.push_back(StrCat("{\"a\": ", object(n, -1, 0), ", \"b\": [", o, ", ", o, "]}"));
      texts.push_back(StrCat("[", o, ", {\"x\": ", o, "}]"));
    }
    for (const std::string& text : texts) {
      const absl::StatusOr<nlohmann::json> parsed = ParseJsonDocument(text, "x.json");
      EXPECT_EQ(CheckJsonDocument(text, "x.json"), parsed.status()) << text;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_THAT(CheckJsonDocument(object(40, 35, 2), "x.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "x.json: $: duplicate key 'k2'"));
}

TEST(JsonTextTest, SplitsAnObjectIntoSortedMembersWithoutReadingThem) {
  const std::string text =
      " {\"z\" : {\"s\": \"}\\\"{\"},\n\t\"a\":[1, \"]\", {\"b\": []}] ,\"m\\u0041\": -1.5e3 , "
      "\"e\": \"\\\\\"}\r\n";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(JsonText t, JsonText::Of(text, "x.json"));
  ASSERT_TRUE(t.is_object());
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.key(0), "a");
  EXPECT_EQ(t.key(1), "e");
  EXPECT_EQ(t.key(2), "mA");  // keys are decoded
  EXPECT_EQ(t.key(3), "z");
  EXPECT_EQ(t.text(0), R"([1, "]", {"b": []}])");
  EXPECT_EQ(t.text(3), R"({"s": "}\"{"})");
  const nlohmann::json whole = nlohmann::json::parse(text);
  for (size_t i = 0; i < t.size(); ++i) {
    NPUPLAN_ASSERT_OK_AND_ASSIGN(nlohmann::json v, t.Parse(i));
    EXPECT_EQ(v, whole.at(t.key(i))) << t.key(i);
  }
  EXPECT_EQ(t.Find("mA"), 2u);
  EXPECT_EQ(t.Find("m"), std::nullopt);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(nlohmann::json rest, t.ParseAllBut("a"));
  nlohmann::json want = whole;
  want.erase("a");
  EXPECT_EQ(rest, want);
  EXPECT_EQ(t.Shape(), nlohmann::json::object());
}

TEST(JsonTextTest, SplitsArraysAndNestedSections) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(JsonText t,
                               JsonText::Of(R"({"m": {"t": [{"a": "[{"}, 2,true ,null]}})", "x"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(JsonText m, t.Open(0));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(JsonText a, m.Open(0));
  ASSERT_TRUE(a.is_array());
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a.text(0), R"({"a": "[{"})");
  EXPECT_EQ(a.text(1), "2");
  EXPECT_EQ(a.text(2), "true ");
  EXPECT_EQ(a.text(3), "null");
  EXPECT_EQ(a.Shape(), nlohmann::json::array());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(JsonText empty, JsonText::Of(" [ ] ", "x"));
  EXPECT_TRUE(empty.is_array());
  EXPECT_EQ(empty.size(), 0u);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(JsonText scalar, JsonText::Of(" \"s\" ", "x"));
  EXPECT_FALSE(scalar.is_object() || scalar.is_array());
  EXPECT_EQ(scalar.Shape(), "s");
}

TEST(JsonTextTest, TruncatedOrTrailingTextIsAnError) {
  for (const char* text : {R"({"a": [1, 2)", R"({"a": 1)", R"({"a" 1})", R"({"a": "x)", R"([1,])",
                           R"({"a": 1} x)", R"({"a": 1,})", "{", "["}) {
    EXPECT_THAT(JsonText::Of(text, "x.json"),
                StatusIs(absl::StatusCode::kInvalidArgument, "x.json: not valid JSON"))
        << text;
  }
}

}  // namespace
}  // namespace npuplan
