#include "npuplan/importers/isolated_inference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "npuplan/importers/onnx_importer.h"
#include "npuplan/testing/status_matchers.h"
#include "onnx/defs/schema.h"

namespace npuplan::onnx_import {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// An op whose inference function dies the way libonnx's buggy ones do, in a
// test-only domain: a deterministic stand-in for a libonnx crash.
constexpr char kTestDomain[] = "npuplan.test";

void RegisterCrashOp() {
  static const bool once = [] {
    onnx::OpSchemaRegistry::DomainToVersionRange::Instance().AddDomainToVersion(kTestDomain, 1, 1);
    onnx::OpSchema schema;
    schema.SetName("CrashOp")
        .SetDomain(kTestDomain)
        .SinceVersion(1)
        .Input(0, "x", "", "T")
        .Output(0, "y", "", "T")
        .TypeConstraint("T", {"tensor(float)"}, "")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext&) { std::raise(SIGSEGV); });
    onnx::OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);
    return true;
  }();
  (void)once;
}

// x[2,3] -> Relu -> Add(w) -> [CrashOp] -> y, with a weight initializer.
onnx::ModelProto Model(bool with_crash_op) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(13);
  if (with_crash_op) {
    op = m.add_opset_import();
    op->set_domain(kTestDomain);
    op->set_version(1);
  }
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("g");
  onnx::ValueInfoProto* x = g.add_input();
  x->set_name("x");
  auto* t = x->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(2);
  t->mutable_shape()->add_dim()->set_dim_value(3);
  onnx::TensorProto* w = g.add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_raw_data(std::string(12, '\x01'));
  auto add_node = [&](const char* type, std::vector<std::string> in, const char* out, const char* domain = "") {
    onnx::NodeProto* n = g.add_node();
    n->set_op_type(type);
    n->set_domain(domain);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  add_node("Relu", {"x"}, "r");
  add_node("Add", {"r", "w"}, "a0");
  // A weight kept in a Constant node, as exporters often do.
  add_node("Constant", {}, "k");
  onnx::AttributeProto* value = g.mutable_node(g.node_size() - 1)->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(3);
  value->mutable_t()->set_raw_data(std::string(12, '\x02'));
  add_node("Add", {"a0", "k"}, "a");
  if (with_crash_op) add_node("CrashOp", {"a"}, "c", kTestDomain);
  g.add_output()->set_name(with_crash_op ? "c" : "a");
  return m;
}

const onnx::ShapeInferenceOptions kOptions(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);

TEST(IsolatedInferenceTest, InfersTheSameTypesAsInProcessAndKeepsTheWeights) {
  onnx::ModelProto in_process = Model(false);
  onnx::ModelProto isolated = Model(false);
  ASSERT_THAT(InferShapes(in_process, kOptions, /*isolate=*/false), IsOk());
  ASSERT_THAT(InferShapes(isolated, kOptions, /*isolate=*/true), IsOk());
  EXPECT_EQ(isolated.SerializeAsString(), in_process.SerializeAsString());
  ASSERT_EQ(isolated.graph().initializer_size(), 1);
  EXPECT_EQ(isolated.graph().initializer(0).raw_data(), std::string(12, '\x01'));
  EXPECT_EQ(isolated.graph().node(2).attribute(0).t().raw_data(), std::string(12, '\x02'));
  ASSERT_GE(isolated.graph().value_info_size(), 1);  // something was inferred
}

TEST(IsolatedInferenceTest, ACrashInTheChildLeavesTheModelUntouched) {
  RegisterCrashOp();
  onnx::ModelProto m = Model(true);
  const std::string before = m.SerializeAsString();
  EXPECT_THAT(InferShapes(m, kOptions, /*isolate=*/true),
              StatusIs(absl::StatusCode::kAborted, "killed by signal 11"));
  EXPECT_EQ(m.SerializeAsString(), before);
  // The process is still here, and the next call works.
  onnx::ModelProto ok = Model(false);
  EXPECT_THAT(InferShapes(ok, kOptions, /*isolate=*/true), IsOk());
}

TEST(IsolatedInferenceTest, TheImporterWarnsAndKeepsTheDeclaredShapes) {
  RegisterCrashOp();
  absl::StatusOr<OnnxImport> r = ImportOnnx(Model(true).SerializeAsString(), "crash.onnx");
  ASSERT_THAT(r.status(), IsOk());
  EXPECT_THAT(r->warnings,
              ::testing::Contains("ONNX shape inference crashed (a libonnx bug) in round 1: killed by signal 11 "
                                  "(Segmentation fault); keeping the shapes known before it"));
  EXPECT_GT(r->stats.unknown_tensors, 0);  // nothing was inferred
}

}  // namespace
}  // namespace npuplan::onnx_import
