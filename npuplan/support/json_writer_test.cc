#include "npuplan/support/json_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

using json = nlohmann::json;

// Streams a DOM through the writer event by event (keys in the DOM's sorted order).
void Stream(const json& j, JsonWriter& w) {
  switch (j.type()) {
    case json::value_t::object:
      w.BeginObject();
      for (const auto& [k, v] : j.items()) {
        w.Key(k);
        Stream(v, w);
      }
      w.EndObject();
      break;
    case json::value_t::array:
      w.BeginArray();
      for (const auto& v : j) Stream(v, w);
      w.EndArray();
      break;
    case json::value_t::string:
      w.String(j.get_ref<const std::string&>());
      break;
    case json::value_t::number_integer:
      w.Int(j.get<int64_t>());
      break;
    case json::value_t::number_unsigned:
      w.Uint(j.get<uint64_t>());
      break;
    case json::value_t::number_float:
      w.Double(j.get<double>());
      break;
    case json::value_t::boolean:
      w.Bool(j.get<bool>());
      break;
    default:
      w.Null();
  }
}

const json& Sample() {
  static const json j = json::parse(R"({
    "z": [], "a": {}, "m": {"k": [1, -2, 18446744073709551615, 1.5, 2.0, 1e-07, 1e300, true, false, null]},
    "s": ["plain", "quote \" and \\ back", "tab\tnl\ncr\rff\fbs\b", "ctl \u0001\u001f", "del \u007f",
          "utf8 \u00e9\u4e2d\ud83d\ude00"],
    "nested": [[[]], [{}], [{"b": 1, "a": [2, {"c": "d"}]}]], "": "empty key"})");
  return j;
}

TEST(JsonWriterTest, MatchesNlohmannDumpAtEveryIndent) {
  for (int indent : {-1, 0, 1, 2, 4}) {
    std::string out;
    JsonWriter w(&out, indent);
    Stream(Sample(), w);
    w.Flush();
    EXPECT_EQ(out, Sample().dump(indent)) << "indent " << indent;
  }
}

// Strings and keys of every length around the 8-byte word the writer checks
// at a time, each byte drawn mostly from the plain ones but also from every
// kind that needs care (control bytes, '"', '\\', DEL, UTF-8 lead and
// continuation bytes, invalid UTF-8): the text is nlohmann's dump of the
// same document (its strict dump replaced by U+FFFD where nlohmann's
// replace handler would).
TEST(JsonWriterTest, RandomStringsAndKeysMatchNlohmann) {
  std::mt19937 rng(12345);
  const std::string special =
      std::string("\"\\\x01\x1f\x7f\n\t ~") + "\xc3\xa9\xe4\xb8\xad\x80\xff";
  for (int round = 0; round < 3000; ++round) {
    const size_t len = rng() % 40;
    std::string s;
    for (size_t i = 0; i < len; ++i) {
      s += rng() % 8 == 0 ? special[rng() % special.size()] : static_cast<char>('a' + rng() % 26);
    }
    for (int indent : {-1, 1}) {
      std::string out;
      JsonWriter w(&out, indent);
      w.BeginObject();
      w.Key(s);
      w.BeginArray();
      w.String(s);
      w.EndArray();
      w.EndObject();
      w.Flush();
      json doc = json::object();
      doc[s] = json::array({s});
      EXPECT_EQ(out, doc.dump(indent, ' ', false, json::error_handler_t::replace))
          << "round " << round << " indent " << indent;
    }
    std::string quoted = "x";  // appends: keeps what is there
    AppendJsonString(quoted, s);
    EXPECT_EQ(quoted, StrCat("x", json(s).dump(-1, ' ', false, json::error_handler_t::replace)))
        << "round " << round;
  }
}

// Indentation deeper than the writer's one-copy newline block (64 bytes).
TEST(JsonWriterTest, DeepIndentationMatchesNlohmann) {
  json doc = json::array({1, "x"});
  for (int depth = 0; depth < 80; ++depth)
    doc = json::object({{"k", doc}, {"a", json::array({depth})}});
  for (int indent : {1, 2, 3}) {
    std::string out;
    JsonWriter w(&out, indent);
    Stream(doc, w);
    w.Flush();
    EXPECT_EQ(out, doc.dump(indent)) << "indent " << indent;
  }
}

TEST(JsonWriterTest, SplicedDomValuesAreReindented) {
  for (int indent : {-1, 1, 2}) {
    std::string out;
    JsonWriter w(&out, indent);
    w.BeginObject();
    w.Key("a");
    w.BeginArray();
    w.Value(Sample()["nested"]);
    w.Value(Sample()["m"]);
    w.EndArray();
    w.Key("b");
    w.Value(Sample()["s"]);
    w.EndObject();
    w.Flush();
    json expect = {{"a", json::array({Sample()["nested"], Sample()["m"]})}, {"b", Sample()["s"]}};
    EXPECT_EQ(out, expect.dump(indent)) << "indent " << indent;
  }
}

TEST(JsonWriterTest, WritesInvalidUtf8AsReplacementCharacter) {
  std::string out;
  JsonWriter w(&out, -1);
  w.String(std::string("a\xff" "b"));
  w.Flush();
  EXPECT_EQ(out, "\"a\xef\xbf\xbd" "b\"");
}

// A document a few chunks long, streamed: every chunk but the last is full
// (cut at most one short value before kChunkBytes) and they add up to the
// string writer's text.
TEST(JsonWriterTest, StreamsTheSameTextInChunksOfTheChunkSize) {
  json doc = json::object();
  for (int i = 0; i < 50000; ++i) doc[StrCat("k", i)] = {i, -i, StrCat("v\t", i)};
  const std::string whole = doc.dump(1);
  ASSERT_GT(whole.size(), 2 * JsonWriter::kChunkBytes);
  std::vector<std::string> chunks;
  JsonWriter w(
      [&](std::string_view c) {
        chunks.emplace_back(c);
        return absl::OkStatus();
      },
      1);
  Stream(doc, w);
  EXPECT_GE(chunks.size(), 2u);  // sent while writing, not at the end
  ASSERT_TRUE(w.Finish().ok());
  std::string joined;
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_LE(chunks[i].size(), JsonWriter::kChunkBytes) << i;
    if (i + 1 < chunks.size()) {
      EXPECT_GT(chunks[i].size(), JsonWriter::kChunkBytes - 32) << i;
    }
    joined += chunks[i];
  }
  EXPECT_EQ(joined, whole);
}

TEST(JsonWriterTest, TheSinksFirstErrorEndsTheOutput) {
  int calls = 0;
  JsonWriter w(
      [&](std::string_view) {
        ++calls;
        return absl::DataLossError(std::to_string(calls));
      },
      -1);
  w.BeginArray();
  for (int i = 0; i < 1000000; ++i) w.Int(i);
  w.EndArray();
  EXPECT_EQ(w.Finish(), absl::DataLossError("1"));
  EXPECT_EQ(calls, 1);
}

TEST(JsonWriterTest, AStringLongerThanAChunkIsWrittenWhole) {
  const std::string big(3 * JsonWriter::kChunkBytes, 'x');
  std::string joined;
  JsonWriter w(
      [&](std::string_view c) {
        joined += c;
        return absl::OkStatus();
      },
      1);
  w.BeginArray();
  w.String(big);
  w.StringWithIndex("a\"b", 7);
  w.StringWithIndex("n", -1);
  w.EndArray();
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(joined, json::array({big, "a\"b:7", "n:-1"}).dump(1));
}

}  // namespace
}  // namespace npuplan
