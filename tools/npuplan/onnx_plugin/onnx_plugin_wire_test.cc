#include "tools/npuplan/onnx_plugin/onnx_plugin_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/ir/graph_json.h"
#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::onnx_plugin {
namespace {

using ::npuplan::testing::ParseVerifiedGraph;
using ::npuplan::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kGraph[] = R"({
  "format": "npuplan.graph/1", "name": "g",
  "nodes": [
    {"name": "x", "type": "Data", "outputs": [{"shape": [1, 8]}]},
    {"name": "r", "type": "Relu", "inputs": ["x:0"], "outputs": [{"shape": [1, 8]}],
     "attrs": {"alpha": 0.25, "flag": true, "ids": [3, 1, 2]}},
    {"name": "out", "type": "NetOutput", "inputs": ["r:0"]}
  ]
})";

TEST(OnnxPluginWireTest, RequestRoundTripsEveryField) {
  OnnxSourceRequest r;
  r.path = "dir/m.onnx";
  r.model_dir = "ext";
  r.engines_file = "e.json";
  r.input_shapes = {"x=1x3", "y="};
  r.dims = {"batch=2"};
  r.strict_shapes = true;
  r.allow_unknown_ops = true;
  r.fold_shapes = false;
  r.bytes = "not sent";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxSourceRequest back, DecodeRequest(EncodeRequest(r)));
  EXPECT_EQ(back.path, r.path);
  EXPECT_EQ(back.model_dir, r.model_dir);
  EXPECT_EQ(back.engines_file, r.engines_file);
  EXPECT_EQ(back.input_shapes, r.input_shapes);
  EXPECT_EQ(back.dims, r.dims);
  EXPECT_TRUE(back.strict_shapes);
  EXPECT_TRUE(back.allow_unknown_ops);
  EXPECT_FALSE(back.fold_shapes);
  EXPECT_FALSE(back.bytes.has_value());  // the bytes travel beside the request
}

TEST(OnnxPluginWireTest, AnImportRoundTripsModelWarningsAndStats) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(Model model, ParseVerifiedGraph(kGraph));
  OnnxImport imported;
  imported.model = model;
  imported.warnings = {"first", "second: with \"quotes\"\nand a newline"};
  imported.stats.opset = 17;
  imported.stats.folded_dims = 5;
  imported.stats.external_tensors = 2;
  imported.stats.sorted = true;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(
      OnnxImport back, DecodeResponse(EncodeResponse(imported), "m.onnx", EngineTable::Default()));
  EXPECT_EQ(WriteGraphJson(back.model), WriteGraphJson(model));
  EXPECT_EQ(back.warnings, imported.warnings);
  EXPECT_EQ(back.stats.opset, 17);
  EXPECT_EQ(back.stats.folded_dims, 5);
  EXPECT_EQ(back.stats.external_tensors, 2);
  EXPECT_TRUE(back.stats.sorted);
}

TEST(OnnxPluginWireTest, AnErrorKeepsItsCodeAndMessage) {
  absl::StatusOr<OnnxImport> failed = absl::InvalidArgumentError("m.onnx: opset 5 is below 7");
  auto back = DecodeResponse(EncodeResponse(failed), "m.onnx", EngineTable::Default());
  EXPECT_THAT(back, StatusIs(absl::StatusCode::kInvalidArgument, "m.onnx: opset 5 is below 7"));
}

TEST(OnnxPluginWireTest, MalformedMessagesAreInternalErrors) {
  EXPECT_THAT(DecodeRequest("[1]"), StatusIs(absl::StatusCode::kInternal, "malformed request"));
  EXPECT_THAT(DecodeRequest(R"({"path": "m.onnx"})"),
              StatusIs(absl::StatusCode::kInternal, "malformed request"));
  const EngineTable& e = EngineTable::Default();
  EXPECT_THAT(DecodeResponse("no newline", "m", e),
              StatusIs(absl::StatusCode::kInternal, "no header line"));
  EXPECT_THAT(DecodeResponse("{\"code\": 0}\n{}", "m", e),
              StatusIs(absl::StatusCode::kInternal, "malformed"));
  auto bad_graph = DecodeResponse(
      "{\"code\": 0, \"stats\": {\"ir_version\": 0, \"opset\": 0, \"onnx_nodes\": 0, \"nodes\": 0, "
      "\"subgraphs\": 0, \"captures\": 0, \"dynamic_nodes\": 0, \"unknown_tensors_onnx\": 0, "
      "\"unknown_tensors\": 0, \"fold_rounds\": 0, \"folded_dims\": 0, \"failed_nodes\": 0, "
      "\"external_tensors\": 0, \"sorted\": false}, \"warnings\": []}\nnot json",
      "m", e);
  EXPECT_THAT(bad_graph, StatusIs(absl::StatusCode::kInternal, "malformed graph"));
}

}  // namespace
}  // namespace npuplan::onnx_plugin
