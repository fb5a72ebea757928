#include "npuplan/plan/plan_json.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/random_json_values.h"

namespace npuplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

template <typename... Args>
std::string StrCatForTest(const Args&... args) {
  std::string out;
  ((out += args), ...);
  return out;
}

// `j` with every object's members in reverse order.
nlohmann::ordered_json Reversed(const nlohmann::json& j) {
  if (j.is_array()) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& e : j) a.push_back(Reversed(e));
    return a;
  }
  if (!j.is_object()) return nlohmann::ordered_json(j);
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  for (auto it = j.rbegin(); it != j.rend(); ++it) o[it.key()] = Reversed(it.value());
  return o;
}

constexpr char kMinimalPlan[] =
    R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [{"name": "d", "type": "Data"}]}})";

TEST(PlanJsonTest, MinimalPlanReadsAndRoundTrips) {
  absl::StatusOr<Plan> plan = ParsePlanJson(kMinimalPlan, "p.json");
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::string text = WritePlanJson(*plan);
  absl::StatusOr<Plan> again = ParsePlanJson(text, "again.json");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(WritePlanJson(*again), text);
}

// The order in which WritePlanJson writes the "nodes" of a plan whose graph
// holds Data nodes of these names.
std::vector<std::string> WrittenNodeOrder(const std::vector<std::string>& names) {
  std::string graph = R"({"format": "npuplan.graph/1", "nodes": [)";
  for (size_t i = 0; i < names.size(); ++i)
    graph += StrCatForTest(i ? ", " : "", R"({"type": "Data", "name": ")", names[i], "\"}");
  absl::StatusOr<Plan> plan = ParsePlanJson(
      StrCatForTest(R"({"format": "npuplan.plan/1", "graph": )", graph, "]}}"), "p.json");
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  const auto written = nlohmann::ordered_json::parse(WritePlanJson(*plan));
  std::vector<std::string> order;
  for (const auto& [name, entry] : written.at("nodes").items()) order.push_back(name);
  return order;
}

// The node entries are in byte order of the names, whether two names differ
// in their first bytes (the sort's prefix key), only after them, are shorter
// than the key, or hold bytes beyond ASCII (ordered as unsigned).
TEST(PlanJsonTest, WritesNodesInByteOrderOfTheirNames) {
  const std::vector<std::string> names = {"layer_00_attn_q10", "layer_00_attn_q2",
                                          "layer_00",          "layer_0",
                                          "layer_00_attn",     "z",
                                          "\u00e9t\u00e9",     "a",
                                          "layer_00_",         "layer_00_attn_k",
                                          "layer_01",          "B",
                                          "layer_00_attn_q1"};
  const std::vector<std::string> order = WrittenNodeOrder(names);
  std::vector<std::string> expected = names;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(order, expected);
  EXPECT_EQ(order.size(), names.size());
  EXPECT_EQ(order.front(), "B");
  EXPECT_EQ(order.back(), "\u00e9t\u00e9");  // 0xC3 sorts after ASCII
}

// Random names that share prefixes of every length around the sort's
// 16-byte key (equal in the first 8 or 16 bytes, a prefix of each other,
// non-ASCII bytes on either side of the key's end) come out in byte order
// (std::sort of the names themselves, the reference).
TEST(PlanJsonTest, WritesRandomNamesSharingLongPrefixesInByteOrder) {
  std::mt19937 rng(7);
  const std::vector<std::string> stems = {"",
                                          "l",
                                          "layer_00",
                                          "layer_00_attn_q",
                                          "layer_00_attn_q_",
                                          "layer_00_attn_qk_proj",
                                          "\u00e9t\u00e9_layer_0"};
  const std::string alphabet = "aAz_9";
  std::set<std::string> unique;
  while (unique.size() < 300) {
    std::string name = stems[rng() % stems.size()];
    for (size_t i = rng() % 5; i > 0; --i) {
      name += rng() % 6 == 0 ? std::string("\u00e9")
                             : std::string(1, alphabet[rng() % alphabet.size()]);
    }
    if (!name.empty()) unique.insert(name);
  }
  std::vector<std::string> names(unique.begin(), unique.end());
  std::shuffle(names.begin(), names.end(), rng);
  const std::vector<std::string> order = WrittenNodeOrder(names);
  std::vector<std::string> expected = names;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(order, expected);
}

// WritePlanFile streams the same text WritePlanJson returns; a file it
// cannot write is an error naming the path and the output, leaving nothing.
TEST(PlanJsonTest, WritePlanFileWritesTheTextOrNothing) {
  absl::StatusOr<Plan> plan = ParsePlanJson(kMinimalPlan, "p.json");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string dir = ::testing::TempDir() + "/write_plan_file";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/plan.json";
  ASSERT_TRUE(WritePlanFile(*plan, path, "-o").ok());
  absl::StatusOr<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, WritePlanJson(*plan));
  const std::string missing = dir + "/no/such/dir/plan.json";
  absl::Status s = WritePlanFile(*plan, missing, "-o");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr(missing + ": cannot write -o file"));
  EXPECT_FALSE(std::filesystem::exists(missing));
  std::filesystem::remove_all(dir);
}

TEST(PlanJsonTest, RejectsTextThatIsNotJson) {
  absl::StatusOr<Plan> plan = ParsePlanJson("{\"format\": ", "p.json");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("p.json: not valid JSON"));
}

// nlohmann reports a number beyond double as out_of_range, not parse_error;
// it escaped the reader once (found by fuzz/plan_json_fuzz).
TEST(PlanJsonTest, RejectsANumberBeyondDoubleAsInvalidJson) {
  absl::StatusOr<Plan> plan = ParsePlanJson(
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": []}, "events": [{"id": 858993e592}]})",
      "p.json");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("p.json: not valid JSON"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("number overflow"));
}

// The partition's members are node ids in memory and node names in the file:
// written by name, read back to the same ids, the text unchanged.
TEST(PlanJsonTest, PartitionMembersRoundTripAsNames) {
  absl::StatusOr<Plan> plan = ParsePlanJson(
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [)"
      R"({"name": "d", "type": "Data"}, {"name": "e", "type": "Data"}]},)"
      R"( "partition": {"decision": "partitioned", "reason": "r", "subgraphs": [)"
      R"({"name": "g_sub_0_know", "kind": "known", "call_node": "c", "nodes": ["e", "d"], "reasons": []}]}})",
      "p.json");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->partition.subgraphs.size(), 1u);
  const PartitionSubgraph& sg = plan->partition.subgraphs[0];
  EXPECT_THAT(sg.nodes, ::testing::ElementsAre(plan->model.FindNode("e"), plan->model.FindNode("d")));
  EXPECT_THAT(sg.NodeNames(plan->model), ::testing::ElementsAre("e", "d"));
  const std::string text = WritePlanJson(*plan);
  const nlohmann::json written = nlohmann::json::parse(text);
  EXPECT_EQ(written["partition"]["subgraphs"][0]["nodes"], nlohmann::json({"e", "d"}));
  absl::StatusOr<Plan> again = ParsePlanJson(text, "again.json");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->partition.subgraphs[0].nodes, sg.nodes);
  EXPECT_EQ(WritePlanJson(*again), text);
}

TEST(PlanJsonTest, RejectsAPartitionMemberThatIsNotInTheGraph) {
  absl::StatusOr<Plan> plan = ParsePlanJson(
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [{"name": "d", "type": "Data"}]},)"
      R"( "partition": {"decision": "partitioned", "reason": "r", "subgraphs": [)"
      R"({"name": "s0", "kind": "known", "call_node": "c", "nodes": ["d"]},)"
      R"( {"name": "s1", "kind": "unknown", "call_node": "c1", "nodes": ["d", "ghost"]}]}})",
      "p.json");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("p.json"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("$.partition.subgraphs[1].nodes[1]"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("'ghost'"));
}

// ---- Issue #19: ids are bounded by the file's own counts, fields are typed.

// Two nodes, `b` with one attached stream: 3 stream slots, ids 0..2.
std::string PlanWith(const std::string& sections) {
  return R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [)"
         R"({"name": "a", "type": "Data", "outputs": [{"shape": [1]}]},)"
         R"( {"name": "b", "type": "Relu", "inputs": ["a:0"]}]})" +
         sections + "}";
}

std::string Error(const std::string& text) {
  absl::StatusOr<Plan> plan = ParsePlanJson(text, "p.json");
  if (plan.ok()) return "OK";
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(plan.status().message());
}

TEST(PlanJsonTest, ReadsStreamIdsWithinTheSlotsOfItsNodes) {
  absl::StatusOr<Plan> plan = ParsePlanJson(
      PlanWith(R"(, "stages": ["physical-streams"], "nodes": {"a": {"logical_stream": 0, "stream": 0},)"
               R"( "b": {"logical_stream": 1, "stream": 1, "attached_streams": [2]}},)"
               R"( "streams": {"logical": 2, "physical": 3, "attached": [2], "split_to_logical": {"2": 1}},)"
               R"( "events": [{"id": 0, "send": "a", "recv": "b", "recv_attached": 0}])"),
      "p.json");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->model.node(plan->model.FindNode("b")).attached_stream_ids, std::vector<int64_t>{2});
  EXPECT_EQ(plan->physical_stream[1], 1);
  EXPECT_EQ(plan->events.events[0].recv_attached, 0);
}

// A stream id sizes per-stream arrays downstream (the sync view, the
// verifier): one beyond what the nodes can occupy is refused by the reader,
// however large (used to allocate gigabytes, or end in exit 70).
TEST(PlanJsonTest, RejectsStreamIdsBeyondTheNodesSlots) {
  for (const char* id : {"4", "100000000", "2147483647", "4294967296", "10000000000", "9223372036854775807"}) {
    SCOPED_TRACE(id);
    EXPECT_THAT(Error(PlanWith(StrCatForTest(R"(, "stages": ["physical-streams"], "nodes": {"a": {"stream": )", id,
                                              "}}"))),
                HasSubstr(StrCatForTest("p.json: $.nodes.a.stream: stream id ", id,
                                        " is out of range: the plan's nodes and attached streams allow ",
                                        "-1 (none) or 0..1")));
    EXPECT_THAT(Error(PlanWith(StrCatForTest(R"(, "nodes": {"b": {"logical_stream": )", id, "}}"))),
                HasSubstr("$.nodes.b.logical_stream: stream id"));
    EXPECT_THAT(Error(PlanWith(StrCatForTest(R"(, "nodes": {"b": {"attached_streams": [0, )", id, "]}}"))),
                HasSubstr("$.nodes.b.attached_streams[1]: stream id"));
    EXPECT_THAT(Error(PlanWith(StrCatForTest(R"(, "streams": {"huge": [)", id, "]}"))),
                HasSubstr("$.streams.huge[0]: stream id"));
    EXPECT_THAT(Error(PlanWith(StrCatForTest(R"(, "streams": {"split_to_logical": {")", id, R"(": 0}})"))),
                HasSubstr("key must be a physical stream id"));
    EXPECT_THAT(Error(PlanWith(StrCatForTest(R"(, "streams": {"physical": )", id, "}"))),
                HasSubstr("$.streams.physical: "));
  }
  EXPECT_THAT(Error(PlanWith(R"(, "nodes": {"a": {"logical_stream": 2}})")), HasSubstr("stream id 2 is out of range"));
  EXPECT_THAT(Error(PlanWith(R"(, "nodes": {"a": {"logical_stream": -2}})")), HasSubstr("stream id -2"));
  EXPECT_THAT(Error(PlanWith(R"(, "streams": {"list": [{"id": 5}]})")), HasSubstr("$.streams.list[0].id"));
}

TEST(PlanJsonTest, RejectsAnAttachedIndexTheNodeDoesNotHave) {
  // 2^32 + 1 once read as 1 through an int; -7 and 1 name no attached stream of 'b' (it has one).
  for (const char* v : {"4294967297", "-7", "1"}) {
    SCOPED_TRACE(v);
    EXPECT_THAT(Error(PlanWith(StrCatForTest(R"(, "nodes": {"b": {"attached_streams": [1]}}, "events": [)",
                                             R"({"id": 0, "send": "a", "recv": "b", "recv_attached": )", v, "}]"))),
                HasSubstr(StrCatForTest("$.events[0].recv_attached: ", v,
                                        " is out of range: node 'b' has 1 attached streams")));
  }
}

// Enum fields (plan_enums.h): a name outside the table is refused, after
// the section's other checks.
TEST(PlanJsonTest, RefusesANameOutsideAnEnumTable) {
  EXPECT_THAT(Error(PlanWith(R"(, "memory": {"tensors": [{"node": "a", "region": "heap"}]})")),
              HasSubstr("$.memory.tensors[0].region: 'heap' is not one of activation, input, "
                        "constant, workspace"));
  EXPECT_THAT(Error(PlanWith(
                  R"(, "memory": {"tensors": [{"node": "a", "region": "heap", "offset": "0"}]})")),
              HasSubstr("$.memory.tensors[0].offset: expected an integer"));
  // Mode, decision and kind keep the claims check's code and text.
  const absl::Status mode =
      ParsePlanJson(PlanWith(R"(, "streams": {"mode": "sideways"})"), "p.json").status();
  EXPECT_EQ(mode.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(std::string(mode.message()),
            "p.json: verifier[streams]: streams.mode 'sideways' is not one of multi, single, "
            "dynamic-single, dynamic-multi");
}

TEST(PlanJsonTest, NamesTheJsonPathOfAFieldOfTheWrongType) {
  EXPECT_THAT(Error(PlanWith(R"(, "nodes": {"b": {"tasks": "many"}})")),
              HasSubstr("p.json: $.nodes.b.tasks: expected an integer, found a string"));
  EXPECT_THAT(Error(PlanWith(R"(, "nodes": {"b": {"tasks": 1.5}})")),
              HasSubstr("$.nodes.b.tasks: expected an integer, found 1.5"));
  EXPECT_THAT(Error(PlanWith(R"(, "nodes": {"b": {"tasks": 18446744073709551615}})")),
              HasSubstr("$.nodes.b.tasks: expected an integer, found 18446744073709551615 (beyond int64)"));
  EXPECT_THAT(Error(PlanWith(R"(, "nodes": {"b": 7})")), HasSubstr("$.nodes.b: expected an object, found 7"));
  EXPECT_THAT(Error(PlanWith(R"(, "events": {})")), HasSubstr("$.events: expected an array, found an object"));
  EXPECT_THAT(Error(PlanWith(R"(, "events": [{"id": 0, "send": 3, "recv": "b"}])")),
              HasSubstr("$.events[0].send: expected a string, found 3"));
  EXPECT_THAT(Error(PlanWith(R"(, "streams": {"mode": null})")),
              HasSubstr("$.streams.mode: expected a string, found null"));
  EXPECT_THAT(Error(PlanWith(R"(, "memory": {"tensors": [{"node": "a", "offset": "0"}]})")),
              HasSubstr("$.memory.tensors[0].offset: expected an integer, found a string"));
  EXPECT_THAT(Error(PlanWith(R"(, "stages": ["tasks", 3])")), HasSubstr("$.stages[1]: expected a string, found 3"));
  EXPECT_THAT(Error(PlanWith(R"(, "event_counts": {"ge": true})")),
              HasSubstr("$.event_counts.ge: expected an integer, found true"));
  // Never the json library's own text.
  EXPECT_THAT(Error(PlanWith(R"(, "nodes": {"b": {"tasks": "many"}})")), Not(HasSubstr("json.exception")));
}

TEST(PlanJsonTest, RejectsAMemoryAlignmentTheCompileCannotHaveUsed) {
  for (const char* v : {"0", "3", "2147483648", "4611686018427387904"}) {
    SCOPED_TRACE(v);
    EXPECT_THAT(Error(PlanWith(StrCatForTest(R"(, "memory": {"alignment": )", v, "}"))),
                HasSubstr("$.memory.alignment: expected"));
  }
  // An output index is an int32 anchor: 2^32 - 1 is not -1.
  EXPECT_THAT(Error(PlanWith(R"(, "memory": {"tensors": [{"node": "a", "output": 4294967295}]})")),
              HasSubstr("$.memory.tensors[0].output: expected an integer in [-1, 2147483647], found 4294967295"));
}

TEST(PlanJsonTest, NamesAByteOrderMark) {
  EXPECT_THAT(Error("\xEF\xBB\xBF" + PlanWith("")), HasSubstr("p.json: starts with a UTF-8 byte order mark (BOM"));
}

// The reader takes the plan apart member by member (no DOM of the whole
// document): every golden plan reads back to the same plan, written out byte
// for byte as it was, also after its whitespace and key order are changed.
TEST(PlanJsonTest, GoldenPlansReadSectionBySectionRoundTripByteForByte) {
  int plans = 0;
  for (const auto& dir :
       std::filesystem::directory_iterator(NPUPLAN_SOURCE_DIR "/testdata/plans")) {
    const std::string path = dir.path().string() + "/expected.plan.json";
    if (!std::filesystem::exists(path)) continue;
    ++plans;
    absl::StatusOr<std::string> text = ReadFile(path);
    ASSERT_TRUE(text.ok()) << text.status();
    absl::StatusOr<Plan> plan = ParsePlanJson(*text, path);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(WritePlanJson(*plan), *text) << path;
    std::string streamed;
    EXPECT_TRUE(WritePlanJson(*plan, [&](std::string_view chunk) {
                  streamed += chunk;
                  return absl::OkStatus();
                }).ok());
    EXPECT_EQ(streamed, *text) << path;
    // Gated (the compile driver's writer, started while memory-planning
    // runs): the same text, the gate asked once; a closed gate stops it.
    std::string gated;
    int asked = 0;
    auto gated_sink = [&](std::string_view chunk) {
      gated += chunk;
      return absl::OkStatus();
    };
    EXPECT_TRUE(WritePlanJson(*plan, gated_sink, [&] {
                  ++asked;
                  return true;
                }).ok());
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(gated, *text) << path;
    gated.clear();
    EXPECT_EQ(WritePlanJson(*plan, gated_sink, [] { return false; }).code(),
              absl::StatusCode::kCancelled);
    EXPECT_EQ(text->find(gated), 0u) << "a stopped write is a prefix of the text";
    // Compact, and indented by 3 with every object's keys reversed.
    const nlohmann::json doc = nlohmann::json::parse(*text);
    const nlohmann::ordered_json reversed = Reversed(doc);
    for (const std::string& variant : {doc.dump(), reversed.dump(3)}) {
      absl::StatusOr<Plan> again = ParsePlanJson(variant, path);
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_EQ(WritePlanJson(*again), *text) << path;
    }
  }
  EXPECT_GT(plans, 5);
}

// The tensors and node entries are written as whole pieces of text when
// their strings need no escaping, member by member otherwise. Against the
// reference — nlohmann's dump(1) of the written document, whose values must
// be the plan's — on golden plans whose node and graph names, tensor fields,
// streams, task counts and topo ids are randomised (names sometimes with
// quotes, backslashes, control bytes or non-ASCII, integers at the extremes).
TEST(PlanJsonTest, WritesRandomTensorAndNodeEntriesAsNlohmannDumps) {
  std::mt19937_64 rng(11);
  auto random_int = [&rng] { return npuplan::testing::RandomExtremeInt(rng); };
  int checked = 0;
  for (const char* dir :
       {"transformer_split_full", "multistream_notify_full", "dynamic_multistream_full"}) {
    const std::string path = StrCatForTest(std::string(NPUPLAN_SOURCE_DIR "/testdata/plans/"), dir,
                                           "/expected.plan.json");
    absl::StatusOr<std::string> text = ReadFile(path);
    ASSERT_TRUE(text.ok()) << text.status();
    for (int trial = 0; trial < 20; ++trial) {
      absl::StatusOr<Plan> parsed = ParsePlanJson(*text, path);
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      Plan& plan = *parsed;
      Model& m = plan.model;
      const bool escapes = trial % 2 == 1;  // half the trials: plain names only
      for (size_t i = 0; i < m.num_nodes(); ++i) {
        if (rng() % 3 != 0) continue;
        std::string name = StrCatForTest(std::string("n"), std::to_string(i), "_");
        for (size_t k = rng() % 12; k > 0; --k)
          name += npuplan::testing::RandomNamePiece(rng, escapes);
        m.RenameNode(NodeId(static_cast<int32_t>(i)), name);
        Node& node = m.node(NodeId(static_cast<int32_t>(i)));
        node.topo_id = random_int();
        node.stream_id = random_int();
      }
      if (escapes && rng() % 2 == 0) m.graph(GraphId(0)).name += "\"\u00e9";
      for (int64_t& t : plan.tasks) t = random_int();
      for (int64_t& s : plan.physical_stream) s = random_int();
      for (TensorPlacement& t : plan.memory.tensors) {
        t.first_use = random_int();
        t.last_use = random_int();
        t.offset = random_int();
        t.size = random_int();
        t.stream = random_int();
        t.output = static_cast<int32_t>(random_int());
      }
      const std::string written = WritePlanJson(plan);
      const nlohmann::json doc = nlohmann::json::parse(written);
      ASSERT_EQ(doc.dump(1) + "\n", written) << dir << " trial " << trial;
      const auto& tensors = doc.at("memory").at("tensors");
      ASSERT_EQ(tensors.size(), plan.memory.tensors.size());
      for (size_t k = 0; k < tensors.size(); ++k) {
        const TensorPlacement& t = plan.memory.tensors[k];
        const auto& e = tensors[k];
        EXPECT_EQ(e.at("buffer"), t.buffer);
        EXPECT_EQ(e.at("first_use").get<int64_t>(), t.first_use);
        EXPECT_EQ(e.at("last_use").get<int64_t>(), t.last_use);
        EXPECT_EQ(e.at("node"), m.node(t.node).name);
        EXPECT_EQ(e.at("offset").get<int64_t>(), t.offset);
        EXPECT_EQ(e.at("output").get<int64_t>(), t.output);
        EXPECT_EQ(e.at("size").get<int64_t>(), t.size);
        EXPECT_EQ(e.at("stream").get<int64_t>(), t.stream);
      }
      const auto& nodes = doc.at("nodes");
      ASSERT_EQ(nodes.size(), m.num_nodes());
      for (size_t i = 0; i < m.num_nodes(); ++i) {
        const Node& node = m.nodes()[i];
        const auto& e = nodes.at(node.name);
        std::vector<int64_t> sends, recvs;
        for (const SyncEvent& ev : plan.events.events) {
          if (ev.send.valid() && ev.send.index() == i) sends.push_back(ev.id);
          if (ev.recv.valid() && ev.recv.index() == i) recvs.push_back(ev.id);
        }
        EXPECT_EQ(e.at("graph"), m.graph(node.graph).name);
        EXPECT_EQ(e.at("logical_stream").get<int64_t>(), node.stream_id);
        EXPECT_EQ(e.at("send_events").get<std::vector<int64_t>>(), sends);
        EXPECT_EQ(e.at("recv_events").get<std::vector<int64_t>>(), recvs);
        const int64_t physical = i < plan.physical_stream.size() ? plan.physical_stream[i] : -1;
        EXPECT_EQ(e.at("stream").get<int64_t>(), physical >= 0 ? physical : node.stream_id);
        EXPECT_EQ(e.at("tasks").get<int64_t>(), i < plan.tasks.size() ? plan.tasks[i] : 0);
        EXPECT_EQ(e.at("topo_id").get<int64_t>(), node.topo_id);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 60);
}

// A key twice is refused where it is, with the path of its object, in the
// graph, in a section's entry and between a section's entries.
TEST(PlanJsonTest, RefusesADuplicateKeyInsideASectionNamingItsPath) {
  const std::string head =
      R"({"format": "npuplan.plan/1", "graph": {"format": "npuplan.graph/1", "nodes": [{"name": "d", "type": "Data"}, {"name": "e", "type": "Data"}]}, )";
  const std::pair<std::string, std::string> cases[] = {
      {R"("nodes": {"d": {"tasks": 1, "tasks": 2}, "e": {}}})",
       "p.json: $.nodes.d: duplicate key 'tasks'"},
      {R"("nodes": {"d": {}, "e": {}, "d": {}}})", "p.json: $.nodes: duplicate key 'd'"},
      {R"("memory": {"tensors": [{"node": "d"}, {"node": "e", "size": 1, "node": "d"}]}})",
       "p.json: $.memory.tensors[1]: duplicate key 'node'"},
      {R"("events": [], "events": []})", "p.json: $: duplicate key 'events'"},
  };
  for (const auto& [tail, message] : cases) {
    absl::StatusOr<Plan> plan = ParsePlanJson(head + tail, "p.json");
    ASSERT_FALSE(plan.ok()) << tail;
    EXPECT_EQ(plan.status().message(), message);
  }
}

// The writer's name order against std::string order: random names over a
// few bytes (zero bytes included), many sharing long prefixes, some a prefix
// of another.
TEST(PlanJsonTest, NodesByNameSortsAsStdStringCompares) {
  std::mt19937 rng(3);
  for (int round = 0; round < 40; ++round) {
    Model m;
    std::set<std::string> used;
    const std::string stems[] = {"", "transformer_l3846_Send_",
                                 "abcdefghijklmnopqrstuvwxyz0123456789_",
                                 std::string("ab\0cd\0\0efghijklmnop", 20)};
    const int n = 1 + static_cast<int>(rng() % 300);
    while (static_cast<int>(used.size()) < n) {
      std::string name = stems[rng() % 4];
      const size_t len = rng() % 40;
      for (size_t i = 0; i < len; ++i) name += "\0a_\x80\xffz"[rng() % 6];
      if (name.empty() || !used.insert(name).second) continue;
      Node node;
      node.name = name;
      node.type = "Add";
      m.AddNode(GraphId(0), std::move(node));
    }
    std::vector<uint32_t> want(m.num_nodes());
    for (size_t i = 0; i < want.size(); ++i) want[i] = static_cast<uint32_t>(i);
    std::sort(want.begin(), want.end(),
              [&](uint32_t a, uint32_t b) { return m.nodes()[a].name < m.nodes()[b].name; });
    EXPECT_EQ(plan_json_internal::NodesByName(m), want) << "round " << round;
  }
}

// Generated names ("n<id>", the random DAG's, in random order) in a list
// long enough for the radix sort.
TEST(PlanJsonTest, NodesByNameSortsGeneratedNamesAsStdStringCompares) {
  std::mt19937 rng(5);
  Model m;
  std::set<uint32_t> used;
  while (used.size() < 5000) {
    const uint32_t id = rng() % (used.size() % 2 == 0 ? 1000000 : 3000);
    if (!used.insert(id).second) continue;
    Node node;
    node.name = StrCat("n", id);
    node.type = "Add";
    m.AddNode(GraphId(0), std::move(node));
  }
  std::vector<uint32_t> want(m.num_nodes());
  for (size_t i = 0; i < want.size(); ++i) want[i] = static_cast<uint32_t>(i);
  std::stable_sort(want.begin(), want.end(),
                   [&](uint32_t a, uint32_t b) { return m.nodes()[a].name < m.nodes()[b].name; });
  EXPECT_EQ(plan_json_internal::NodesByName(m), want);
}

}  // namespace
}  // namespace npuplan
