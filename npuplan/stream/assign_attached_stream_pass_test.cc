#include "npuplan/stream/assign_attached_stream_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/stream/stream_testing.h"
#include "npuplan/testing/status_matchers.h"
#include "npuplan/verify/stage_checks.h"

namespace npuplan::stream {
namespace {
using ::npuplan::stream::testing::CompileStreams;
using ::npuplan::stream::testing::StreamOf;
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<int64_t> Attached(const Plan& p, std::string_view n) {
  return p.model.node(p.model.FindNode(n)).attached_stream_ids;
}

// GE ST AttachedResourceAssign: group g0 keys as0,as0,as1,as1; group g1 keys as0,as0.
TEST(AssignAttachedStreamPassTest, SharesAttachedStreamPerGroupAndKey) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "mc2_0", "type": "MatMul", "attrs": {"group": "g0", "_attached_stream_info": {"policy": "group", "_attached_stream_key": "as0"}}},
    {"name": "mc2_1", "type": "MatMul", "inputs": ["mc2_0"], "attrs": {"group": "g0", "_attached_stream_info": {"policy": "group", "_attached_stream_key": "as0"}}},
    {"name": "mc2_2", "type": "MatMul", "inputs": ["mc2_1"], "attrs": {"group": "g0", "_attached_stream_info": {"policy": "group", "_attached_stream_key": "as1"}}},
    {"name": "mc2_3", "type": "MatMul", "inputs": ["mc2_2"], "attrs": {"group": "g0", "_attached_stream_info": {"policy": "group", "_attached_stream_key": "as1"}}},
    {"name": "mc2_4", "type": "MatMul", "inputs": ["mc2_3"], "attrs": {"group": "g1", "_attached_stream_info": {"policy": "group", "_attached_stream_key": "as0"}}},
    {"name": "mc2_5", "type": "MatMul", "inputs": ["mc2_4"], "attrs": {"group": "g1", "_attached_stream_info": {"policy": "group", "_attached_stream_key": "as0"}}}]})json"));
  EXPECT_EQ(plan.streams.logical, 1);
  EXPECT_THAT(Attached(plan, "mc2_0"), ElementsAre(1));
  EXPECT_THAT(Attached(plan, "mc2_1"), ElementsAre(1));
  EXPECT_THAT(Attached(plan, "mc2_2"), ElementsAre(2));
  EXPECT_THAT(Attached(plan, "mc2_3"), ElementsAre(2));
  EXPECT_THAT(Attached(plan, "mc2_4"), ElementsAre(3));
  EXPECT_THAT(Attached(plan, "mc2_5"), ElementsAre(3));
  EXPECT_THAT(plan.streams.attached, ElementsAre(1, 2, 3));
  EXPECT_THAT(plan.streams.streams[0].attached_ids, ElementsAre(1, 2, 3));
  EXPECT_THAT(verify::VerifyAttachedStreams(plan), IsOk());
}

constexpr char kV2[] = R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_attached_stream_info_list": [{"name": "s", "reuse_key": "k", "force_reuse": %FORCE%}]}},
    {"name": "h", "type": "HcomAllReduce", "inputs": ["a"]},
    {"name": "c", "type": "Relu", "inputs": ["a"]},
    {"name": "v", "type": "Op", "engine": "VectorEngine", "inputs": ["h", "c"], "attrs": {"_stream_label": "L", "_attached_stream_info_list": [{"name": "s", "reuse_key": "k", "force_reuse": %FORCE%}]}},
    {"name": "off", "type": "Relu", "inputs": ["v"], "attrs": {"_disable_attached_resource": true, "_attached_stream_info_list": [{"name": "s", "reuse_key": "k"}]}},
    {"name": "opt", "type": "Relu", "inputs": ["v"], "attrs": {"_attached_stream_info_list": [{"name": "s", "reuse_key": "k", "required": false}]}}]})json";

std::string WithForce(bool force) {
  std::string s = kV2;
  for (size_t p; (p = s.find("%FORCE%")) != std::string::npos;) s.replace(p, 7, force ? "true" : "false");
  return s;
}

TEST(AssignAttachedStreamPassTest, V2DifferentMainStreamsGetDifferentAttachedStreams) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(WithForce(false)));
  ASSERT_NE(StreamOf(plan, "a"), StreamOf(plan, "v"));
  ASSERT_EQ(Attached(plan, "a").size(), 1u);
  ASSERT_EQ(Attached(plan, "v").size(), 1u);
  EXPECT_NE(Attached(plan, "a"), Attached(plan, "v"));
  EXPECT_GE(Attached(plan, "a")[0], plan.streams.logical);
  EXPECT_THAT(Attached(plan, "off"), IsEmpty());
  EXPECT_THAT(Attached(plan, "opt"), IsEmpty());
  EXPECT_EQ(plan.streams.attached.size(), 2u);
}

TEST(AssignAttachedStreamPassTest, V2ForceReuseSharesAcrossMainStreams) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(WithForce(true)));
  EXPECT_EQ(Attached(plan, "a"), Attached(plan, "v"));
  EXPECT_EQ(plan.streams.attached.size(), 1u);
}

TEST(AssignAttachedStreamPassTest, RejectsBadPolicyAndTwoAttachedStreams) {
  EXPECT_THAT(CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu", "attrs": {
                  "_attached_stream_info": {"policy": "exclusive", "_attached_stream_key": "k"}}}]})json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "policy must be \"group\""));
  EXPECT_THAT(CompileStreams(R"json({"nodes": [{"name": "a", "type": "Relu", "attrs": {
                  "_attached_stream_info_list": [{"name": "s1"}, {"name": "s2"}]}}]})json"),
              StatusIs(absl::StatusCode::kInvalidArgument, "at most one attached stream"));
}

// The entry of `name`'s `_attached_stream_info_list` at `i`.
const AttrMap& Entry(const Plan& p, std::string_view name, size_t i) {
  const AttrValue* v = FindAttr(p.model.node(p.model.FindNode(name)).attrs, "_attached_stream_info_list");
  return v->as<AttrValue::MapList>()->at(i);
}

// GE's own attribute names inside `_attached_stream_info_list` entries
// (ge_attr_define.cc); the required flag defaults to false as in GE's
// AttachedResourceInfoV2; results go back into the entry (ge-reference §2.5).
TEST(AssignAttachedStreamPassTest, V2ReadsGeNamesAndWritesIdAndValidityBack) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_attached_stream_info_list": [
      {"_attached_resource_name": "tiling", "_attached_resource_reuse_key": "k",
       "_attached_resource_required_flag": true, "_attached_resource_force_reuse": true}]}},
    {"name": "v", "type": "Op", "engine": "VectorEngine", "inputs": ["a"], "attrs": {"_stream_label": "L",
      "_attached_stream_info_list": [
      {"_attached_resource_name": "tiling", "_attached_resource_reuse_key": "k",
       "_attached_resource_required_flag": true, "_attached_resource_force_reuse": true}]}},
    {"name": "opt", "type": "Relu", "inputs": ["v"], "attrs": {"_attached_stream_info_list": [
      {"_attached_resource_name": "tiling", "_attached_resource_reuse_key": "k"}]}}]})json"));
  ASSERT_NE(StreamOf(plan, "a"), StreamOf(plan, "v"));
  ASSERT_THAT(Attached(plan, "a"), ElementsAre(plan.streams.logical));
  EXPECT_EQ(Attached(plan, "v"), Attached(plan, "a"));  // force reuse across main streams
  EXPECT_THAT(Attached(plan, "opt"), IsEmpty());          // not required (GE default)
  EXPECT_EQ(GetIntAttr(Entry(plan, "a", 0), "_attached_resource_id"), plan.streams.logical);
  EXPECT_EQ(GetBoolAttr(Entry(plan, "a", 0), "_attached_resource_is_valid"), true);
  EXPECT_EQ(GetIntAttr(Entry(plan, "v", 0), "_attached_resource_id"), plan.streams.logical);
  EXPECT_FALSE(HasAttr(Entry(plan, "opt", 0), "_attached_resource_id"));
  EXPECT_FALSE(HasAttr(Entry(plan, "opt", 0), "_attached_resource_is_valid"));
}

// V1: GE's policy attribute is `_attached_stream_policy` (`policy` is an
// npuplan alias).
TEST(AssignAttachedStreamPassTest, V1ReadsGePolicyName) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "a", "type": "MatMul", "attrs": {"group": "g0",
      "_attached_stream_info": {"_attached_stream_policy": "group", "_attached_stream_key": "as0"}}}]})json"));
  EXPECT_THAT(Attached(plan, "a"), ElementsAre(1));
}

// GE skips a node that has `_disable_attached_resource`, whatever its value.
TEST(AssignAttachedStreamPassTest, DisableAttributeCountsByPresence) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(R"json({"nodes": [
    {"name": "a", "type": "Relu", "attrs": {"_disable_attached_resource": false,
      "_attached_stream_info_list": [{"_attached_resource_name": "s", "_attached_resource_required_flag": true}]}}]})json"));
  EXPECT_THAT(Attached(plan, "a"), IsEmpty());
  EXPECT_TRUE(plan.streams.attached.empty());
}

TEST(AssignAttachedStreamPassTest, VerifierRejectsAttachedIdInsideMainRange) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Plan plan, CompileStreams(WithForce(true)));
  plan.model.node(plan.model.FindNode("a")).attached_stream_ids = {0};
  EXPECT_THAT(verify::VerifyAttachedStreams(plan),
              StatusIs(absl::StatusCode::kInternal, "outside the attached range"));
}

}  // namespace
}  // namespace npuplan::stream
