// Every ai.onnx and com.microsoft op schema the importer accepts (opsets
// kMinOnnxOpset..kMaxOnnxOpset; libonnx's and npuplan's, onnx_schemas.h), one
// node per model, fed in ways real and fuzzed files feed
// it: from an op without a schema (untyped), from typed inputs without a shape,
// from shaped and scalar inputs, from small int64 constants (data
// propagation); integer attributes and constants plain, zero, negative, out of
// range and huge. libonnx 1.12's inference crashes on some of these (Shape on
// an untyped tensor, Scan without its required attribute, GatherND with a
// negative batch_dims); the importer's guards (schema check, input typing,
// attribute value checks) must catch every one *in process*: the sweep runs
// with isolated inference off, so a crash here is a missing guard, not
// something the child process would hide. The import either succeeds or fails
// with InvalidArgument. NPUPLAN_SWEEP_VERBOSE=1 prints each case before it runs
// (a crash then names its case); NPUPLAN_SWEEP_ISOLATED=1 runs it through the
// child process instead and counts the crashes that absorbs.
#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "npuplan/importers/onnx_importer.h"
#include "npuplan/importers/onnx_schemas.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace npuplan {
namespace {

enum class Feed { kUntyped, kTypedNoShape, kShaped, kScalar, kInt64Constant };
enum class Arity { kMinimal, kEverything };

const char* FeedName(Feed f) {
  switch (f) {
    case Feed::kUntyped: return "untyped";
    case Feed::kTypedNoShape: return "typed-no-shape";
    case Feed::kShaped: return "shaped";
    case Feed::kScalar: return "scalar";
    case Feed::kInt64Constant: return "int64-constant";
  }
  return "?";
}

// A value of the attribute's declared type: enough to pass Verify; whether
// inference likes the value is what the sweep probes.
void FillAttribute(onnx::AttributeProto& a, onnx::AttributeProto::AttributeType type, int64_t int_value) {
  a.set_type(type);
  switch (type) {
    case onnx::AttributeProto::INT: a.set_i(int_value); break;
    case onnx::AttributeProto::FLOAT: a.set_f(1.0f); break;
    case onnx::AttributeProto::STRING: a.set_s("x"); break;
    case onnx::AttributeProto::INTS: a.add_ints(int_value); break;
    case onnx::AttributeProto::FLOATS: a.add_floats(1.0f); break;
    case onnx::AttributeProto::STRINGS: a.add_strings("x"); break;
    case onnx::AttributeProto::TENSOR: {
      onnx::TensorProto* t = a.mutable_t();
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_float_data(1.0f);
      break;
    }
    case onnx::AttributeProto::GRAPH: a.mutable_g()->set_name(a.name()); break;
    case onnx::AttributeProto::GRAPHS: a.add_graphs()->set_name(a.name()); break;
    case onnx::AttributeProto::TYPE_PROTO:
      a.mutable_tp()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      break;
    default: break;  // sparse tensors and other kinds: left empty
  }
}

void AddFeed(onnx::GraphProto& g, const std::string& name, Feed feed, int64_t int_value) {
  switch (feed) {
    case Feed::kUntyped: {  // an op without a schema leaves its output untyped
      onnx::NodeProto* src = g.add_node();
      src->set_op_type("FancyOp");
      src->set_name("make_" + name);
      src->add_output(name);
      break;
    }
    case Feed::kTypedNoShape:
    case Feed::kShaped:
    case Feed::kScalar: {
      onnx::ValueInfoProto* in = g.add_input();
      in->set_name(name);
      onnx::TypeProto::Tensor* t = in->mutable_type()->mutable_tensor_type();
      t->set_elem_type(onnx::TensorProto::FLOAT);
      if (feed == Feed::kScalar) t->mutable_shape();
      if (feed == Feed::kShaped) {
        t->mutable_shape()->add_dim()->set_dim_value(2);
        t->mutable_shape()->add_dim()->set_dim_value(3);
      }
      break;
    }
    case Feed::kInt64Constant: {
      onnx::TensorProto* t = g.add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_dims(2);
      t->add_int64_data(int_value);
      t->add_int64_data(int_value);
      break;
    }
  }
}

onnx::ModelProto OneNodeModel(const onnx::OpSchema& s, int64_t opset, Feed feed, Arity arity, int64_t int_value) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(s.domain().empty() ? opset : kMaxOnnxOpset);
  if (!s.domain().empty()) {
    auto* ms = m.add_opset_import();
    ms->set_domain(s.domain());
    ms->set_version(opset);
  }
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("g");
  onnx::NodeProto node;
  node.set_op_type(s.Name());
  node.set_domain(s.domain());
  node.set_name("probe");
  int fed = 0;
  for (const auto& formal : s.inputs()) {
    int count = 1;
    if (formal.GetOption() == onnx::OpSchema::Optional && arity == Arity::kMinimal) count = 0;
    if (formal.GetOption() == onnx::OpSchema::Variadic) {
      count = std::max(formal.GetMinArity(), arity == Arity::kMinimal ? 1 : 2);
    }
    if (count == 0) node.add_input("");
    for (int k = 0; k < count; ++k) {
      std::string name = "in" + std::to_string(fed++);
      AddFeed(g, name, feed, int_value);
      node.add_input(name);
    }
  }
  while (node.input_size() > 0 && node.input(node.input_size() - 1).empty()) node.mutable_input()->RemoveLast();
  int out = 0;
  for (const auto& formal : s.outputs()) {
    if (formal.GetOption() == onnx::OpSchema::Optional && arity == Arity::kMinimal) break;
    std::string name = "out" + std::to_string(out++);
    node.add_output(name);
    g.add_output()->set_name(name);
  }
  for (const auto& [name, attr] : s.attributes()) {
    if (!attr.required && arity == Arity::kMinimal) continue;
    if (!attr.required && attr.type == onnx::AttributeProto::GRAPH) continue;  // optional graphs: nothing to probe
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name(name);
    FillAttribute(*a, attr.type, int_value);
  }
  *g.add_node() = node;
  return m;
}

// Integer attributes (axes, counts, sizes) and the int64 constants take a
// plain value, a negative one and one beyond any rank: inference must
// range-check them.
constexpr int64_t kIntValues[] = {1, 0, -7, 1000, int64_t{1} << 31, int64_t{1} << 40, INT64_MIN};

class OnnxSchemaSweepTest : public ::testing::TestWithParam<Feed> {};

TEST_P(OnnxSchemaSweepTest, EveryAcceptedOpImportsOrFailsCleanly) {
  const bool verbose = std::getenv("NPUPLAN_SWEEP_VERBOSE") != nullptr;
  int cases = 0;
  int crashed = 0;  // libonnx crashes the isolation absorbed
  std::set<std::string> seen;
  for (const onnx_import::OpSchemaVersion& v : onnx_import::KnownSchemaVersions()) {
    const bool ms = v.domain == onnx_import::kMicrosoftDomain;
    if ((!v.domain.empty() && !ms) || v.deprecated || v.since > kMaxOnnxOpset) continue;
    // The schema an opset resolves to: its own since-version, or the lowest
    // accepted opset when it dates from before it.
    const int64_t opset = ms ? v.since : std::max<int64_t>(v.since, kMinOnnxOpset);
    const onnx::OpSchema* resolved = onnx_import::Schemas()->GetSchema(v.op, static_cast<int>(opset), v.domain);
    if (resolved == nullptr || resolved->SinceVersion() != v.since) continue;
    const onnx::OpSchema& s = *resolved;
    for (Arity arity : {Arity::kMinimal, Arity::kEverything}) {
      for (int64_t int_value : kIntValues) {
        const std::string label = s.Name() + "-" + std::to_string(s.SinceVersion()) + " opset " +
                                  std::to_string(opset) + " " + FeedName(GetParam()) +
                                  (arity == Arity::kMinimal ? " minimal" : " everything") + " ints " +
                                  std::to_string(int_value);
        const std::string bytes = OneNodeModel(s, opset, GetParam(), arity, int_value).SerializeAsString();
        if (!seen.insert(bytes).second) continue;  // no integer to vary: the same model again
        if (verbose) std::fprintf(stderr, "sweep: %s\n", label.c_str());
        OnnxImportOptions opts;
        opts.isolate_shape_inference = std::getenv("NPUPLAN_SWEEP_ISOLATED") != nullptr;
        opts.allow_unknown_ops = true;  // the untyped feed comes from an op without a schema
        absl::StatusOr<OnnxImport> r = ImportOnnx(bytes, "sweep.onnx", opts);
        if (!r.ok()) {
          EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << label << ": " << r.status();
        } else {
          for (const std::string& w : r->warnings) crashed += w.find("crashed (a libonnx bug)") != std::string::npos;
        }
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 700);  // the registry really was swept
  std::printf("sweep (%s): %d cases, %d libonnx crashes absorbed by isolated inference\n", FeedName(GetParam()),
              cases, crashed);
}

INSTANTIATE_TEST_SUITE_P(Feeds, OnnxSchemaSweepTest,
                         ::testing::Values(Feed::kUntyped, Feed::kTypedNoShape, Feed::kShaped, Feed::kScalar,
                                           Feed::kInt64Constant),
                         [](const ::testing::TestParamInfo<Feed>& info) {
                           std::string n = FeedName(info.param);
                           std::erase(n, '-');
                           return n;
                         });

}  // namespace
}  // namespace npuplan
