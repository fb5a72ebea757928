#include "npuplan/importers/onnx_importer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "npuplan/ir/verifier.h"
#include "npuplan/testing/status_matchers.h"
#include "onnx/onnx_pb.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Dim = std::variant<int64_t, std::string>;

// Small ModelProto builders (the protobuf API, no hand-written bytes).
onnx::ModelProto NewModel(int64_t opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("npuplan-test");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

void SetType(onnx::ValueInfoProto* vi, const std::string& name, std::vector<Dim> dims,
             int32_t elem = onnx::TensorProto::FLOAT) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const Dim& d : dims) {
    if (std::holds_alternative<int64_t>(d)) {
      shape->add_dim()->set_dim_value(std::get<int64_t>(d));
    } else {
      shape->add_dim()->set_dim_param(std::get<std::string>(d));
    }
  }
}
void AddInput(onnx::GraphProto* g, const std::string& name, std::vector<Dim> dims,
              int32_t elem = onnx::TensorProto::FLOAT) {
  SetType(g->add_input(), name, std::move(dims), elem);
}
void AddOutput(onnx::GraphProto* g, const std::string& name) { g->add_output()->set_name(name); }
void AddOutput(onnx::GraphProto* g, const std::string& name, std::vector<Dim> dims,
               int32_t elem = onnx::TensorProto::FLOAT) {
  SetType(g->add_output(), name, std::move(dims), elem);
}
void AddInitializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                    std::vector<int64_t> int_values = {}) {
  auto* t = g->add_initializer();
  t->set_name(name);
  for (int64_t d : dims) t->add_dims(d);
  if (int_values.empty()) {
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    for (int64_t i = 0; i < n; ++i) t->add_float_data(0.5f);
  } else {
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t v : int_values) t->add_int64_data(v);
  }
}
onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}
void AddIntsAttr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void AddIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
onnx::GraphProto* AddGraphAttr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

absl::StatusOr<OnnxImport> Import(const onnx::ModelProto& m, OnnxImportOptions opts = {}) {
  return ImportOnnx(m.SerializeAsString(), "test.onnx", opts);
}
// Import with ops without a schema allowed (imported as opaque AI CPU ops).
absl::StatusOr<OnnxImport> ImportAllowingUnknownOps(const onnx::ModelProto& m) {
  OnnxImportOptions opts;
  opts.allow_unknown_ops = true;
  return Import(m, opts);
}

const Node& N(const Model& m, const std::string& name) {
  NodeId id = m.FindNode(name);
  EXPECT_TRUE(id.valid()) << "no node " << name;
  static Node empty;
  return id.valid() ? m.node(id) : empty;
}

// A node of `type` in graph `g`.
const Node* FindByType(const Model& m, GraphId g, const std::string& type, int skip = 0) {
  for (NodeId id : m.graph(g).nodes) {
    if (m.node(id).type == type && skip-- == 0) return &m.node(id);
  }
  return nullptr;
}

onnx::ModelProto ConvReluModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{8}});
  AddInitializer(g, "w", {4, 3, 3, 3});
  AddInitializer(g, "b", {4});
  auto* conv = AddNode(g, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  AddIntsAttr(conv, "pads", {1, 1, 1, 1});
  AddIntsAttr(conv, "kernel_shape", {3, 3});
  AddNode(g, "Relu", {"c"}, {"y"}, "relu");
  AddOutput(g, "y");
  return m;
}

TEST(OnnxImporterTest, ImportsConvReluChainWithInitializersAsConsts) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(ConvReluModel()));
  const Model& m = r.model;
  EXPECT_THAT(VerifyStructure(m), IsOk());
  EXPECT_EQ(N(m, "x").type, "Data");
  EXPECT_EQ(GetIntAttr(N(m, "x").attrs, "index"), 0);
  EXPECT_EQ(N(m, "w").type, "Const");
  EXPECT_EQ(N(m, "w").outputs[0], (TensorDesc{{4, 3, 3, 3}, "float32"}));
  EXPECT_FALSE(HasAttr(N(m, "w").attrs, "value"));  // no weight bytes in the graph
  EXPECT_EQ(N(m, "conv").engine, "AIcoreEngine");
  EXPECT_THAT(N(m, "conv").outputs[0].shape, ElementsAre(1, 4, 8, 8));
  EXPECT_THAT(FindAttr(N(m, "conv").attrs, "pads")->as<AttrValue::IntList>()->size(), 4u);
  EXPECT_THAT(N(m, "relu").outputs[0].shape, ElementsAre(1, 4, 8, 8));
  const Node* net = FindByType(m, kRootGraph, "NetOutput");
  ASSERT_NE(net, nullptr);
  ASSERT_EQ(net->inputs.size(), 1u);
  EXPECT_EQ(m.node(net->inputs[0].node).name, "relu");
  EXPECT_EQ(r.stats.dynamic_nodes, 0);
  EXPECT_EQ(r.stats.opset, 13);
  EXPECT_EQ(r.stats.onnx_nodes, 2);
  EXPECT_TRUE(r.warnings.empty()) << ::testing::PrintToString(r.warnings);
}

TEST(OnnxImporterTest, RejectsOpsWithoutASchemaListingEveryOpAndNode) {
  onnx::ModelProto m = ConvReluModel();
  AddNode(m.mutable_graph(), "FancyOp", {"y"}, {"z"}, "fancy1");
  AddNode(m.mutable_graph(), "FancyOp", {"z"}, {"z2"}, "fancy2");
  AddNode(m.mutable_graph(), "OtherOp", {"z2"}, {"z3"}, "other");
  m.mutable_graph()->mutable_output(0)->set_name("z3");
  EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument,
                                  "the model uses 2 op types npuplan does not know (no ONNX schema at the model's "
                                  "opset): FancyOp (2 nodes: graph 'g' node 'fancy1' (FancyOp), graph 'g' node "
                                  "'fancy2' (FancyOp)); OtherOp (1 node: graph 'g' node 'other' (OtherOp))"));
}

TEST(OnnxImporterTest, MapsUnknownOpTypeToAicpuWithWarningsWhenAllowed) {
  onnx::ModelProto m = ConvReluModel();
  AddNode(m.mutable_graph(), "FancyOp", {"y"}, {"z"}, "fancy1");
  AddNode(m.mutable_graph(), "FancyOp", {"z"}, {"z2"}, "fancy2");
  m.mutable_graph()->mutable_output(0)->set_name("z2");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, ImportAllowingUnknownOps(m));
  EXPECT_EQ(N(r.model, "fancy1").engine, "DNN_VM_AICPU");
  ASSERT_EQ(r.warnings.size(), 3u) << ::testing::PrintToString(r.warnings);
  EXPECT_THAT(r.warnings[0], HasSubstr("FancyOp (2 nodes: "));
  // The first node without a schema is where shapes stop (fancy2 reads its unknown output).
  EXPECT_THAT(r.warnings[1], HasSubstr("node 'fancy1' (FancyOp) inputs y [1, 4, 8, 8] float32: output 'z' is [?]"));
  EXPECT_THAT(r.warnings[2], HasSubstr("'FancyOp' (2 nodes)"));
  EXPECT_THAT(r.warnings[2], HasSubstr("DNN_VM_AICPU"));
}

// libonnx's data propagation for Shape dereferences its input's type; these
// graphs feed Shape a tensor inference cannot type and crashed the importer
// (fuzz/onnx_fuzz). They import, with the tensor's shape unknown.
TEST(OnnxImporterTest, ShapeOfAnUntypedTensorImportsWithAnUnknownShape) {
  {  // the output of an op without a schema
    onnx::ModelProto m = NewModel(16);
    AddInitializer(m.mutable_graph(), "i0", {1}, {0});
    AddNode(m.mutable_graph(), "FancyOp", {"i0"}, {"b"}, "fancy");
    AddNode(m.mutable_graph(), "Shape", {"b"}, {"s"}, "shape");
    AddOutput(m.mutable_graph(), "s");
    NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, ImportAllowingUnknownOps(m));
    EXPECT_EQ(N(r.model, "fancy").outputs[0].shape, (std::vector<int64_t>{kUnknownRank}));
    EXPECT_EQ(N(r.model, "shape").outputs[0].shape, (std::vector<int64_t>{kUnknownDim}));
  }
  {  // the output of a node whose inference fails (Concat on an axis its rank-1 inputs lack)
    onnx::ModelProto m = NewModel(16);
    AddInitializer(m.mutable_graph(), "i0", {1}, {0});
    AddInitializer(m.mutable_graph(), "six", {1}, {6});
    AddIntAttr(AddNode(m.mutable_graph(), "Concat", {"i0", "six"}, {"b"}, "concat"), "axis", 5);
    AddNode(m.mutable_graph(), "Shape", {"b"}, {"s"}, "shape");
    AddOutput(m.mutable_graph(), "s");
    NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, ImportAllowingUnknownOps(m));
    EXPECT_EQ(N(r.model, "concat").outputs[0].shape, (std::vector<int64_t>{kUnknownRank}));
  }
  {  // inside an If branch, reading the untyped tensor of the outer graph
    onnx::ModelProto m = NewModel(16);
    onnx::GraphProto* g = m.mutable_graph();
    AddInput(g, "cond", {}, onnx::TensorProto::BOOL);
    AddInitializer(g, "i0", {1}, {0});
    AddNode(g, "FancyOp", {"i0"}, {"b"}, "fancy");
    onnx::NodeProto* iff = AddNode(g, "If", {"cond"}, {"r"}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
      onnx::GraphProto* body = AddGraphAttr(iff, branch);
      AddNode(body, "Shape", {"b"}, {std::string(branch) + "_s"}, std::string(branch) + "_shape");
      AddOutput(body, std::string(branch) + "_s");
    }
    AddOutput(g, "r");
    NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, ImportAllowingUnknownOps(m));
    EXPECT_THAT(VerifyStructure(r.model), IsOk());
  }
}

// Every node input gets an unset type entry before inference (libonnx 1.12
// dereferences missing input types); ONNX's merge must still give a sequence
// its sequence type, so the element read back from it keeps its shape.
TEST(OnnxImporterTest, SequencesStillInferThroughTheInputPlaceholders) {
  onnx::ModelProto m = NewModel(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddInput(g, "x", {3, 4});
  AddInitializer(g, "i0", {}, {0});
  AddNode(g, "SequenceConstruct", {"x", "x"}, {"s"}, "sc");
  AddNode(g, "SequenceAt", {"s", "i0"}, {"y"}, "sa");
  AddNode(g, "Relu", {"y"}, {"z"}, "relu");
  AddOutput(g, "z");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  EXPECT_EQ(N(r.model, "sa").outputs[0].shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(N(r.model, "relu").outputs[0].shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(N(r.model, "sc").outputs[0].shape, (std::vector<int64_t>{kUnknownRank}));  // a sequence
}

// Inference functions read required attributes unchecked (libonnx 1.12's Scan
// crashed on a missing num_scan_inputs); nodes are checked against their
// schemas first, in subgraphs too.
TEST(OnnxImporterTest, RejectsNodesThatViolateTheirSchema) {
  {  // a required attribute is missing, inside an If branch
    onnx::ModelProto m = NewModel(16);
    onnx::GraphProto* g = m.mutable_graph();
    AddInput(g, "cond", {}, onnx::TensorProto::BOOL);
    AddInput(g, "x", {4});
    onnx::NodeProto* iff = AddNode(g, "If", {"cond"}, {"r"}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
      onnx::GraphProto* body = AddGraphAttr(iff, branch);
      onnx::NodeProto* scan = AddNode(body, "Scan", {"x", "x"}, {std::string(branch) + "_s"}, std::string(branch) + "_scan");
      AddGraphAttr(scan, "body");
      AddOutput(body, std::string(branch) + "_s");
    }
    AddOutput(g, "r");
    absl::StatusOr<OnnxImport> r = Import(m);
    EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     "graph 'if/then_branch': node 'then_branch_scan' (Scan) does not satisfy its "
                                     "ONNX schema (Scan-16): Required attribute 'num_scan_inputs' is missing"));
  }
  {  // too many inputs
    onnx::ModelProto m = NewModel(13);
    AddInput(m.mutable_graph(), "x", {4});
    AddNode(m.mutable_graph(), "Relu", {"x", "x"}, {"y"}, "relu");
    AddOutput(m.mutable_graph(), "y");
    EXPECT_THAT(Import(m).status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                             "node 'relu' (Relu) does not satisfy its ONNX schema (Relu-"));
  }
  {  // an op without a schema is not checked (when allowed at all)
    onnx::ModelProto m = NewModel(13);
    AddInput(m.mutable_graph(), "x", {4});
    AddNode(m.mutable_graph(), "FancyOp", {"x", "x", "x"}, {"y"}, "fancy");
    AddOutput(m.mutable_graph(), "y");
    EXPECT_THAT(ImportAllowingUnknownOps(m).status(), IsOk());
  }
}

TEST(OnnxImporterTest, UsesTheGivenEngineTable) {
  onnx::ModelProto m = ConvReluModel();
  EngineTable table = EngineTable::Default();
  auto extra = EngineTable::Parse(R"({"op_engines": {"Relu": "VectorEngine"}})", "t.json");
  ASSERT_THAT(extra, IsOk());
  table.Merge(*extra);
  OnnxImportOptions opts;
  opts.engines = &table;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m, opts));
  EXPECT_EQ(N(r.model, "relu").engine, "VectorEngine");
}

TEST(OnnxImporterTest, ConvertsConstantNodesToConsts) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{2}, int64_t{6}});
  auto* c = AddNode(g, "Constant", {}, {"shape"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(2);
  a->mutable_t()->add_int64_data(3);
  a->mutable_t()->add_int64_data(4);
  AddNode(g, "Reshape", {"x", "shape"}, {"y"}, "reshape");
  AddOutput(g, "y");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  const Node& k = N(r.model, "shape");
  EXPECT_EQ(k.type, "Const");
  EXPECT_EQ(GetStringAttr(k.attrs, "_onnx_op_type"), "Constant");
  EXPECT_EQ(k.outputs[0], (TensorDesc{{2}, "int64"}));
  EXPECT_EQ(k.engine, "DNN_VM_GE_LOCAL");
  EXPECT_THAT(N(r.model, "reshape").outputs[0].shape, ElementsAre(3, 4));
}

onnx::ModelProto SymbolicMatMulModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {std::string("N"), int64_t{3}, int64_t{4}});
  AddInitializer(g, "w", {4, 5});
  AddNode(g, "MatMul", {"x", "w"}, {"y"}, "mm");
  AddOutput(g, "y");
  return m;
}

TEST(OnnxImporterTest, TurnsSymbolicDimsIntoMinusOne) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(SymbolicMatMulModel()));
  EXPECT_THAT(N(r.model, "x").outputs[0].shape, ElementsAre(-1, 3, 4));
  EXPECT_THAT(N(r.model, "mm").outputs[0].shape, ElementsAre(-1, 3, 5));
  EXPECT_EQ(r.stats.dynamic_nodes, 2);
}

TEST(OnnxImporterTest, PinsSymbolicDimsWithInputShape) {
  OnnxImportOptions opts;
  opts.input_shapes = {"x=2x3x4"};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(SymbolicMatMulModel(), opts));
  EXPECT_THAT(N(r.model, "x").outputs[0].shape, ElementsAre(2, 3, 4));
  EXPECT_THAT(N(r.model, "mm").outputs[0].shape, ElementsAre(2, 3, 5));
  EXPECT_EQ(r.stats.dynamic_nodes, 0);
}

TEST(OnnxImporterTest, RejectsBadInputShapes) {
  auto with = [](std::string spec) {
    OnnxImportOptions opts;
    opts.input_shapes = {std::move(spec)};
    return Import(SymbolicMatMulModel(), opts);
  };
  EXPECT_THAT(with("nope=1x3x4"), StatusIs(absl::StatusCode::kInvalidArgument, "no input 'nope' (inputs: x)"));
  EXPECT_THAT(with("w=4x5"), StatusIs(absl::StatusCode::kInvalidArgument, "no input 'w'"));
  EXPECT_THAT(with("x=2x3"), StatusIs(absl::StatusCode::kInvalidArgument, "has rank 3 [N, 3, 4] but 2 dims"));
  EXPECT_THAT(with("x=2x7x4"), StatusIs(absl::StatusCode::kInvalidArgument, "dim 1 is fixed to 3"));
  EXPECT_THAT(with("x=2xAx4"), StatusIs(absl::StatusCode::kInvalidArgument, "dim 'A' is not a positive integer"));
  EXPECT_THAT(with("x2x3x4"), StatusIs(absl::StatusCode::kInvalidArgument, "expected NAME=DIMS"));
  OnnxImportOptions twice;
  twice.input_shapes = {"x=2x3x4", "x=1x3x4"};
  EXPECT_THAT(Import(SymbolicMatMulModel(), twice), StatusIs(absl::StatusCode::kInvalidArgument, "given twice"));
}

// x[N,3,4,4] → Reshape(x, Concat(Gather(Shape(x), 0), ReduceProd(Slice(Shape(x), 1, 4)))) → [N, 48].
onnx::ModelProto ShapeChainModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {std::string("N"), int64_t{3}, int64_t{4}, int64_t{4}});
  AddInitializer(g, "zero", {1}, {0});
  AddInitializer(g, "one", {1}, {1});
  AddInitializer(g, "four", {1}, {4});
  AddNode(g, "Shape", {"x"}, {"s"}, "shape");
  AddNode(g, "Gather", {"s", "zero"}, {"batch"}, "gather");
  AddNode(g, "Slice", {"s", "one", "four"}, {"rest"}, "slice");
  auto* prod = AddNode(g, "ReduceProd", {"rest"}, {"features"}, "prod");
  AddIntAttr(prod, "keepdims", 1);
  auto* cat = AddNode(g, "Concat", {"batch", "features"}, {"target"}, "concat");
  AddIntAttr(cat, "axis", 0);
  AddNode(g, "Reshape", {"x", "target"}, {"flat"}, "reshape");
  AddNode(g, "Relu", {"flat"}, {"y"}, "relu");
  AddOutput(g, "y");
  return m;
}

TEST(OnnxImporterTest, FoldsShapeArithmeticSoOnlyTheBatchStaysDynamic) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(ShapeChainModel()));
  EXPECT_THAT(N(r.model, "reshape").outputs[0].shape, ElementsAre(-1, 48));
  EXPECT_THAT(N(r.model, "relu").outputs[0].shape, ElementsAre(-1, 48));
  EXPECT_LE(r.stats.unknown_tensors, r.stats.unknown_tensors_onnx);
}

TEST(OnnxImporterTest, FoldsShapeArithmeticToStaticShapesWhenInputsArePinned) {
  OnnxImportOptions opts;
  opts.input_shapes = {"x=2x3x4x4"};
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(ShapeChainModel(), opts));
  EXPECT_THAT(N(r.model, "relu").outputs[0].shape, ElementsAre(2, 48));
  EXPECT_EQ(r.stats.dynamic_nodes, 0);
  EXPECT_EQ(r.stats.unknown_tensors, 0);
}

TEST(OnnxImporterTest, FoldingFillsDimsOnnxInferenceLeavesOpen) {
  // ONNX's data propagation does not cover ReduceProd, so without folding
  // even the Reshape's rank stays unknown.
  onnx::ModelProto m = ShapeChainModel();
  OnnxImportOptions off;
  off.fold_shapes = false;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport plain, Import(m, off));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport folded, Import(m));
  EXPECT_THAT(plain.model.node(plain.model.FindNode("reshape")).outputs[0].shape, ElementsAre(kUnknownRank));
  EXPECT_THAT(folded.model.node(folded.model.FindNode("reshape")).outputs[0].shape, ElementsAre(-1, 48));
  EXPECT_GT(folded.stats.folded_dims, 0);
  EXPECT_EQ(plain.stats.folded_dims, 0);
}

// If(cond) { then: Add(y, y) ; else: Identity(x) }, y = Relu(x) in the root.
onnx::ModelProto IfCaptureModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{2}, int64_t{2}});
  AddInput(g, "cond", {}, onnx::TensorProto::BOOL);
  AddNode(g, "Relu", {"x"}, {"y"}, "relu");
  auto* iff = AddNode(g, "If", {"cond"}, {"r"}, "if");
  auto* then_g = AddGraphAttr(iff, "then_branch");
  AddNode(then_g, "Add", {"y", "y"}, {"t"}, "add");
  AddOutput(then_g, "t", {int64_t{2}, int64_t{2}});
  auto* else_g = AddGraphAttr(iff, "else_branch");
  AddNode(else_g, "Identity", {"x"}, {"e"}, "id");
  AddOutput(else_g, "e", {int64_t{2}, int64_t{2}});
  AddOutput(g, "r");
  return m;
}

TEST(OnnxImporterTest, TurnsIfCapturesIntoParentInputsAndParentIndexedData) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(IfCaptureModel()));
  const Model& m = r.model;
  EXPECT_THAT(VerifyStructure(m), IsOk());
  const Node& iff = N(m, "if");
  ASSERT_EQ(iff.subgraphs.size(), 2u);
  EXPECT_EQ(m.graph(iff.subgraphs[0]).name, "if/then_branch");
  EXPECT_EQ(m.graph(iff.subgraphs[1]).name, "if/else_branch");
  ASSERT_EQ(iff.inputs.size(), 3u);  // cond, y (then), x (else)
  EXPECT_EQ(m.node(iff.inputs[0].node).name, "cond");
  EXPECT_EQ(m.node(iff.inputs[1].node).name, "relu");
  EXPECT_EQ(m.node(iff.inputs[2].node).name, "x");
  EXPECT_EQ(r.stats.captures, 2);
  EXPECT_EQ(r.stats.subgraphs, 2);
  const Node* then_data = FindByType(m, iff.subgraphs[0], "Data");
  ASSERT_NE(then_data, nullptr);
  EXPECT_EQ(GetIntAttr(then_data->attrs, "_parent_node_index"), 1);
  EXPECT_EQ(then_data->outputs[0].shape, (std::vector<int64_t>{2, 2}));
  const Node* else_data = FindByType(m, iff.subgraphs[1], "Data");
  ASSERT_NE(else_data, nullptr);
  EXPECT_EQ(GetIntAttr(else_data->attrs, "_parent_node_index"), 2);
  const Node* then_out = FindByType(m, iff.subgraphs[0], "NetOutput");
  ASSERT_NE(then_out, nullptr);
  ASSERT_EQ(then_out->inputs.size(), 1u);
  EXPECT_EQ(m.node(then_out->inputs[0].node).name, "add");
  EXPECT_EQ(N(m, "add").inputs[0].node, N(m, "add").inputs[1].node);  // one Data for both reads
  EXPECT_EQ(iff.engine, "DNN_VM_GE_LOCAL");
}

// GE numbers an If's branches then = 0, else = 1; a file may list else_branch
// first (attributes are unordered in ONNX), which must not swap them.
TEST(OnnxImporterTest, NumbersIfBranchesThenFirstWhateverTheFileOrder) {
  onnx::ModelProto model = IfCaptureModel();
  auto* attrs = model.mutable_graph()->mutable_node(1)->mutable_attribute();
  ASSERT_EQ(attrs->size(), 2);
  attrs->SwapElements(0, 1);
  ASSERT_EQ(model.graph().node(1).attribute(0).name(), "else_branch");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(model));
  const Model& m = r.model;
  EXPECT_THAT(VerifyStructure(m), IsOk());
  const Node& iff = N(m, "if");
  ASSERT_EQ(iff.subgraphs.size(), 2u);
  EXPECT_EQ(m.graph(iff.subgraphs[0]).name, "if/then_branch");
  EXPECT_EQ(m.graph(iff.subgraphs[1]).name, "if/else_branch");
  ASSERT_EQ(iff.inputs.size(), 3u);  // cond, then's capture, else's capture
  EXPECT_EQ(m.node(iff.inputs[1].node).name, "relu");
  EXPECT_EQ(m.node(iff.inputs[2].node).name, "x");
}

TEST(OnnxImporterTest, ThreadsNestedCapturesThroughEveryLevel) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{4}});
  AddInput(g, "c", {}, onnx::TensorProto::BOOL);
  auto* outer = AddNode(g, "If", {"c"}, {"r"}, "outer");
  auto* then_g = AddGraphAttr(outer, "then_branch");
  auto* inner = AddNode(then_g, "If", {"c"}, {"ir"}, "inner");
  auto* inner_then = AddGraphAttr(inner, "then_branch");
  AddNode(inner_then, "Neg", {"x"}, {"n"}, "neg");
  AddOutput(inner_then, "n");
  auto* inner_else = AddGraphAttr(inner, "else_branch");
  AddOutput(inner_else, "x");  // a body output that is an outer value
  AddOutput(then_g, "ir");
  auto* else_g = AddGraphAttr(outer, "else_branch");
  AddOutput(else_g, "x");
  AddOutput(g, "r");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  const Model& model = r.model;
  EXPECT_THAT(VerifyStructure(model), IsOk());
  const Node& o = N(model, "outer");
  const Node& i = N(model, "inner");
  // outer: c, x (for the then branch, shared by the else branch).
  ASSERT_EQ(o.inputs.size(), 2u);
  EXPECT_EQ(model.node(o.inputs[1].node).name, "x");
  // inner: c and x both come from Data nodes of outer/then_branch.
  ASSERT_EQ(i.inputs.size(), 2u);
  for (const OutputRef& in : i.inputs) {
    EXPECT_EQ(model.node(in.node).type, "Data");
    EXPECT_EQ(model.node(in.node).graph, o.subgraphs[0]);
  }
  EXPECT_EQ(model.Depth(i.subgraphs[0]), 2);
  const Node* neg_in = &model.node(N(model, "neg").inputs[0].node);
  EXPECT_EQ(GetIntAttr(neg_in->attrs, "_parent_node_index"), 1);
  EXPECT_EQ(neg_in->outputs[0].shape, (std::vector<int64_t>{4}));
}

// Loop(M, cond, v0) with body (i, cond_in, v) → (cond_out, v + w, v) reading outer w.
onnx::ModelProto LoopModel(bool with_trip_count) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "v0", {int64_t{3}});
  AddInput(g, "cond", {}, onnx::TensorProto::BOOL);
  AddInitializer(g, "M", {}, {5});
  AddInitializer(g, "w", {3});
  auto* loop = AddNode(g, "Loop", {with_trip_count ? "M" : "", "cond", "v0"}, {"v_final", "scan"}, "loop");
  auto* body = AddGraphAttr(loop, "body");
  AddInput(body, "i", {}, onnx::TensorProto::INT64);
  AddInput(body, "cond_in", {}, onnx::TensorProto::BOOL);
  AddInput(body, "v", {int64_t{3}});
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"}, "keep_going");
  AddNode(body, "Add", {"v", "w"}, {"v_next"}, "step");
  AddNode(body, "Identity", {"v"}, {"v_scan"}, "emit");
  AddOutput(body, "cond_out", {}, onnx::TensorProto::BOOL);
  AddOutput(body, "v_next", {int64_t{3}});
  AddOutput(body, "v_scan", {int64_t{3}});
  AddOutput(g, "v_final");
  AddOutput(g, "scan");
  return m;
}

TEST(OnnxImporterTest, BuildsLoopBodyWithFormalInputsCapturesAndOutputMapping) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(LoopModel(true)));
  const Model& m = r.model;
  EXPECT_THAT(VerifyStructure(m), IsOk());
  const Node& loop = N(m, "loop");
  ASSERT_EQ(loop.subgraphs.size(), 1u);
  ASSERT_EQ(loop.inputs.size(), 4u);  // M, cond, v0, captured w
  EXPECT_EQ(m.node(loop.inputs[3].node).name, "w");
  EXPECT_EQ(GetIntAttr(N(m, "i").attrs, "_parent_node_index"), 0);
  EXPECT_EQ(GetIntAttr(N(m, "cond_in").attrs, "_parent_node_index"), 1);
  EXPECT_EQ(GetIntAttr(N(m, "v").attrs, "_parent_node_index"), 2);
  const Node& w_in = m.node(N(m, "step").inputs[1].node);
  EXPECT_EQ(w_in.type, "Data");
  EXPECT_EQ(GetIntAttr(w_in.attrs, "_parent_node_index"), 3);
  const Node* net = FindByType(m, loop.subgraphs[0], "NetOutput");
  ASSERT_NE(net, nullptr);
  EXPECT_THAT(*FindAttr(net->attrs, "_parent_output_index")->as<AttrValue::IntList>(), ElementsAre(-1, 0, 1));
  EXPECT_THAT(N(m, "loop").outputs[1].shape, ElementsAre(-1, 3));  // scan output: trip count unknown to ONNX
}

TEST(OnnxImporterTest, MarksBodyInputsOfAbsentOptionalLoopInputs) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(LoopModel(false)));
  const Model& m = r.model;
  EXPECT_THAT(VerifyStructure(m), IsOk());
  EXPECT_FALSE(HasAttr(N(m, "i").attrs, "_parent_node_index"));
  EXPECT_EQ(GetBoolAttr(N(m, "i").attrs, "_onnx_absent_parent_input"), true);
  EXPECT_EQ(GetIntAttr(N(m, "cond_in").attrs, "_parent_node_index"), 0);
  EXPECT_EQ(GetIntAttr(N(m, "v").attrs, "_parent_node_index"), 1);
  EXPECT_THAT(*FindAttr(N(m, "loop").attrs, "_onnx_absent_inputs")->as<AttrValue::IntList>(), ElementsAre(0));
}

TEST(OnnxImporterTest, BuildsScanBodyWithStateAndScanInputs) {
  onnx::ModelProto m = NewModel(11);
  auto* g = m.mutable_graph();
  AddInput(g, "init", {int64_t{2}});
  AddInput(g, "seq", {int64_t{5}, int64_t{2}});
  auto* scan = AddNode(g, "Scan", {"init", "seq"}, {"final", "ys"}, "scan");
  AddIntAttr(scan, "num_scan_inputs", 1);
  auto* body = AddGraphAttr(scan, "body");
  AddInput(body, "acc", {int64_t{2}});
  AddInput(body, "elem", {int64_t{2}});
  AddNode(body, "Add", {"acc", "elem"}, {"acc_next"}, "acc_add");
  AddNode(body, "Identity", {"acc_next"}, {"y"}, "acc_copy");
  AddOutput(body, "acc_next", {int64_t{2}});
  AddOutput(body, "y", {int64_t{2}});
  AddOutput(g, "final");
  AddOutput(g, "ys");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  const Model& model = r.model;
  EXPECT_THAT(VerifyStructure(model), IsOk());
  EXPECT_EQ(GetIntAttr(N(model, "acc").attrs, "_parent_node_index"), 0);
  EXPECT_EQ(GetIntAttr(N(model, "elem").attrs, "_parent_node_index"), 1);
  EXPECT_THAT(N(model, "scan").outputs[1].shape, ElementsAre(5, 2));
  EXPECT_EQ(N(model, "scan").engine, "DNN_VM_GE_LOCAL");
}

TEST(OnnxImporterTest, MakesEmptyAndDuplicateNamesUniqueAcrossTheModel) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{4}});
  AddNode(g, "Relu", {"x"}, {"a"}, "x");  // clashes with the input's Data node
  AddNode(g, "Relu", {"a"}, {"b"}, "dup");
  AddNode(g, "Relu", {"b"}, {"c"}, "dup");
  AddNode(g, "Relu", {"c"}, {"d"}, "");
  AddNode(g, "Relu", {"d"}, {"e"}, "");
  AddOutput(g, "e");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  const Model& model = r.model;
  EXPECT_THAT(VerifyStructure(model), IsOk());
  EXPECT_EQ(N(model, "x").type, "Data");
  EXPECT_EQ(N(model, "x_1").type, "Relu");
  EXPECT_EQ(GetStringAttr(N(model, "x_1").attrs, "_onnx_name"), "x");
  EXPECT_EQ(N(model, "dup").type, "Relu");
  EXPECT_EQ(N(model, "dup_1").type, "Relu");
  EXPECT_EQ(N(model, "Relu").type, "Relu");
  EXPECT_EQ(N(model, "Relu_1").type, "Relu");
  EXPECT_EQ(model.num_nodes(), 7u);
}

TEST(OnnxImporterTest, SortsAGraphThatIsNotTopologicallyOrdered) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{4}});
  AddNode(g, "Relu", {"b"}, {"c"}, "third");
  AddNode(g, "Relu", {"a"}, {"b"}, "second");
  AddNode(g, "Relu", {"x"}, {"a"}, "first");
  AddOutput(g, "c");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  EXPECT_TRUE(r.stats.sorted);
  EXPECT_THAT(r.warnings, ::testing::Contains(HasSubstr("not topologically sorted")));
  EXPECT_LT(N(r.model, "first").topo_id, N(r.model, "second").topo_id);
  EXPECT_LT(N(r.model, "second").topo_id, N(r.model, "third").topo_id);
  EXPECT_THAT(N(r.model, "third").outputs[0].shape, ElementsAre(4));  // inference saw the sorted graph
}

TEST(OnnxImporterTest, RejectsACycleNamingItsNodes) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{4}});
  AddNode(g, "Add", {"x", "b"}, {"a"}, "p");
  AddNode(g, "Relu", {"a"}, {"b"}, "q");
  AddOutput(g, "b");
  EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument, "has a cycle through nodes 'p' (Add)"));
}

TEST(OnnxImporterTest, RejectsUndefinedTensorsAndDoubleProducers) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{4}});
  AddNode(g, "Add", {"x", "ghost"}, {"y"}, "add");
  AddOutput(g, "y");
  EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument,
                                  "test.onnx: node 'add' (Add) reads tensor 'ghost', which no node"));
  onnx::ModelProto d = NewModel();
  AddInput(d.mutable_graph(), "x", {int64_t{4}});
  AddNode(d.mutable_graph(), "Relu", {"x"}, {"y"}, "r1");
  AddNode(d.mutable_graph(), "Relu", {"x"}, {"y"}, "r2");
  AddOutput(d.mutable_graph(), "y");
  EXPECT_THAT(Import(d), StatusIs(absl::StatusCode::kInvalidArgument, "'y' is produced by both node 'r1'"));
}

TEST(OnnxImporterTest, RejectsTruncatedCorruptedAndEmptyFiles) {
  std::string bytes = ConvReluModel().SerializeAsString();
  EXPECT_THAT(ImportOnnx(bytes.substr(0, bytes.size() / 2), "cut.onnx"),
              StatusIs(absl::StatusCode::kInvalidArgument, "cut.onnx: not a valid ONNX model"));
  std::string garbage = bytes;
  for (size_t i = 0; i < garbage.size(); i += 7) garbage[i] = static_cast<char>(0xff);
  EXPECT_THAT(ImportOnnx(garbage, "bad.onnx"), StatusIs(absl::StatusCode::kInvalidArgument, "bad.onnx"));
  EXPECT_THAT(ImportOnnx("", "empty.onnx"), StatusIs(absl::StatusCode::kInvalidArgument, "empty.onnx: not a valid"));
  EXPECT_THAT(ImportOnnx("hello, world", "text.onnx"), StatusIs(absl::StatusCode::kInvalidArgument, "text.onnx"));
  EXPECT_THAT(ImportOnnxFile("/nonexistent/model.onnx"), ::testing::Not(IsOk()));
}

TEST(OnnxImporterTest, RejectsUnsupportedOpsetsAndIrVersionsNamingThem) {
  EXPECT_THAT(Import(NewModel(23)), StatusIs(absl::StatusCode::kInvalidArgument, "unsupported ONNX opset 23"));
  EXPECT_THAT(Import(NewModel(6)), StatusIs(absl::StatusCode::kInvalidArgument, "unsupported ONNX opset 6"));
  onnx::ModelProto m = ConvReluModel();
  m.set_ir_version(11);
  EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument, "unsupported ONNX IR version 11"));
  m.set_ir_version(10);  // newer than Debian's checker knows, still loads
  EXPECT_THAT(Import(m), IsOk());
  m.clear_opset_import();
  EXPECT_THAT(Import(m), StatusIs(absl::StatusCode::kInvalidArgument, "no default-domain"));
  for (int64_t opset = kMinOnnxOpset; opset <= kMaxOnnxOpset; ++opset) {
    onnx::ModelProto ok = ConvReluModel();
    ok.mutable_opset_import(0)->set_version(opset);
    EXPECT_THAT(Import(ok), IsOk()) << "opset " << opset;
  }
}

TEST(OnnxImporterTest, RecordsAbsentOptionalInputsAndOutputs) {
  onnx::ModelProto m = NewModel(13);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {int64_t{4}});
  AddInitializer(g, "hi", {}, {6});
  g->mutable_initializer(0)->set_data_type(onnx::TensorProto::FLOAT);
  g->mutable_initializer(0)->clear_int64_data();
  g->mutable_initializer(0)->add_float_data(6.0f);
  AddNode(g, "Clip", {"x", "", "hi"}, {"y"}, "clip");
  AddNode(g, "Dropout", {"y"}, {"z", ""}, "drop");
  AddOutput(g, "z");
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport r, Import(m));
  const Node& clip = N(r.model, "clip");
  ASSERT_EQ(clip.inputs.size(), 2u);
  EXPECT_THAT(*FindAttr(clip.attrs, "_onnx_absent_inputs")->as<AttrValue::IntList>(), ElementsAre(1));
  const Node& drop = N(r.model, "drop");
  ASSERT_EQ(drop.outputs.size(), 2u);
  EXPECT_FALSE(drop.outputs[1].IsDynamic());
  EXPECT_EQ(r.stats.dynamic_nodes, 0);
}

TEST(OnnxImporterTest, IsDeterministic) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport a, Import(IfCaptureModel()));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(OnnxImport b, Import(IfCaptureModel()));
  ASSERT_EQ(a.model.num_nodes(), b.model.num_nodes());
  for (size_t i = 0; i < a.model.num_nodes(); ++i) {
    EXPECT_EQ(a.model.nodes()[i].name, b.model.nodes()[i].name);
    EXPECT_EQ(a.model.nodes()[i].topo_id, b.model.nodes()[i].topo_id);
  }
}

}  // namespace
}  // namespace npuplan
