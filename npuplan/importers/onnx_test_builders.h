// ModelProto builders for the importer's tests (the protobuf API, no
// hand-written bytes). Header-only; tests only.
#ifndef NPUPLAN_IMPORTERS_ONNX_TEST_BUILDERS_H_
#define NPUPLAN_IMPORTERS_ONNX_TEST_BUILDERS_H_

#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"

namespace npuplan::onnx_test {

using Dim = std::variant<int64_t, std::string>;

inline onnx::ModelProto NewModel(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}
inline void ImportDomain(onnx::ModelProto& m, const std::string& domain, int64_t version) {
  auto* op = m.add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
}
inline void SetType(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<Dim>& dims,
                    int32_t elem = onnx::TensorProto::FLOAT) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const Dim& d : dims) {
    if (std::holds_alternative<int64_t>(d)) shape->add_dim()->set_dim_value(std::get<int64_t>(d));
    else shape->add_dim()->set_dim_param(std::get<std::string>(d));
  }
}
inline void AddInput(onnx::GraphProto* g, const std::string& name, const std::vector<Dim>& dims,
                     int32_t elem = onnx::TensorProto::FLOAT) {
  SetType(g->add_input(), name, dims, elem);
}
inline void AddOutput(onnx::GraphProto* g, const std::string& name) { g->add_output()->set_name(name); }
// An int64 initializer with `values` ([n], or a scalar when `scalar`).
inline void AddInts(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values,
                    bool scalar = false) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}
// A float initializer of `dims` filled with 0.5.
inline void AddFloats(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                      int32_t elem = onnx::TensorProto::FLOAT) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (elem == onnx::TensorProto::FLOAT) t->add_float_data(0.5f);
    else t->add_int32_data(1);
  }
}
inline onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                                const std::vector<std::string>& out, const std::string& name,
                                const std::string& domain = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  n->set_domain(domain);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}
inline void IntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void IntsAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void StringAttr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

}  // namespace npuplan::onnx_test

#endif  // NPUPLAN_IMPORTERS_ONNX_TEST_BUILDERS_H_
