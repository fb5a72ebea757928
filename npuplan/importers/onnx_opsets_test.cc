// Issue 18 (opsets 7–22, com.microsoft ops, transformer folding, quantised
// types, external data, --dim, diagnostics) and the ONNX parts of issue 19
// (overflow, data counts, empty op types, nesting depth).
#include <fcntl.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "npuplan/importers/onnx_importer.h"
#include "npuplan/importers/onnx_schemas.h"
#include "npuplan/importers/onnx_test_builders.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using namespace ::npuplan::onnx_test;  // NOLINT
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<OnnxImport> Import(const onnx::ModelProto& m, OnnxImportOptions opts = {}) {
  return ImportOnnx(m.SerializeAsString(), "test.onnx", opts);
}

const Node& N(const Model& m, const std::string& name) {
  NodeId id = m.FindNode(name);
  EXPECT_TRUE(id.valid()) << "no node " << name;
  static Node empty;
  return id.valid() ? m.node(id) : empty;
}
std::vector<int64_t> Shape(const OnnxImport& r, const std::string& node, size_t out = 0) {
  const Node& n = N(r.model, node);
  return out < n.outputs.size() ? n.outputs[out].shape : std::vector<int64_t>{};
}

// ---- opsets 18–22: npuplan's schemas ----------------------------------------

TEST(OnnxOpsetsTest, ReduceWithAxesAsAnInputAtOpset18) {
  for (int64_t opset : {18, 20, 22}) {
    onnx::ModelProto m = NewModel(opset);
    auto* g = m.mutable_graph();
    AddInput(g, "x", {int64_t{2}, int64_t{5}, int64_t{7}});
    AddInts(g, "axes", {-1});
    IntAttr(AddNode(g, "ReduceMean", {"x", "axes"}, {"y"}, "mean"), "keepdims", 0);
    AddNode(g, "ReduceMax", {"x"}, {"z"}, "max");  // no axes: all, keepdims 1
    AddOutput(g, "y");
    AddOutput(g, "z");
    NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
    EXPECT_THAT(Shape(r, "mean"), ElementsAre(2, 5)) << opset;
    EXPECT_THAT(Shape(r, "max"), ElementsAre(1, 1, 1)) << opset;
    EXPECT_EQ(r.stats.unknown_tensors, 0);
  }
}

TEST(OnnxOpsetsTest, SplitWithNumOutputsAndPadWithAxesAtOpset18) {
  onnx::ModelProto m = NewModel(18);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{10}, int64_t{4}});
  onnx::NodeProto* split = AddNode(g, "Split", {"x"}, {"a", "b", "c"}, "split");
  IntAttr(split, "num_outputs", 3);
  AddInts(g, "pads", {1, 2});
  AddInts(g, "axes", {1});
  AddNode(g, "Pad", {"c", "pads", "", "axes"}, {"p"}, "pad");
  for (const char* o : {"a", "b", "p"}) AddOutput(g, o);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  EXPECT_THAT(Shape(r, "split", 0), ElementsAre(4, 4));
  EXPECT_THAT(Shape(r, "split", 2), ElementsAre(2, 4));
  EXPECT_THAT(Shape(r, "pad"), ElementsAre(2, 7));
}

TEST(OnnxOpsetsTest, NewOpsOfOpsets18To20HaveShapes) {
  onnx::ModelProto m = NewModel(21);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{1}, int64_t{8}, int64_t{6}, int64_t{6}});
  AddFloats(g, "s", {8});
  AddNode(g, "Gelu", {"x"}, {"gelu"}, "gelu");
  IntAttr(AddNode(g, "GroupNormalization", {"gelu", "s", "s"}, {"gn"}, "gn"), "num_groups", 2);
  AddNode(g, "Mish", {"gn"}, {"mish"}, "mish");
  AddInts(g, "sizes", {12, 12});
  IntsAttr(AddNode(g, "Resize", {"mish", "", "", "sizes"}, {"rs"}, "resize"), "axes", {2, 3});
  onnx::NodeProto* pool = AddNode(g, "AveragePool", {"rs"}, {"ap"}, "pool");
  IntsAttr(pool, "kernel_shape", {3, 3});
  IntsAttr(pool, "dilations", {2, 2});
  AddOutput(g, "ap");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  EXPECT_THAT(Shape(r, "gn"), ElementsAre(1, 8, 6, 6));
  EXPECT_THAT(Shape(r, "resize"), ElementsAre(1, 8, 12, 12));
  EXPECT_THAT(Shape(r, "pool"), ElementsAre(1, 8, 8, 8));
  EXPECT_EQ(r.stats.opset, 21);
}

TEST(OnnxOpsetsTest, OpTableCoversEveryOpsetAndNamesTheSchemaSource) {
  std::string md = onnx_import::OpTableMarkdown(kMinOnnxOpset, kMaxOnnxOpset);
  EXPECT_THAT(md, HasSubstr("| ai.onnx | ReduceMean | 18–22 | npuplan ReduceMean-18 | supported (npuplan inference) |"));
  EXPECT_THAT(md, HasSubstr("| ai.onnx | Conv | 11–22 | libonnx Conv-11 | supported (libonnx inference) |"));
  // libonnx's LayerNormalization-17 crashes on an out-of-range axis: npuplan's replaces it.
  EXPECT_THAT(md, HasSubstr("| ai.onnx | LayerNormalization | 17–22 | npuplan LayerNormalization-17 |"));
  EXPECT_THAT(md, HasSubstr("| com.microsoft | FusedMatMul | 1+ | npuplan FusedMatMul-1 |"));
  EXPECT_THAT(md, HasSubstr("| ai.onnx | Gelu | 20–22 |"));
}

// ---- com.microsoft ----------------------------------------------------------

TEST(OnnxOpsetsTest, MicrosoftContribOpsHaveShapes) {
  onnx::ModelProto m = NewModel(17);
  ImportDomain(m, "com.microsoft", 1);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{2}, int64_t{8}, int64_t{32}});
  AddFloats(g, "w", {32, 96});
  AddFloats(g, "b", {96});
  AddFloats(g, "wt", {16, 32});
  AddFloats(g, "gamma", {32});
  IntAttr(AddNode(g, "Attention", {"x", "w", "b"}, {"att"}, "att", "com.microsoft"), "num_heads", 4);
  AddNode(g, "SkipLayerNormalization", {"att", "x", "gamma", "gamma"}, {"sln", "", "", "sum"}, "sln",
          "com.microsoft");
  AddNode(g, "BiasGelu", {"sln", "gamma"}, {"bg"}, "bg", "com.microsoft");
  AddNode(g, "FastGelu", {"bg"}, {"fg"}, "fg", "com.microsoft");
  AddNode(g, "QuickGelu", {"fg"}, {"qg"}, "qg", "com.microsoft");
  IntAttr(AddNode(g, "FusedMatMul", {"qg", "wt"}, {"fm"}, "fm", "com.microsoft"), "transB", 1);
  AddOutput(g, "fm");
  AddOutput(g, "sum");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  EXPECT_THAT(Shape(r, "att"), ElementsAre(2, 8, 32));
  EXPECT_THAT(Shape(r, "sln", 3), ElementsAre(2, 8, 32));
  EXPECT_THAT(Shape(r, "qg"), ElementsAre(2, 8, 32));
  EXPECT_THAT(Shape(r, "fm"), ElementsAre(2, 8, 16));
  EXPECT_EQ(r.stats.unknown_tensors, 0);
  EXPECT_EQ(GetStringAttr(N(r.model, "fm").attrs, "_onnx_domain"), "com.microsoft");
}

// ---- transformer export patterns fold to static shapes ------------------------

TEST(OnnxOpsetsTest, FoldsRangeSliceWhereAndTriluMaskPatterns) {
  onnx::ModelProto m = NewModel(17);
  auto* g = m.mutable_graph();
  AddInput(g, "ids", {std::string("batch"), std::string("seq")}, onnx::TensorProto::INT64);
  AddInput(g, "past", {std::string("batch"), int64_t{4}, std::string("past"), int64_t{8}});
  AddInts(g, "zero", {0}, true);
  AddInts(g, "one", {1}, true);
  AddInts(g, "two", {2}, true);
  AddInts(g, "ax0", {0});
  AddNode(g, "Shape", {"ids"}, {"sh"}, "shape");
  AddNode(g, "Gather", {"sh", "one"}, {"s"}, "gather_s");
  AddNode(g, "Shape", {"past"}, {"psh"}, "pshape");
  AddNode(g, "Gather", {"psh", "two"}, {"p"}, "gather_p");
  AddNode(g, "Add", {"p", "s"}, {"t"}, "total");
  AddNode(g, "Range", {"p", "t", "one"}, {"pos"}, "range");  // position ids past..past+seq
  AddNode(g, "Unsqueeze", {"s", "ax0"}, {"s1"}, "us");
  AddNode(g, "Unsqueeze", {"t", "ax0"}, {"t1"}, "ut");
  AddNode(g, "Concat", {"s1", "t1"}, {"st"}, "concat");
  IntAttr(g->mutable_node(g->node_size() - 1), "axis", 0);
  AddNode(g, "ConstantOfShape", {"st"}, {"ones"}, "ones");
  AddNode(g, "Trilu", {"ones", "p"}, {"causal"}, "trilu");
  // PyTorch's expand: Where(Equal(shape, -1), ones, shape) → Expand.
  AddInts(g, "minus1", {-1});
  AddInts(g, "ones4", {1, 1, 1, 1});
  AddNode(g, "Concat", {"s1", "minus1", "s1", "t1"}, {"shape4"}, "concat4");
  IntAttr(g->mutable_node(g->node_size() - 1), "axis", 0);
  AddNode(g, "Equal", {"shape4", "minus1"}, {"isneg"}, "eq");
  AddNode(g, "Where", {"isneg", "ones4", "shape4"}, {"wshape"}, "where");
  AddNode(g, "Expand", {"causal", "wshape"}, {"mask"}, "expand");
  // Slice of the last `seq` columns with a computed start.
  AddNode(g, "Neg", {"s1"}, {"negs"}, "neg");
  AddInts(g, "big", {int64_t{1} << 62});
  AddInts(g, "ax1", {1});
  AddNode(g, "Slice", {"causal", "negs", "big", "ax1"}, {"tail"}, "slice");
  for (const char* o : {"pos", "mask", "tail"}) AddOutput(g, o);
  OnnxImportOptions opts;
  opts.input_shapes = {"ids=1x3", "past=1x4x5x8"};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m, opts));
  EXPECT_THAT(Shape(r, "range"), ElementsAre(3));
  EXPECT_THAT(Shape(r, "trilu"), ElementsAre(3, 8));
  EXPECT_THAT(Shape(r, "expand"), ElementsAre(3, 1, 3, 8));
  EXPECT_THAT(Shape(r, "slice"), ElementsAre(3, 3));
  EXPECT_EQ(r.stats.unknown_tensors, 0);
  // Without the pins the same graph stays dynamic, and says where.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport dyn, Import(m));
  EXPECT_GT(dyn.stats.unknown_tensors, 0);
}

// ---- quantised and mixed precision ---------------------------------------------

TEST(OnnxOpsetsTest, QuantisedOpsHaveShapesDtypesAndPackedInt4Sizes) {
  onnx::ModelProto m = NewModel(21);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{8}});
  AddFloats(g, "scale", {3});
  onnx::NodeProto* q = AddNode(g, "QuantizeLinear", {"x", "scale"}, {"xq"}, "q");  // per-axis, to int4
  IntAttr(q, "axis", 1);
  IntAttr(q, "output_dtype", 22);
  IntAttr(AddNode(g, "DequantizeLinear", {"xq", "scale"}, {"xd"}, "dq"), "axis", 1);
  AddNode(g, "DynamicQuantizeLinear", {"xd"}, {"y8", "ys", "yz"}, "dql");
  AddFloats(g, "w8", {4, 3, 3, 3}, onnx::TensorProto::UINT8);
  AddNode(g, "ConvInteger", {"y8", "w8"}, {"ci"}, "convint");
  AddInput(g, "a", {int64_t{5}, int64_t{16}}, onnx::TensorProto::UINT8);
  AddFloats(g, "b8", {16, 2}, onnx::TensorProto::UINT8);
  AddNode(g, "MatMulInteger", {"a", "b8"}, {"mi"}, "matmulint");
  AddInput(g, "h", {int64_t{2}, int64_t{8}}, onnx::TensorProto::FLOAT16);
  AddInput(g, "bf", {int64_t{2}, int64_t{8}}, onnx::TensorProto::BFLOAT16);
  AddNode(g, "Relu", {"h"}, {"hr"}, "relu16");
  AddNode(g, "Relu", {"bf"}, {"bfr"}, "relubf");
  for (const char* o : {"ci", "mi", "hr", "bfr", "ys"}) AddOutput(g, o);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  EXPECT_EQ(N(r.model, "q").outputs[0], (TensorDesc{{1, 3, 8, 8}, "int4"}));
  EXPECT_EQ(N(r.model, "q").outputs[0].ByteSize(), 96);  // 192 elements, two per byte
  EXPECT_EQ(N(r.model, "dq").outputs[0], (TensorDesc{{1, 3, 8, 8}, "float32"}));
  EXPECT_EQ(N(r.model, "dql").outputs[0].dtype, "uint8");
  EXPECT_EQ(N(r.model, "convint").outputs[0], (TensorDesc{{1, 4, 6, 6}, "int32"}));
  EXPECT_EQ(N(r.model, "matmulint").outputs[0], (TensorDesc{{5, 2}, "int32"}));
  EXPECT_EQ(N(r.model, "relu16").outputs[0].ByteSize(), 32);
  EXPECT_EQ(N(r.model, "relubf").outputs[0].dtype, "bfloat16");
  EXPECT_EQ(r.stats.unknown_tensors, 0);
}

TEST(OnnxOpsetsTest, QLinearConvAndMatMulHaveShapesAndQuantisedDtypes) {
  onnx::ModelProto m = NewModel(13);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{8}}, onnx::TensorProto::UINT8);
  AddFloats(g, "s", {});
  AddFloats(g, "z", {}, onnx::TensorProto::UINT8);
  AddFloats(g, "w", {4, 3, 3, 3}, onnx::TensorProto::UINT8);
  onnx::NodeProto* conv = AddNode(g, "QLinearConv", {"x", "s", "z", "w", "s", "z", "s", "z"}, {"c"}, "qconv");
  IntsAttr(conv, "pads", {1, 1, 1, 1});
  AddInput(g, "a", {int64_t{5}, int64_t{16}}, onnx::TensorProto::INT8);
  AddFloats(g, "zi", {}, onnx::TensorProto::INT8);
  AddFloats(g, "b", {16, 2}, onnx::TensorProto::INT8);
  AddNode(g, "QLinearMatMul", {"a", "s", "zi", "b", "s", "zi", "s", "zi"}, {"mm"}, "qmm");
  AddOutput(g, "c");
  AddOutput(g, "mm");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  EXPECT_EQ(N(r.model, "qconv").outputs[0], (TensorDesc{{1, 4, 8, 8}, "uint8"}));
  EXPECT_EQ(N(r.model, "qconv").outputs[0].ByteSize(), 256);
  EXPECT_EQ(N(r.model, "qmm").outputs[0], (TensorDesc{{5, 2}, "int8"}));
}

// ---- --dim -------------------------------------------------------------------

TEST(OnnxOpsetsTest, DimPinsANamedSymbolicDimEverywhere) {
  onnx::ModelProto m = NewModel(17);
  auto* g = m.mutable_graph();
  AddInput(g, "a", {std::string("batch"), std::string("seq"), int64_t{4}});
  AddInput(g, "b", {std::string("batch"), int64_t{4}});
  AddNode(g, "Relu", {"a"}, {"ra"}, "ra");
  AddNode(g, "Relu", {"b"}, {"rb"}, "rb");
  AddOutput(g, "ra");
  AddOutput(g, "rb");
  OnnxImportOptions opts;
  opts.dims = {"batch=2", "seq=7"};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m, opts));
  EXPECT_THAT(Shape(r, "ra"), ElementsAre(2, 7, 4));
  EXPECT_THAT(Shape(r, "rb"), ElementsAre(2, 4));
  opts.dims = {"nope=1"};
  EXPECT_THAT(Import(m, opts), StatusIs(absl::StatusCode::kInvalidArgument,
                                        "--dim: the model has no dim named 'nope' (named dims: batch, seq)"));
  opts.dims = {"batch=0"};
  EXPECT_THAT(Import(m, opts), StatusIs(absl::StatusCode::kInvalidArgument, "--dim 'batch=0'"));
  opts.dims = {"batch=2"};
  opts.input_shapes = {"b=3x4"};  // contradicts the pinned dim
  EXPECT_THAT(Import(m, opts), StatusIs(absl::StatusCode::kInvalidArgument, "dim 0 is fixed to 2"));
}

// ---- diagnostics ---------------------------------------------------------------

TEST(OnnxOpsetsTest, WarnsOncePerFirstFailingNodeAndStrictShapesMakesItAnError) {
  onnx::ModelProto m = NewModel(17);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{2}, int64_t{3}});
  AddNode(g, "NonZero", {"x"}, {"nz"}, "nz");
  AddNode(g, "Transpose", {"nz"}, {"t"}, "t");  // downstream: not reported
  AddOutput(g, "t");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  ASSERT_EQ(r.warnings.size(), 1u) << ::testing::PrintToString(r.warnings);
  EXPECT_EQ(r.warnings[0], "shape inference could not determine an output: graph 'g': node 'nz' (NonZero) inputs x "
                           "[2, 3] float32: output 'nz' is [2, ?] (its size depends on input values)");
  EXPECT_EQ(r.stats.failed_nodes, 1);
  OnnxImportOptions strict;
  strict.strict_shapes = true;
  EXPECT_THAT(Import(m, strict), StatusIs(absl::StatusCode::kInvalidArgument, "--strict-shapes: shape inference left 1 node"));
}

// ---- issue 19: checked sizes, data counts, op types, depth --------------------

TEST(OnnxOpsetsTest, RejectsShapesWhoseSizeOverflowsNamingTheTensor) {
  {  // ConstantOfShape folded from an initializer
    onnx::ModelProto m = NewModel(17);
    AddInts(m.mutable_graph(), "s", {int64_t{1} << 32, int64_t{1} << 32});
    AddNode(m.mutable_graph(), "ConstantOfShape", {"s"}, {"y"}, "cos");
    AddOutput(m.mutable_graph(), "y");
    EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument,
                                    "tensor 'y' of node 'cos' (ConstantOfShape) has shape [4294967296, 4294967296] "
                                    "float32, whose size in bytes overflows int64"));
  }
  {  // an initializer
    onnx::ModelProto m = NewModel(17);
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(int64_t{1} << 40);
    t->add_dims(int64_t{1} << 40);
    AddNode(m.mutable_graph(), "Relu", {"w"}, {"y"}, "relu");
    AddOutput(m.mutable_graph(), "y");
    EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument, "initializer 'w': the size of shape"));
  }
  {  // --input-shape
    onnx::ModelProto m = NewModel(17);
    AddInput(m.mutable_graph(), "x", {std::string("a"), std::string("b")});
    AddNode(m.mutable_graph(), "Relu", {"x"}, {"y"}, "relu");
    AddOutput(m.mutable_graph(), "y");
    OnnxImportOptions opts;
    opts.input_shapes = {"x=4294967296x4294967296"};
    EXPECT_THAT(Import(m, opts), StatusIs(absl::StatusCode::kInvalidArgument, "overflows int64"));
  }
}

TEST(OnnxOpsetsTest, RejectsInitializersWhoseDataCountDisagreesWithTheirDims) {
  onnx::ModelProto m = NewModel(17);
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->add_dims(2);
  for (float v : {1.f, 2.f, 3.f}) t->add_float_data(v);
  AddNode(m.mutable_graph(), "Relu", {"w"}, {"y"}, "relu");
  AddOutput(m.mutable_graph(), "y");
  EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument,
                                  "initializer 'w': it holds 3 values but its dims [2, 2] need 4"));
  t->add_float_data(4.f);
  EXPECT_THAT(Import(m), IsOk());
}

TEST(OnnxOpsetsTest, RejectsAnEmptyOpType) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m.mutable_graph(), "x", {int64_t{2}});
  AddNode(m.mutable_graph(), "", {"x"}, {"y"}, "nop");
  AddOutput(m.mutable_graph(), "y");
  EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument, "node 'nop' () has an empty op type"));
}

TEST(OnnxOpsetsTest, SaysWhenNestingExceedsProtobufsDepthLimit) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m.mutable_graph(), "c", {}, onnx::TensorProto::BOOL);
  onnx::GraphProto* g = m.mutable_graph();
  std::string out = "o";
  for (int level = 0; level < 40; ++level) {  // If in If in …: 3 messages per level
    onnx::NodeProto* iff = AddNode(g, "If", {"c"}, {out}, "if" + std::to_string(level));
    AddOutput(g, out);
    auto* a = iff->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    g = a->mutable_g();
    out += "i";
  }
  AddNode(g, "Identity", {"c"}, {out}, "leaf");
  AddOutput(g, out);
  EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument, "deeper than protobuf's limit of 100 levels"));
}

// ---- external data ------------------------------------------------------------

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("npuplan_ext_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "model");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A sparse file of `bytes` (no disk blocks): as long as a real weight file.
  void SparseFile(const std::filesystem::path& p, int64_t bytes) {
    int fd = ::open(p.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, bytes), 0);
    ::close(fd);
  }
  onnx::ModelProto Model(const std::string& location, int64_t offset, int64_t rows) {
    onnx::ModelProto m = NewModel(17);
    auto* g = m.mutable_graph();
    AddInput(g, "x", {int64_t{1}, int64_t{1024}});
    auto* t = g->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(1024);
    t->add_dims(rows);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* loc = t->add_external_data();
    loc->set_key("location");
    loc->set_value(location);
    auto* off = t->add_external_data();
    off->set_key("offset");
    off->set_value(std::to_string(offset));
    AddNode(g, "MatMul", {"x", "w"}, {"y"}, "mm");
    AddOutput(g, "y");
    return m;
  }
  absl::StatusOr<OnnxImport> ImportIn(const onnx::ModelProto& m) {
    std::string path = (dir_ / "model" / "m.onnx").string();
    std::ofstream(path, std::ios::binary) << m.SerializeAsString();
    return ImportOnnxFile(path);
  }
  std::filesystem::path dir_;
};

TEST_F(ExternalDataTest, ImportsA3GiBModelFromItsGraphAlone) {
  const int64_t rows = 786432;  // 1024 × 786432 floats = 3 GiB
  SparseFile(dir_ / "model" / "weights.bin", 4096 + 1024 * rows * 4);
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, ImportIn(Model("weights.bin", 4096, rows)));
  EXPECT_EQ(N(r.model, "w").outputs[0].ByteSize(), int64_t{3} << 30);
  EXPECT_THAT(Shape(r, "mm"), ElementsAre(1, rows));
  EXPECT_EQ(r.stats.external_tensors, 1);
}

TEST_F(ExternalDataTest, RejectsMissingShortAndEscapingFiles) {
  EXPECT_THAT(ImportIn(Model("absent.bin", 0, 4)),
              StatusIs(absl::StatusCode::kInvalidArgument, "external data file 'absent.bin' does not exist"));
  SparseFile(dir_ / "model" / "short.bin", 100);
  EXPECT_THAT(ImportIn(Model("short.bin", 0, 4)),
              StatusIs(absl::StatusCode::kInvalidArgument, "'short.bin' has 100 bytes but the tensor needs 16384"));
  SparseFile(dir_ / "outside.bin", 1 << 20);
  EXPECT_THAT(ImportIn(Model("../outside.bin", 0, 4)),
              StatusIs(absl::StatusCode::kInvalidArgument, "is outside the model's directory"));
  std::filesystem::create_symlink(dir_ / "outside.bin", dir_ / "model" / "link.bin");
  EXPECT_THAT(ImportIn(Model("link.bin", 0, 4)),
              StatusIs(absl::StatusCode::kInvalidArgument, "is outside the model's directory"));
  EXPECT_THAT(ImportIn(Model("/etc/passwd", 0, 4)),
              StatusIs(absl::StatusCode::kInvalidArgument, "is outside the model's directory"));
}

}  // namespace
}  // namespace npuplan
