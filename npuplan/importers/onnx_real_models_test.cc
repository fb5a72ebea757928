// Import-level tests on the real models of ../shared/guides/WORKLOADS.md.
// scripts/fetch_models.sh puts them in $NPUPLAN_MODEL_CACHE (default
// .cache/models); each test GTEST_SKIPs when its file is absent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "npuplan/importers/onnx_importer.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;

std::string ModelPath(const std::string& file) {
  const char* env = std::getenv("NPUPLAN_MODEL_CACHE");
  std::string dir = env && *env ? env : std::string(NPUPLAN_SOURCE_DIR) + "/.cache/models";
  return dir + "/" + file;
}

#define NPUPLAN_REQUIRE_MODEL(path)                                                               \
  if (!std::filesystem::exists(path)) {                                                          \
    GTEST_SKIP() << path << " is absent: run scripts/fetch_models.sh (needs the npm registry)"; \
  }

int CountType(const Model& m, const std::string& type) {
  int n = 0;
  for (const Node& node : m.nodes()) n += node.type == type;
  return n;
}
int MaxDepth(const Model& m) {
  int d = 0;
  for (size_t g = 0; g < m.num_graphs(); ++g) d = std::max(d, m.Depth(GraphId(static_cast<int32_t>(g))));
  return d;
}

struct Case {
  std::string file;
  std::string input_shape;     // pinned shapes, ';'-separated ("" = leave symbolic)
  int64_t onnx_nodes;          // NodeProtos in all graphs (WORKLOADS.md)
  int64_t opset;
};

class RealModelTest : public ::testing::TestWithParam<Case> {};

TEST_P(RealModelTest, ImportsVerifiesAndMapsEveryNodeToAKnownEngine) {
  const Case& c = GetParam();
  std::string path = ModelPath(c.file);
  NPUPLAN_REQUIRE_MODEL(path);
  OnnxImportOptions opts;
  for (size_t pos = 0; pos < c.input_shape.size();) {
    size_t end = c.input_shape.find(';', pos);
    if (end == std::string::npos) end = c.input_shape.size();
    opts.input_shapes.push_back(c.input_shape.substr(pos, end - pos));
    pos = end + 1;
  }
  auto start = std::chrono::steady_clock::now();
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, ImportOnnxFile(path, opts));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  // The numbers docs/onnx.md reports (printed, never asserted on time).
  std::printf("[ model    ] %s %s: %lld ONNX nodes -> %lld nodes, %lld subgraphs, %lld captures, %lld dynamic "
              "nodes, %lld unknown tensors (ONNX alone %lld, %lld dims folded, %lld rounds), %.0f ms\n",
              c.file.c_str(), c.input_shape.c_str(), (long long)r.stats.onnx_nodes, (long long)r.stats.nodes,
              (long long)r.stats.subgraphs, (long long)r.stats.captures, (long long)r.stats.dynamic_nodes,
              (long long)r.stats.unknown_tensors, (long long)r.stats.unknown_tensors_onnx,
              (long long)r.stats.folded_dims, (long long)r.stats.fold_rounds, ms);
  EXPECT_THAT(VerifyStructure(r.model), IsOk());
  EXPECT_EQ(r.stats.onnx_nodes, c.onnx_nodes);
  EXPECT_EQ(r.stats.opset, c.opset);
  for (const Node& n : r.model.nodes()) {
    EXPECT_NE(r.model.engine_table.Find(n.engine), nullptr) << n.name << " engine " << n.engine;
  }
  for (const std::string& w : r.warnings) {
    EXPECT_THAT(w, ::testing::Not(::testing::HasSubstr("is not in the engine table"))) << c.file;
  }
  EXPECT_LE(r.stats.unknown_tensors, r.stats.unknown_tensors_onnx);
  if (!c.input_shape.empty()) {
    // With the input pinned, everything except data-dependent shapes is static.
    EXPECT_LT(r.stats.dynamic_nodes, r.stats.nodes / 2) << c.file;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, RealModelTest,
    ::testing::Values(Case{"ch_ppocr_mobile_v2.0_cls_infer.onnx", "x=1x3x48x192", 471, 9},
                      Case{"ch_PP-OCRv4_det_infer.onnx", "x=1x3x960x960", 672, 11},
                      Case{"ch_PP-OCRv4_rec_infer.onnx", "x=1x3x48x320", 765, 9},
                      Case{"silero_vad_v5.onnx", "", 689, 16},
                      Case{"silero_vad_legacy.onnx", "", 250, 16},
                      Case{"ch_ppocr_mobile_v2.0_cls_infer.onnx", "", 471, 9},
                      Case{"ch_PP-OCRv4_det_infer.onnx", "", 672, 11},
                      Case{"ch_PP-OCRv4_rec_infer.onnx", "", 765, 9},
                      Case{"silero_vad_v5.onnx", "input=1x512;state=2x1x128;sr=", 689, 16},
                      Case{"silero_vad_legacy.onnx", "input=1x512;h=2x1x64;c=2x1x64;sr=", 250, 16}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = info.param.file.substr(0, info.param.file.rfind('.'));
      if (info.param.input_shape.empty()) name += "_unpinned";
      if (info.param.file.rfind("silero", 0) == 0 && !info.param.input_shape.empty()) name += "_pinned";
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

TEST(RealModelTest, PinnedPaddleOcrClassifierIsFullyStatic) {
  std::string path = ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  NPUPLAN_REQUIRE_MODEL(path);
  OnnxImportOptions opts;
  opts.input_shapes = {"x=1x3x48x192"};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, ImportOnnxFile(path, opts));
  EXPECT_EQ(r.stats.dynamic_nodes, 0);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport unpinned, ImportOnnxFile(path));
  EXPECT_GT(unpinned.stats.dynamic_nodes, 0);  // the symbolic batch/H/W stay -1
}

TEST(RealModelTest, SileroV5HasTwentyFiveNestedIfsWithExplicitCaptures) {
  std::string path = ModelPath("silero_vad_v5.onnx");
  NPUPLAN_REQUIRE_MODEL(path);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, ImportOnnxFile(path));
  const Model& m = r.model;
  EXPECT_EQ(CountType(m, "If"), 25);
  EXPECT_EQ(r.stats.subgraphs, 50);
  EXPECT_EQ(MaxDepth(m), 4);  // If bodies inside If bodies, four levels below the root
  EXPECT_GT(r.stats.captures, 0);
  // Every body Data node names the parent input it stands for.
  for (size_t g = 1; g < m.num_graphs(); ++g) {
    for (NodeId id : m.graphs()[g].nodes) {
      const Node& n = m.node(id);
      if (n.type != "Data") continue;
      EXPECT_TRUE(GetIntAttr(n.attrs, "_parent_node_index").has_value()) << n.name;
    }
  }
}

TEST(RealModelTest, SileroLegacyKeepsInitializersAsConsts) {
  std::string path = ModelPath("silero_vad_legacy.onnx");
  NPUPLAN_REQUIRE_MODEL(path);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, ImportOnnxFile(path));
  EXPECT_EQ(CountType(r.model, "If"), 9);
  int initializers = 0;
  for (const Node& n : r.model.nodes()) initializers += GetBoolAttr(n.attrs, "_onnx_initializer").value_or(false);
  EXPECT_GT(initializers, 0);
}

}  // namespace
}  // namespace npuplan
